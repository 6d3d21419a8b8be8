// SqlStore<C>: what the SQLite and the PostgreSQL stores share, over a connection type C with one
// statement API (db/sql_statement.h's Connection, db/pg_statement.h's PgConnection): the writer's
// queue (db/write_queue.h), the pool of read connections, and every read and account write whose
// SQL is the same text on both. A backend derives from it and adds what differs: opening and
// migrating, the transaction statements, how samples go in, and the reads written in its own
// dialect (the history page, scanning a run's samples, the samples counter, the series' two
// fragments).
//
// Reads wait as store.h says (WriteQueue::WaitForState), then borrow a connection from the pool:
// up to max_read_connections are opened as concurrent reads need them; more reads wait.
// Thread-safety: as Store. CloseStore() drains the queue, then waits for reads in progress.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "db/lab_store.h"
#include "db/write_queue.h"

namespace mculab::db {

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

template <typename C>
class SqlStore : public LabStore {
 public:
  // ---- JobStore ----
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
  Result<std::vector<std::uint64_t>> ListBatchSequences(RunId run) override;
  Result<std::optional<Artifact>> GetArtifact(const std::string& sha256) override;
  Result<ArtifactUsage> GetArtifactUsage(const std::string& user) override;
  Result<bool> IsArtifactOwner(const std::string& sha256, const std::string& user) override;
  Result<std::vector<Artifact>> ListArtifactsBefore(std::int64_t ms) override;
  Result<JobEvents> GetJobEvents(JobId job) override;
  Result<std::vector<BoardUnits>> ListBoardUnits() override;

  // ---- ResultStore (ScanSamples: the backend's) ----
  Result<std::vector<Sample>> GetSamples(RunId run) override;
  Result<std::uint64_t> CountSamples(RunId run) override;
  Result<std::map<std::uint32_t, std::vector<double>>> GetMetricValues(
      RunId run, std::uint32_t metric, std::optional<std::uint32_t> case_index) override;
  Result<std::vector<CaseResult>> GetCaseResults(RunId run) override;
  Result<std::vector<CaseStats>> GetCaseStats(JobId job) override;
  Result<std::vector<SeriesPoint>> GetCaseSeries(RunId run, std::uint32_t pass,
                                                 std::uint32_t case_index,
                                                 std::uint32_t metric) override;
  Result<std::vector<RunPass>> GetRunPasses(RunId run) override;
  Result<std::vector<OpProfileRow>> GetOpProfiles(RunId run) override;
  Result<std::vector<MemoryFigure>> GetMemory(RunId run) override;

  // ---- AccountStore ----
  Status AddUser(const User& user, const TokenRecord& token) override;
  Status AddToken(const TokenRecord& token) override;
  Status RevokeToken(const std::string& hash, std::int64_t revoked_ms) override;
  Result<std::optional<User>> GetUser(const std::string& name) override;
  Result<std::vector<User>> ListUsers() override;
  Result<std::optional<TokenRecord>> FindToken(const std::string& hash) override;
  Result<std::vector<TokenRecord>> ListTokens() override;

  // ---- HistoryReads (QueryJobs, SamplesStored: the backend's) ----
  Result<std::vector<std::pair<std::string, std::uint64_t>>> CountJobsByState() override;
  Result<std::vector<SeriesRow>> QuerySeries(const SeriesQuery& query) override;
  std::uint64_t StateVersion() override;
  std::optional<std::vector<JobId>> JobsWrittenSince(std::uint64_t version) override;

  // ---- FollowStore ----
  Result<std::uint64_t> AddFollow(const server::StoredFollow& follow) override;
  Result<std::vector<server::StoredFollow>> ListFollows() override;
  Status DeleteFollow(std::uint64_t id) override;
  Status SetFollowNotified(std::uint64_t id, server::JobId to) override;

  // Transactions the writer committed (diagnostics, tests).
  std::uint64_t TransactionsCommitted() const override;

 protected:
  struct Limits {
    std::size_t max_rows_per_transaction = 50'000;
    std::size_t max_queued_rows = 1'000'000;
    std::size_t max_read_connections = 4;
  };
  explicit SqlStore(Limits limits) : limits_(limits) {}

  // The backend's part.
  // Applies one write set in the writer's transaction (db/write_set_rows.h and its samples).
  virtual Status ApplyWriteSet(const WriteSet& ws, WriteOutcome* outcome) = 0;
  virtual Result<std::unique_ptr<C>> OpenReadConnection() = 0;
  // QuerySeries' two fragments: "a job's label holds ?" and "j.id is one of the list ?" (the list
  // as JobIdList writes it).
  virtual const char* LabelHoldsSql() const = 0;
  virtual const char* JobIdInListSql() const = 0;
  virtual std::string JobIdList(const std::vector<JobId>& ids) const = 0;

  // A read's connection (lent to one read at a time), given back to the pool when the lease ends.
  class ReadLease {
   public:
    ReadLease(SqlStore* store, C* c) : store_(store), c_(c) {}
    ReadLease(ReadLease&& other) noexcept : store_(other.store_), c_(other.c_) {
      other.c_ = nullptr;
    }
    ReadLease& operator=(ReadLease&&) = delete;
    ~ReadLease() {
      if (c_ != nullptr) store_->EndRead(c_);
    }
    C& connection() const { return *c_; }

   private:
    SqlStore* store_;
    C* c_;
  };

  // With w_ open and the first read connection `first`: starts the writer over `transactions`.
  void StartStore(WriteQueue::Transactions& transactions, std::unique_ptr<C> first);
  // Drains the queue, stops the writer, waits for reads in progress, closes every connection.
  void CloseStore();
  // Waits for the state a read must see, then lends a read connection.
  Result<ReadLease> StartRead();
  // Runs `apply` in the writer's transaction (on its connection) and waits for the commit.
  Status WriteFunction(std::function<Status(C& w)> apply);

  std::unique_ptr<C> w_;  // the writer's connection: writer thread only (and the backend's Open)

 private:
  void EndRead(C* c);

  Limits limits_;
  std::unique_ptr<WriteQueue> queue_;  // started by StartStore

  std::mutex pool_mu_;  // the read connections
  std::condition_variable pool_cv_;
  std::vector<std::unique_ptr<C>> reads_;  // every open one
  std::vector<C*> idle_reads_;
  std::size_t opening_ = 0;  // connections being opened, without the lock
  bool reads_closed_ = false;
};

}  // namespace mculab::db
