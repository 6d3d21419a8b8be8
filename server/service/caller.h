// Caller: who is making a request, as the rpc layer (server/rpc/caller.h) or the HTTP layer
// (server/http/auth.h) established it from the request's bearer token. The service layer decides
// what a caller may do with RequireRole(); it never looks at tokens. Thread-safety: plain values.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace mculab::server {

// Ordered: a role may do what the roles below it may. kAgent is apart: an agent token is only
// good for the agent link, and a user token never is.
enum class Role { kNone, kViewer, kMember, kAdmin, kAgent };

inline std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kNone:
      return "none";
    case Role::kViewer:
      return "viewer";
    case Role::kMember:
      return "member";
    case Role::kAdmin:
      return "admin";
    case Role::kAgent:
      return "agent";
  }
  return "none";
}

struct Caller {
  // Until token validation fills these in (issue 3), every caller is the local admin.
  std::string user = "local";
  Role role = Role::kAdmin;
  std::string token;  // from "authorization: Bearer <token>", empty when absent
  std::string peer;   // the transport's peer address, for logs
};

// OK when the caller is a user with at least `least` (viewer < member < admin); otherwise
// PERMISSION_DENIED naming what was needed (UNAUTHENTICATED for kNone).
inline Status RequireRole(const Caller& caller, Role least, std::string_view what) {
  if (caller.role == Role::kNone) {
    return MakeError(
        ErrorCode::kUnauthenticated,
        std::string(what) + " needs a token: pass --token or set it in the CLI config");
  }
  if (caller.role == Role::kAgent || static_cast<int>(caller.role) < static_cast<int>(least)) {
    return MakeError(ErrorCode::kPermissionDenied,
                     std::string(what) + " needs the " + std::string(RoleName(least)) + " role; " +
                         caller.user + " is " + std::string(RoleName(caller.role)));
  }
  return {};
}

}  // namespace mculab::server
