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
  // The rpc and HTTP layers always set these from the request's token (Accounts::Authenticate);
  // the defaults (the local admin) are for in-process callers and tests.
  std::string user = "local";  // the user's name, or the agent's host for an agent token
  Role role = Role::kAdmin;
  std::string token;    // from "authorization: Bearer <token>", empty when absent
  std::string peer;     // the transport's peer address, for logs
  std::string problem;  // role kNone: why the token was refused ("no token", "revoked", ...)
};

// OK when the caller is a user with at least `least` (viewer < member < admin); otherwise
// PERMISSION_DENIED naming what was needed (UNAUTHENTICATED for kNone).
inline Status RequireRole(const Caller& caller, Role least, std::string_view what) {
  if (caller.role == Role::kNone) {
    return MakeError(
        ErrorCode::kUnauthenticated,
        std::string(what) + " needs a valid token: " +
            (caller.problem.empty() ? std::string("no token was given") : caller.problem));
  }
  if (caller.role == Role::kAgent) {
    return MakeError(ErrorCode::kPermissionDenied,
                     std::string(what) + " needs a user token; an agent token (agent " +
                         caller.user + ") is only good for the agent link");
  }
  if (static_cast<int>(caller.role) < static_cast<int>(least)) {
    return MakeError(ErrorCode::kPermissionDenied,
                     std::string(what) + " needs the " + std::string(RoleName(least)) + " role; " +
                         caller.user + " is " + std::string(RoleName(caller.role)));
  }
  return {};
}

// OK when the caller presented the agent token issued for `agent` (admin agent add HOST): an
// agent token is bound to its host, and a user token is never good for the agent link.
inline Status RequireAgent(const Caller& caller, std::string_view agent) {
  if (caller.role == Role::kNone) {
    return MakeError(
        ErrorCode::kUnauthenticated,
        "the agent link needs a valid agent token: " +
            (caller.problem.empty() ? std::string("no token was given") : caller.problem) +
            " (mculab-server admin agent add HOST prints one; set token_file in the "
            "agent's [agent] section)");
  }
  if (caller.role != Role::kAgent) {
    return MakeError(ErrorCode::kPermissionDenied,
                     "the agent link needs an agent token; " + caller.user +
                         " presented a user token (mculab-server admin agent add HOST prints one)");
  }
  if (caller.user != agent) {
    return MakeError(ErrorCode::kPermissionDenied,
                     "this agent token belongs to agent " + caller.user + ", not " +
                         std::string(agent) + ": give each agent its own token, or set its name");
  }
  return {};
}

}  // namespace mculab::server
