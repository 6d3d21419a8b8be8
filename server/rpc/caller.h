// Reads who is calling from a call's metadata. Nothing is validated yet: issue 3 (accounts)
// checks the token here and fills in the user.
#pragma once

#include <grpcpp/server_context.h>

#include "server/service/caller.h"

namespace mculab::server::rpc {

// "authorization: Bearer <token>" -> token; the user stays "local" until accounts exist.
Caller CallerOf(const grpc::ServerContextBase& context);

}  // namespace mculab::server::rpc
