// Establishes who is calling from a call's "authorization: Bearer <token>" metadata: the token is
// checked against the lab's accounts (server/service/accounts.h) and the Caller carries the user
// and role, or role kNone and the reason. The service layer (RequireRole, RequireAgent) turns
// kNone into UNAUTHENTICATED and a role that is not enough into PERMISSION_DENIED.
//
// The services call it through their own member CallerOf(context), so every handler written as
// `lab_.X(CallerOf(*context), ...)` is authenticated.
#pragma once

#include <grpcpp/server_context.h>

#include <string>

#include "server/rpc/connection_guard.h"
#include "server/service/accounts.h"
#include "server/service/caller.h"

namespace mculab::server::rpc {

// The bearer token of a call's metadata; empty when there is none.
std::string BearerToken(const grpc::ServerContextBase& context);

// A caller who authenticated is reported to `guard` (when given), which then keeps the call's
// connection open (server/rpc/connection_guard.h).
Caller CallerOf(const grpc::ServerContextBase& context, Accounts& accounts,
                ConnectionGuard* guard = nullptr);

}  // namespace mculab::server::rpc
