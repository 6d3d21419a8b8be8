#include "agent/boards/elf_symbols.h"

#include <cstring>
#include <fstream>
#include <iterator>

namespace mculab::agent {
namespace {

std::uint32_t Le32(std::span<const std::uint8_t> b, std::size_t off) {
  return static_cast<std::uint32_t>(b[off]) | static_cast<std::uint32_t>(b[off + 1]) << 8 |
         static_cast<std::uint32_t>(b[off + 2]) << 16 |
         static_cast<std::uint32_t>(b[off + 3]) << 24;
}

}  // namespace

Result<std::map<std::string, std::uint32_t>> ElfSymbols(std::span<const std::uint8_t> elf,
                                                        const std::vector<std::string>& names) {
  auto bad = [](const std::string& what) {
    return MakeError(ErrorCode::kInvalidArgument, "runner ELF: " + what);
  };
  if (elf.size() < 52 ||
      std::memcmp(elf.data(),
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      elf[4] != 1 || elf[5] != 1) {
    return bad("not a 32-bit little-endian ELF");
  }
  const std::uint32_t shoff = Le32(elf, 32);
  const std::size_t shentsize = elf[46] | elf[47] << 8, shnum = elf[48] | elf[49] << 8;
  if (shentsize < 40 || std::uint64_t{shoff} + std::uint64_t{shentsize} * shnum > elf.size()) {
    return bad("section headers beyond the end of the file");
  }
  std::map<std::string, std::uint32_t> out;
  for (std::size_t i = 0; i < shnum; ++i) {
    const std::size_t h = shoff + shentsize * i;
    if (Le32(elf, h + 4) != 2) continue;  // SHT_SYMTAB
    const std::uint32_t off = Le32(elf, h + 16), size = Le32(elf, h + 20), link = Le32(elf, h + 24);
    if (link >= shnum || std::uint64_t{off} + size > elf.size()) return bad("corrupt .symtab");
    const std::size_t sh = shoff + shentsize * link;
    const std::uint32_t str_off = Le32(elf, sh + 16), str_size = Le32(elf, sh + 20);
    if (std::uint64_t{str_off} + str_size > elf.size()) return bad("corrupt .strtab");
    for (std::uint32_t s = 0; s + 16 <= size; s += 16) {
      const std::uint32_t name = Le32(elf, off + s);
      if (name >= str_size) continue;
      const char* p = reinterpret_cast<const char*>(elf.data() + str_off + name);
      const std::string n(p, strnlen(p, str_size - name));
      for (const auto& want : names) {
        if (n == want) out[n] = Le32(elf, off + s + 4);
      }
    }
  }
  return out;
}

std::uint32_t MarkerRegion(const std::filesystem::path& elf) {
  std::ifstream f(elf, std::ios::binary);
  if (!f) return 0;
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
  return MarkerRegion(bytes);
}

std::uint32_t MarkerRegion(std::span<const std::uint8_t> elf) {
  auto syms = ElfSymbols(elf, {"mculab_marker_region"});
  if (!syms.ok()) return 0;
  const auto it = syms->find("mculab_marker_region");
  return it == syms->end() ? 0 : it->second;
}

}  // namespace mculab::agent
