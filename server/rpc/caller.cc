#include "server/rpc/caller.h"

#include <string_view>

namespace mculab::server::rpc {

Caller CallerOf(const grpc::ServerContextBase& context) {
  Caller caller;
  caller.peer = context.peer();
  const auto& md = context.client_metadata();
  auto it = md.find("authorization");
  if (it != md.end()) {
    std::string_view value(it->second.data(), it->second.size());
    constexpr std::string_view kBearer = "Bearer ";
    if (value.substr(0, kBearer.size()) == kBearer) value.remove_prefix(kBearer.size());
    caller.token = std::string(value);
  }
  return caller;
}

}  // namespace mculab::server::rpc
