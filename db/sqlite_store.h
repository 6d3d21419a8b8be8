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
// The implementation, by file: sqlite_store.cc (open, close, the read pool), sqlite_writer.cc
// (the writer's transactions, over db/write_queue.h), sqlite_write_set.cc (one write set's rows),
// sqlite_rows.cc (row readers), and the reads by area: sqlite_jobs.cc (jobs, runs, boards,
// artifacts), sqlite_results.cc (samples, statistics, profiles), sqlite_history.cc and
// sqlite_series.cc (the history page's queries), sqlite_accounts.cc (users and tokens).
//
// Durability: synchronous=NORMAL by default, which survives a crash or kill -9 of the server but
// may lose the last transactions on power loss; `synchronous_full` trades speed for that.
// Thread-safety: as Store. Close() (or the destructor) drains the queue and joins the writer.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "db/lab_store.h"
#include "db/migrations.h"
#include "db/write_queue.h"
#include "server/service/alerts.h"
#include "server/service/store.h"

namespace mculab::db {

class Connection;  // a connection and its prepared statements (sql_statement.h)

// The service's vocabulary, which this folder implements.
using server::Artifact;
using server::ArtifactSharing;
using server::Board;
using server::BoardTransition;
using server::BoardUnits;
using server::CaseResult;
using server::CaseSpec;
using server::CaseStats;
using server::Job;
using server::JobEvents;
using server::JobId;
using server::JobPage;
using server::JobQuery;
using server::JobRow;
using server::JobSortKey;
using server::JobTransition;
using server::MemoryFigure;
using server::NewJob;
using server::OpProfileRow;
using server::Run;
using server::RunId;
using server::RunPass;
using server::Sample;
using server::SampleBatch;
using server::SeriesPoint;
using server::SeriesQuery;
using server::SeriesRow;
using server::Store;
using server::TokenRecord;
using server::User;
using server::WriteDone;
using server::WriteOutcome;
using server::WriteSet;

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

class SqliteStore final : public LabStore {
 public:
  // Opens (creating if needed) the database at `path`, enables WAL, applies pending migrations.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::filesystem::path& path,
                                                   SqliteOptions options = {});
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  // Drains the queue (every queued write is applied and its callback run), stops the writer and
  // closes the connections. Later writes fail with kUnavailable; later reads too. Idempotent.
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
  Result<int> SchemaVersion();        // PRAGMA user_version
  Result<std::string> JournalMode();  // "wal"
  std::uint64_t TransactionsCommitted() const;

  void Write(WriteSet ws, WriteDone done = nullptr) override;
  void WaitForRoom() override;
  void Flush() override;

  Result<Job> GetJob(JobId id) override;
  Result<std::vector<Job>> ListActiveJobs() override;
  Result<std::vector<CaseSpec>> GetJobCases(JobId id) override;
  Result<std::vector<JobTransition>> GetTransitions(JobId id) override;
  Result<std::vector<Board>> ListBoards() override;
  Result<std::vector<BoardTransition>> GetBoardTransitions(const std::string& board) override;
  Result<Run> GetRun(RunId id) override;
  Result<std::vector<Run>> ListRuns(JobId job) override;
  Result<JobId> MaxJobId() override;
  Result<RunId> MaxRunId() override;
  Result<std::vector<Sample>> GetSamples(RunId run) override;
  Result<std::uint64_t> CountSamples(RunId run) override;
  Status ScanSamples(RunId run, const std::function<void(std::span<const Sample>)>& chunk) override;
  Result<std::map<std::uint32_t, std::vector<double>>> GetMetricValues(
      RunId run, std::uint32_t metric, std::optional<std::uint32_t> case_index) override;
  Result<std::vector<std::uint64_t>> ListBatchSequences(RunId run) override;
  Result<std::vector<CaseResult>> GetCaseResults(RunId run) override;
  Result<std::vector<CaseStats>> GetCaseStats(JobId job) override;
  Result<std::optional<Artifact>> GetArtifact(const std::string& sha256) override;
  Result<ArtifactUsage> GetArtifactUsage(const std::string& user) override;
  Result<bool> IsArtifactOwner(const std::string& sha256, const std::string& user) override;
  Result<std::vector<Artifact>> ListArtifactsBefore(std::int64_t ms) override;

