// Store: the lab's durable state, as the service needs it, behind an interface so SQLite can be
// swapped for PostgreSQL. The service owns this interface; db/ implements it (db/sqlite_store.h).
//
// Writes are queued to ONE writer and applied in the order they were queued; each WriteSet is
// applied atomically, and many write sets share one transaction when the queue holds them
// (DESIGN.md §3, §6: >= 1,000 rows per transaction under load). A write's `done` callback runs on
// the writer thread after its transaction commits, in queue order; it must not block on the store
// (no reads, no Flush, no WriteAndWait) and should return quickly. Once the store is closed, a
// write is dropped and its `done` runs at once, on the caller's thread, with kUnavailable.
//
// Reads see every write queued before them except other threads' sample batches (a WriteSet
// holding only `batch`, or nothing): they wait for the last write of job, run, board or account
// state and for the calling thread's own writes to commit, never for the ingest backlog behind
// them, so a history read does not wait for the agents' samples. A read made after a write's `done`
// callback has run sees that write. Never read while holding a lock that a `done` callback takes.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "server/domain/board.h"
#include "server/domain/job.h"
#include "server/domain/profile.h"
#include "server/domain/run.h"
#include "server/service/series_query.h"

namespace mculab::server {

// A job to insert with the id its creator chose (the service allocates ids), and its cases.
struct NewJob {
  Job job;
  std::vector<CaseSpec> cases;
};

// Changes applied together, atomically, in this order of fields.
struct WriteSet {
  std::vector<NewJob> new_jobs;            // inserted; fails if the id exists
  std::vector<Artifact> artifacts;         // inserted unless the hash is already stored; the
                                           // uploader (user) becomes one of its owners either way
  std::vector<Board> boards;               // upserted by name
  std::vector<Run> runs;                   // upserted by id (progress_done is the store's)
  std::vector<Job> jobs;                   // mutable columns of existing jobs
  std::vector<JobTransition> transitions;  // audit rows
  std::vector<BoardTransition> board_transitions;
  std::vector<CaseResult> case_results;  // upserted by (run, case)
  std::vector<CaseStats> case_stats;     // upserted by (job, case, metric)
  std::optional<SampleBatch> batch;      // no-op if (run, sequence) is already stored;
                                         // otherwise its samples are appended and the run's
                                         // progress_done grows by batch.iterations
  // Counters and profiles (migration 0005), applied after the fields above.
  std::vector<JobEvents> job_events;              // inserted or replaced by job
  std::vector<BoardUnits> board_units;            // a board's units replace its stored ones
  std::vector<RunPass> run_passes;                // upserted by (run, pass)
  std::vector<OpProfileRow> op_profiles;          // upserted by (run, pass, case, op, metric)
  std::vector<MemoryFigure> memory;               // upserted by (run, case, source, category)
  std::vector<ArtifactSharing> artifact_sharing;  // an artifact's shared flag; absent ones: none
  // Artifact rows (and their owners) deleted by sha256, last (their files are the caller's to
  // remove).
  std::vector<std::string> deleted_artifacts;
  // Non-zero: the highest reserved run id grows to at least this (MaxRunId() reports it).
  RunId reserve_run_ids_to = 0;

