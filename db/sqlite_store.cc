#include "db/sqlite_store.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <future>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/crash_point.h"

namespace mculab::db {
namespace {

using server::BoardHealth;
using server::BoardState;
using server::JobState;
using server::RunState;

// Rows per multi-row sample INSERT (6 parameters each, well under SQLite's parameter limit).
constexpr int kSamplesPerInsert = 64;

Error SqlError(sqlite3* db, const std::string& what) {
  return MakeError(ErrorCode::kInternal, what + ": " + (db ? sqlite3_errmsg(db) : "no database"));
}

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

Status ExecFixed(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    return MakeError(ErrorCode::kInternal, std::string(sql) + ": " + msg);
  }
  return {};
}

std::string JoinInts(const std::vector<std::int32_t>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  return out;
}

std::vector<std::int32_t> SplitInts(const std::string& s) {
  std::vector<std::int32_t> out;
  const char* p = s.data();
  const char* end = p + s.size();
  while (p < end) {
    std::int32_t v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) break;
    out.push_back(v);
    p = next;
    if (p < end && *p == ',') ++p;
  }
  return out;
}

std::string JoinStrings(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += v[i];
  }
  return out;
}

std::vector<std::string> SplitStrings(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string TagsToJson(const std::map<std::string, std::string>& tags) {
  return nlohmann::json(tags).dump();
}

std::map<std::string, std::string> TagsFromJson(const std::string& text) {
  std::map<std::string, std::string> tags;
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return tags;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.value().is_string()) tags[it.key()] = it.value().get<std::string>();
  }
  return tags;
}

constexpr const char* kJobCols =
    "j.id, j.user_name, j.kind, j.board, j.op, j.label, j.state, j.iterations, j.warmup, "
    "j.num_cases, j.cases_artifact, j.timeout_s, j.attempts, j.created_ms, j.started_ms, "
    "j.finished_ms, j.message, j.assigned_board, j.last_run_id, COALESCE(r.progress_done, 0), "
    "j.priority, j.firmware_artifact, j.blob_artifact, j.tags, j.origin "
    "FROM jobs j LEFT JOIN runs r ON r.id = j.last_run_id ";

Result<Job> ReadJob(Use& u) {
  Job j;
  j.id = u.Int(0);
  j.user = u.Text(1);
  j.kind = u.Text(2);
  j.board = u.Text(3);
  j.op = u.Text(4);
  j.label = u.Text(5);
  std::string state = u.Text(6);
  auto parsed = server::ParseJobState(state);
  if (!parsed) {
    return MakeError(ErrorCode::kDataLoss,
                     "job " + std::to_string(j.id) + " has an unknown state '" + state + "'");
  }
  j.state = *parsed;
  j.iterations = u.U32(7);
  j.warmup = u.U32(8);
  j.num_cases = u.U32(9);
  j.cases_artifact = u.Text(10);
  j.timeout_s = u.U32(11);
  j.attempts = u.U32(12);
  j.created_ms = u.Int(13);
  j.started_ms = u.Int(14);
  j.finished_ms = u.Int(15);
  j.message = u.Text(16);
  j.assigned_board = u.Text(17);
  j.last_run_id = u.Int(18);
  j.progress_done = u.UInt(19);
  j.priority = server::ParseJobPriority(u.Text(20)).value_or(server::JobPriority::kNormal);
  j.firmware_artifact = u.Text(21);
  j.blob_artifact = u.Text(22);
  j.tags = TagsFromJson(u.Text(23));
  j.origin = server::ParseJobOrigin(u.Text(24)).value_or(server::JobOrigin::kUser);
  return j;
}

constexpr const char* kRunCols =
    "id, job_id, attempt, board, agent, state, created_ms, finished_ms, message, "
    "batches_expected, progress_done, started, runner_version, port, cpu, clock_hz, emulated, "
    "timer_unit, counters, firmware_sha256, workload_sha256, toolchain, board_serial, note, seed "
    "FROM runs ";

Result<Run> ReadRun(Use& u) {
  Run r;
  r.id = u.Int(0);
  r.job_id = u.Int(1);
  r.attempt = u.U32(2);
  r.board = u.Text(3);
  r.agent = u.Text(4);
  std::string state = u.Text(5);
  auto parsed = server::ParseRunState(state);
  if (!parsed) {
    return MakeError(ErrorCode::kDataLoss,
                     "run " + std::to_string(r.id) + " has an unknown state '" + state + "'");
  }
  r.state = *parsed;
  r.created_ms = u.Int(6);
  r.finished_ms = u.Int(7);
  r.message = u.Text(8);
  r.batches_expected = u.UInt(9);
  r.progress_done = u.UInt(10);
  r.started = u.Bool(11);
  auto& p = r.provenance;
  p.runner_version = u.Text(12);
  p.port = u.Text(13);
  p.cpu = u.Text(14);
  p.clock_hz = u.UInt(15);
  p.emulated = u.Bool(16);
  p.timer_unit = u.Text(17);
  p.counters = SplitStrings(u.Text(18));
  p.firmware_sha256 = u.Text(19);
  p.workload_sha256 = u.Text(20);
  p.toolchain = u.Text(21);
  p.board_serial = u.Text(22);
  p.note = u.Text(23);
  p.seed = u.U32(24);
  return r;
}

constexpr const char* kBoardCols =
    "name, kind, agent, tags, emulated, serial, ram_bytes, state, health, current_job, updated_ms, "
    "holder, lease_until_ms, reservation_note, hold, health_failures, calibration "
    "FROM boards ";

Result<Board> ReadBoard(Use& u) {
  Board b;
  b.name = u.Text(0);
  b.kind = u.Text(1);
  b.agent = u.Text(2);
  b.tags = TagsFromJson(u.Text(3));
  b.emulated = u.Bool(4);
  b.serial = u.Text(5);
  b.ram_bytes = u.UInt(6);
  auto state = server::ParseBoardState(u.Text(7));
  auto health = server::ParseBoardHealth(u.Text(8));
  if (!state || !health) {
    return MakeError(ErrorCode::kDataLoss, "board " + b.name + " has an unknown state or health");
  }
  b.state = *state;
  b.health = *health;
  b.current_job = u.Int(9);
  b.updated_ms = u.Int(10);
  b.holder = u.Text(11);
  b.lease_until_ms = u.Int(12);
  b.reservation_note = u.Text(13);
  b.hold = u.Bool(14);
  b.health_failures = u.U32(15);
  b.calibration = u.Int(16);
  return b;
}

std::string Sql(const char* head, const char* tail) { return std::string(head) + tail; }

std::string MultiSampleInsert(int rows) {
  std::string sql =
      "INSERT INTO samples(run_id, pass, case_index, iteration, metric, value) VALUES ";
  for (int i = 0; i < rows; ++i) sql += i ? ",(?,?,?,?,?,?)" : "(?,?,?,?,?,?)";
  return sql;
}

}  // namespace

// Every prepared statement of one connection. The writer's connection uses the write ones, the
// read connection the read ones; each is prepared on its own connection.
class SqliteStore::Statements {
 public:
  // Writes.
  Stmt begin, commit, rollback, savepoint, release, rollback_to;
  Stmt insert_artifact, upsert_board, upsert_run, update_job, insert_transition,
      insert_board_transition, upsert_case_result, upsert_case_stats, insert_batch, insert_sample,
      insert_samples_multi, add_progress, insert_job, insert_case, reserve_ids;
  // Reads.
  Stmt get_job, list_jobs, list_active_jobs, get_cases, get_transitions, list_boards,
      get_board_transitions, get_run, list_runs, max_job, max_run, get_samples, count_samples,
      scan_samples, get_case_results, get_case_stats, get_artifact, artifact_usage,
      artifacts_before, user_version, journal_mode;
  Stmt list_batches;

