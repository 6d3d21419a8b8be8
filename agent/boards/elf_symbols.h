// Symbols of a runner ELF: what the agent learns from the firmware it runs (the RTT control
// block, where the region markers go).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace mculab::agent {

// Symbols of an ELF32 little-endian file's .symtab (only those asked for; missing ones absent).
Result<std::map<std::string, std::uint32_t>> ElfSymbols(std::span<const std::uint8_t> elf,
                                                        const std::vector<std::string>& names);

// The runner's marker region (its linker script's mculab_marker_region), 0 when the ELF has no
// such symbol or cannot be read: the counting plugin must watch that address, which moved
// between runner releases (0x60100000, now 0x60FF0000 on the QEMU boards).
std::uint32_t MarkerRegion(const std::filesystem::path& elf);
// The same from the ELF's bytes (FirmwareIdentity reads it with the hash).
std::uint32_t MarkerRegion(std::span<const std::uint8_t> elf);

}  // namespace mculab::agent