  std::size_t Rows() const;
  // The jobs whose benchmark series (QuerySeries) this write may change: the jobs it inserts or
  // updates, their transitions, runs and statistics. nullopt: it may change any series (artifact
  // rows, which name the runners a series is matched by).
  std::optional<std::vector<JobId>> SeriesJobs() const;
};

struct WriteOutcome {
  Status status;                 // the commit's (or this write set's) outcome
  bool duplicate_batch = false;  // the batch was already stored: nothing was appended
  // The batch's run's progress_done once the batch was appended (the store is the one place
  // that counts progress); empty when nothing was added (a duplicate, or no measured iteration).
  std::optional<std::uint64_t> run_progress = std::nullopt;
};
using WriteDone = std::function<void(const WriteOutcome&)>;

// ---- the job history (web page, docs/http-api.md) ----
enum class JobSortKey { kId, kCreated, kState, kOp, kBoard, kUser };

// Every set field narrows the match; ties in the sort key are broken by id in the same order, so
// paging never shows a job twice or skips one.
struct JobQuery {
  std::string user, kind, op;       // exact; empty: any
  std::string board;                // exact, the assigned or the requested board; empty: any
  std::vector<std::string> states;  // any of these (domain names); empty: any
  std::string label_contains;       // case-insensitive (ASCII) substring; empty: any
  std::string model;                // a model job's file name, exact; empty: any
  std::string branch;               // exact; empty: any
  std::string commit;               // exact, or a prefix of 7+ characters; empty: any
  std::optional<std::int64_t> created_from, created_to;  // inclusive created_ms range
  JobId before_id = 0;                                   // 0: any; otherwise only ids below it
  JobSortKey sort = JobSortKey::kId;  // kBoard sorts by the assigned board, else the requested
  bool ascending = false;
  std::uint32_t limit = 50;
  std::uint64_t offset = 0;
};

// A job as the history lists it: emulated is its run's label once the run started, else whether
// a board of its kind is emulated.
struct JobRow {
  Job job;
  bool emulated = false;
  bool host = false;  // it ran (or will run) on a host board (set by LabQueries, not the store)
};

struct JobPage {
  std::uint64_t total = 0;  // every match, not only this page
  std::vector<JobRow> jobs;
};

// One (case, metric, pass) of a run: values in iteration order.
struct SeriesPoint {
  std::uint32_t iteration = 0;
  std::int64_t value = 0;
};

// ---- accounts ----
struct User {
  std::string name;
  std::string role;  // viewer | member | admin (server/service/caller.h)
  std::int64_t created_ms = 0;
};

// A bearer token as stored: never the token itself.
struct TokenRecord {
  std::string hash;   // SHA-256 of the token, lowercase hex
  std::string id;     // the token's first characters ("mcl_u_1a2b3c4d"): names it, cannot use it
  std::string kind;   // user | agent
  std::string owner;  // the user's name, or the agent's host
  std::int64_t created_ms = 0;
  std::int64_t revoked_ms = 0;  // 0: valid
};

// The store as each consumer needs it. The Lab's jobs, boards, runs and agent sessions write
// through JobStore; finalisation and the result views read ResultStore; Accounts needs only
// AccountStore; the history page and /metrics read HistoryReads. Store is all of them, as one
// implementation (db/sqlite_store.h) provides them.

// ---- jobs, boards, runs, artifacts: the Lab's state ----
class JobStore {
 public:
  virtual ~JobStore() = default;

  // ---- writes ----
  virtual void Write(WriteSet ws, WriteDone done = nullptr) = 0;
  // Write() and wait for the commit. Not from a `done` callback.
  Status WriteAndWait(WriteSet ws);
  // Blocks while the writer is too far behind (bounded memory under a flood of samples). Call with
  // no locks held, before queueing sample batches.
  virtual void WaitForRoom() = 0;
  // Returns after every write queued before the call has committed and its `done` has run.
  virtual void Flush() = 0;

  // ---- reads ----
  virtual Result<Job> GetJob(JobId id) = 0;  // kNotFound when absent
  // Jobs not in a final state, oldest first.
  virtual Result<std::vector<Job>> ListActiveJobs() = 0;
  virtual Result<std::vector<CaseSpec>> GetJobCases(JobId id) = 0;
  virtual Result<std::vector<JobTransition>> GetTransitions(JobId id) = 0;
  virtual Result<std::vector<Board>> ListBoards() = 0;
  virtual Result<std::vector<BoardTransition>> GetBoardTransitions(const std::string& board) = 0;
  virtual Result<Run> GetRun(RunId id) = 0;  // kNotFound when absent
  virtual Result<std::vector<Run>> ListRuns(JobId job) = 0;
  virtual Result<JobId> MaxJobId() = 0;  // 0 when there are no jobs
  // The highest run id stored or reserved (WriteSet::reserve_run_ids_to); 0 when neither.
  virtual Result<RunId> MaxRunId() = 0;
  // Sequence numbers of the run's committed sample batches, ascending (a restarted server
  // resumes a run with them).
  virtual Result<std::vector<std::uint64_t>> ListBatchSequences(RunId run) = 0;
  virtual Result<std::optional<Artifact>> GetArtifact(const std::string& sha256) = 0;
  // How many stored artifacts `user` uploaded first, and their total size (the upload quota).
  struct ArtifactUsage {
    std::uint64_t count = 0;
    std::uint64_t bytes = 0;
  };
  virtual Result<ArtifactUsage> GetArtifactUsage(const std::string& user) = 0;
  // Whether `user` uploaded the artifact (its first uploader or a later one of the same bytes).
  virtual Result<bool> IsArtifactOwner(const std::string& sha256, const std::string& user) = 0;
  // Artifacts no one uploaded since `ms` (collection candidates), oldest first.
  virtual Result<std::vector<Artifact>> ListArtifactsBefore(std::int64_t ms) = 0;
  // Empty events when the job asked for none.
  virtual Result<JobEvents> GetJobEvents(JobId job) = 0;
  // Every board's stored units, by board name.
  virtual Result<std::vector<BoardUnits>> ListBoardUnits() = 0;
};

// ---- a run's results: samples, statistics, passes, op profiles, memory ----
class ResultStore {
 public:
  virtual ~ResultStore() = default;

