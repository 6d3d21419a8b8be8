// The one place an HTTP request's caller is established, for every route that needs one (all but
// GET /healthz and the page's static files). Until accounts exist (issue "Share the boards")
// nothing is validated, as on the gRPC side (server/rpc/caller.h): the bearer token is carried as
// presented and the user is "local". That issue validates the token here and returns
// kUnauthenticated (401) or kPermissionDenied (403); the router maps the code.
// Thread-safety: a pure function.
#pragma once

#include <string_view>

#include "common/result.h"
#include "server/http/message.h"
#include "server/service/caller.h"

namespace mculab::server::http {

// "Authorization: Bearer <token>" -> the caller; no header: the token is empty.
Result<Caller> AuthenticateRequest(const Request& request, std::string_view peer);

}  // namespace mculab::server::http
