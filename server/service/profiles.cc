#include "server/service/profiles.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>

#include "common/stats.h"
#include "server/service/results.h"

namespace mculab::server {

bool AllEmulated(const BoardUnits& units) {
  return !units.emulated.empty() &&
         std::all_of(units.emulated.begin(), units.emulated.end(), [](bool e) { return e; });
}

Result<std::vector<std::string>> NormalizeEvents(const std::vector<std::string>& events) {
  std::vector<std::string> out;
  for (const std::string& raw : events) {
    std::string e;
    for (char c : raw) {
      if (!std::isspace(static_cast<unsigned char>(c))) {
        e += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    }
    if (e.empty() || e == kCyclesEvent) continue;
    const bool ok = e.size() <= 32 && std::all_of(e.begin(), e.end(), [](char c) {
                      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                    });
    if (!ok) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "event '" + raw +
                           "' is not an event name (letters, digits and _, at most 32): see "
                           "`mculab events --kind KIND`");
    }
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> RunCounters(const PassPlan& plan) {
  std::vector<std::string> out;
  for (const Pass& p : plan.passes) {
    for (const std::string& e : p.events) {
      if (e == kCyclesEvent) continue;
      if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
    }
  }
  return out;
}

std::vector<CaseStats> ComputePassCaseStats(JobId job, RunId run, const Provenance& provenance,
                                            std::span<const Sample> samples) {
  std::vector<Sample> kept;
  kept.reserve(samples.size());
  for (const Sample& s : samples) {
    if (s.metric != 0 || s.pass == 0) kept.push_back(s);
  }
  return ComputeCaseStats(job, run, provenance, kept);
}

std::vector<std::vector<double>> CyclesByPass(std::span<const Sample> samples, std::uint32_t passes,
                                              std::uint32_t cases) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<double>> values;
  for (const Sample& s : samples) {
    if (s.metric == 0) values[{s.pass, s.case_index}].push_back(static_cast<double>(s.value));
  }
  std::vector<std::vector<double>> out(
      passes, std::vector<double>(cases, std::numeric_limits<double>::quiet_NaN()));
  for (auto& [key, v] : values) {
    if (key.first < passes && key.second < cases) out[key.first][key.second] = Summarize(v).median;
  }
  return out;
}

}  // namespace mculab::server
