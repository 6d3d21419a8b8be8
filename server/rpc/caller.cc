#include "server/rpc/caller.h"

#include <string_view>

namespace mculab::server::rpc {

std::string BearerToken(const grpc::ServerContextBase& context) {
  const auto& md = context.client_metadata();
  auto it = md.find("authorization");
  if (it == md.end()) return {};
  std::string_view value(it->second.data(), it->second.size());
  constexpr std::string_view kBearer = "Bearer ";
  if (value.substr(0, kBearer.size()) != kBearer) return {};
  value.remove_prefix(kBearer.size());
  return std::string(value);
}

Caller CallerOf(const grpc::ServerContextBase& context, Accounts& accounts,
                ConnectionGuard* guard) {
  Caller caller = accounts.Authenticate(BearerToken(context), context.peer());
  if (guard != nullptr && caller.role != Role::kNone) guard->Authenticated(context.peer());
  return caller;
}

}  // namespace mculab::server::rpc
