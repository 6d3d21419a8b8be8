#include "agent/boards/firmware_identity.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "agent/boards/elf_symbols.h"
#include "agent/io/temp_dir.h"
#include "common/sha256.h"

namespace mculab::agent {
namespace {

template <typename T>
bool Get(std::span<const std::uint8_t> d, std::uint64_t off, T& out) {
  if (off > d.size() || d.size() - off < sizeof(T)) return false;
  std::memcpy(&out, d.data() + off, sizeof(T));  // host is little-endian, as the ELFs we read
  return true;
}

}  // namespace

Result<std::string> ElfComment(std::span<const std::uint8_t> d) {
  auto bad = [](const char* why) {
    return MakeError(ErrorCode::kInvalidArgument, std::string("not a usable ELF file: ") + why);
  };
  if (d.size() < 52 || std::memcmp(d.data(),
                                   "\x7f"
                                   "ELF",
                                   4) != 0)
    return bad("no ELF magic");
  const bool is64 = d[4] == 2;
  if (d[5] != 1) return bad("not little-endian");
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (is64) {
    if (!Get(d, 0x28, shoff) || !Get(d, 0x3A, shentsize) || !Get(d, 0x3C, shnum) ||
        !Get(d, 0x3E, shstrndx)) {
      return bad("truncated header");
    }
  } else {
    std::uint32_t off32 = 0;
    if (!Get(d, 0x20, off32) || !Get(d, 0x2E, shentsize) || !Get(d, 0x30, shnum) ||
        !Get(d, 0x32, shstrndx)) {
      return bad("truncated header");
    }
    shoff = off32;
  }
  if (shoff == 0 || shnum == 0) return std::string();
  if (shstrndx >= shnum) return bad("bad section name index");
  // name offset, file offset and size of section i
  auto section = [&](std::uint16_t i, std::uint32_t& name, std::uint64_t& off,
                     std::uint64_t& size) {
    const std::uint64_t h = shoff + std::uint64_t{i} * shentsize;
    if (is64) return Get(d, h, name) && Get(d, h + 0x18, off) && Get(d, h + 0x20, size);
    std::uint32_t o = 0, s = 0;
    bool ok = Get(d, h, name) && Get(d, h + 0x10, o) && Get(d, h + 0x14, s);
    off = o;
    size = s;
    return ok;
  };
  std::uint32_t n = 0;
  std::uint64_t str_off = 0, str_size = 0;
  if (!section(shstrndx, n, str_off, str_size) || str_off > d.size() ||
      d.size() - str_off < str_size) {
    return bad("truncated section names");
  }
  for (std::uint16_t i = 0; i < shnum; ++i) {
    std::uint64_t off = 0, size = 0;
    if (!section(i, n, off, size)) return bad("truncated section table");
    if (n >= str_size) continue;
    const char* name = reinterpret_cast<const char*>(d.data() + str_off + n);
    if (std::strncmp(name, ".comment", str_size - n) != 0) continue;
    if (off > d.size() || d.size() - off < size) return bad("truncated .comment");
    std::vector<std::string> seen;
    std::string out;
    std::string cur;
    for (std::uint64_t k = 0; k <= size; ++k) {
      char c = k < size ? static_cast<char>(d[off + k]) : '\0';
      if (c != '\0') {
        cur += c;
        continue;
      }
      if (!cur.empty() && std::find(seen.begin(), seen.end(), cur) == seen.end()) {
        seen.push_back(cur);
        out += (out.empty() ? "" : "; ") + cur;
      }
      cur.clear();
    }
    return out;
  }
  return std::string();
}

Result<FirmwareIdentity> IdentifyFirmware(const std::filesystem::path& path) {
  auto bytes = ReadFile(path);
  if (!bytes) return bytes.error();
  std::span<const std::uint8_t> d(reinterpret_cast<const std::uint8_t*>(bytes->data()),
                                  bytes->size());
  FirmwareIdentity id;
  id.sha256 = Sha256Hex(d);
  if (auto comment = ElfComment(d)) id.toolchain = *comment;
  id.marker_region = MarkerRegion(d);
  return id;
}

Result<FirmwareIdentity> FirmwareFile::Identify() {
  std::error_code ec;
  auto size = std::filesystem::file_size(path_, ec);
  if (ec) {
    return MakeError(ErrorCode::kNotFound,
                     "firmware file " + path_.string() + " is missing: " + ec.message());
  }
  auto mtime = std::filesystem::last_write_time(path_, ec);
  std::lock_guard lock(mu_);
  if (cached_ && size == size_ && mtime == mtime_) return *cached_;
  auto id = IdentifyFirmware(path_);
  if (!id) return id.error();
  cached_ = *id;
  size_ = size;
  mtime_ = mtime;
  return *id;
}

}  // namespace mculab::agent
