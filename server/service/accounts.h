// Accounts: users with a role, and the bearer tokens of users and agents (issue 3).
//
// A token is "mcl_u_<40 hex>" (user) or "mcl_a_<40 hex>" (agent): 160 random bits from
// /dev/urandom behind a prefix a person can read. Only its SHA-256 is stored; its id (the prefix
// and the first 8 hex digits) names it in lists and revocations. The token text is returned once,
// when it is made, and never again.
//
// Authenticate() is the one place a request's token becomes a Caller (the rpc layer and the HTTP
// layer both call it). Valid tokens are remembered for `cache_ttl` so a busy client does not read
// the database on every call; a revocation (made by `mculab-server admin`, another process) is
// therefore seen within cache_ttl. Unknown tokens are never cached.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "db/store.h"
#include "server/service/caller.h"
#include "server/service/clock.h"

namespace mculab::server {

inline constexpr std::string_view kUserTokenPrefix = "mcl_u_";
inline constexpr std::string_view kAgentTokenPrefix = "mcl_a_";

// The user name health-check jobs show in the history. Reserved: no account may take it, so the
// history never mixes a person's jobs with the server's (health checks are known by
// Job::origin, not by this name).
inline constexpr const char* kHealthCheckUser = "lab";

// "viewer" | "member" | "admin" -> the role; anything else is kInvalidArgument naming the roles.
Result<Role> ParseUserRole(std::string_view name);

// A fresh random token of `prefix` (kUserTokenPrefix or kAgentTokenPrefix).
Result<std::string> MakeToken(std::string_view prefix);
// The id a token is listed and revoked by: its prefix and first 8 hex digits.
std::string TokenId(std::string_view token);

struct IssuedToken {
  std::string token;  // shown once
  db::TokenRecord record;
};

struct Account {
  db::User user;
  std::vector<db::TokenRecord> tokens;
};

class Accounts {
 public:
  static constexpr std::int64_t kDefaultCacheTtlMs = 2000;

  Accounts(db::Store& store, Clock& clock, std::int64_t cache_ttl_ms = kDefaultCacheTtlMs);

  // The caller a request's bearer token stands for. Never an error: a missing, malformed, unknown
  // or revoked token gives role kNone with `problem` saying which, and RequireRole /
  // RequireAgent turn that into UNAUTHENTICATED. A store failure also gives kNone (and a log).
  Caller Authenticate(std::string_view token, std::string peer);

  // ---- administration (mculab-server admin ...) ----
  // A user and their first token. Names: 1-64 of [A-Za-z0-9._@-].
  Result<IssuedToken> AddUser(const std::string& name, std::string_view role);
  // Another token for an existing user.
  Result<IssuedToken> AddUserToken(const std::string& name);
  // A token for the agent named `host` (its [agent] name).
  Result<IssuedToken> AddAgent(const std::string& host);
  // Users with their tokens (revoked ones included), then agents (user.role "agent").
  Result<std::vector<Account>> List();
  // By the whole token or by its id ("mcl_u_1a2b3c4d"); kNotFound or an ambiguous id are errors
  // that say what to do. Returns the revoked token's record.
  Result<db::TokenRecord> Revoke(std::string_view token_or_id);

 private:
  struct Cached {
    Caller caller;
    std::int64_t until_ms = 0;
  };
  Result<IssuedToken> Issue(std::string_view prefix, std::string kind, std::string owner);

  db::Store& store_;
  Clock& clock_;
  const std::int64_t cache_ttl_ms_;
  std::mutex mu_;
  std::map<std::string, Cached> cache_;  // by token hash
};

}  // namespace mculab::server
