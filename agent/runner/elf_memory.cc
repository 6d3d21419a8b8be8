#include "agent/runner/elf_memory.h"

#include <cstring>
#include <fstream>
#include <iterator>

namespace mculab::agent {
namespace {

constexpr std::uint32_t kShtNobits = 8;
constexpr std::uint32_t kShtProgbits = 1;
constexpr std::uint32_t kShtInitArray = 14, kShtFiniArray = 15, kShtPreinitArray = 16;
constexpr std::uint64_t kShfWrite = 1, kShfAlloc = 2, kShfExec = 4;
constexpr std::size_t kMaxFile = 64u << 20;

// Little-endian reads, bounds-checked by the caller.
std::uint64_t Le(std::span<const std::uint8_t> b, std::size_t off, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(b[off + i]) << (8 * i);
  return v;
}

Error Corrupt(const std::string& what) {
  return MakeError(ErrorCode::kDataLoss, "not a readable ELF file: " + what);
}

bool Contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

}  // namespace

Result<ElfFile> ReadElfSections(std::span<const std::uint8_t> b) {
  if (b.size() < 16 || std::memcmp(b.data(),
                                   "\x7f"
                                   "ELF",
                                   4) != 0) {
    return Corrupt("no ELF magic (\\x7fELF) at the start");
  }
  ElfFile elf;
  const std::uint8_t cls = b[4], data = b[5];
  if (cls != 1 && cls != 2) return Corrupt("EI_CLASS " + std::to_string(cls) + " is not 1 or 2");
  if (data != 1)
    return Corrupt("big-endian or unknown byte order (EI_DATA " + std::to_string(data) + ")");
  elf.is64 = cls == 2;
  const std::size_t ehsize = elf.is64 ? 64 : 52;
  if (b.size() < ehsize) return Corrupt("the file header is truncated");
  elf.machine = static_cast<std::uint16_t>(Le(b, 18, 2));
  const std::uint64_t shoff = elf.is64 ? Le(b, 40, 8) : Le(b, 32, 4);
  const std::uint64_t shentsize = Le(b, elf.is64 ? 58 : 46, 2);
  std::uint64_t shnum = Le(b, elf.is64 ? 60 : 48, 2);
  std::uint64_t shstrndx = Le(b, elf.is64 ? 62 : 50, 2);
  if (shoff == 0) return elf;  // no section headers (stripped of them): nothing to report
  const std::size_t want_entsize = elf.is64 ? 64 : 40;
  if (shentsize < want_entsize) {
    return Corrupt("section header size " + std::to_string(shentsize) + " is below " +
                   std::to_string(want_entsize));
  }
  auto header_at = [&](std::uint64_t i) -> std::uint64_t { return shoff + i * shentsize; };
  if (shoff > b.size() || shoff + shentsize > b.size()) {
    return Corrupt("the section header table (offset " + std::to_string(shoff) +
                   ") lies beyond the file's " + std::to_string(b.size()) + " bytes");
  }
  if (shnum == 0) shnum = elf.is64 ? Le(b, shoff + 32, 8) : Le(b, shoff + 20, 4);  // extended
  if (shstrndx == 0xFFFF) shstrndx = elf.is64 ? Le(b, shoff + 40, 4) : Le(b, shoff + 24, 4);
  if (shnum > (b.size() - shoff) / shentsize) {
    return Corrupt(std::to_string(shnum) + " section headers do not fit in the file");
  }
  struct Raw {
    std::uint32_t name;
    ElfSection s;
    std::uint64_t offset;
  };
  std::vector<Raw> raw;
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::uint64_t h = header_at(i);
    Raw r{};
    r.name = static_cast<std::uint32_t>(Le(b, h, 4));
    r.s.type = static_cast<std::uint32_t>(Le(b, h + 4, 4));
    if (elf.is64) {
      r.s.flags = Le(b, h + 8, 8);
      r.s.addr = Le(b, h + 16, 8);
      r.offset = Le(b, h + 24, 8);
      r.s.size = Le(b, h + 32, 8);
    } else {
      r.s.flags = Le(b, h + 8, 4);
      r.s.addr = Le(b, h + 12, 4);
      r.offset = Le(b, h + 16, 4);
      r.s.size = Le(b, h + 20, 4);
    }
    if (r.s.type != kShtNobits && r.s.type != 0 &&
        (r.offset > b.size() || r.s.size > b.size() - r.offset)) {
      return Corrupt("section " + std::to_string(i) + " (" + std::to_string(r.s.size) +
                     " bytes at offset " + std::to_string(r.offset) + ") runs past the file's end");
    }
    raw.push_back(r);
  }
  if (shstrndx >= raw.size()) {
    return Corrupt("the section name table index " + std::to_string(shstrndx) + " is not below " +
                   std::to_string(raw.size()));
  }
  const Raw& strtab = raw[shstrndx];
  if (strtab.s.type == kShtNobits || strtab.offset > b.size() ||
      strtab.s.size > b.size() - strtab.offset) {
    return Corrupt("the section name table (section " + std::to_string(shstrndx) +
                   ") is not in the file");
  }
  for (std::size_t i = 0; i < raw.size(); ++i) {
    Raw& r = raw[i];
    if (r.name >= strtab.s.size) {
      if (i == 0 && r.name == 0) {
        elf.sections.push_back(r.s);
        continue;
      }
      return Corrupt("section " + std::to_string(i) + "'s name lies outside the name table");
    }
    const auto* start = b.data() + strtab.offset + r.name;
    const std::size_t avail = strtab.s.size - r.name;
    const void* nul = std::memchr(start, 0, avail);
    if (nul == nullptr)
      return Corrupt("section " + std::to_string(i) + "'s name is not terminated");
    r.s.name.assign(reinterpret_cast<const char*>(start),
                    static_cast<const std::uint8_t*>(nul) - start);
    elf.sections.push_back(r.s);
  }
  return elf;
}

