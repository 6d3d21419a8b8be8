#include "common/crash_point.h"

#ifdef MCULAB_CRASH_POINTS

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace mculab {
namespace {

struct Target {
  std::string point;  // empty: no crash asked for
  std::uint64_t count = 1;
};

Target ParseTarget() {
  Target t;
  const char* env = std::getenv("MCULAB_CRASH_AT");
  if (env == nullptr || *env == '\0') return t;
  std::string spec = env;
  const auto colon = spec.rfind(':');
  std::string name = spec.substr(0, colon);
  std::uint64_t number = 1;
  if (colon != std::string::npos) number = std::strtoull(spec.c_str() + colon + 1, nullptr, 10);
  if (name == "random") {
    std::mt19937_64 rng(number);
    const auto& all = crash_points::kAll;
    t.point = std::string(all[rng() % std::size(all)]);
    t.count = 1 + rng() % 8;
  } else if (name == "agent-random") {
    std::mt19937_64 rng(number);
    const auto& all = crash_points::kAgentAll;
    t.point = std::string(all[rng() % std::size(all)]);
    t.count = 1 + rng() % 8;
  } else {
    t.point = name;
    t.count = number == 0 ? 1 : number;
  }
  std::fprintf(stderr, "mculab: crash point armed: %s (pass %llu)\n", t.point.c_str(),
               static_cast<unsigned long long>(t.count));
  return t;
}

}  // namespace

void CrashPoint(std::string_view point) {
  static const Target target = ParseTarget();
  static std::atomic<std::uint64_t> passes{0};
  if (target.point.empty() || point != target.point) return;
  const std::uint64_t n = ++passes;
  if (n != target.count) return;
  std::fprintf(stderr, "mculab: crash point %s (pass %llu): exiting with %d\n",
               target.point.c_str(), static_cast<unsigned long long>(n), kCrashExitCode);
  std::fflush(stderr);
  ::_exit(kCrashExitCode);
}

}  // namespace mculab

#else

namespace mculab {
void CrashPoint(std::string_view) {}
}  // namespace mculab

#endif  // MCULAB_CRASH_POINTS

namespace mculab {
bool CrashPointsCompiledIn() {
#ifdef MCULAB_CRASH_POINTS
  return true;
#else
  return false;
#endif
}
}  // namespace mculab
