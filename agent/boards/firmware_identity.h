// What a runner binary is, for provenance and for the flash-only-when-changed rule: its SHA-256
// and the toolchain that built it (the ELF's .comment section, e.g. "GCC:
// (15:12.2.rel1-1) 12.2.1"). Thread-safety: FirmwareFile caches behind a lock; Identify() may be
// called from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "common/result.h"

namespace mculab::agent {

struct FirmwareIdentity {
  std::string sha256;
  std::string toolchain;  // empty when the binary has no .comment
  // The runner's marker region (its linker script's mculab_marker_region, elf_symbols.h), read
  // with the hash from the same bytes; 0 when the ELF has no such symbol.
  std::uint32_t marker_region = 0;
};

// The strings in an ELF's .comment section (32- or 64-bit, little-endian), distinct ones joined
// with "; ". Empty for an ELF without one; an error for a file that is not ELF.
Result<std::string> ElfComment(std::span<const std::uint8_t> elf);

Result<FirmwareIdentity> IdentifyFirmware(const std::filesystem::path& path);

// A firmware file whose identity is recomputed only when its size or mtime changes.
class FirmwareFile {
 public:
  explicit FirmwareFile(std::filesystem::path path) : path_(std::move(path)) {}
  const std::filesystem::path& path() const { return path_; }
  Result<FirmwareIdentity> Identify();

 private:
  const std::filesystem::path path_;
  std::mutex mu_;
  std::uintmax_t size_ = 0;
  std::filesystem::file_time_type mtime_{};
  std::optional<FirmwareIdentity> cached_;
};

}  // namespace mculab::agent