std::vector<MemoryItem> MemoryFootprint(const ElfFile& elf) {
  std::uint64_t text = 0, rodata = 0, data = 0, bss = 0, stack = 0, heap = 0;
  for (const ElfSection& s : elf.sections) {
    if (!(s.flags & kShfAlloc)) continue;
    const bool loaded = s.type == kShtProgbits || s.type == kShtInitArray ||
                        s.type == kShtFiniArray || s.type == kShtPreinitArray ||
                        (s.type > 0x70000000u && s.type != kShtNobits);  // ARM_EXIDX, ...
    if (s.type == kShtNobits) {
      if (Contains(s.name, "stack")) {
        stack += s.size;
      } else if (Contains(s.name, "heap")) {
        heap += s.size;
      } else {
        bss += s.size;
      }
    } else if (loaded) {
      if (s.flags & kShfExec) {
        text += s.size;
      } else if (s.flags & kShfWrite) {
        data += s.size;
      } else {
        rodata += s.size;
      }
    }
  }
  return {{"flash.text", text},
          {"flash.rodata", rodata},
          {"flash.data", data},
          {"flash.total", text + rodata + data},
          {"ram.data", data},
          {"ram.bss", bss},
          {"ram.stack", stack},
          {"ram.heap", heap},
          {"ram.total", data + bss + stack + heap}};
}

Result<std::vector<MemoryItem>> ReadElfMemory(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorCode::kNotFound, "cannot read " + path.string());
  std::vector<std::uint8_t> bytes;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    bytes.insert(bytes.end(), buf, buf + in.gcount());
    if (bytes.size() > kMaxFile) {
      return MakeError(ErrorCode::kInvalidArgument, path.string() + " is larger than 64 MiB");
    }
  }
  auto elf = ReadElfSections(bytes);
  if (!elf.ok()) return MakeError(elf.error().code, path.string() + ": " + elf.error().message);
  return MemoryFootprint(*elf);
}

}  // namespace mculab::agent
