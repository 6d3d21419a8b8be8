// Statement helpers of the SQLite store: a prepared statement owned for the life of a
// connection (Stmt), one use of it (Use: bind in order, step, read columns, reset), and fixed SQL
// run directly (pragmas, migrations). db-internal: only db/*.cc include this.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace mculab::db {

Error SqlError(sqlite3* db, const std::string& what);

// A prepared statement owned for the life of a connection.
class Stmt {
 public:
  Stmt() = default;
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Status Prepare(sqlite3* db, const char* sql) {
    db_ = db;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s_, nullptr) != SQLITE_OK) {
      return SqlError(db, std::string("preparing \"") + sql + "\"");
    }
    return {};
  }
  sqlite3_stmt* get() const { return s_; }
  sqlite3* db() const { return db_; }

 private:
  sqlite3_stmt* s_ = nullptr;
  sqlite3* db_ = nullptr;
};

// One use of a prepared statement: binds parameters in order, steps, reads columns, and resets
// the statement when it goes out of scope.
class Use {
 public:
  explicit Use(const Stmt& s) : s_(s.get()), db_(s.db()) {}
  ~Use() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;

  Use& Bind(std::int64_t v) {
    sqlite3_bind_int64(s_, ++i_, v);
    return *this;
  }
  Use& Bind(std::uint64_t v) { return Bind(static_cast<std::int64_t>(v)); }
  Use& Bind(std::uint32_t v) { return Bind(static_cast<std::int64_t>(v)); }
  Use& Bind(int v) { return Bind(static_cast<std::int64_t>(v)); }
  Use& Bind(bool v) { return Bind(static_cast<std::int64_t>(v ? 1 : 0)); }
  Use& Bind(double v) {
    sqlite3_bind_double(s_, ++i_, v);
    return *this;
  }
  Use& Bind(std::string_view v) {
    sqlite3_bind_text(s_, ++i_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Use& Bind(const std::string& v) { return Bind(std::string_view(v)); }
  Use& Bind(const char* v) { return Bind(std::string_view(v)); }

  // Runs a statement that returns no rows.
  Status Exec(const char* what) {
    int rc = sqlite3_step(s_);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return SqlError(db_, what);
    return {};
  }
  // Advances to the next row: true on a row, false at the end (check status() for an error).
  bool Next() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) error_ = SqlError(db_, sqlite3_sql(s_));
    return false;
  }
  Status status() const { return error_ ? Status(*error_) : Status(); }

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
  sqlite3_stmt* s_;
  sqlite3* db_;
  int i_ = 0;
  std::optional<Error> error_;
};

Status ExecFixed(sqlite3* db, const char* sql);

}  // namespace mculab::db