  Status PrepareWrites(sqlite3* db) {
    const std::string multi = MultiSampleInsert(kSamplesPerInsert);
    const std::pair<Stmt*, const char*> list[] = {
        {&begin, "BEGIN IMMEDIATE"},
        {&commit, "COMMIT"},
        {&rollback, "ROLLBACK"},
        {&savepoint, "SAVEPOINT write_set"},
        {&release, "RELEASE write_set"},
        {&rollback_to, "ROLLBACK TO write_set"},
        {&insert_artifact,
         "INSERT INTO artifacts(sha256, size, name, user_name, created_ms) VALUES(?,?,?,?,?) "
         "ON CONFLICT(sha256) DO NOTHING"},
        {&upsert_board,
         "INSERT INTO boards(name, kind, agent, tags, emulated, serial, ram_bytes, state, health, "
         "current_job, updated_ms, holder, lease_until_ms, reservation_note, hold, "
         "health_failures, calibration) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
         "ON CONFLICT(name) DO UPDATE SET "
         "kind=excluded.kind, agent=excluded.agent, tags=excluded.tags, "
         "emulated=excluded.emulated, serial=excluded.serial, ram_bytes=excluded.ram_bytes, "
         "state=excluded.state, health=excluded.health, current_job=excluded.current_job, "
         "updated_ms=excluded.updated_ms, holder=excluded.holder, "
         "lease_until_ms=excluded.lease_until_ms, reservation_note=excluded.reservation_note, "
         "hold=excluded.hold, health_failures=excluded.health_failures, "
         "calibration=excluded.calibration"},
        {&upsert_run,
         "INSERT INTO runs(id, job_id, attempt, board, agent, state, created_ms, finished_ms, "
         "message, batches_expected, started, runner_version, port, cpu, clock_hz, emulated, "
         "timer_unit, counters, firmware_sha256, workload_sha256, toolchain, board_serial, note, "
         "seed) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
         "ON CONFLICT(id) DO UPDATE SET "
         "state=excluded.state, finished_ms=excluded.finished_ms, message=excluded.message, "
         "batches_expected=excluded.batches_expected, started=excluded.started, "
         "runner_version=excluded.runner_version, port=excluded.port, cpu=excluded.cpu, "
         "clock_hz=excluded.clock_hz, emulated=excluded.emulated, "
         "timer_unit=excluded.timer_unit, counters=excluded.counters, "
         "firmware_sha256=excluded.firmware_sha256, workload_sha256=excluded.workload_sha256, "
         "toolchain=excluded.toolchain, board_serial=excluded.board_serial, note=excluded.note, "
         "seed=excluded.seed"},
        {&update_job,
         "UPDATE jobs SET state=?, attempts=?, started_ms=?, finished_ms=?, message=?, "
         "assigned_board=?, last_run_id=? WHERE id=?"},
        {&insert_transition,
         "INSERT INTO job_transitions(job_id, from_state, to_state, reason, actor, time_ms) "
         "VALUES(?,?,?,?,?,?)"},
        {&insert_board_transition,
         "INSERT INTO board_transitions(board, field, from_value, to_value, reason, actor, "
         "time_ms) VALUES(?,?,?,?,?,?,?)"},
        {&upsert_case_result,
         "INSERT INTO case_results(run_id, case_index, checksum, expected, ok, overhead) "
         "VALUES(?,?,?,?,?,?) ON CONFLICT(run_id, case_index) DO UPDATE SET "
         "checksum=excluded.checksum, expected=excluded.expected, ok=excluded.ok, "
         "overhead=excluded.overhead"},
        {&upsert_case_stats,
         "INSERT INTO case_stats(job_id, case_index, metric_index, run_id, metric, unit, n, min, "
         "median, mean, p90, p99, stddev, cv, max) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
         "ON CONFLICT(job_id, case_index, metric_index) DO UPDATE SET run_id=excluded.run_id, "
         "metric=excluded.metric, unit=excluded.unit, n=excluded.n, min=excluded.min, "
         "median=excluded.median, mean=excluded.mean, p90=excluded.p90, p99=excluded.p99, "
         "stddev=excluded.stddev, cv=excluded.cv, max=excluded.max"},
        {&insert_batch, "INSERT INTO batches(run_id, sequence) VALUES(?,?) ON CONFLICT DO NOTHING"},
        {&insert_sample,
         "INSERT INTO samples(run_id, pass, case_index, iteration, metric, value) "
         "VALUES(?,?,?,?,?,?)"},
        {&insert_samples_multi, multi.c_str()},
        {&add_progress,
         "UPDATE runs SET progress_done = progress_done + ? WHERE id = ? RETURNING progress_done"},
        {&insert_job,
         "INSERT INTO jobs(id, user_name, kind, board, op, label, state, iterations, warmup, "
         "num_cases, cases_artifact, timeout_s, attempts, created_ms, started_ms, finished_ms, "
         "message, assigned_board, last_run_id, priority, firmware_artifact, blob_artifact, "
         "tags, origin) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
        {&reserve_ids,
         "INSERT INTO id_reservations(name, last) VALUES(?, ?) "
         "ON CONFLICT(name) DO UPDATE SET last = MAX(last, excluded.last)"},
        {&insert_case,
         "INSERT INTO job_cases(job_id, case_index, case_id, params) VALUES(?,?,?,?)"},
    };
    for (auto& [stmt, sql] : list) {
      if (Status s = stmt->Prepare(db, sql); !s.ok()) return s;
    }
    return {};
  }

  Status PrepareReads(sqlite3* db) {
    const std::string job_one = Sql("SELECT ", kJobCols) + "WHERE j.id = ?";
    const std::string job_list =
        Sql("SELECT ", kJobCols) +
        "WHERE (?1 = '' OR j.state = ?1) AND (?2 = '' OR j.kind = ?2) "
        "AND (?3 = '' OR j.board = ?3 OR j.assigned_board = ?3) AND (?4 = '' OR j.op = ?4) "
        "AND (?5 = '' OR j.user_name = ?5) AND (?6 = 0 OR j.id < ?6) "
        "ORDER BY j.id DESC LIMIT ?7";
    const std::string job_active =
        Sql("SELECT ", kJobCols) +
        "WHERE j.state IN ('queued', 'assigned', 'preparing', 'running') ORDER BY j.id";
    const std::string run_one = Sql("SELECT ", kRunCols) + "WHERE id = ?";
    const std::string run_list = Sql("SELECT ", kRunCols) + "WHERE job_id = ? ORDER BY id";
    const std::string board_list = Sql("SELECT ", kBoardCols) + "ORDER BY name";
    const std::pair<Stmt*, const char*> list[] = {
        {&get_job, job_one.c_str()},
        {&list_jobs, job_list.c_str()},
        {&list_active_jobs, job_active.c_str()},
        {&get_cases,
         "SELECT case_index, case_id, params FROM job_cases WHERE job_id = ? "
         "ORDER BY case_index"},
        {&get_transitions,
         "SELECT job_id, from_state, to_state, reason, actor, time_ms FROM job_transitions "
         "WHERE job_id = ? ORDER BY id"},
        {&list_boards, board_list.c_str()},
        {&get_board_transitions,
         "SELECT board, field, from_value, to_value, reason, actor, time_ms FROM "
         "board_transitions WHERE board = ? ORDER BY id"},
        {&get_run, run_one.c_str()},
        {&list_runs, run_list.c_str()},
        {&max_job, "SELECT COALESCE(MAX(id), 0) FROM jobs"},
        {&max_run,
         "SELECT MAX(COALESCE((SELECT MAX(id) FROM runs), 0), "
         "COALESCE((SELECT last FROM id_reservations WHERE name = 'run'), 0))"},
        {&get_samples,
         "SELECT pass, case_index, iteration, metric, value FROM samples WHERE run_id = ?"},
        {&scan_samples,
         "SELECT pass, case_index, iteration, metric, value FROM samples WHERE run_id = ? "
         "ORDER BY case_index, metric, pass"},
        {&count_samples, "SELECT COUNT(*) FROM samples WHERE run_id = ?"},
        {&list_batches, "SELECT sequence FROM batches WHERE run_id = ? ORDER BY sequence"},
        {&get_case_results,
         "SELECT run_id, case_index, checksum, expected, ok, overhead FROM case_results "
         "WHERE run_id = ? ORDER BY case_index"},
        {&get_case_stats,
         "SELECT job_id, run_id, case_index, metric_index, metric, unit, n, min, median, mean, "
         "p90, p99, stddev, cv, max FROM case_stats WHERE job_id = ? "
         "ORDER BY case_index, metric_index"},
        {&get_artifact,
         "SELECT sha256, size, name, user_name, created_ms FROM artifacts WHERE sha256 = ?"},
        {&artifacts_before,
         "SELECT sha256, size, name, user_name, created_ms FROM artifacts WHERE created_ms < ? "
         "ORDER BY created_ms"},
        {&artifact_usage,
         "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM artifacts WHERE user_name = ?"},
        {&user_version, "PRAGMA user_version"},
        {&journal_mode, "PRAGMA journal_mode"},
    };
    for (auto& [stmt, sql] : list) {
      if (Status s = stmt->Prepare(db, sql); !s.ok()) return s;
    }
    return {};
  }
};

namespace {

// The database holds token hashes and every result: owner only. The file is created 0600 (SQLite
// gives its -wal and -shm files the database file's mode); one made looser by an older server is
// tightened, with its -wal and -shm.
Status RestrictToOwner(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot open database " + path.string() + ": " + std::strerror(errno));
  }
  const int rc = ::fchmod(fd, 0600);
  const int err = errno;
  ::close(fd);
  if (rc != 0) {
    return MakeError(
        ErrorCode::kPermissionDenied,
        "cannot make database " + path.string() + " private (mode 0600): " + std::strerror(err));
  }
  for (const char* suffix : {"-wal", "-shm"}) {
    const std::string side = path.string() + suffix;
    struct stat st {};
    if (::stat(side.c_str(), &st) == 0 && (st.st_mode & 0077) != 0)
      (void)::chmod(side.c_str(), 0600);
  }
  return {};
}

Result<sqlite3*> OpenConnection(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Error e = MakeError(ErrorCode::kUnavailable, "cannot open database " + path.string() + ": " +
                                                     (db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return e;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_extended_result_codes(db, 1);
  return db;
}

// Reads the single value of a one-row statement.
Result<std::string> QueryText(sqlite3* db, const char* sql) {
  Stmt s;
  if (Status st = s.Prepare(db, sql); !st.ok()) return st.error();
  Use u(s);
  if (!u.Next())
    return u.status().ok() ? MakeError(ErrorCode::kInternal, std::string(sql) + ": no row")
                           : u.status().error();
  return u.Text(0);
}

Status ApplyMigrations(sqlite3* db, const std::vector<Migration>& migrations) {
  // Numbers increase; a gap is a number another branch owns (db/embed_migrations.cmake).
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    const int least = i == 0 ? 1 : migrations[i - 1].version + 1;
    if (migrations[i].version < least) {
      return MakeError(ErrorCode::kInternal, "migration " + migrations[i].name + " has number " +
                                                 std::to_string(migrations[i].version) +
                                                 ", expected at least " + std::to_string(least));
    }
  }
  auto current = QueryText(db, "PRAGMA user_version");
  if (!current.ok()) return current.error();
  const int have = std::stoi(*current);
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  if (have > latest) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the database is at schema version " + std::to_string(have) +
                         ", newer than this mculab-server knows (" + std::to_string(latest) +
                         "): use a newer mculab-server");
  }
  for (const Migration& m : migrations) {
    if (m.version <= have) continue;
    if (Status s = ExecFixed(db, "BEGIN IMMEDIATE"); !s.ok()) return s;
    Status s = ExecFixed(db, m.sql.c_str());
    if (s.ok()) {
      // PRAGMA takes no parameters; the number is ours, not input.
      const std::string pragma = "PRAGMA user_version = " + std::to_string(m.version);
      s = ExecFixed(db, pragma.c_str());
    }
    if (s.ok()) s = ExecFixed(db, "COMMIT");
    if (!s.ok()) {
      (void)ExecFixed(db, "ROLLBACK");
      return MakeError(ErrorCode::kInternal,
                       "applying migration " + m.name + ": " + s.error().message);
    }
  }
  return {};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Opening and closing

SqliteStore::SqliteStore(SqliteOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::filesystem::path& path,
                                                       SqliteOptions options) {
  std::unique_ptr<SqliteStore> store(new SqliteStore(std::move(options)));
  if (Status s = store->Init(path); !s.ok()) return s.error();
  return store;
}

Status SqliteStore::Init(const std::filesystem::path& path) {
  if (Status s = RestrictToOwner(path); !s.ok()) return s;
  auto w = OpenConnection(path);
  if (!w.ok()) return w.error();
  wdb_ = *w;
  auto mode = QueryText(wdb_, "PRAGMA journal_mode = WAL");
  if (!mode.ok()) return mode.error();
  if (*mode != "wal") {
    return MakeError(ErrorCode::kUnavailable, "cannot put " + path.string() +
                                                  " in WAL mode (journal_mode is " + *mode + ")");
  }
  const char* sync =
      options_.synchronous_full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL";
  if (Status s = ExecFixed(wdb_, sync); !s.ok()) return s;
  if (Status s = ApplyMigrations(wdb_, options_.migrations); !s.ok()) return s;
  w_ = std::make_unique<Statements>();
  if (Status s = w_->PrepareWrites(wdb_); !s.ok()) return s;

  path_ = path;
  auto r = OpenReadConnection();  // one now, so a database that cannot be read fails Open
  if (!r.ok()) return r.error();
  idle_reads_.push_back(r->get());
  reads_.push_back(std::move(*r));

  writer_ = std::thread([this] { WriterLoop(); });
  writer_id_ = writer_.get_id();
  return {};
}

SqliteStore::~SqliteStore() { Close(); }

void SqliteStore::Close() {
  {
    std::lock_guard l(mu_);
    if (closed_) return;
    closing_ = true;
  }
  queue_cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  {
    std::lock_guard l(mu_);
    closed_ = true;
  }
  progress_cv_.notify_all();
  {
    // Reads in progress end first; later ones fail.
    std::unique_lock l(pool_mu_);
    reads_closed_ = true;
    pool_cv_.wait(l, [&] { return idle_reads_.size() == reads_.size(); });
    idle_reads_.clear();
    reads_.clear();
  }
  w_.reset();
  sqlite3_close(wdb_);
  wdb_ = nullptr;
}

SqliteStore::ReadConnection::~ReadConnection() {
  s.reset();
  sqlite3_close(db);
}

Result<std::unique_ptr<SqliteStore::ReadConnection>> SqliteStore::OpenReadConnection() {
  auto db = OpenConnection(path_);
  if (!db.ok()) return db.error();
  auto c = std::make_unique<ReadConnection>();
  c->db = *db;
  c->s = std::make_unique<Statements>();
  if (Status s = c->s->PrepareReads(c->db); !s.ok()) return s.error();
  return c;
}

bool SqliteStore::OnWriterThread() const { return std::this_thread::get_id() == writer_id_; }

std::uint64_t SqliteStore::TransactionsCommitted() const {
  std::lock_guard l(mu_);
  return transactions_;
}

// ---------------------------------------------------------------------------------------------
// The writer

void SqliteStore::Enqueue(Op op) {
  {
    std::unique_lock l(mu_);
    if (!closing_) {
      op.seq = next_seq_++;
      if (!op.samples_only) last_state_seq_ = op.seq;
      if (!OnWriterThread()) queued_by_thread_[std::this_thread::get_id()] = op.seq;
      queued_rows_ += op.rows;
      queue_.push_back(std::move(op));
      l.unlock();
      queue_cv_.notify_one();
      return;
    }
  }
  if (op.after_commit) op.after_commit(MakeError(ErrorCode::kUnavailable, "the store is closed"));
}

void SqliteStore::WriterLoop() {
  std::vector<Op> ops;
  while (true) {
    ops.clear();
    {
      std::unique_lock l(mu_);
      queue_cv_.wait(l, [&] { return !queue_.empty() || closing_; });
      if (queue_.empty()) return;  // closing, and everything queued is done
      std::size_t rows = 0;
      while (!queue_.empty() &&
             (ops.empty() || rows + queue_.front().rows <= options_.max_rows_per_transaction)) {
        rows += queue_.front().rows;
        ops.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    CommitBatch(ops);
  }
}

void SqliteStore::CommitBatch(std::vector<Op>& ops) {
  std::vector<Status> results(ops.size());
  Status txn = Use(w_->begin).Exec("BEGIN");
  if (txn.ok()) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      Status s = Use(w_->savepoint).Exec("SAVEPOINT");
      if (s.ok()) {
        s = ops[i].apply();
        if (!s.ok()) (void)Use(w_->rollback_to).Exec("ROLLBACK TO");
        (void)Use(w_->release).Exec("RELEASE");
      }
      results[i] = s;
    }
    CrashPoint(crash_points::kBeforeCommit);
    txn = Use(w_->commit).Exec("COMMIT");
    if (!txn.ok()) (void)Use(w_->rollback).Exec("ROLLBACK");
    if (txn.ok()) CrashPoint(crash_points::kAfterCommit);
  }
  if (!txn.ok()) {
    for (auto& r : results) r = txn;
  }
  std::size_t rows = 0;
  for (const Op& op : ops) rows += op.rows;
  const std::uint64_t last = ops.back().seq;
  {
    std::lock_guard l(mu_);
    committed_seq_ = last;
    queued_rows_ -= rows;
    if (txn.ok()) ++transactions_;
  }
  progress_cv_.notify_all();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].after_commit) ops[i].after_commit(results[i]);
  }
  {
    std::lock_guard l(mu_);
    done_seq_ = last;
  }
  progress_cv_.notify_all();
}

