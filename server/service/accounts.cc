#include "server/service/accounts.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <set>

#include "common/sha256.h"

namespace mculab::server {
namespace {

constexpr std::size_t kRandomBytes = 20;  // 160 bits: 40 hex digits
constexpr std::size_t kIdHexDigits = 8;
constexpr std::size_t kMaxCacheEntries = 10'000;

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '@';
  });
}

Status CheckName(std::string_view what, const std::string& name) {
  if (ValidName(name)) return {};
  if (std::any_of(name.begin(), name.end(), [](char c) { return (c & 0x80) != 0; })) {
    // Non-ASCII letters can look like ASCII ones ('lаb' with a Cyrillic 'а' reads as 'lab').
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string(what) + " name '" + name +
                         "' is not valid: names are ASCII only (1 to 64 letters a-z or A-Z, "
                         "digits, '.', '_', '-' or '@'), so no two of them look alike");
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   std::string(what) + " name '" + name +
                       "' is not valid: use 1 to 64 letters, digits, '.', '_', '-' or '@'");
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool LooksLikeToken(std::string_view token) {
  if (!token.starts_with(kUserTokenPrefix) && !token.starts_with(kAgentTokenPrefix)) return false;
  std::string_view hex = token.substr(kUserTokenPrefix.size());
  return hex.size() == 2 * kRandomBytes && std::all_of(hex.begin(), hex.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

Result<Role> ParseUserRole(std::string_view name) {
  if (name == "viewer") return Role::kViewer;
  if (name == "member") return Role::kMember;
  if (name == "admin") return Role::kAdmin;
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown role '" + std::string(name) + "' (roles: admin, member, viewer)");
}

Result<std::string> MakeToken(std::string_view prefix) {
  std::array<unsigned char, kRandomBytes> bytes{};
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return MakeError(ErrorCode::kInternal,
                     std::string("cannot open /dev/urandom: ") + std::strerror(errno));
  }
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      return MakeError(ErrorCode::kInternal,
                       std::string("cannot read /dev/urandom: ") + std::strerror(err));
    }
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token(prefix);
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 0xf];
  }
  return token;
}

std::string TokenId(std::string_view token) {
  return std::string(token.substr(0, kUserTokenPrefix.size() + kIdHexDigits));
}

struct Accounts::WatchRegistry {
  struct Entry {
    std::string hash;
    std::function<void()> on_revoked;
  };
  mutable std::mutex mu;
  std::uint64_t next_id = 1;
  std::map<std::uint64_t, Entry> entries;
};

class TokenSubscription {
 public:
  TokenSubscription(std::weak_ptr<Accounts::WatchRegistry> registry, std::uint64_t id)
      : registry_(std::move(registry)), id_(id) {}
  ~TokenSubscription() {
    if (auto r = registry_.lock()) {
      std::lock_guard l(r->mu);
      r->entries.erase(id_);
    }
  }
  TokenSubscription(const TokenSubscription&) = delete;
  TokenSubscription& operator=(const TokenSubscription&) = delete;

 private:
  std::weak_ptr<Accounts::WatchRegistry> registry_;
  std::uint64_t id_;
};

Accounts::Accounts(AccountStore& store, Clock& clock, std::int64_t cache_ttl_ms)
    : store_(store),
      clock_(clock),
      cache_ttl_ms_(cache_ttl_ms),
      watches_(std::make_shared<WatchRegistry>()) {}

Accounts::~Accounts() { StopRevocationChecks(); }

std::shared_ptr<TokenSubscription> Accounts::WatchToken(const std::string& token,
                                                        std::function<void()> on_revoked) {
  if (token.empty()) return nullptr;
  std::lock_guard l(watches_->mu);
  const std::uint64_t id = watches_->next_id++;
  watches_->entries[id] = WatchRegistry::Entry{Sha256Hex(token), std::move(on_revoked)};
  return std::make_shared<TokenSubscription>(watches_, id);
}

std::size_t Accounts::CheckRevocations() {
  std::set<std::string> hashes;
  {
    std::lock_guard l(watches_->mu);
    for (const auto& [id, e] : watches_->entries) hashes.insert(e.hash);
  }
  std::set<std::string> gone;
  for (const std::string& hash : hashes) {
    auto found = store_.FindToken(hash);
    if (!found.ok()) continue;  // a store problem is not a revocation
    if (!found->has_value() || (*found)->revoked_ms != 0) gone.insert(hash);
  }
  if (gone.empty()) return 0;
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard l(watches_->mu);
    for (auto it = watches_->entries.begin(); it != watches_->entries.end();) {
      if (gone.contains(it->second.hash)) {
        callbacks.push_back(std::move(it->second.on_revoked));
        it = watches_->entries.erase(it);
      } else {
        ++it;
      }
    }
  }
  {
    std::lock_guard l(mu_);
    for (const std::string& hash : gone) cache_.erase(hash);
  }
  if (!callbacks.empty()) {
    spdlog::warn("ending {} open stream(s) whose token was revoked", callbacks.size());
  }
  for (auto& f : callbacks) {
    if (f) f();
  }
  return callbacks.size();
}

