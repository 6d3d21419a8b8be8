#include "server/http/auth.h"

#include <string>

namespace mculab::server::http {

Result<Caller> AuthenticateRequest(const Request& request, std::string_view peer) {
  Caller caller;
  caller.peer = std::string(peer);
  auto it = request.find(beast_http::field::authorization);
  if (it != request.end()) {
    std::string_view value(it->value().data(), it->value().size());
    constexpr std::string_view kBearer = "Bearer ";
    if (value.substr(0, kBearer.size()) == kBearer) value.remove_prefix(kBearer.size());
    caller.token = std::string(value);
  }
  return caller;
}

}  // namespace mculab::server::http