Status SqliteStore::ApplyWriteSet(const WriteSet& ws, WriteOutcome* outcome) {
  Statements& w = *w_;
  for (const NewJob& n : ws.new_jobs) {
    const Job& job = n.job;
    {
      Use u(w.insert_job);
      u.Bind(job.id).Bind(job.user).Bind(job.kind).Bind(job.board).Bind(job.op).Bind(job.label);
      u.Bind(server::JobStateName(job.state)).Bind(job.iterations).Bind(job.warmup);
      u.Bind(job.num_cases).Bind(job.cases_artifact).Bind(job.timeout_s).Bind(job.attempts);
      u.Bind(job.created_ms).Bind(job.started_ms).Bind(job.finished_ms).Bind(job.message);
      u.Bind(job.assigned_board).Bind(job.last_run_id).Bind(server::JobPriorityName(job.priority));
      u.Bind(job.firmware_artifact).Bind(job.blob_artifact).Bind(TagsToJson(job.tags));
      u.Bind(server::JobOriginName(job.origin));
      if (Status s = u.Exec("storing job"); !s.ok()) return s;
    }
    for (std::size_t i = 0; i < n.cases.size(); ++i) {
      Use u(w.insert_case);
      u.Bind(job.id).Bind(static_cast<std::int64_t>(i)).Bind(n.cases[i].id);
      u.Bind(JoinInts(n.cases[i].params));
      if (Status s = u.Exec("storing job case"); !s.ok()) return s;
    }
  }
  if (ws.reserve_run_ids_to != 0) {
    Use u(w.reserve_ids);
    u.Bind(std::string("run")).Bind(ws.reserve_run_ids_to);
    if (Status s = u.Exec("reserving run ids"); !s.ok()) return s;
  }
  for (const Artifact& a : ws.artifacts) {
    Use u(w.insert_artifact);
    u.Bind(a.sha256).Bind(a.size).Bind(a.name).Bind(a.user).Bind(a.created_ms);
    if (Status s = u.Exec("storing artifact"); !s.ok()) return s;
  }
  for (const Board& b : ws.boards) {
    Use u(w.upsert_board);
    u.Bind(b.name).Bind(b.kind).Bind(b.agent).Bind(TagsToJson(b.tags)).Bind(b.emulated);
    u.Bind(b.serial).Bind(b.ram_bytes).Bind(server::BoardStateName(b.state));
    u.Bind(server::BoardHealthName(b.health)).Bind(b.current_job).Bind(b.updated_ms);
    u.Bind(b.holder).Bind(b.lease_until_ms).Bind(b.reservation_note).Bind(b.hold);
    u.Bind(b.health_failures).Bind(b.calibration);
    if (Status s = u.Exec("storing board"); !s.ok()) return s;
  }
  for (const Run& r : ws.runs) {
    const auto& p = r.provenance;
    Use u(w.upsert_run);
    u.Bind(r.id).Bind(r.job_id).Bind(r.attempt).Bind(r.board).Bind(r.agent);
    u.Bind(server::RunStateName(r.state)).Bind(r.created_ms).Bind(r.finished_ms).Bind(r.message);
    u.Bind(r.batches_expected).Bind(r.started).Bind(p.runner_version).Bind(p.port).Bind(p.cpu);
    u.Bind(p.clock_hz).Bind(p.emulated).Bind(p.timer_unit).Bind(JoinStrings(p.counters));
    u.Bind(p.firmware_sha256).Bind(p.workload_sha256).Bind(p.toolchain).Bind(p.board_serial);
    u.Bind(p.note).Bind(p.seed);
    if (Status s = u.Exec("storing run"); !s.ok()) return s;
  }
  for (const Job& j : ws.jobs) {
    Use u(w.update_job);
    u.Bind(server::JobStateName(j.state)).Bind(j.attempts).Bind(j.started_ms);
    u.Bind(j.finished_ms).Bind(j.message).Bind(j.assigned_board).Bind(j.last_run_id).Bind(j.id);
    if (Status s = u.Exec("updating job"); !s.ok()) return s;
  }
  for (const JobTransition& t : ws.transitions) {
    Use u(w.insert_transition);
    u.Bind(t.job_id).Bind(t.from).Bind(t.to).Bind(t.reason).Bind(t.actor).Bind(t.time_ms);
    if (Status s = u.Exec("storing job transition"); !s.ok()) return s;
  }
  for (const BoardTransition& t : ws.board_transitions) {
    Use u(w.insert_board_transition);
    u.Bind(t.board).Bind(t.field).Bind(t.from).Bind(t.to).Bind(t.reason).Bind(t.actor);
    u.Bind(t.time_ms);
    if (Status s = u.Exec("storing board transition"); !s.ok()) return s;
  }
  for (const CaseResult& c : ws.case_results) {
    Use u(w.upsert_case_result);
    u.Bind(c.run_id).Bind(c.case_index).Bind(c.checksum).Bind(c.expected).Bind(c.ok);
    u.Bind(c.overhead);
    if (Status s = u.Exec("storing case result"); !s.ok()) return s;
  }
  for (const CaseStats& c : ws.case_stats) {
    Use u(w.upsert_case_stats);
    u.Bind(c.job_id).Bind(c.case_index).Bind(c.metric_index).Bind(c.run_id).Bind(c.metric);
    u.Bind(c.unit).Bind(c.n).Bind(c.min).Bind(c.median).Bind(c.mean).Bind(c.p90).Bind(c.p99);
    u.Bind(c.stddev).Bind(c.cv).Bind(c.max);
    if (Status s = u.Exec("storing case statistics"); !s.ok()) return s;
  }
  if (Status s = ApplyProfileWrites(ws); !s.ok()) return s;
  if (ws.batch) {
    const SampleBatch& b = *ws.batch;
    {
      Use u(w.insert_batch);
      u.Bind(b.run_id).Bind(b.sequence);
      if (Status s = u.Exec("storing batch"); !s.ok()) return s;
    }
    if (sqlite3_changes(wdb_) == 0) {
      outcome->duplicate_batch = true;
      return {};
    }
    const std::size_t n = b.samples.size();
    std::size_t i = 0;
    for (; i + kSamplesPerInsert <= n; i += kSamplesPerInsert) {
      Use u(w.insert_samples_multi);
      for (std::size_t k = i; k < i + kSamplesPerInsert; ++k) {
        const Sample& s = b.samples[k];
        u.Bind(b.run_id).Bind(s.pass).Bind(s.case_index).Bind(s.iteration).Bind(s.metric);
        u.Bind(s.value);
      }
      if (Status s = u.Exec("storing samples"); !s.ok()) return s;
    }
    for (; i < n; ++i) {
      const Sample& s = b.samples[i];
      Use u(w.insert_sample);
      u.Bind(b.run_id).Bind(s.pass).Bind(s.case_index).Bind(s.iteration).Bind(s.metric);
      u.Bind(s.value);
      if (Status st = u.Exec("storing sample"); !st.ok()) return st;
    }
    if (b.iterations > 0) {
      Use u(w.add_progress);
      u.Bind(b.iterations).Bind(b.run_id);
      if (u.Next()) outcome->run_progress = u.UInt(0);
      if (Status s = u.status(); !s.ok()) return s;
    }
  }
  return {};
}

