// SqliteStore: follows (server/service/alerts.h). Few rows, rare writes (each waits for its
// commit).
#include "db/sql_statement.h"
#include "db/sqlite_store.h"

namespace mculab::db {

Result<std::uint64_t> SqliteStore::AddFollow(const server::StoredFollow& f) {
  auto id = std::make_shared<std::uint64_t>(0);
  Status s = WriteFunction([f, id](Connection& w) -> Status {
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

Result<std::vector<server::StoredFollow>> SqliteStore::ListFollows() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT id, user_name, query, created_ms, notified_to FROM follows ORDER BY id"));
  return AllRows(u, [](Use& row) {
    return server::StoredFollow{row.UInt(0), row.Text(1), row.Text(2), row.Int(3), row.Int(4)};
  });
}

Status SqliteStore::DeleteFollow(std::uint64_t id) {
  return WriteFunction([id](Connection& w) -> Status {
    Use u(w.Statement("DELETE FROM follows WHERE id = ?"));
    u.Bind(id);
    if (Status st = u.Exec("removing a follow"); !st.ok()) return st;
    if (w.Changes() == 0) return MakeError(ErrorCode::kNotFound, "no such follow");
    return {};
  });
}

Status SqliteStore::SetFollowNotified(std::uint64_t id, server::JobId to) {
  return WriteFunction([id, to](Connection& w) -> Status {
    Use u(w.Statement("UPDATE follows SET notified_to = ? WHERE id = ?"));
    u.Bind(to).Bind(id);
    return u.Exec("updating a follow");
  });
}

}  // namespace mculab::db
