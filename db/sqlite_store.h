// SqliteStore: the Store on one SQLite file in WAL mode.
//
// One writer thread owns the write connection and drains a queue: it takes every queued write (up
// to max_rows_per_transaction rows) into one transaction, each write set under its own savepoint so
// a bad one fails alone, commits, then runs the writes' callbacks. Reads take a connection of
// their own from a pool (WAL: readers neither block the writer nor each other) and never wait for
// the ingest backlog: a read waits for the writes that hold more than samples (job, run, board and
// account state: what the service decided is what every read sees) and for its own thread's
// writes, not for other threads' sample batches queued after the last such write. Under a flood
// of sample batches, a history read therefore costs what the query costs. All SQL but a
// migration's script runs as statements prepared once per connection (db/sql_statement.h).
// Migrations are applied at Open and recorded in PRAGMA user_version.
//
// What both stores share (the writer's queue, the read pool, the reads and account writes whose SQL
// is the same on both) is SqlStore's (db/sql_store.h); SQLite's own part, by file: sqlite_store.cc
// (open, migrations, close), sqlite_writer.cc (the writer's transactions), sqlite_write_set.cc (a
// write set's samples by multi-row INSERT), sqlite_results.cc (a run's samples in case order by
// rowid, the samples counter), sqlite_history.cc (the history page, bulk loads, the series'
// fragments).
//
// Durability: synchronous=NORMAL by default, which survives a crash or kill -9 of the server but
// may lose the last transactions on power loss; `synchronous_full` trades speed for that.
// Thread-safety: as Store. Close() (or the destructor) drains the queue and joins the writer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "db/migrations.h"
#include "db/sql_store.h"

namespace mculab::db {

class Connection;  // a connection and its prepared statements (sql_statement.h)

// A connection to the SQLite file at `path` (created if missing), without migrating it.
Result<std::unique_ptr<Connection>> OpenSqliteConnection(const std::filesystem::path& path);

// The writer's BEGIN, SAVEPOINT, COMMIT ... on `w` (sqlite_writer.cc).
std::unique_ptr<WriteQueue::Transactions> MakeWriterTransactions(Connection& w);

struct SqliteOptions {
  std::vector<Migration> migrations = EmbeddedMigrations();
  // The writer takes at most this many rows into one transaction (it takes what is queued, so
  // under load transactions hold thousands of rows; one lone write commits alone).
  std::size_t max_rows_per_transaction = 50'000;
  // WaitForRoom() blocks while more rows than this are queued.
  std::size_t max_queued_rows = 1'000'000;
  bool synchronous_full = false;
  // The writer's page cache in KiB; 0 keeps SQLite's default (2 MiB). Filling a large database
  // (a benchmark's million jobs) goes many times faster when its indexes fit.
  std::int64_t writer_cache_kib = 0;
  // Read connections opened as concurrent reads need them, up to this many; more reads wait.
  std::size_t max_read_connections = 4;
};

class SqliteStore final : public SqlStore<Connection> {
 public:
  // Opens (creating if needed) the database at `path`, enables WAL, applies pending migrations.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::filesystem::path& path,
                                                   SqliteOptions options = {});
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  void Close() override;

  // Filling a large history at once (a benchmark's million jobs, an import): BeginBulkLoad drops
  // the jobs table's indexes and the label search's triggers, EndBulkLoad creates them again from
  // their stored definitions and rebuilds the label search, which is many times faster than
  // keeping a dozen indexes in step job by job. In between, write jobs only: the history's reads
  // name those indexes and fail, and label search misses the jobs written. Not thread-safe
  // against each other; other writes may go on.
  Status BeginBulkLoad();
  Status EndBulkLoad();

  // Diagnostics.
  Result<int> SchemaVersion() override;  // PRAGMA user_version
  Result<std::string> JournalMode();     // "wal"

  Status ScanSamples(RunId run, const std::function<void(std::span<const Sample>)>& chunk) override;
  Result<std::uint64_t> SamplesStored() override;
  Result<JobPage> QueryJobs(const JobQuery& query) override;

 private:
  explicit SqliteStore(SqliteOptions options);
  Status Init(const std::filesystem::path& path);
  Status ApplyWriteSet(const WriteSet& ws, WriteOutcome* outcome) override;
  Result<std::unique_ptr<Connection>> OpenReadConnection() override;
  const char* LabelHoldsSql() const override;
  const char* JobIdInListSql() const override;
  std::string JobIdList(const std::vector<JobId>& ids) const override;

  SqliteOptions options_;
  std::filesystem::path path_;
  std::unique_ptr<WriteQueue::Transactions> transactions_;
  std::vector<std::string> bulk_load_ddl_;  // what BeginBulkLoad dropped: writer thread only
};

}  // namespace mculab::db