void SqliteStore::Write(WriteSet ws, WriteDone done) {
  auto shared = std::make_shared<WriteSet>(std::move(ws));
  auto outcome = std::make_shared<WriteOutcome>();
  Op op;
  op.rows = std::max<std::size_t>(1, shared->Rows());
  // Rows of state besides the samples (an empty write only orders a callback after the commits).
  op.samples_only = shared->Rows() == (shared->batch ? shared->batch->samples.size() + 1 : 0);
  op.apply = [this, shared, outcome] {
    *outcome = WriteOutcome{};  // a retried apply starts over
    return ApplyWriteSet(*shared, outcome.get());
  };
  if (done) {
    op.after_commit = [done = std::move(done), outcome](const Status& s) {
      WriteOutcome o = s.ok() ? *outcome : WriteOutcome{};
      o.status = s;
      done(o);
    };
  } else {
    // Nobody hears of this write's outcome: a failure is at least logged, never dropped silently.
    op.after_commit = [](const Status& s) {
      if (!s.ok()) spdlog::error("a database write failed and was lost: {}", s.error().message);
    };
  }
  Enqueue(std::move(op));
}

void SqliteStore::WaitForRoom() {
  if (OnWriterThread()) return;
  std::unique_lock l(mu_);
  progress_cv_.wait(l, [&] { return queued_rows_ <= options_.max_queued_rows || closing_; });
}

