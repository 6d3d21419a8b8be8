#include "common/time_text.h"

#include <ctime>

namespace mculab {

std::string UtcTimeText(std::int64_t unix_ms) {
  if (unix_ms <= 0) return "-";
  const auto secs = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[48];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

}  // namespace mculab
