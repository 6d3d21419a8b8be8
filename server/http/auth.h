// The one place an HTTP request's caller is established, for every route that needs one (all but
// GET /healthz and the page's static files, which hold no lab data). The bearer token of
// "Authorization: Bearer <token>" is checked against the lab's accounts, as on the gRPC side
// (server/rpc/caller.h): a missing or refused token is kUnauthenticated (401), an agent token is
// kPermissionDenied (403); the router maps the codes. A role too low for a route is the service
// layer's PERMISSION_DENIED (403).
// Thread-safety: as Accounts::Authenticate.
#pragma once

#include <string_view>

#include "common/result.h"
#include "server/http/message.h"
#include "server/service/accounts.h"
#include "server/service/caller.h"

namespace mculab::server::http {

// The bearer token of a request; empty when there is none.
std::string BearerToken(const Request& request);

// A user with at least the viewer role (every HTTP route only reads), or the error to answer.
Result<Caller> AuthenticateRequest(const Request& request, std::string_view peer,
                                   Accounts& accounts);

}  // namespace mculab::server::http
