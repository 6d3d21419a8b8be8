// LabConfig: the server's tunables, from an optional TOML file (--config):
//
//   max_artifact_bytes = 67108864   # largest upload accepted (64 MiB)
//   default_timeout_s = 600         # a job's timeout when its submitter gives none
//   max_attempts = 3                # runs a job gets before infrastructure failures fail it
//   heartbeat_ms = 5000             # how often agents are asked to send a heartbeat
//   tls_cert = "server.pem"         # TLS for gRPC: certificate chain and private key (PEM),
//   tls_key = "server.key"          # both or neither; relative to the config file's folder
//
// Unknown keys are an error (a typo should not silently keep a default).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "common/result.h"

namespace mculab::server {

struct LabConfig {
  std::uint64_t max_artifact_bytes = 64ull << 20;
  std::uint32_t default_timeout_s = 600;
  std::uint32_t max_attempts = 3;
  std::uint32_t heartbeat_ms = 5000;
  std::filesystem::path tls_cert;  // empty: plaintext gRPC
  std::filesystem::path tls_key;
};

Result<LabConfig> ParseLabConfig(std::string_view toml_text, std::string_view origin);
Result<LabConfig> LoadLabConfig(const std::filesystem::path& path);

}  // namespace mculab::server
