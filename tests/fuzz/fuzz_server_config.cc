// libFuzzer target: the server's TOML configuration (server/service/config.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/service/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)mculab::server::ParseLabConfig(text, "fuzz.toml");
  return 0;
}
