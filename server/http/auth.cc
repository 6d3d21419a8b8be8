#include "server/http/auth.h"

#include <string>

namespace mculab::server::http {

std::string BearerToken(const Request& request) {
  auto it = request.find(beast_http::field::authorization);
  if (it == request.end()) return {};
  std::string_view value(it->value().data(), it->value().size());
  constexpr std::string_view kBearer = "Bearer ";
  if (value.substr(0, kBearer.size()) != kBearer) return {};
  value.remove_prefix(kBearer.size());
  return std::string(value);
}

Result<Caller> AuthenticateRequest(const Request& request, std::string_view peer,
                                   Accounts& accounts) {
  Caller caller = accounts.Authenticate(BearerToken(request), std::string(peer));
  if (Status s = RequireRole(caller, Role::kViewer, "the HTTP API"); !s.ok()) return s.error();
  return caller;
}

}  // namespace mculab::server::http
