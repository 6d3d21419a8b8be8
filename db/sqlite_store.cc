// SqliteStore: opening and closing, the read connections' pool, diagnostics.
#include "db/sqlite_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "db/sql_statement.h"
#include "db/sql_store_impl.h"

namespace mculab::db {

template class SqlStore<Connection>;

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

// SQLite's memory statistics count every allocation under one process-wide mutex, which the
// writer, allocating for every row it inserts, holds most of the time: each read's allocations
// queued behind it. Nothing here reads those statistics. Set before SQLite initialises (the
// first connection); later calls change nothing.
void ConfigureSqliteOnce() {
  static std::once_flag once;
  std::call_once(once, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
}

}  // namespace

Result<std::unique_ptr<Connection>> OpenSqliteConnection(const std::filesystem::path& path) {
  ConfigureSqliteOnce();
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
  return std::make_unique<Connection>(db);
}

namespace {

// Reads the single value of a one-row statement.
Result<std::string> QueryText(Connection& c, const std::string& sql) {
  Use u(c.Statement(sql));
  return FirstRow<std::string>(
      u, [](Use& row) { return row.Text(0); }, MakeError(ErrorCode::kInternal, sql + ": no row"));
}

Status Exec(Connection& c, const std::string& sql) {
  return Use(c.Statement(sql)).Exec(sql.c_str());
}

Status ApplyMigrations(Connection& c, const std::vector<Migration>& migrations) {
  if (Status s = CheckMigrationOrder(migrations); !s.ok()) return s;
  auto current = QueryText(c, "PRAGMA user_version");
  if (!current.ok()) return current.error();
  const int have = std::stoi(*current);
  if (Status s = CheckNotNewer(migrations, have, "the database"); !s.ok()) return s;
  for (const Migration& m : migrations) {
    if (m.version <= have) continue;
    if (Status s = Exec(c, "BEGIN IMMEDIATE"); !s.ok()) return s;
    Status s = ExecScript(c.db(), m.sql);
    // PRAGMA takes no parameters; the number is ours, not input.
    if (s.ok()) s = Exec(c, "PRAGMA user_version = " + std::to_string(m.version));
    if (s.ok()) s = Exec(c, "COMMIT");
    if (!s.ok()) {
      (void)Exec(c, "ROLLBACK");
      return MakeError(ErrorCode::kInternal,
                       "applying migration " + m.name + ": " + s.error().message);
    }
  }
  return {};
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Opening and closing

SqliteStore::SqliteStore(SqliteOptions options)
    : SqlStore({options.max_rows_per_transaction, options.max_queued_rows,
                options.max_read_connections}),
      options_(std::move(options)) {}

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::filesystem::path& path,
                                                       SqliteOptions options) {
  std::unique_ptr<SqliteStore> store(new SqliteStore(std::move(options)));
  if (Status s = store->Init(path); !s.ok()) return s.error();
  return store;
}

Status SqliteStore::Init(const std::filesystem::path& path) {
  if (Status s = RestrictToOwner(path); !s.ok()) return s;
  auto w = OpenSqliteConnection(path);
  if (!w.ok()) return w.error();
  w_ = std::move(*w);
  auto mode = QueryText(*w_, "PRAGMA journal_mode = WAL");
  if (!mode.ok()) return mode.error();
  if (*mode != "wal") {
    return MakeError(ErrorCode::kUnavailable, "cannot put " + path.string() +
                                                  " in WAL mode (journal_mode is " + *mode + ")");
  }
  const char* sync =
      options_.synchronous_full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL";
  if (Status s = Exec(*w_, sync); !s.ok()) return s;
  if (Status s = ApplyMigrations(*w_, options_.migrations); !s.ok()) return s;
  // The writer's statement journals in memory: past 64 KiB they spilled to a file in /var/tmp,
  // which every submit's commit then created, wrote (≈ 40 pages) and removed. Set after the
  // migrations, whose index builds may sort more than memory should hold; the writer's own
  // statements change a few rows each.
  if (Status s = Exec(*w_, "PRAGMA temp_store = MEMORY"); !s.ok()) return s;
  if (options_.writer_cache_kib > 0) {
    // PRAGMA takes no parameters; the number is ours, not input.
    const std::string cache = "PRAGMA cache_size = -" + std::to_string(options_.writer_cache_kib);
    if (Status s = Exec(*w_, cache); !s.ok()) return s;
  }

  path_ = path;
  auto r = OpenReadConnection();  // one now, so a database that cannot be read fails Open
  if (!r.ok()) return r.error();
  transactions_ = MakeWriterTransactions(*w_);
  StartStore(*transactions_, std::move(*r));
  return {};
}

SqliteStore::~SqliteStore() { Close(); }

void SqliteStore::Close() { CloseStore(); }

Result<std::unique_ptr<Connection>> SqliteStore::OpenReadConnection() {
  auto c = OpenSqliteConnection(path_);
  if (!c.ok()) return c.error();
  // Reads the schema now, so a database that cannot be read fails here.
  if (auto v = QueryText(**c, "PRAGMA user_version"); !v.ok()) return v.error();
  return c;
}

// ---------------------------------------------------------------------------------------------
// Diagnostics

Result<int> SqliteStore::SchemaVersion() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement("PRAGMA user_version"));
  return FirstRow<int>(
      u, [](Use& row) { return static_cast<int>(row.Int(0)); }, 0);
}

Result<std::string> SqliteStore::JournalMode() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement("PRAGMA journal_mode"));
  return FirstRow<std::string>(
      u, [](Use& row) { return row.Text(0); }, std::string());
}

}  // namespace mculab::db
