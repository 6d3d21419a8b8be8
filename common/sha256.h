// SHA-256 of bytes and files, as lowercase hex (artifacts, firmware and workload provenance).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"

namespace mculab {

std::string Sha256Hex(std::span<const std::uint8_t> data);
std::string Sha256Hex(std::string_view data);
Result<std::string> Sha256File(const std::filesystem::path& path);

// Incremental hashing for chunked uploads.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(std::span<const std::uint8_t> data);
  void Update(std::string_view data);
  std::string FinishHex();

 private:
  void* ctx_;  // EVP_MD_CTX
};

}  // namespace mculab