 private:
  explicit SqliteStore(SqliteOptions options);
  Status Init(const std::filesystem::path& path);
  void StartWriter();  // sqlite_writer.cc
  // Fills outcome->duplicate_batch and outcome->run_progress (not its status).
  Status ApplyWriteSet(const WriteSet& ws, WriteOutcome* outcome);
  // A read's connection (lent to one read at a time), given back to the pool when the lease ends.
  class ReadLease {
   public:
    ReadLease(SqliteStore* store, Connection* c) : store_(store), c_(c) {}
    ReadLease(ReadLease&& other) noexcept : store_(other.store_), c_(other.c_) {
      other.c_ = nullptr;
    }
    ReadLease& operator=(ReadLease&&) = delete;
    ~ReadLease();
    Connection& connection() const { return *c_; }

   private:
    SqliteStore* store_;
    Connection* c_;
  };

  // WaitForState, then a read connection.
  Result<ReadLease> StartRead();
  Result<std::unique_ptr<Connection>> OpenReadConnection();
  void EndRead(Connection* c);

  SqliteOptions options_;
  std::filesystem::path path_;
  std::unique_ptr<Connection> w_;  // the writer's connection: writer thread only (and Init)

  std::mutex pool_mu_;  // the read connections
  std::condition_variable pool_cv_;
  std::vector<std::unique_ptr<Connection>> reads_;  // every open one
  std::vector<Connection*> idle_reads_;
  bool reads_closed_ = false;

  class WriterTransactions;  // sqlite_writer.cc
  std::unique_ptr<WriteQueue::Transactions> transactions_;
  std::unique_ptr<WriteQueue> queue_;       // started by Init
  std::vector<std::string> bulk_load_ddl_;  // what BeginBulkLoad dropped: writer thread only

 public:
  // ---- reads for the web page and /metrics ----
  Result<JobPage> QueryJobs(const JobQuery& query) override;
  Result<std::vector<SeriesPoint>> GetCaseSeries(RunId run, std::uint32_t pass,
                                                 std::uint32_t case_index,
                                                 std::uint32_t metric) override;
  Result<std::vector<std::pair<std::string, std::uint64_t>>> CountJobsByState() override;
  Result<std::uint64_t> SamplesStored() override;
  // sqlite_series.cc
  Result<std::vector<SeriesRow>> QuerySeries(const SeriesQuery& query) override;
  std::uint64_t StateVersion() override;  // sqlite_writer.cc
  Result<JobEvents> GetJobEvents(JobId job) override;
  Result<std::vector<BoardUnits>> ListBoardUnits() override;
  Result<std::vector<RunPass>> GetRunPasses(RunId run) override;
  Result<std::vector<OpProfileRow>> GetOpProfiles(RunId run) override;
  Result<std::vector<MemoryFigure>> GetMemory(RunId run) override;

  // ---- accounts ----
  Status AddUser(const User& user, const TokenRecord& token) override;
  Status AddToken(const TokenRecord& token) override;
  Status RevokeToken(const std::string& hash, std::int64_t revoked_ms) override;
  Result<std::optional<User>> GetUser(const std::string& name) override;
  Result<std::vector<User>> ListUsers() override;
  Result<std::optional<TokenRecord>> FindToken(const std::string& hash) override;
  Result<std::vector<TokenRecord>> ListTokens() override;

  // FollowStore (sqlite_follows.cc)
  Result<std::uint64_t> AddFollow(const server::StoredFollow& follow) override;
  Result<std::vector<server::StoredFollow>> ListFollows() override;
  Status DeleteFollow(std::uint64_t id) override;
  Status SetFollowNotified(std::uint64_t id, server::JobId to) override;

 private:
  // Runs `apply` in the writer's transaction (on its connection) and waits for the commit.
  Status WriteFunction(std::function<Status(Connection& w)> apply);
};

}  // namespace mculab::db
