// The runner ELF's memory footprint from its section headers (the memory report):
//
//   flash.text    SHF_ALLOC + SHF_EXECINSTR, PROGBITS (code, vectors)
//   flash.rodata  SHF_ALLOC, not writable, not executable, PROGBITS (constants, unwind tables)
//   flash.data    SHF_ALLOC + SHF_WRITE, PROGBITS: the .data image that startup copies to RAM
//   ram.data      the same sections, in RAM
//   ram.bss       SHF_ALLOC + SHF_WRITE, NOBITS, except stack and heap reservations
//   ram.stack     NOBITS sections named like a stack (".stack", ".stack_dummy", "*stack*")
//   ram.heap      NOBITS sections named like a heap (".heap", "*heap*")
//   flash.total   text + rodata + data;   ram.total   data + bss + stack + heap
//
// ReadElfSections checks every offset and size against the file before reading it and names what
// is wrong (a truncated or corrupt file is an error, never a made-up figure). ELF32 and ELF64,
// little-endian only (every Arm Cortex-M and x86-64 build).
// Thread-safety: pure functions over plain values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace mculab::agent {

struct ElfSection {
  std::string name;
  std::uint32_t type = 0;   // SHT_*
  std::uint64_t flags = 0;  // SHF_*
  std::uint64_t addr = 0;
  std::uint64_t size = 0;
};

struct ElfFile {
  bool is64 = false;
  std::uint16_t machine = 0;  // EM_ARM = 40, EM_X86_64 = 62
  std::vector<ElfSection> sections;
};

struct MemoryItem {
  std::string category;  // "flash.text", "ram.bss", ...
  std::uint64_t bytes = 0;
  bool operator==(const MemoryItem&) const = default;
};

Result<ElfFile> ReadElfSections(std::span<const std::uint8_t> bytes);
// The categories above, in that order, every one present (0 when the ELF has none).
std::vector<MemoryItem> MemoryFootprint(const ElfFile& elf);
// Reads the file (at most 64 MiB) and returns its footprint.
Result<std::vector<MemoryItem>> ReadElfMemory(const std::filesystem::path& path);

}  // namespace mculab::agent
