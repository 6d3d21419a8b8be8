// WriteQueue: the one writer of a store (SQLite or PostgreSQL) and the waits around it.
//
// Writes are queued and one writer thread drains the queue: it takes every queued write (up to
// max_rows_per_transaction rows) into one transaction on the backend's connection, each write
// under its own savepoint so a bad one fails alone, commits, then runs the writes' callbacks in
// queue order (the order and thread contract of server/service/store.h). Reads call
// WaitForState() first: it waits for the last write holding more than samples and for the calling
// thread's own writes, never for other threads' sample batches.
//
// The backend gives the transaction's steps (Transactions); everything else is here, so both
// stores commit, call back and wait alike.
// Thread-safety: every method may be called from any thread; Transactions are called on the
// writer thread only.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/result.h"
#include "server/service/store.h"

namespace mculab::db {

class WriteQueue {
 public:
  // The writer connection's transaction statements.
  class Transactions {
   public:
    virtual ~Transactions() = default;
    virtual Status Begin() = 0;
    virtual Status Savepoint() = 0;
    virtual void RollbackToSavepoint() = 0;
    virtual void ReleaseSavepoint() = 0;
    virtual Status Commit() = 0;
    virtual void Rollback() = 0;
  };

  struct Options {
    std::size_t max_rows_per_transaction = 50'000;
    std::size_t max_queued_rows = 1'000'000;  // WaitForRoom() blocks past this many
  };

  WriteQueue(Options options, Transactions& transactions);
  ~WriteQueue();  // Close()
  WriteQueue(const WriteQueue&) = delete;
  WriteQueue& operator=(const WriteQueue&) = delete;

  void Start();  // the writer thread
  // Applies every queued write and runs its callback, then stops the writer. Later writes fail
  // with kUnavailable at once, on the caller's thread. Idempotent.
  void Close();
  bool closed() const { return closed_; }

  // Queues `ws`, applied by `apply` (in the writer's transaction; it fills the outcome but its
  // status); `done` runs after the commit, on the writer thread.
  using Apply = std::function<Status(const server::WriteSet&, server::WriteOutcome*)>;
  void Write(server::WriteSet ws, server::WriteDone done, Apply apply);
  // Runs `apply` in the writer's transaction and waits for the commit.
  Status Call(std::function<Status()> apply);

  void WaitForRoom();
  void Flush();
  // Waits until the last write holding more than samples, and the calling thread's own writes,
  // are committed; false once closed.
  bool WaitForState();
  std::uint64_t StateVersion();
  // Store::JobsWrittenSince: from the last kWrittenLog state writes queued.
  std::optional<std::vector<server::JobId>> JobsWrittenSince(std::uint64_t version) const;
  std::uint64_t TransactionsCommitted() const;
  static constexpr std::size_t kWrittenLog = 4096;
  bool OnWriterThread() const { return std::this_thread::get_id() == writer_id_; }

 private:
  struct Op {
    std::function<Status()> apply;                    // runs in the writer's transaction
    std::function<void(const Status&)> after_commit;  // runs after the commit
    std::size_t rows = 0;
    std::uint64_t seq = 0;
    bool samples_only = false;  // samples or nothing, no state: no read waits for it
    // The jobs whose series the write may change (WriteSet::SeriesJobs); nullopt: any.
    std::optional<std::vector<server::JobId>> series_jobs;
  };
  // A state write's entry in the log JobsWrittenSince reads.
  struct Written {
    std::uint64_t seq = 0;
    std::optional<std::vector<server::JobId>> series_jobs;
  };

  void Enqueue(Op op);
  void WriterLoop();
  void CommitBatch(std::vector<Op>& ops);

  Options options_;
  Transactions& transactions_;

  mutable std::mutex mu_;  // the queue and the counters below
  std::condition_variable queue_cv_;
  std::condition_variable progress_cv_;  // committed_seq_/done_seq_/queued_rows_ changed
  std::deque<Op> queue_;
  std::size_t queued_rows_ = 0;
  std::uint64_t next_seq_ = 1;
  // Written under mu_; a read loads these two and closed_ without it (WaitForState), so a read
  // with nothing to wait for never takes the lock the ingest's writes contend for.
  std::atomic<std::uint64_t> committed_seq_{0};
  // The last write queued that holds more than samples (state every later read must see).
  std::atomic<std::uint64_t> last_state_seq_{0};
  std::atomic<bool> closed_{false};
  std::uint64_t done_seq_ = 0;
  std::deque<Written> written_;        // the last kWrittenLog state writes, oldest first
  std::uint64_t written_dropped_ = 0;  // the newest seq dropped from written_ (0: none)
  std::uint64_t committed_transactions_ = 0;
  bool closing_ = false;
  // Names this queue in each thread's record of its last queued write (never reused).
  static std::uint64_t NextQueueId();
  const std::uint64_t id_ = NextQueueId();
  std::thread writer_;
  std::thread::id writer_id_;
};

}  // namespace mculab::db
