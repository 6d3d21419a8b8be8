#include "cli/client_config.h"

#include <toml++/toml.h>

namespace mculab::cli {

std::filesystem::path DefaultConfigPath(const std::map<std::string, std::string>& env) {
  auto it = env.find("XDG_CONFIG_HOME");
  if (it != env.end() && !it->second.empty())
    return std::filesystem::path(it->second) / "mculab" / "config.toml";
  it = env.find("HOME");
  std::string home = it != env.end() ? it->second : ".";
  return std::filesystem::path(home) / ".config" / "mculab" / "config.toml";
}

Result<ClientConfig> ResolveClientConfig(const ConfigInputs& in) {
  ClientConfig out;
  std::string file_server, file_token, file_ca;
  if (in.config_file && std::filesystem::exists(*in.config_file)) {
    try {
      toml::table t = toml::parse_file(in.config_file->string());
      if (auto v = t["server"].value<std::string>()) file_server = *v;
      if (auto v = t["token"].value<std::string>()) file_token = *v;
      if (auto v = t["ca"].value<std::string>()) file_ca = *v;
    } catch (const toml::parse_error& e) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "cannot read " + in.config_file->string() + ": " +
                           std::string(e.description()) + " (line " +
                           std::to_string(e.source().begin.line) + ")");
    }
  }
  auto env = [&](const char* k) -> std::string {
    auto it = in.env.find(k);
    return it == in.env.end() ? "" : it->second;
  };
  if (in.server_flag) {
    out.server = *in.server_flag;
    out.source = "--server";
  } else if (!env("MCULAB_SERVER").empty()) {
    out.server = env("MCULAB_SERVER");
    out.source = "MCULAB_SERVER";
  } else if (!file_server.empty()) {
    out.server = file_server;
    out.source = in.config_file->string();
  } else {
    std::string port = env("MCULAB_GRPC_PORT").empty() ? "7420" : env("MCULAB_GRPC_PORT");
    out.server = "localhost:" + port;
    out.source = "default";
  }
  if (in.token_flag)
    out.token = *in.token_flag;
  else if (!env("MCULAB_TOKEN").empty())
    out.token = env("MCULAB_TOKEN");
  else
    out.token = file_token;
  if (in.ca_flag)
    out.ca_file = *in.ca_flag;
  else
    out.ca_file = file_ca;
  if (out.server.empty())
    return MakeError(ErrorCode::kInvalidArgument, "empty server address (from " + out.source + ")");
  return out;
}

bool IsTransportFailure(const std::string& grpc_message) {
  if (grpc_message.empty()) return true;
  static constexpr const char* kTransport[] = {"failed to connect",
                                               "Failed to connect",
                                               "Connection refused",
                                               "Connection reset",
                                               "Socket closed",
                                               "GOAWAY",
                                               "DNS resolution",
                                               "empty address list",
                                               "Broken pipe",
                                               "keepalive",
                                               "handshake",
                                               "SSL",
                                               "ssl",
                                               "Endpoint",
                                               "connections to all backends failing"};
  for (const char* m : kTransport) {
    if (grpc_message.find(m) != std::string::npos) return true;
  }
  return false;
}

}  // namespace mculab::cli
