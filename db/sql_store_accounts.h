// SqlStore<C>'s users, tokens and follows: few rows, rare writes (each waits for its commit); the
// same SQL on both backends. Member definitions of db/sql_store.h, included only where SqlStore is
// instantiated (db/sqlite_store.cc, db/pg_store.cc). db-internal.
#pragma once

#include "db/sql_store.h"
#include "db/store_rows.h"

namespace mculab::db {
namespace accounts_sql {

template <typename C>
Status InsertToken(C& w, const TokenRecord& t) {
  using Use = typename C::Use;
  Use u(w.Statement(std::string("INSERT INTO tokens(") + kTokenCols +
                    ") VALUES(?,?,?,?,?,?) ON CONFLICT(hash) DO NOTHING"));
  u.Bind(t.hash).Bind(t.id).Bind(t.kind).Bind(t.owner).Bind(t.created_ms).Bind(t.revoked_ms);
  if (Status st = u.Exec("storing token"); !st.ok()) return st;
  if (w.Changes() == 0) {
    return MakeError(ErrorCode::kAlreadyExists, "token " + t.id + " is already stored");
  }
  return {};
}

}  // namespace accounts_sql

template <typename C>
Status SqlStore<C>::AddUser(const User& user, const TokenRecord& token) {
  using Use = typename C::Use;
  return WriteFunction([user, token](C& w) -> Status {
    {
      Use u(w.Statement(
          "INSERT INTO users(name, role, created_ms) VALUES(?,?,?) ON CONFLICT(name) DO NOTHING"));
      u.Bind(user.name).Bind(user.role).Bind(user.created_ms);
      if (Status st = u.Exec("storing user"); !st.ok()) return st;
    }
    if (w.Changes() == 0) {
      return MakeError(ErrorCode::kAlreadyExists, "user " + user.name + " already exists");
    }
    return accounts_sql::InsertToken(w, token);
  });
}

template <typename C>
Status SqlStore<C>::AddToken(const TokenRecord& token) {
  return WriteFunction([token](C& w) { return accounts_sql::InsertToken(w, token); });
}

template <typename C>
Status SqlStore<C>::RevokeToken(const std::string& hash, std::int64_t revoked_ms) {
  using Use = typename C::Use;
  return WriteFunction([hash, revoked_ms](C& w) -> Status {
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

template <typename C>
Result<std::optional<User>> SqlStore<C>::GetUser(const std::string& name) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement("SELECT name, role, created_ms FROM users WHERE name = ?"));
  u.Bind(name);
  return FirstRow<std::optional<User>>(
      u, [](Use& row) { return std::optional<User>(ReadUser(row)); }, std::optional<User>());
}

template <typename C>
Result<std::vector<User>> SqlStore<C>::ListUsers() {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement("SELECT name, role, created_ms FROM users ORDER BY name"));
  return AllRows(u, ReadUser<Use>);
}

template <typename C>
Result<std::optional<TokenRecord>> SqlStore<C>::FindToken(const std::string& hash) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(std::string("SELECT ") + kTokenCols +
                                     " FROM tokens WHERE hash = ?"));
  u.Bind(hash);
  return FirstRow<std::optional<TokenRecord>>(
      u, [](Use& row) { return std::optional<TokenRecord>(ReadToken(row)); },
      std::optional<TokenRecord>());
}

template <typename C>
Result<std::vector<TokenRecord>> SqlStore<C>::ListTokens() {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(std::string("SELECT ") + kTokenCols +
                                     " FROM tokens ORDER BY kind DESC, owner, created_ms"));
  return AllRows(u, ReadToken<Use>);
}

template <typename C>
Result<std::uint64_t> SqlStore<C>::AddFollow(const server::StoredFollow& f) {
  using Use = typename C::Use;
  auto id = std::make_shared<std::uint64_t>(0);
  Status s = WriteFunction([f, id](C& w) -> Status {
    Use u(w.Statement(
        "INSERT INTO follows(user_name, query, created_ms, notified_to) VALUES(?,?,?,?) "
        "RETURNING id"));
    u.Bind(f.user).Bind(f.query).Bind(f.created_ms).Bind(f.notified_to);
    if (!u.Next()) {
      if (Status st = u.status(); !st.ok()) return st;
      return MakeError(ErrorCode::kInternal, "storing a follow gave no id");
    }
    *id = u.UInt(0);
    while (u.Next()) {
    }
    return u.status();
  });
  if (!s.ok()) return s.error();
  return *id;
}

template <typename C>
Result<std::vector<server::StoredFollow>> SqlStore<C>::ListFollows() {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT id, user_name, query, created_ms, notified_to FROM follows ORDER BY id"));
  return AllRows(u, [](Use& row) {
    return server::StoredFollow{row.UInt(0), row.Text(1), row.Text(2), row.Int(3), row.Int(4)};
  });
}

template <typename C>
Status SqlStore<C>::DeleteFollow(std::uint64_t id) {
  using Use = typename C::Use;
  return WriteFunction([id](C& w) -> Status {
    Use u(w.Statement("DELETE FROM follows WHERE id = ?"));
    u.Bind(id);
    if (Status st = u.Exec("removing a follow"); !st.ok()) return st;
    if (w.Changes() == 0) return MakeError(ErrorCode::kNotFound, "no such follow");
    return {};
  });
}

template <typename C>
Status SqlStore<C>::SetFollowNotified(std::uint64_t id, server::JobId to) {
  using Use = typename C::Use;
  return WriteFunction([id, to](C& w) -> Status {
    Use u(w.Statement("UPDATE follows SET notified_to = ? WHERE id = ?"));
    u.Bind(to).Bind(id);
    return u.Exec("updating a follow");
  });
}

}  // namespace mculab::db