void SqliteStore::Flush() {
  if (OnWriterThread()) return;
  std::unique_lock l(mu_);
  const std::uint64_t target = next_seq_ - 1;
  progress_cv_.wait(l, [&] { return done_seq_ >= target || closed_; });
}

bool SqliteStore::WaitForState() {
  std::unique_lock l(mu_);
  if (closed_) return false;
  if (OnWriterThread()) return true;
  std::uint64_t target = last_state_seq_;
  const auto it = queued_by_thread_.find(std::this_thread::get_id());
  if (it != queued_by_thread_.end()) target = std::max(target, it->second);
  progress_cv_.wait(l, [&] { return committed_seq_ >= target || closed_; });
  if (closed_) return false;
  // Committed: this thread has nothing of its own to wait for until it writes again.
  if (auto again = queued_by_thread_.find(std::this_thread::get_id());
      again != queued_by_thread_.end() && again->second <= committed_seq_) {
    queued_by_thread_.erase(again);
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Reads

Result<SqliteStore::ReadLease> SqliteStore::StartRead() {
  if (!WaitForState()) return MakeError(ErrorCode::kUnavailable, "the store is closed");
  std::unique_lock l(pool_mu_);
  while (true) {
    if (reads_closed_) return MakeError(ErrorCode::kUnavailable, "the store is closed");
    if (!idle_reads_.empty()) {
      ReadConnection* c = idle_reads_.back();
      idle_reads_.pop_back();
      return ReadLease(this, c);
    }
    if (reads_.size() < std::max<std::size_t>(1, options_.max_read_connections)) {
      auto c = OpenReadConnection();
      if (!c.ok()) return c.error();
      reads_.push_back(std::move(*c));
      return ReadLease(this, reads_.back().get());
    }
    pool_cv_.wait(l);
  }
}

void SqliteStore::EndRead(ReadConnection* c) {
  {
    std::lock_guard l(pool_mu_);
    idle_reads_.push_back(c);
  }
  pool_cv_.notify_all();
}

SqliteStore::ReadLease::~ReadLease() {
  if (c_ != nullptr) store_->EndRead(c_);
}

Result<Job> SqliteStore::GetJob(JobId id) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_job);
  u.Bind(id);
  if (!u.Next()) {
    if (!u.status().ok()) return u.status().error();
    return MakeError(ErrorCode::kNotFound, "no job " + std::to_string(id));
  }
  return ReadJob(u);
}

Result<std::vector<Job>> SqliteStore::ListJobs(const JobFilter& f) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().list_jobs);
  u.Bind(f.state).Bind(f.kind).Bind(f.board).Bind(f.op).Bind(f.user).Bind(f.before_id);
  u.Bind(f.limit);
  std::vector<Job> out;
  while (u.Next()) {
    auto j = ReadJob(u);
    if (!j.ok()) return j.error();
    out.push_back(std::move(*j));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<Job>> SqliteStore::ListActiveJobs() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().list_active_jobs);
  std::vector<Job> out;
  while (u.Next()) {
    auto j = ReadJob(u);
    if (!j.ok()) return j.error();
    out.push_back(std::move(*j));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<CaseSpec>> SqliteStore::GetJobCases(JobId id) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_cases);
  u.Bind(id);
  std::vector<CaseSpec> out;
  while (u.Next()) out.push_back(CaseSpec{u.Int(1), SplitInts(u.Text(2))});
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<JobTransition>> SqliteStore::GetTransitions(JobId id) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_transitions);
  u.Bind(id);
  std::vector<JobTransition> out;
  while (u.Next()) {
    out.push_back(JobTransition{u.Int(0), u.Text(1), u.Text(2), u.Text(3), u.Text(4), u.Int(5)});
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<Board>> SqliteStore::ListBoards() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().list_boards);
  std::vector<Board> out;
  while (u.Next()) {
    auto b = ReadBoard(u);
    if (!b.ok()) return b.error();
    out.push_back(std::move(*b));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<BoardTransition>> SqliteStore::GetBoardTransitions(const std::string& board) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_board_transitions);
  u.Bind(board);
  std::vector<BoardTransition> out;
  while (u.Next()) {
    out.push_back(BoardTransition{u.Text(0), u.Text(1), u.Text(2), u.Text(3), u.Text(4), u.Text(5),
                                  u.Int(6)});
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<Run> SqliteStore::GetRun(RunId id) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_run);
  u.Bind(id);
  if (!u.Next()) {
    if (!u.status().ok()) return u.status().error();
    return MakeError(ErrorCode::kNotFound, "no run " + std::to_string(id));
  }
  return ReadRun(u);
}

Result<std::vector<Run>> SqliteStore::ListRuns(JobId job) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().list_runs);
  u.Bind(job);
  std::vector<Run> out;
  while (u.Next()) {
    auto r = ReadRun(u);
    if (!r.ok()) return r.error();
    out.push_back(std::move(*r));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<JobId> SqliteStore::MaxJobId() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().max_job);
  if (!u.Next()) return u.status().ok() ? JobId{0} : Result<JobId>(u.status().error());
  return u.Int(0);
}

