// Statement helpers of the PostgreSQL store, its one way of running SQL, shaped like the SQLite
// store's (db/sql_statement.h) so both run the same SQL text and read rows with the same readers
// (db/store_rows.h, db/write_set_rows.h):
//
//   PgUse u(connection.Statement("SELECT ... WHERE id = ?"));
//   u.Bind(id);
//   while (u.Next()) ... u.Int(0) ...
//   if (!u.status().ok()) ...
//
// A PgConnection prepares each SQL text (PQprepare) the first time it is asked for it and keeps
// it for its life; `?` placeholders outside quoted text become $1, $2, ... A PgUse binds values
// in order (as text: PostgreSQL infers each parameter's type from where it stands), runs the
// statement (PQexecPrepared) and reads its rows one at a time (single-row mode, so a run of any
// size is read in bounded memory). One statement runs at a time on a connection: starting another
// drops the unread rows of the one before (which then reports an error if read on), as a read
// that stopped early (a limit reached) needs. The only SQL run as text is a migration's script
// (ExecScript) and the COPY of samples (CopyIn).
// db-internal: only db/pg_*.cc include this.
//
// Thread-safety: a PgConnection and its statements belong to one thread at a time.
#pragma once

#include <libpq-fe.h>

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

class PgConnection;

// `sql` with each `?` outside single-quoted text replaced by $1, $2, ... in order.
std::string NumberPlaceholders(const std::string& sql);

// A statement prepared on a connection, or the error that preparing it gave.
class PgStmt {
 public:
  PgStmt(PgConnection& c, std::string name, const std::string& sql);
  const std::optional<Error>& error() const { return error_; }
  bool in_use() const { return uses_ > 0; }
  const std::string& name() const { return name_; }

 private:
  friend class PgUse;
  PgConnection& c_;
  std::string name_;
  std::string sql_;
  std::optional<Error> error_;
  int uses_ = 0;
};

// One use of a prepared statement: binds parameters in order, runs it, reads its rows.
class PgUse {
 public:
  explicit PgUse(PgStmt& s) : stmt_(s), error_(s.error()) { ++stmt_.uses_; }
  ~PgUse();
  PgUse(const PgUse&) = delete;
  PgUse& operator=(const PgUse&) = delete;

  PgUse& Bind(std::int64_t v) { return BindText(std::to_string(v)); }
  PgUse& Bind(std::uint64_t v) { return Bind(static_cast<std::int64_t>(v)); }
  PgUse& Bind(std::uint32_t v) { return Bind(static_cast<std::int64_t>(v)); }
  PgUse& Bind(int v) { return Bind(static_cast<std::int64_t>(v)); }
  PgUse& Bind(bool v) { return Bind(static_cast<std::int64_t>(v ? 1 : 0)); }
  PgUse& Bind(double v);
  PgUse& Bind(std::string_view v) { return BindText(std::string(v)); }
  PgUse& Bind(const std::string& v) { return BindText(v); }
  PgUse& Bind(const char* v) { return BindText(v); }
  PgUse& BindNull() {
    values_.emplace_back();
    return *this;
  }

  // Runs a statement and keeps no rows.
  Status Exec(const char* what);
  // Runs the statement on the first call; true on a row, false at the end (check status()).
  bool Next();
  Status status() const { return error_ ? Status(*error_) : Status(); }

  bool IsNull(int col) const { return PQgetisnull(row_, 0, col) != 0; }
  std::int64_t Int(int col) const;
  std::uint64_t UInt(int col) const { return static_cast<std::uint64_t>(Int(col)); }
  std::uint32_t U32(int col) const { return static_cast<std::uint32_t>(Int(col)); }
  bool Bool(int col) const { return Int(col) != 0; }
  double Real(int col) const;
  std::string Text(int col) const;

 private:
  PgUse& BindText(std::string v) {
    values_.emplace_back(std::move(v));
    return *this;
  }
  friend class PgConnection;
  void Drain();  // reads what is left of a statement's rows, so the connection is free again
  // Makes this the connection's one running statement, dropping the rows of the one before.
  void TakeConnection();

  // The parameters as libpq takes them: each value's text, or null for SQL NULL.
  std::vector<const char*> Values() const;

  PgStmt& stmt_;
  std::vector<std::optional<std::string>> values_;
  std::optional<Error> error_;
  PGresult* row_ = nullptr;  // the current row (single-row mode)
  bool started_ = false;
  bool finished_ = false;
};

// One connection to PostgreSQL and the statements prepared on it. Owns the PGconn.
class PgConnection {
 public:
  using Use = PgUse;
  // `conninfo`: a postgresql:// URL or key=value pairs (libpq's). Errors never show a password.
  static Result<std::unique_ptr<PgConnection>> Open(const std::string& conninfo);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  PGconn* get() const { return c_; }
  // The statement for `sql`, prepared on first use and kept. Assembled SQL comes in few shapes;
  // past kMaxStatements the statements not in use are deallocated, so an odd one cannot grow it.
  PgStmt& Statement(const std::string& sql);
  // Rows changed by the last statement run with Exec.
  std::uint64_t Changes() const { return changes_; }
  // Runs a migration's script (several statements, no parameters).
  Status ExecScript(const std::string& sql);
  // The server's message for the last failure on this connection, one line.
  std::string LastError() const;

  // COPY ... FROM STDIN: starts it, sends `data` (the COPY's format), ends it. COPY cannot be
  // prepared: `copy_sql` is fixed text, every value travels in `data`.
  Status CopyIn(const std::string& copy_sql, std::string_view data);

 private:
  friend class PgUse;
  friend class PgStmt;
  explicit PgConnection(PGconn* c) : c_(c) {}
  PGconn* c_;
  std::unordered_map<std::string, std::unique_ptr<PgStmt>> statements_;
  // Ends the running statement's reading (if any): another is about to run.
  void Interrupt();
  static constexpr std::size_t kMaxStatements = 256;
  PgUse* running_ = nullptr;  // the statement whose rows are being read
  std::uint64_t changes_ = 0;
  std::uint64_t statements_named_ = 0;
};

}  // namespace mculab::db
