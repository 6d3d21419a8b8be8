// CheckServer: whether the lab server answers at an address and takes a token as an agent's, for
// `mculab-agent doctor`. It asks for an artifact named "" (FetchArtifact): the server checks the
// token first, then refuses the name as invalid, so a valid agent token gets INVALID_ARGUMENT and
// nothing changes on the server (no board registered, no refusal counted).
// Thread-safety: a function over its arguments.
#pragma once

#include <chrono>
#include <string>

#include "common/result.h"

namespace mculab::agent {

// kUnavailable when nothing answers at `address` within `timeout` (the message names the address),
// kUnauthenticated / kPermissionDenied with the server's words when the token is refused or is not
// an agent's; ok otherwise. `ca_pem` non-empty: TLS with that CA.
Status CheckServer(const std::string& address, const std::string& token, const std::string& ca_pem,
                   std::chrono::milliseconds timeout);

}  // namespace mculab::agent
