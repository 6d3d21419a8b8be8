// What machine an ELF file was built for, and whether a board can run it: the admission check for
// custom runners (`mculab submit --firmware`). Only the ELF identification and header are read
// (the first 20 bytes), so the check costs nothing for a large file.
//
// Architectures are named as the lab names them: "arm32" (Cortex-M boards, QEMU an547), "x86_64",
// "aarch64" (host boards on those machines). A board's architecture comes from its `cpu` tag
// (cortex-m55 -> arm32, x86_64 -> x86_64, ...); a "host" board without one is assumed to be the
// server's own machine.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"

namespace mculab {

struct ElfHeaderInfo {
  int bits = 0;  // 32 or 64
  bool little_endian = true;
  std::uint16_t type = 0;     // ET_EXEC 2, ET_DYN 3, ...
  std::uint16_t machine = 0;  // EM_ARM 40, EM_X86_64 62, EM_AARCH64 183, ...
};

// The header of `bytes` (at least the first 20 bytes of the file); kInvalidArgument when it is not
// an ELF file, saying what it looks like instead.
Result<ElfHeaderInfo> ReadElfHeader(std::span<const std::uint8_t> bytes);

// "ARM 32-bit", "x86-64", "AArch64", "RISC-V 32-bit", "machine 1234, 64-bit".
std::string DescribeElf(const ElfHeaderInfo& elf);

// The architecture an ELF runs on, or nullopt when the lab knows no board for it.
std::optional<std::string> ElfArch(const ElfHeaderInfo& elf);

// The lab's architecture name for a `cpu` tag value: cortex-m* -> arm32, x86_64/amd64 -> x86_64,
// aarch64/arm64/cortex-a* -> aarch64; nullopt for anything else.
std::optional<std::string> ArchOfCpu(std::string_view cpu);

// The machine this program was built for ("x86_64", "aarch64", ...).
std::string HostArch();

// OK when `elf` runs on `arch`; otherwise kFailedPrecondition: "the firmware is an ELF for
// ARM 32-bit, but board host-0 runs x86_64 (an x86-64 ELF needed)". `what` names
// the board(s) in the message.
Status CheckElfRunsOn(const ElfHeaderInfo& elf, std::string_view arch, std::string_view what);

}  // namespace mculab