  // Every sample of a run, ordered by (pass, case_index, metric, iteration).
  virtual Result<std::vector<Sample>> GetSamples(RunId run) = 0;
  virtual Result<std::uint64_t> CountSamples(RunId run) = 0;
  // The run's samples ordered by (case_index, metric, pass), handed to `chunk` a few thousand at
  // a time, so a run of any size is read in bounded memory. `chunk` runs during the read: it must
  // not call the store.
  virtual Status ScanSamples(RunId run,
                             const std::function<void(std::span<const Sample>)>& chunk) = 0;
  // Every value of one metric of a run, over its passes, by case index; one case's only when
  // `case_index` is set. Each case's values come in no set order (for order-free statistics:
  // medians, bootstrap intervals), in one read of the run's rows.
  virtual Result<std::map<std::uint32_t, std::vector<double>>> GetMetricValues(
      RunId run, std::uint32_t metric, std::optional<std::uint32_t> case_index = std::nullopt) = 0;
  virtual Result<std::vector<CaseResult>> GetCaseResults(RunId run) = 0;
  // Ordered by (case_index, metric_index).
  virtual Result<std::vector<CaseStats>> GetCaseStats(JobId job) = 0;
  // The values of one case's metric in one pass of a run, ordered by iteration.
  virtual Result<std::vector<SeriesPoint>> GetCaseSeries(RunId run, std::uint32_t pass,
                                                         std::uint32_t case_index,
                                                         std::uint32_t metric) = 0;
  // Ordered by pass.
  virtual Result<std::vector<RunPass>> GetRunPasses(RunId run) = 0;
  // Ordered by (pass, case_index, op_index, metric).
  virtual Result<std::vector<OpProfileRow>> GetOpProfiles(RunId run) = 0;
  // Ordered by (case_index, source, category).
  virtual Result<std::vector<MemoryFigure>> GetMemory(RunId run) = 0;
};

// ---- users and tokens; writes wait for their commit ----
class AccountStore {
 public:
  virtual ~AccountStore() = default;

  // The user and their first token, together. kAlreadyExists when the name is taken.
  virtual Status AddUser(const User& user, const TokenRecord& token) = 0;
  // kAlreadyExists when the hash is stored (a 160-bit random token: never in practice).
  virtual Status AddToken(const TokenRecord& token) = 0;
  // Sets revoked_ms of the token with this hash; kNotFound when there is none. Revoking a revoked
  // token keeps its first revocation time.
  virtual Status RevokeToken(const std::string& hash, std::int64_t revoked_ms) = 0;
  virtual Result<std::optional<User>> GetUser(const std::string& name) = 0;
  virtual Result<std::vector<User>> ListUsers() = 0;  // by name
  virtual Result<std::optional<TokenRecord>> FindToken(const std::string& hash) = 0;
  virtual Result<std::vector<TokenRecord>> ListTokens() = 0;  // by kind, owner, created
};

// ---- the job history (web page) and /metrics ----
class HistoryReads {
 public:
  virtual ~HistoryReads() = default;

  virtual Result<JobPage> QueryJobs(const JobQuery& query) = 0;
  // Jobs per state (domain names); states without jobs are absent.
  virtual Result<std::vector<std::pair<std::string, std::uint64_t>>> CountJobsByState() = 0;
  // Samples ever stored (a counter: it never goes down).
  virtual Result<std::uint64_t> SamplesStored() = 0;
  // The jobs of a benchmark series (series_query.h), oldest first (by creation, then id).
  virtual Result<std::vector<SeriesRow>> QuerySeries(const SeriesQuery& query) = 0;
  // A number that grows with every write holding more than samples (job, run, board, account
  // state, statistics) and stays put otherwise: a read answer computed after it returned V is
  // current for as long as it still returns V. It waits as a read does, so it covers every such
  // write queued before the call.
  virtual std::uint64_t StateVersion() = 0;
  // The jobs the state writes queued after StateVersion() returned `version` may have changed
  // (WriteSet::SeriesJobs, each write's; duplicates possible), so an answer kept at `version` can
  // be brought up to date. nullopt when the store cannot say: a write of another kind (an admin
  // operation, artifacts), or `version` older than the store remembers (its last few thousand
  // writes).
  virtual std::optional<std::vector<JobId>> JobsWrittenSince(std::uint64_t version) = 0;
};

// The whole store, as db::SqliteStore implements it; each consumer takes the part it uses.
class Store : public JobStore, public ResultStore, public AccountStore, public HistoryReads {};

}  // namespace mculab::server
