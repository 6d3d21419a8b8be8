// SqliteStore: users and tokens. Few rows, rare writes (each waits for its commit).
#include "db/sql_statement.h"
#include "db/sqlite_store.h"
#include "db/store_rows.h"

namespace mculab::db {
namespace {

Status InsertToken(Connection& w, const TokenRecord& t) {
  Use u(w.Statement(std::string("INSERT INTO tokens(") + kTokenCols +
                    ") VALUES(?,?,?,?,?,?) ON CONFLICT(hash) DO NOTHING"));
  u.Bind(t.hash).Bind(t.id).Bind(t.kind).Bind(t.owner).Bind(t.created_ms).Bind(t.revoked_ms);
  if (Status st = u.Exec("storing token"); !st.ok()) return st;
  if (w.Changes() == 0) {
    return MakeError(ErrorCode::kAlreadyExists, "token " + t.id + " is already stored");
  }
  return {};
}

}  // namespace

Status SqliteStore::AddUser(const User& user, const TokenRecord& token) {
  return WriteFunction([user, token](Connection& w) -> Status {
    {
      Use u(w.Statement(
          "INSERT INTO users(name, role, created_ms) VALUES(?,?,?) ON CONFLICT(name) DO NOTHING"));
      u.Bind(user.name).Bind(user.role).Bind(user.created_ms);
      if (Status st = u.Exec("storing user"); !st.ok()) return st;
    }
    if (w.Changes() == 0) {
      return MakeError(ErrorCode::kAlreadyExists, "user " + user.name + " already exists");
    }
    return InsertToken(w, token);
  });
}

Status SqliteStore::AddToken(const TokenRecord& token) {
  return WriteFunction([token](Connection& w) { return InsertToken(w, token); });
}

Status SqliteStore::RevokeToken(const std::string& hash, std::int64_t revoked_ms) {
  return WriteFunction([hash, revoked_ms](Connection& w) -> Status {
    {
      Use u(w.Statement(
          "UPDATE tokens SET revoked_ms = CASE WHEN revoked_ms = 0 THEN ? ELSE revoked_ms END "
          "WHERE hash = ?"));
      u.Bind(revoked_ms).Bind(hash);
      if (Status st = u.Exec("revoking token"); !st.ok()) return st;
    }
    if (w.Changes() == 0) return MakeError(ErrorCode::kNotFound, "no such token");
    return {};
  });
}

Result<std::optional<User>> SqliteStore::GetUser(const std::string& name) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement("SELECT name, role, created_ms FROM users WHERE name = ?"));
  u.Bind(name);
  return FirstRow<std::optional<User>>(
      u, [](Use& row) { return std::optional<User>(ReadUser(row)); }, std::optional<User>());
}

Result<std::vector<User>> SqliteStore::ListUsers() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement("SELECT name, role, created_ms FROM users ORDER BY name"));
  return AllRows(u, ReadUser<Use>);
}

Result<std::optional<TokenRecord>> SqliteStore::FindToken(const std::string& hash) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(std::string("SELECT ") + kTokenCols +
                                     " FROM tokens WHERE hash = ?"));
  u.Bind(hash);
  return FirstRow<std::optional<TokenRecord>>(
      u, [](Use& row) { return std::optional<TokenRecord>(ReadToken(row)); },
      std::optional<TokenRecord>());
}

Result<std::vector<TokenRecord>> SqliteStore::ListTokens() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(std::string("SELECT ") + kTokenCols +
                                     " FROM tokens ORDER BY kind DESC, owner, created_ms"));
  return AllRows(u, ReadToken<Use>);
}

}  // namespace mculab::db
