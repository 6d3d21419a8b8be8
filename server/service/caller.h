// Caller: who is making a request, as the rpc layer read it from the call's metadata. Until
// accounts exist (issue 3) nothing is validated: the token is carried as presented and the user is
// "local". Thread-safety: a plain value.
#pragma once

#include <string>

namespace mculab::server {

struct Caller {
  std::string user = "local";
  std::string token;  // from "authorization: Bearer <token>", empty when absent
  std::string peer;   // the transport's peer address, for logs
};

}  // namespace mculab::server
