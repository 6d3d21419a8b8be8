// A byte count as people read it, one way everywhere (server messages, agent logs, the CLI).
#pragma once

#include <cstdint>
#include <string>

namespace mculab {

// "512 bytes", "20 KiB", "1.5 MiB", "3 GiB": binary units, one decimal unless whole.
std::string HumanBytes(std::uint64_t bytes);

}  // namespace mculab
