#include "db/pg_statement.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace mculab::db {
namespace {

std::string OneLine(const char* message) {
  // libpq's messages run over lines, the later ones indented with a tab.
  std::string m;
  for (const char* p = message ? message : ""; *p != '\0'; ++p) {
    const char c = (*p == '\n' || *p == '\t') ? ' ' : *p;
    if (c != ' ' || (!m.empty() && m.back() != ' ')) m += c;
  }
  while (!m.empty() && m.back() == ' ') m.pop_back();
  return m;
}

Error PgError(const PGresult* r, PGconn* c, const std::string& what) {
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  const std::string message = OneLine(r ? PQresultErrorMessage(r) : PQerrorMessage(c));
  // 23505: unique_violation, as SQLite's constraint errors: the caller's write failed alone.
  const ErrorCode code = state && std::string_view(state) == "23505" ? ErrorCode::kAlreadyExists
                                                                     : ErrorCode::kInternal;
  return MakeError(code, what + ": " + message);
}

}  // namespace

std::string NumberPlaceholders(const std::string& sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int n = 0;
  bool quoted = false;
  for (char c : sql) {
    if (c == '\'') quoted = !quoted;
    if (c == '?' && !quoted) {
      out += '$' + std::to_string(++n);
    } else {
      out += c;
    }
  }
  return out;
}

PgStmt::PgStmt(PgConnection& c, std::string name, const std::string& sql)
    : c_(c), name_(std::move(name)), sql_(NumberPlaceholders(sql)) {
  c.Interrupt();  // preparing is a command of its own on the connection
  PGresult* r = PQprepare(c.get(), name_.c_str(), sql_.c_str(), 0, nullptr);
  if (PQresultStatus(r) != PGRES_COMMAND_OK)
    error_ = PgError(r, c.get(), "preparing \"" + sql + "\"");
  PQclear(r);
}

PgUse& PgUse::Bind(double v) {
  if (std::isnan(v)) return BindText("NaN");
  if (std::isinf(v)) return BindText(v > 0 ? "Infinity" : "-Infinity");
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest exact text
  return BindText(ec == std::errc() ? std::string(buf, end) : std::to_string(v));
}

std::vector<const char*> PgUse::Values() const {
  std::vector<const char*> out;
  out.reserve(values_.size());
  for (const std::optional<std::string>& v : values_) out.push_back(v ? v->c_str() : nullptr);
  return out;
}

PgUse::~PgUse() {
  Drain();
  --stmt_.uses_;
}

void PgUse::Drain() {
  PQclear(row_);
  row_ = nullptr;
  if (stmt_.c_.running_ == this) stmt_.c_.running_ = nullptr;
  if (!started_ || finished_) return;
  while (PGresult* r = PQgetResult(stmt_.c_.get())) PQclear(r);
  finished_ = true;
}

void PgUse::TakeConnection() {
  stmt_.c_.Interrupt();
  stmt_.c_.running_ = this;
}

void PgConnection::Interrupt() {
  PgUse* running = running_;
  if (running == nullptr) return;
  const bool unread = !running->finished_;
  running->Drain();
  if (unread && !running->error_) {
    running->error_ = MakeError(ErrorCode::kInternal,
                                "its rows were dropped: another statement ran on the connection");
  }
}

Status PgUse::Exec(const char* what) {
  if (error_) return *error_;
  stmt_.c_.Interrupt();
  const std::vector<const char*> values = Values();
  PGresult* r = PQexecPrepared(stmt_.c_.get(), stmt_.name_.c_str(), static_cast<int>(values.size()),
                               values.data(), nullptr, nullptr, 0);
  const ExecStatusType st = PQresultStatus(r);
  Status s;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    s = PgError(r, stmt_.c_.get(), what);
    stmt_.c_.changes_ = 0;
  } else {
    const char* n = PQcmdTuples(r);
    stmt_.c_.changes_ = n && *n ? std::strtoull(n, nullptr, 10) : 0;
  }
  PQclear(r);
  return s;
}

bool PgUse::Next() {
  if (error_ || finished_) return false;
  PGconn* c = stmt_.c_.get();
  if (!started_) {
    TakeConnection();
    started_ = true;
    const std::vector<const char*> values = Values();
    if (!PQsendQueryPrepared(c, stmt_.name_.c_str(), static_cast<int>(values.size()), values.data(),
                             nullptr, nullptr, 0)) {
      error_ = PgError(nullptr, c, stmt_.sql_);
      finished_ = true;
      return false;
    }
    (void)PQsetSingleRowMode(c);
  }
  PQclear(row_);
  row_ = PQgetResult(c);
  const ExecStatusType st = row_ ? PQresultStatus(row_) : PGRES_TUPLES_OK;
  if (st == PGRES_SINGLE_TUPLE) return true;
  if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) error_ = PgError(row_, c, stmt_.sql_);
  Drain();
  return false;
}

