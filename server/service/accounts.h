// Accounts: users with a role, and the bearer tokens of users and agents.
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
// Open streams (agent links, job watches, the page's event streams) authenticate once, so they
// also watch their token (WatchToken): CheckRevocations() re-reads every watched token from the
// store, bypassing the cache, and ends the streams of revoked ones. A background thread
// (StartRevocationChecks) runs it every `period`, and Revoke() runs it at once, so a revocation
// by another process ends the streams within about a second.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/result.h"
#include "server/service/caller.h"
#include "server/service/clock.h"
#include "server/service/store.h"

namespace mculab::server {

inline constexpr std::string_view kUserTokenPrefix = "mcl_u_";
inline constexpr std::string_view kAgentTokenPrefix = "mcl_a_";

// The user name health-check jobs show in the history. Reserved: no account may take it, so the
// history never mixes a person's jobs with the server's (health checks are known by
// Job::origin, not by this name).
inline constexpr const char* kHealthCheckUser = "lab";
// The actor of the changes the server makes by itself (a timeout, a requeue) in a job's history.
// Reserved like kHealthCheckUser. Reserved names are compared ignoring case, and user names are
// ASCII only, so no account looks like either.
inline constexpr const char* kServerActor = "server";

// "viewer" | "member" | "admin" -> the role; anything else is kInvalidArgument naming the roles.
Result<Role> ParseUserRole(std::string_view name);

// A fresh random token of `prefix` (kUserTokenPrefix or kAgentTokenPrefix).
Result<std::string> MakeToken(std::string_view prefix);
// The id a token is listed and revoked by: its prefix and first 8 hex digits.
std::string TokenId(std::string_view token);

struct IssuedToken {
  std::string token;  // shown once
  TokenRecord record;
};

struct Account {
  User user;
  std::vector<TokenRecord> tokens;
};

// A stream's interest in its token; destroying it ends the interest (a callback that is already
// running may still finish, so callbacks must only reach what they hold weakly or by id).
class TokenSubscription;

class Accounts {
 public:
  static constexpr std::int64_t kDefaultCacheTtlMs = 2000;

  Accounts(AccountStore& store, Clock& clock, std::int64_t cache_ttl_ms = kDefaultCacheTtlMs);
  ~Accounts();

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
  Result<TokenRecord> Revoke(std::string_view token_or_id);

  // ---- open streams ----
  // Calls `on_revoked` once, without locks held, when a check finds `token` revoked or no longer
  // known. Null for an empty token (in-process callers have none: nothing to watch).
  std::shared_ptr<TokenSubscription> WatchToken(const std::string& token,
                                                std::function<void()> on_revoked);
  // Checks every watched token against the store; returns how many streams it ended.
  std::size_t CheckRevocations();
  // Runs CheckRevocations every `period` on a thread of its own until StopRevocationChecks().
  void StartRevocationChecks(std::chrono::milliseconds period);
  void StopRevocationChecks();
  // Open streams watching their token (diagnostics and tests).
  std::size_t watched_streams() const;

  struct WatchRegistry;  // shared with the subscriptions, which may outlive this object

 private:
  struct Cached {
    Caller caller;
    std::int64_t until_ms = 0;
  };
  Result<IssuedToken> Issue(std::string_view prefix, std::string kind, std::string owner);

  AccountStore& store_;
  Clock& clock_;
  const std::int64_t cache_ttl_ms_;
  std::mutex mu_;
  std::map<std::string, Cached> cache_;  // by token hash
  std::shared_ptr<WatchRegistry> watches_;
  std::mutex checker_mu_;
  std::condition_variable checker_cv_;
  bool checker_stop_ = false;
  std::thread checker_;
};

}  // namespace mculab::server
