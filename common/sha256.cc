#include "common/sha256.h"

#include <openssl/evp.h>

#include <fstream>

namespace mculab {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr);
}
Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha256::Update(std::span<const std::uint8_t> data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size());
}
void Sha256::Update(std::string_view data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size());
}

std::string Sha256::FinishHex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), md, &len);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 0xF]);
  }
  return out;
}

std::string Sha256Hex(std::span<const std::uint8_t> data) {
  Sha256 h;
  h.Update(data);
  return h.FinishHex();
}
std::string Sha256Hex(std::string_view data) {
  Sha256 h;
  h.Update(data);
  return h.FinishHex();
}

Result<std::string> Sha256File(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(ErrorCode::kNotFound, "cannot open " + path.string());
  Sha256 h;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    h.Update(std::string_view(buf, static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) return MakeError(ErrorCode::kDataLoss, "read error on " + path.string());
  return h.FinishHex();
}

}  // namespace mculab
