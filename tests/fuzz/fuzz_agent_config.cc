// libFuzzer target: the agent's TOML configuration (agent/config.h): any text gives a config or an
// error naming the file, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)mculab::agent::ParseAgentConfig(text, "fuzz.toml", "/nonexistent", "/nonexistent/runner");
  return 0;
}
