#include "cli/duration.h"

#include <cctype>
#include <limits>

namespace mculab::cli {

Result<std::int64_t> ParseDurationMs(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "bad duration '" + std::string(text) + "': " + why +
                         " (use e.g. 2h, 30m, 90s, 500ms, 1d or 1h30m)");
  };
  if (text.empty()) return bad("it is empty");
  std::int64_t total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return bad("expected a number");
    std::int64_t n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (n > std::numeric_limits<std::int64_t>::max() / 10 / 86'400'000) return bad("too long");
      n = n * 10 + (text[i] - '0');
      ++i;
    }
    std::string unit;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) unit += text[i++];
    std::int64_t scale = 0;
    if (unit == "ms")
      scale = 1;
    else if (unit == "s" || unit.empty())
      scale = 1000;
    else if (unit == "m" || unit == "min")
      scale = 60'000;
    else if (unit == "h")
      scale = 3'600'000;
    else if (unit == "d")
      scale = 86'400'000;
    else
      return bad("unknown unit '" + unit + "'");
    if (unit.empty() && i != text.size()) return bad("a number without a unit must come last");
    total += n * scale;
  }
  if (total <= 0) return bad("it must be longer than zero");
  return total;
}

std::string FormatDurationMs(std::int64_t ms) {
  if (ms <= 0) return "0s";
  if (ms % 1000 != 0) return std::to_string(ms) + "ms";
  std::int64_t s = ms / 1000;
  std::string out;
  const std::pair<std::int64_t, const char*> units[] = {
      {86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
  for (auto [size, name] : units) {
    if (s >= size) {
      out += std::to_string(s / size) + name;
      s %= size;
    }
  }
  return out;
}

}  // namespace mculab::cli