void Accounts::StartRevocationChecks(std::chrono::milliseconds period) {
  std::lock_guard l(checker_mu_);
  if (checker_.joinable()) return;
  checker_stop_ = false;
  checker_ = std::thread([this, period] {
    std::unique_lock lock(checker_mu_);
    while (!checker_stop_) {
      checker_cv_.wait_for(lock, period, [&] { return checker_stop_; });
      if (checker_stop_) break;
      lock.unlock();
      CheckRevocations();
      lock.lock();
    }
  });
}

void Accounts::StopRevocationChecks() {
  std::thread t;
  {
    std::lock_guard l(checker_mu_);
    checker_stop_ = true;
    t = std::move(checker_);
  }
  checker_cv_.notify_all();
  if (t.joinable()) t.join();
}

std::size_t Accounts::watched_streams() const {
  std::lock_guard l(watches_->mu);
  return watches_->entries.size();
}

Caller Accounts::Authenticate(std::string_view token, std::string peer) {
  Caller caller;
  caller.user.clear();
  caller.role = Role::kNone;
  caller.token = std::string(token);
  caller.peer = std::move(peer);
  if (token.empty()) {
    caller.problem = "no token was given (send \"authorization: Bearer <token>\")";
    return caller;
  }
  if (!LooksLikeToken(token)) {
    caller.problem = "the token is not an mculab token (mcl_u_... or mcl_a_... with 40 hex digits)";
    return caller;
  }
  const std::string hash = Sha256Hex(token);
  const std::int64_t now = clock_.NowMs();
  {
    std::lock_guard l(mu_);
    auto it = cache_.find(hash);
    if (it != cache_.end()) {
      if (it->second.until_ms > now) {
        Caller cached = it->second.caller;
        cached.token = caller.token;
        cached.peer = caller.peer;
        return cached;
      }
      cache_.erase(it);
    }
  }
  auto found = store_.FindToken(hash);
  if (!found.ok()) {
    spdlog::error("checking a token: {}", found.error().message);
    caller.problem = "the server could not check the token: " + found.error().message;
    return caller;
  }
  if (!found->has_value()) {
    caller.problem = "token " + TokenId(token) + " is not known to this server";
    return caller;
  }
  const TokenRecord& t = **found;
  if (t.revoked_ms != 0) {
    caller.problem = "token " + t.id + " was revoked";
    return caller;
  }
  if (t.kind == "agent") {
    caller.user = t.owner;
    caller.role = Role::kAgent;
  } else {
    auto user = store_.GetUser(t.owner);
    if (!user.ok() || !user->has_value()) {
      caller.problem = "token " + t.id + " belongs to user " + t.owner + ", who does not exist";
      return caller;
    }
    auto role = ParseUserRole((*user)->role);
    if (!role.ok()) {
      caller.problem = "user " + t.owner + " has an unknown role '" + (*user)->role + "'";
      return caller;
    }
    caller.user = t.owner;
    caller.role = *role;
  }
  {
    std::lock_guard l(mu_);
    if (cache_.size() >= kMaxCacheEntries) cache_.clear();
    Caller cached = caller;
    cached.token.clear();
    cached.peer.clear();
    cache_[hash] = Cached{std::move(cached), now + cache_ttl_ms_};
  }
  return caller;
}

Result<IssuedToken> Accounts::Issue(std::string_view prefix, std::string kind, std::string owner) {
  auto token = MakeToken(prefix);
  if (!token.ok()) return token.error();
  IssuedToken out;
  out.token = *token;
  out.record.hash = Sha256Hex(*token);
  out.record.id = TokenId(*token);
  out.record.kind = std::move(kind);
  out.record.owner = std::move(owner);
  out.record.created_ms = clock_.NowMs();
  return out;
}

