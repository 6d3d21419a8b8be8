#include <sqlite3.h>

#include "db/sql_statement.h"
#include "db/sqlite_store.h"

namespace mculab::db {

// ---------------------------------------------------------------------------------------------
// Accounts: few rows, rare writes; each statement is prepared where it is used.

namespace {

constexpr const char* kTokenCols = "hash, id, kind, owner, created_ms, revoked_ms";

TokenRecord ReadToken(Use& u) {
  return TokenRecord{u.Text(0), u.Text(1), u.Text(2), u.Text(3), u.Int(4), u.Int(5)};
}

Status InsertToken(sqlite3* db, const TokenRecord& t) {
  Stmt s;
  if (Status st = s.Prepare(db,
                            "INSERT INTO tokens(hash, id, kind, owner, created_ms, revoked_ms) "
                            "VALUES(?,?,?,?,?,?) ON CONFLICT(hash) DO NOTHING");
      !st.ok()) {
    return st;
  }
  Use u(s);
  u.Bind(t.hash).Bind(t.id).Bind(t.kind).Bind(t.owner).Bind(t.created_ms).Bind(t.revoked_ms);
  if (Status st = u.Exec("storing token"); !st.ok()) return st;
  if (sqlite3_changes(db) == 0) {
    return MakeError(ErrorCode::kAlreadyExists, "token " + t.id + " is already stored");
  }
  return {};
}

}  // namespace

Status SqliteStore::AddUser(const User& user, const TokenRecord& token) {
  return WriteFunction([user, token](sqlite3* db) -> Status {
    Stmt s;
    if (Status st = s.Prepare(db,
                              "INSERT INTO users(name, role, created_ms) VALUES(?,?,?) "
                              "ON CONFLICT(name) DO NOTHING");
        !st.ok()) {
      return st;
    }
    Use u(s);
    u.Bind(user.name).Bind(user.role).Bind(user.created_ms);
    if (Status st = u.Exec("storing user"); !st.ok()) return st;
    if (sqlite3_changes(db) == 0) {
      return MakeError(ErrorCode::kAlreadyExists, "user " + user.name + " already exists");
    }
    return InsertToken(db, token);
  });
}

Status SqliteStore::AddToken(const TokenRecord& token) {
  return WriteFunction([token](sqlite3* db) { return InsertToken(db, token); });
}

Status SqliteStore::RevokeToken(const std::string& hash, std::int64_t revoked_ms) {
  return WriteFunction([hash, revoked_ms](sqlite3* db) -> Status {
    Stmt s;
    if (Status st = s.Prepare(db,
                              "UPDATE tokens SET revoked_ms = CASE WHEN revoked_ms = 0 THEN ? "
                              "ELSE revoked_ms END WHERE hash = ?");
        !st.ok()) {
      return st;
    }
    Use u(s);
    u.Bind(revoked_ms).Bind(hash);
    if (Status st = u.Exec("revoking token"); !st.ok()) return st;
    if (sqlite3_changes(db) == 0) return MakeError(ErrorCode::kNotFound, "no such token");
    return {};
  });
}

Result<std::optional<User>> SqliteStore::GetUser(const std::string& name) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st = s.Prepare(read->db(), "SELECT name, role, created_ms FROM users WHERE name = ?");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  u.Bind(name);
  if (u.Next()) return std::optional<User>(User{u.Text(0), u.Text(1), u.Int(2)});
  if (!u.status().ok()) return u.status().error();
  return std::optional<User>();
}

Result<std::vector<User>> SqliteStore::ListUsers() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st = s.Prepare(read->db(), "SELECT name, role, created_ms FROM users ORDER BY name");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  std::vector<User> out;
  while (u.Next()) out.push_back(User{u.Text(0), u.Text(1), u.Int(2)});
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::optional<TokenRecord>> SqliteStore::FindToken(const std::string& hash) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  const std::string sql = std::string("SELECT ") + kTokenCols + " FROM tokens WHERE hash = ?";
  if (Status st = s.Prepare(read->db(), sql.c_str()); !st.ok()) return st.error();
  Use u(s);
  u.Bind(hash);
  if (u.Next()) return std::optional<TokenRecord>(ReadToken(u));
  if (!u.status().ok()) return u.status().error();
  return std::optional<TokenRecord>();
}

Result<std::vector<TokenRecord>> SqliteStore::ListTokens() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  const std::string sql =
      std::string("SELECT ") + kTokenCols + " FROM tokens ORDER BY kind DESC, owner, created_ms";
  if (Status st = s.Prepare(read->db(), sql.c_str()); !st.ok()) return st.error();
  Use u(s);
  std::vector<TokenRecord> out;
  while (u.Next()) out.push_back(ReadToken(u));
  if (!u.status().ok()) return u.status().error();
  return out;
}

}  // namespace mculab::db
