#include "common/bytes_text.h"

#include <fmt/format.h>

namespace mculab {

std::string HumanBytes(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  if (v == static_cast<double>(static_cast<std::uint64_t>(v))) {
    return fmt::format("{} {}", static_cast<std::uint64_t>(v), units[u]);
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

}  // namespace mculab