Result<RunId> SqliteStore::MaxRunId() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().max_run);
  if (!u.Next()) return u.status().ok() ? RunId{0} : Result<RunId>(u.status().error());
  return u.Int(0);
}

Result<std::vector<Sample>> SqliteStore::GetSamples(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_samples);
  u.Bind(run);
  std::vector<Sample> out;
  while (u.Next()) {
    out.push_back(Sample{u.U32(0), u.U32(1), u.U32(2), u.U32(3), u.Int(4)});
  }
  if (!u.status().ok()) return u.status().error();
  std::sort(out.begin(), out.end(), [](const Sample& a, const Sample& b) {
    return std::tie(a.pass, a.case_index, a.metric, a.iteration) <
           std::tie(b.pass, b.case_index, b.metric, b.iteration);
  });
  return out;
}

Status SqliteStore::ScanSamples(RunId run,
                                const std::function<void(std::span<const Sample>)>& chunk) {
  constexpr std::size_t kChunk = 4096;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().scan_samples);
  u.Bind(run);
  std::vector<Sample> buf;
  buf.reserve(kChunk);
  while (u.Next()) {
    buf.push_back(Sample{u.U32(0), u.U32(1), u.U32(2), u.U32(3), u.Int(4)});
    if (buf.size() == kChunk) {
      chunk(buf);
      buf.clear();
    }
  }
  if (!u.status().ok()) return u.status();
  if (!buf.empty()) chunk(buf);
  return {};
}

Result<std::uint64_t> SqliteStore::CountSamples(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().count_samples);
  u.Bind(run);
  if (!u.Next())
    return u.status().ok() ? std::uint64_t{0} : Result<std::uint64_t>(u.status().error());
  return u.UInt(0);
}

Result<std::vector<std::uint64_t>> SqliteStore::ListBatchSequences(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().list_batches);
  u.Bind(run);
  std::vector<std::uint64_t> out;
  while (u.Next()) out.push_back(u.UInt(0));
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<CaseResult>> SqliteStore::GetCaseResults(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_case_results);
  u.Bind(run);
  std::vector<CaseResult> out;
  while (u.Next()) {
    out.push_back(CaseResult{u.Int(0), u.U32(1), u.U32(2), u.U32(3), u.Bool(4), u.Int(5)});
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<CaseStats>> SqliteStore::GetCaseStats(JobId job) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_case_stats);
  u.Bind(job);
  std::vector<CaseStats> out;
  while (u.Next()) {
    CaseStats c;
    c.job_id = u.Int(0);
    c.run_id = u.Int(1);
    c.case_index = u.U32(2);
    c.metric_index = u.U32(3);
    c.metric = u.Text(4);
    c.unit = u.Text(5);
    c.n = u.UInt(6);
    c.min = u.Real(7);
    c.median = u.Real(8);
    c.mean = u.Real(9);
    c.p90 = u.Real(10);
    c.p99 = u.Real(11);
    c.stddev = u.Real(12);
    c.cv = u.Real(13);
    c.max = u.Real(14);
    out.push_back(std::move(c));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<Artifact>> SqliteStore::ListArtifactsBefore(std::int64_t ms) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().artifacts_before);
  u.Bind(ms);
  std::vector<Artifact> out;
  while (u.Next()) out.push_back(Artifact{u.Text(0), u.UInt(1), u.Text(2), u.Text(3), u.Int(4)});
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<Store::ArtifactUsage> SqliteStore::GetArtifactUsage(const std::string& user) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().artifact_usage);
  u.Bind(user);
  if (!u.Next()) {
    if (!u.status().ok()) return u.status().error();
    return ArtifactUsage{};
  }
  return ArtifactUsage{u.UInt(0), u.UInt(1)};
}

Result<std::optional<Artifact>> SqliteStore::GetArtifact(const std::string& sha256) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_artifact);
  u.Bind(sha256);
  if (!u.Next()) {
    if (!u.status().ok()) return u.status().error();
    return std::optional<Artifact>();
  }
  return std::optional<Artifact>(Artifact{u.Text(0), u.UInt(1), u.Text(2), u.Text(3), u.Int(4)});
}

Result<int> SqliteStore::SchemaVersion() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().user_version);
  if (!u.Next()) return u.status().ok() ? 0 : Result<int>(u.status().error());
  return static_cast<int>(u.Int(0));
}

Result<std::string> SqliteStore::JournalMode() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().journal_mode);
  if (!u.Next()) return u.status().ok() ? std::string() : Result<std::string>(u.status().error());
  return u.Text(0);
}

}  // namespace mculab::db

// ---------------------------------------------------------------------------------------------
// Reads for the web page and /metrics. The history query's SQL is assembled from fixed
// fragments (one per filter that is set, one per sort key) and prepared per call; every value is
// bound. Preparing costs tens of microseconds, far below the query itself.

