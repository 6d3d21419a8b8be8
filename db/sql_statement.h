// Statement helpers of the SQLite store, its one way of running SQL:
//
//   Use u(connection.Statement("SELECT ... WHERE id = ?"));
//   u.Bind(id);
//   while (u.Next()) ... u.Int(0) ...
//   if (!u.status().ok()) ...
//
// A Connection prepares each SQL text the first time it is asked for it and keeps the statement
// for its life (fixed SQL and the few shapes of assembled SQL alike); a Use binds parameters in
// order, steps, reads columns and resets the statement when it ends. A statement that failed to
// prepare reports that error from its Use. The only SQL run as text is a migration's script
// (ExecScript). db-internal: only db/*.cc include this.
//
// Thread-safety: a Connection and its statements belong to one thread at a time.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "db/row_loops.h"

namespace mculab::db {

Error SqlError(sqlite3* db, const std::string& what);

// A statement prepared on a connection, or the error that preparing it gave.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql);
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  sqlite3_stmt* get() const { return s_; }
  sqlite3* db() const { return db_; }
  const std::optional<Error>& error() const { return error_; }
  bool in_use() const { return uses_ > 0; }

 private:
  friend class Use;
  sqlite3_stmt* s_ = nullptr;
  sqlite3* db_ = nullptr;
  std::optional<Error> error_;
  int uses_ = 0;
};

// One use of a prepared statement: binds parameters in order, steps, reads columns, and resets
// the statement when it goes out of scope.
class Use {
 public:
  explicit Use(Stmt& s) : stmt_(s), s_(s.get()), db_(s.db()), error_(s.error()) { ++stmt_.uses_; }
  ~Use() {
    --stmt_.uses_;
    if (s_ == nullptr) return;
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;

  Use& Bind(std::int64_t v) {
    if (s_) sqlite3_bind_int64(s_, ++i_, v);
    return *this;
  }
  Use& Bind(std::uint64_t v) { return Bind(static_cast<std::int64_t>(v)); }
  Use& Bind(std::uint32_t v) { return Bind(static_cast<std::int64_t>(v)); }
  Use& Bind(int v) { return Bind(static_cast<std::int64_t>(v)); }
  Use& Bind(bool v) { return Bind(static_cast<std::int64_t>(v ? 1 : 0)); }
  Use& Bind(double v) {
    if (s_) sqlite3_bind_double(s_, ++i_, v);
    return *this;
  }
  Use& Bind(std::string_view v) {
    if (s_) sqlite3_bind_text(s_, ++i_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Use& Bind(const std::string& v) { return Bind(std::string_view(v)); }
  Use& Bind(const char* v) { return Bind(std::string_view(v)); }
  Use& BindNull() {
    if (s_) sqlite3_bind_null(s_, ++i_);
    return *this;
  }

  // Runs a statement that returns no rows.
  Status Exec(const char* what) {
    if (error_) return *error_;
    int rc = sqlite3_step(s_);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return SqlError(db_, what);
    return {};
  }
  // Advances to the next row: true on a row, false at the end (check status() for an error).
  bool Next() {
    if (error_) return false;
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) error_ = SqlError(db_, sqlite3_sql(s_));
    return false;
  }
  Status status() const { return error_ ? Status(*error_) : Status(); }

  int Columns() const { return s_ ? sqlite3_column_count(s_) : 0; }
  bool IsNull(int col) { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  std::int64_t Int(int col) { return sqlite3_column_int64(s_, col); }
  std::uint64_t UInt(int col) { return static_cast<std::uint64_t>(Int(col)); }
  std::uint32_t U32(int col) { return static_cast<std::uint32_t>(Int(col)); }
  bool Bool(int col) { return Int(col) != 0; }
  double Real(int col) { return sqlite3_column_double(s_, col); }
  std::string Text(int col) {
    const unsigned char* p = sqlite3_column_text(s_, col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<std::size_t>(sqlite3_column_bytes(s_, col)))
             : std::string();
  }

 private:
  Stmt& stmt_;
  sqlite3_stmt* s_;
  sqlite3* db_;
  int i_ = 0;
  std::optional<Error> error_;
};

// One database connection and the statements prepared on it. Owns the sqlite3 handle.
class Connection {
 public:
  using Use = db::Use;
  explicit Connection(sqlite3* db) : db_(db) {}
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* db() const { return db_; }
  // The statement for `sql`, prepared on first use and kept. Assembled SQL comes in few shapes;
  // past kMaxStatements the statements not in use are dropped, so an odd one cannot grow it.
  Stmt& Statement(const std::string& sql);
  // Rows changed by the last statement.
  std::uint64_t Changes() const { return static_cast<std::uint64_t>(sqlite3_changes64(db_)); }

 private:
  static constexpr std::size_t kMaxStatements = 256;
  sqlite3* db_;
  std::unordered_map<std::string, std::unique_ptr<Stmt>> statements_;
};

// Runs a migration's script (several statements, no parameters).
Status ExecScript(sqlite3* db, const std::string& sql);

}  // namespace mculab::db