Result<IssuedToken> Accounts::AddUser(const std::string& name, std::string_view role) {
  if (Status s = CheckName("user", name); !s.ok()) return s.error();
  const std::string folded = AsciiLower(name);
  if (folded == kHealthCheckUser || folded == kServerActor) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "user name '" + name + "' is reserved (names are compared ignoring case): '" +
                         std::string(folded == kHealthCheckUser ? kHealthCheckUser : kServerActor) +
                         "' is the user of the server's health-check jobs or the actor of its own "
                         "changes in a job's history; choose another name");
  }
  auto parsed = ParseUserRole(role);
  if (!parsed.ok()) return parsed.error();
  // Two people whose names differ only in case would read as one in the history.
  auto users = store_.ListUsers();
  if (!users.ok()) return users.error();
  for (const User& u : *users) {
    if (u.name != name && AsciiLower(u.name) == folded) {
      return MakeError(ErrorCode::kAlreadyExists,
                       "user name '" + name + "' differs from the existing user '" + u.name +
                           "' only in case; names are compared ignoring case, choose another");
    }
  }
  auto issued = Issue(kUserTokenPrefix, "user", name);
  if (!issued.ok()) return issued.error();
  const User user{name, std::string(RoleName(*parsed)), clock_.NowMs()};
  if (Status s = store_.AddUser(user, issued->record); !s.ok()) {
    if (s.error().code == ErrorCode::kAlreadyExists) {
      return MakeError(ErrorCode::kAlreadyExists, "user " + name +
                                                      " already exists (`admin token add " + name +
                                                      "` gives them another token)");
    }
    return s.error();
  }
  return issued;
}

Result<IssuedToken> Accounts::AddUserToken(const std::string& name) {
  auto user = store_.GetUser(name);
  if (!user.ok()) return user.error();
  if (!user->has_value()) {
    return MakeError(ErrorCode::kNotFound, "no user " + name +
                                               " (`admin user list` shows them; `admin user add " +
                                               name + " --role member` makes one)");
  }
  auto issued = Issue(kUserTokenPrefix, "user", name);
  if (!issued.ok()) return issued.error();
  if (Status s = store_.AddToken(issued->record); !s.ok()) return s.error();
  return issued;
}

Result<IssuedToken> Accounts::AddAgent(const std::string& host) {
  if (Status s = CheckName("agent", host); !s.ok()) return s.error();
  auto issued = Issue(kAgentTokenPrefix, "agent", host);
  if (!issued.ok()) return issued.error();
  if (Status s = store_.AddToken(issued->record); !s.ok()) return s.error();
  return issued;
}

Result<std::vector<Account>> Accounts::List() {
  auto users = store_.ListUsers();
  if (!users.ok()) return users.error();
  auto tokens = store_.ListTokens();
  if (!tokens.ok()) return tokens.error();
  std::vector<Account> out;
  std::map<std::string, std::size_t> index;
  for (User& u : *users) {
    index[u.name] = out.size();
    out.push_back(Account{std::move(u), {}});
  }
  std::map<std::string, std::size_t> agents;
  for (TokenRecord& t : *tokens) {
    if (t.kind == "agent") {
      auto [it, added] = agents.try_emplace(t.owner, out.size());
      if (added) out.push_back(Account{User{t.owner, "agent", t.created_ms}, {}});
      out[it->second].tokens.push_back(std::move(t));
    } else if (auto it = index.find(t.owner); it != index.end()) {
      out[it->second].tokens.push_back(std::move(t));
    }
  }
  return out;
}

Result<TokenRecord> Accounts::Revoke(std::string_view token_or_id) {
  const std::string text(token_or_id);
  std::optional<TokenRecord> target;
  if (LooksLikeToken(text)) {
    auto found = store_.FindToken(Sha256Hex(text));
    if (!found.ok()) return found.error();
    target = *found;
  } else {
    auto tokens = store_.ListTokens();
    if (!tokens.ok()) return tokens.error();
    std::vector<TokenRecord> matches;
    for (TokenRecord& t : *tokens) {
      if (!text.empty() && t.id.starts_with(text) && text.size() >= kUserTokenPrefix.size() + 4) {
        matches.push_back(std::move(t));
      }
    }
    if (matches.size() > 1) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          "'" + text + "' matches " + std::to_string(matches.size()) +
              " tokens; give the whole id (`admin user list` shows them) or the token");
    }
    if (matches.size() == 1) target = std::move(matches.front());
  }
  if (!target) {
    return MakeError(ErrorCode::kNotFound,
                     "no token '" + TokenId(text) +
                         "' (give the token or its id, at least 10 characters like "
                         "mcl_u_1a2b; `admin user list` shows the ids)");
  }
  if (Status s = store_.RevokeToken(target->hash, clock_.NowMs()); !s.ok()) return s.error();
  {
    std::lock_guard l(mu_);
    cache_.erase(target->hash);
  }
  CheckRevocations();  // this process's open streams of the token end now
  auto again = store_.FindToken(target->hash);
  if (again.ok() && again->has_value()) return **again;
  return *target;
}

}  // namespace mculab::server