namespace mculab::db {
namespace {

// A sort key's SQL and its covering index (migration 0002), ordered by (key, id).
struct SortSql {
  const char* expression;
  const char* index;
};

SortSql SortOf(JobSortKey key) {
  switch (key) {
    case JobSortKey::kCreated:
      return {"j.created_ms", "jobs_history_created"};
    case JobSortKey::kState:
      return {"j.state", "jobs_history_state"};
    case JobSortKey::kOp:
      return {"j.op", "jobs_history_op"};
    case JobSortKey::kUser:
      return {"j.user_name", "jobs_history_user"};
    case JobSortKey::kBoard:
      // The expression of index jobs_history_board, written identically.
      return {"(CASE WHEN j.assigned_board <> '' THEN j.assigned_board ELSE j.board END)",
              "jobs_history_board"};
    case JobSortKey::kId:
      break;
  }
  return {"j.id", "jobs_history_id"};
}

// LIKE pattern matching `text` anywhere, with LIKE's wildcards in `text` taken literally.
std::string ContainsPattern(const std::string& text) {
  std::string p = "%";
  for (char c : text) {
    if (c == '%' || c == '_' || c == '\\') p += '\\';
    p += c;
  }
  return p + "%";
}

// Characters (UTF-8 code points) in `text`.
std::size_t CodePoints(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// An FTS5 query matching `text` as one phrase: with the trigram tokenizer, any label holding it.
std::string TrigramPhrase(const std::string& text) {
  std::string p = "\"";
  for (char c : text) {
    if (c == '"') p += '"';
    p += c;
  }
  return p + "\"";
}

// The WHERE clause of a history query and the values to bind to it, in order.
struct JobWhere {
  bool label_search = false;  // candidates come from the label's trigram index
  std::string sql;
  std::vector<std::string> text;   // bound first, in order
  std::vector<std::int64_t> ints;  // then these
};

// `trigrams`: the label's candidates come from its trigram index (a label of three characters or
// more found in few jobs).
JobWhere BuildJobWhere(const JobQuery& q, bool trigrams) {
  JobWhere w;
  w.sql = "WHERE 1 = 1";
  auto text = [&](const char* fragment, const std::string& value, int times = 1) {
    w.sql += fragment;
    for (int i = 0; i < times; ++i) w.text.push_back(value);
  };
  if (!q.user.empty()) text(" AND j.user_name = ?", q.user);
  if (!q.kind.empty()) text(" AND j.kind = ?", q.kind);
  if (!q.op.empty()) text(" AND j.op = ?", q.op);
  if (!q.board.empty()) text(" AND (j.assigned_board = ? OR j.board = ?)", q.board, 2);
  if (!q.states.empty()) {
    w.sql += " AND j.state IN (";
    for (std::size_t i = 0; i < q.states.size(); ++i) {
      w.sql += i ? ", ?" : "?";
      w.text.push_back(q.states[i]);
    }
    w.sql += ")";
  }
  if (!q.label_contains.empty()) {
    // The trigram index (migration 0010) finds the candidates, LIKE keeps the matching rules.
    if (trigrams) {
      w.label_search = true;
      text(" AND j.id IN (SELECT rowid FROM jobs_label_search WHERE jobs_label_search MATCH ?)",
           TrigramPhrase(q.label_contains));
    }
    text(" AND j.label LIKE ? ESCAPE '\\'", ContainsPattern(q.label_contains));
  }
  if (q.created_from) {
    w.sql += " AND j.created_ms >= ?";
    w.ints.push_back(*q.created_from);
  }
  if (q.created_to) {
    w.sql += " AND j.created_ms <= ?";
    w.ints.push_back(*q.created_to);
  }
  return w;
}

void BindWhere(Use& u, const JobWhere& w) {
  for (const std::string& t : w.text) u.Bind(t);
  for (std::int64_t v : w.ints) u.Bind(v);
}

// Ends a read transaction on every path.
class ReadTransaction {
 public:
  explicit ReadTransaction(sqlite3* db) {
    if (begin_.Prepare(db, "BEGIN").ok() && commit_.Prepare(db, "COMMIT").ok()) {
      open_ = Use(begin_).Exec("BEGIN").ok();
    }
  }
  ~ReadTransaction() {
    if (open_) (void)Use(commit_).Exec("COMMIT");
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;
  bool ok() const { return open_; }

 private:
  Stmt begin_, commit_;
  bool open_ = false;
};

}  // namespace

Result<JobPage> SqliteStore::QueryJobs(const JobQuery& q) {
  // Few matches: found through the label's trigram index, then sorted, instead of reading a sort
  // key's index until a page is full.
  constexpr std::uint64_t kFewMatches = 2000;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  ReadTransaction txn(read->db());  // the total and the page from one snapshot
  if (!txn.ok()) return SqlError(read->db(), "starting a read transaction");
  // A label of three characters or more found in few jobs (counted over the distinct labels of
  // label_counts, migration 0011: probing the trigram index itself would read every trigram match
  // of a frequent label) is looked up through its trigrams.
  bool trigrams = false;
  if (CodePoints(q.label_contains) >= 3) {
    Stmt s;
    if (Status st = s.Prepare(read->db(),
                              "SELECT COALESCE(SUM(n), 0) FROM label_counts "
                              "WHERE label LIKE ? ESCAPE '\\'");
        !st.ok()) {
      return st.error();
    }
    Use u(s);
    u.Bind(ContainsPattern(q.label_contains));
    if (!u.Next()) {
      if (!u.status().ok()) return u.status().error();
      return SqlError(read->db(), "counting labels");
    }
    trigrams = u.UInt(0) <= kFewMatches;
  }
  const JobWhere where = BuildJobWhere(q, trigrams);
  const SortSql sort = SortOf(q.sort);
  // The page's ids come from the sort key's covering index alone (read in order, filters checked
  // on its entries), then only those rows are read and joined with their runs.
  const std::string cols(kJobCols);
  const std::size_t from = cols.find("FROM jobs j");
  // Filters on state, op, kind and user alone are summed from job_counts, a frequent label alone
  // from label_counts (migration 0011); the rest are counted.
  const bool others = !q.board.empty() || q.created_from || q.created_to;
  const bool counted = !others && q.label_contains.empty();
  const bool label_counted = !others && !q.label_contains.empty() && !trigrams && q.user.empty() &&
                             q.kind.empty() && q.op.empty() && q.states.empty();
  const std::string count_sql =
      counted         ? "SELECT COALESCE(SUM(n), 0) FROM job_counts j " + where.sql
      : label_counted ? "SELECT COALESCE(SUM(n), 0) FROM label_counts j " + where.sql
                      : "SELECT COUNT(*) FROM jobs j " + where.sql;

  JobPage page;
  {
    Stmt s;
    if (Status st = s.Prepare(read->db(), count_sql.c_str()); !st.ok()) return st.error();
    Use u(s);
    BindWhere(u, where);
    if (!u.Next()) {
      return u.status().ok() ? MakeError(ErrorCode::kInternal, "counting jobs: no row")
                             : u.status().error();
    }
    page.total = u.UInt(0);
  }
  if (page.total <= q.offset) return page;  // nothing on this page: no second pass
  // A page past the middle is read from the other end: the same rows in reverse, after stepping
  // over fewer index entries (ties are broken by id in the sort's direction, so reversing the
  // order reverses the list exactly).
  std::uint64_t offset = q.offset;
  std::uint64_t limit = q.limit;
  bool ascending = q.ascending;
  const bool from_the_end = q.offset > page.total / 2;
  if (from_the_end) {
    const std::uint64_t end = std::min<std::uint64_t>(page.total, q.offset + q.limit);
    limit = end - q.offset;
    offset = page.total - end;
    ascending = !ascending;
  }
  const std::string dir = ascending ? " ASC" : " DESC";
  const std::string order = std::string(" ORDER BY ") + sort.expression + dir + ", j.id" + dir;
  // A label found in few jobs: its trigrams give their ids (or, for a label too short for
  // trigrams, the narrow label index is read once) and those few are sorted, instead of reading
  // the sort key's wide index end to end.
  const bool few_labels = !q.label_contains.empty() && page.total <= kFewMatches;
  const std::string index = few_labels && where.label_search ? std::string()
                            : few_labels                     ? " INDEXED BY jobs_label"
                                         : std::string(" INDEXED BY ") + sort.index;
  const std::string page_sql =
      "SELECT " + cols.substr(0, from) +
      ", CASE WHEN r.started = 1 THEN r.emulated ELSE COALESCE((SELECT MAX(b.emulated) FROM "
      "boards b WHERE b.kind = j.kind), 0) END " +
      cols.substr(from) + "WHERE j.id IN (SELECT j.id FROM jobs j" + index + " " + where.sql +
      order + " LIMIT ? OFFSET ?)" + order;
  Stmt s;
  if (Status st = s.Prepare(read->db(), page_sql.c_str()); !st.ok()) return st.error();
  const int emulated_col = sqlite3_column_count(s.get()) - 1;
  Use u(s);
  BindWhere(u, where);
  u.Bind(static_cast<std::int64_t>(limit)).Bind(static_cast<std::int64_t>(offset));
  while (u.Next()) {
    auto j = ReadJob(u);
    if (!j.ok()) return j.error();
    page.jobs.push_back(JobRow{std::move(*j), u.Bool(emulated_col)});
  }
  if (!u.status().ok()) return u.status().error();
  if (from_the_end) std::reverse(page.jobs.begin(), page.jobs.end());
  return page;
}

Result<std::vector<SeriesPoint>> SqliteStore::GetCaseSeries(RunId run, std::uint32_t pass,
                                                            std::uint32_t case_index,
                                                            std::uint32_t metric) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st = s.Prepare(read->db(),
                            "SELECT iteration, value FROM samples WHERE run_id = ? AND pass = ? "
                            "AND case_index = ? AND metric = ? ORDER BY iteration");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  u.Bind(run).Bind(pass).Bind(case_index).Bind(metric);
  std::vector<SeriesPoint> out;
  while (u.Next()) out.push_back(SeriesPoint{u.U32(0), u.Int(1)});
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<std::pair<std::string, std::uint64_t>>> SqliteStore::CountJobsByState() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st = s.Prepare(read->db(), "SELECT state, COUNT(*) FROM jobs GROUP BY state");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  std::vector<std::pair<std::string, std::uint64_t>> out;
  while (u.Next()) out.emplace_back(u.Text(0), u.UInt(1));
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::uint64_t> SqliteStore::SamplesStored() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  // Samples are only ever appended, so the largest rowid counts them without a table scan.
  if (Status st = s.Prepare(read->db(), "SELECT COALESCE(MAX(rowid), 0) FROM samples"); !st.ok()) {
    return st.error();
  }
  Use u(s);
  if (!u.Next()) {
    return u.status().ok() ? std::uint64_t{0} : Result<std::uint64_t>(u.status().error());
  }
  return u.UInt(0);
}

// ---- events, passes, op profiles, memory (migration 0005) ----------------------------

namespace {

std::string JoinNames(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + v[i];
  return out;
}

std::vector<std::string> SplitNames(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Prepares `sql` on `db` and runs `body` with a Use of it (rare writes and reads: the statement
// is prepared per call, which costs microseconds next to the transaction).
template <typename F>
Status WithStmt(sqlite3* db, const char* sql, F&& body) {
  Stmt s;
  if (Status st = s.Prepare(db, sql); !st.ok()) return st;
  return body(s);
}

}  // namespace

Status SqliteStore::ApplyProfileWrites(const WriteSet& ws) {
  for (const JobEvents& e : ws.job_events) {
    Status st = WithStmt(wdb_, "INSERT OR REPLACE INTO job_events(job_id, events) VALUES(?,?)",
                         [&](Stmt& s) {
                           Use u(s);
                           u.Bind(e.job_id).Bind(JoinNames(e.events));
                           return u.Exec("storing a job's events");
                         });
    if (!st.ok()) return st;
  }
  for (const BoardUnits& b : ws.board_units) {
    Status st = WithStmt(wdb_, "DELETE FROM board_counter_units WHERE board = ?", [&](Stmt& s) {
      Use u(s);
      u.Bind(b.board);
      return u.Exec("replacing a board's counter units");
    });
    if (!st.ok()) return st;
    for (std::size_t i = 0; i < b.units.size(); ++i) {
      const server::CounterUnit& unit = b.units[i];
      st = WithStmt(wdb_,
                    "INSERT INTO board_counter_units(board, position, unit, max_simultaneous, "
                    "events, emulated) VALUES(?,?,?,?,?,?)",
                    [&](Stmt& s) {
                      Use u(s);
                      u.Bind(b.board).Bind(static_cast<std::uint64_t>(i)).Bind(unit.name);
                      u.Bind(unit.max_simultaneous).Bind(JoinNames(unit.events));
                      u.Bind(i < b.emulated.size() && b.emulated[i]);
                      return u.Exec("storing a board's counter unit");
                    });
      if (!st.ok()) return st;
    }
  }
  for (const RunPass& p : ws.run_passes) {
    Status st =
        WithStmt(wdb_, "INSERT OR REPLACE INTO run_passes(run_id, pass, events) VALUES(?,?,?)",
                 [&](Stmt& s) {
                   Use u(s);
                   u.Bind(p.run_id).Bind(p.pass).Bind(JoinNames(p.events));
                   return u.Exec("storing a run's pass");
                 });
    if (!st.ok()) return st;
  }
  if (!ws.op_profiles.empty()) {
    Stmt s;
    if (Status st = s.Prepare(wdb_,
                              "INSERT OR REPLACE INTO op_profiles(run_id, pass, case_index, "
                              "op_index, metric, op_type, op_name, count, sum, min, max, unclosed) "
                              "VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
        !st.ok()) {
      return st;
    }
    for (const OpProfileRow& o : ws.op_profiles) {
      Use u(s);
      u.Bind(o.run_id).Bind(o.pass).Bind(o.case_index).Bind(o.op_index).Bind(o.metric);
      u.Bind(o.type).Bind(o.name).Bind(o.count).Bind(o.sum).Bind(o.min).Bind(o.max);
      u.Bind(o.unclosed);
      if (Status st = u.Exec("storing an op profile"); !st.ok()) return st;
    }
  }
  if (!ws.memory.empty()) {
    Stmt s;
    if (Status st = s.Prepare(wdb_,
                              "INSERT OR REPLACE INTO memory_reports(run_id, case_index, source, "
                              "category, used, reserved) VALUES(?,?,?,?,?,?)");
        !st.ok()) {
      return st;
    }
    for (const MemoryFigure& m : ws.memory) {
      Use u(s);
      u.Bind(m.run_id).Bind(static_cast<std::int64_t>(m.case_index)).Bind(m.source);
      u.Bind(m.category).Bind(m.used).Bind(m.reserved);
      if (Status st = u.Exec("storing a memory figure"); !st.ok()) return st;
    }
  }
  if (!ws.deleted_artifacts.empty()) {
    Stmt s;
    if (Status st = s.Prepare(wdb_, "DELETE FROM artifacts WHERE sha256 = ?"); !st.ok()) return st;
    for (const std::string& sha : ws.deleted_artifacts) {
      Use u(s);
      u.Bind(sha);
      if (Status st = u.Exec("deleting an artifact"); !st.ok()) return st;
    }
  }
  return {};
}

Result<JobEvents> SqliteStore::GetJobEvents(JobId job) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st = s.Prepare(read->db(), "SELECT events FROM job_events WHERE job_id = ?");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  u.Bind(job);
  JobEvents out;
  out.job_id = job;
  if (u.Next()) out.events = SplitNames(u.Text(0));
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<BoardUnits>> SqliteStore::ListBoardUnits() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st = s.Prepare(read->db(),
                            "SELECT board, unit, max_simultaneous, events, emulated FROM "
                            "board_counter_units ORDER BY board, position");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  std::vector<BoardUnits> out;
  while (u.Next()) {
    std::string board = u.Text(0);
    if (out.empty() || out.back().board != board) out.push_back(BoardUnits{board, {}, {}});
    server::CounterUnit unit;
    unit.name = u.Text(1);
    unit.max_simultaneous = u.U32(2);
    unit.events = SplitNames(u.Text(3));
    out.back().units.push_back(std::move(unit));
    out.back().emulated.push_back(u.Bool(4));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<RunPass>> SqliteStore::GetRunPasses(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st = s.Prepare(read->db(),
                            "SELECT pass, events FROM run_passes WHERE run_id = ? ORDER BY pass");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  u.Bind(run);
  std::vector<RunPass> out;
  while (u.Next()) out.push_back(RunPass{run, u.U32(0), SplitNames(u.Text(1))});
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<OpProfileRow>> SqliteStore::GetOpProfiles(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st = s.Prepare(read->db(),
                            "SELECT pass, case_index, op_index, metric, op_type, op_name, count, "
                            "sum, min, max, unclosed FROM op_profiles WHERE run_id = ? "
                            "ORDER BY pass, case_index, op_index, metric");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  u.Bind(run);
  std::vector<OpProfileRow> out;
  while (u.Next()) {
    OpProfileRow o;
    o.run_id = run;
    o.pass = u.U32(0);
    o.case_index = u.U32(1);
    o.op_index = u.U32(2);
    o.metric = u.U32(3);
    o.type = u.Text(4);
    o.name = u.Text(5);
    o.count = u.UInt(6);
    o.sum = u.UInt(7);
    o.min = u.UInt(8);
    o.max = u.UInt(9);
    o.unclosed = u.Bool(10);
    out.push_back(std::move(o));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<MemoryFigure>> SqliteStore::GetMemory(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st =
          s.Prepare(read->db(),
                    "SELECT case_index, source, category, used, reserved FROM "
                    "memory_reports WHERE run_id = ? ORDER BY case_index, source, category");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  u.Bind(run);
  std::vector<MemoryFigure> out;
  while (u.Next()) {
    out.push_back(MemoryFigure{run, static_cast<std::int32_t>(u.Int(0)), u.Text(1), u.Text(2),
                               u.UInt(3), u.UInt(4)});
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

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

Status SqliteStore::WriteFunction(std::function<Status(sqlite3* db)> apply) {
  auto done = std::make_shared<std::promise<Status>>();
  auto future = done->get_future();
  Op op;
  op.rows = 1;
  op.apply = [this, apply = std::move(apply)] { return apply(wdb_); };
  op.after_commit = [done](const Status& s) { done->set_value(s); };
  Enqueue(std::move(op));
  return future.get();
}

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