std::int64_t PgUse::Int(int col) const {
  const char* v = PQgetvalue(row_, 0, col);
  return v ? std::strtoll(v, nullptr, 10) : 0;
}

double PgUse::Real(int col) const {
  const char* v = PQgetvalue(row_, 0, col);
  return v ? std::strtod(v, nullptr) : 0.0;
}

std::string PgUse::Text(int col) const {
  const char* v = PQgetvalue(row_, 0, col);
  return v ? std::string(v, static_cast<std::size_t>(PQgetlength(row_, 0, col))) : std::string();
}

Result<std::unique_ptr<PgConnection>> PgConnection::Open(const std::string& conninfo) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  if (c == nullptr) return MakeError(ErrorCode::kUnavailable, "out of memory");
  if (PQstatus(c) != CONNECTION_OK) {
    // libpq's message names the host or socket and the reason; never the password.
    Error e = MakeError(ErrorCode::kUnavailable, OneLine(PQerrorMessage(c)));
    PQfinish(c);
    return e;
  }
  // Our timestamps are integers and our text is UTF-8; notices (an IF NOT EXISTS that found the
  // object) are not for the log.
  PQsetNoticeProcessor(
      c, [](void*, const char*) {}, nullptr);
  if (PQsetClientEncoding(c, "UTF8") != 0) {
    Error e = MakeError(ErrorCode::kUnavailable, OneLine(PQerrorMessage(c)));
    PQfinish(c);
    return e;
  }
  return std::unique_ptr<PgConnection>(new PgConnection(c));
}

PgConnection::~PgConnection() {
  statements_.clear();
  PQfinish(c_);
}

PgStmt& PgConnection::Statement(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) {
    // One that failed to prepare is prepared again (under a new name) once nothing uses it.
    if (!it->second->error() || it->second->in_use()) return *it->second;
    statements_.erase(it);
  }
  if (statements_.size() >= kMaxStatements) {
    Interrupt();
    for (auto i = statements_.begin(); i != statements_.end();) {
      if (i->second->in_use()) {
        ++i;
        continue;
      }
      // Protocol housekeeping, no value in it: DEALLOCATE takes no parameters and cannot itself be
      // prepared (libpq 15 has no PQclosePrepared).
      if (!i->second->error()) PQclear(PQexec(c_, ("DEALLOCATE " + i->second->name()).c_str()));
      i = statements_.erase(i);
    }
  }
  const std::string name = "s" + std::to_string(++statements_named_);
  auto stmt = std::make_unique<PgStmt>(*this, name, sql);
  PgStmt& out = *stmt;
  statements_[sql] = std::move(stmt);
  return out;
}

Status PgConnection::ExecScript(const std::string& sql) {
  Interrupt();
  PGresult* r = PQexec(c_, sql.c_str());
  const ExecStatusType st = PQresultStatus(r);
  Status s;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY) {
    s = PgError(r, c_, "running a script");
  }
  PQclear(r);
  return s;
}

std::string PgConnection::LastError() const { return OneLine(PQerrorMessage(c_)); }

Status PgConnection::CopyIn(const std::string& copy_sql, std::string_view data) {
  Interrupt();
  PGresult* r = PQexec(c_, copy_sql.c_str());
  const bool started = PQresultStatus(r) == PGRES_COPY_IN;
  Status s = started ? Status() : PgError(r, c_, "starting COPY");
  PQclear(r);
  if (!started) return s;
  constexpr std::size_t kPiece = 1 << 20;
  bool sent = true;
  for (std::size_t i = 0; sent && i < data.size(); i += kPiece) {
    const std::size_t n = std::min(kPiece, data.size() - i);
    sent = PQputCopyData(c_, data.data() + i, static_cast<int>(n)) == 1;
  }
  PQputCopyEnd(c_, sent ? nullptr : "sending rows failed");
  while (PGresult* end = PQgetResult(c_)) {
    if (s.ok() && PQresultStatus(end) != PGRES_COMMAND_OK) s = PgError(end, c_, "COPY");
    PQclear(end);
  }
  return s;
}

}  // namespace mculab::db
