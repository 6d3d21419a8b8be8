// Where the CLI finds its server and token: a flag, else MCULAB_SERVER / MCULAB_TOKEN, else
// $XDG_CONFIG_HOME/mculab/config.toml (default ~/.config/mculab/config.toml) with keys
// `server`, `token` and `ca` (a PEM file for TLS), else localhost on MCULAB_GRPC_PORT or 7420.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "common/result.h"

namespace mculab::cli {

struct ClientConfig {
  std::string server;
  std::string token;
  std::string ca_file;  // empty: plaintext
  std::string source;   // where the server address came from, for error messages
};

struct ConfigInputs {
  std::optional<std::string> server_flag;
  std::optional<std::string> token_flag;
  std::optional<std::string> ca_flag;
  std::map<std::string, std::string> env;  // MCULAB_SERVER, MCULAB_TOKEN, MCULAB_GRPC_PORT, ...
  std::optional<std::filesystem::path> config_file;  // resolved path; may not exist
};

std::filesystem::path DefaultConfigPath(const std::map<std::string, std::string>& env);
Result<ClientConfig> ResolveClientConfig(const ConfigInputs& in);

// Whether an UNAVAILABLE status's message comes from the transport (no server answered: refused,
// reset, DNS, TLS) rather than from a server that answered and gave its reason (it stopped
// accepting work, it cannot write an upload). The CLI asks "is it running?" only for the first.
bool IsTransportFailure(const std::string& grpc_message);

}  // namespace mculab::cli
