// SqliteStore's writer: the queue, the batched transaction with a savepoint per write, the
// waits (room, flush, state a read must see).
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <future>

#include "common/crash_point.h"
#include "db/sql_statement.h"
#include "db/sqlite_store.h"

namespace mculab::db {
namespace {

// The last write this thread queued to each store, by the store's id: what a read on this thread
// must wait for besides the state every read waits for.
thread_local std::vector<std::pair<std::uint64_t, std::uint64_t>> t_queued;

std::uint64_t QueuedByThisThread(std::uint64_t store) {
  for (const auto& [id, seq] : t_queued) {
    if (id == store) return seq;
  }
  return 0;
}

void RecordQueuedByThisThread(std::uint64_t store, std::uint64_t seq) {
  for (auto& [id, last] : t_queued) {
    if (id == store) {
      last = seq;
      return;
    }
  }
  t_queued.emplace_back(store, seq);
}

}  // namespace

std::uint64_t SqliteStore::NextStoreId() {
  static std::atomic<std::uint64_t> next{1};
  return next++;
}

// ---------------------------------------------------------------------------------------------
// The writer

void SqliteStore::Enqueue(Op op) {
  {
    std::unique_lock l(mu_);
    if (!closing_) {
      op.seq = next_seq_++;
      if (!op.samples_only) last_state_seq_.store(op.seq);
      if (!OnWriterThread()) RecordQueuedByThisThread(id_, op.seq);
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
  pthread_setname_np(pthread_self(), "mculab-writer");  // as top -H and the benches see it
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
  Status txn = Use(w_->Statement("BEGIN IMMEDIATE")).Exec("BEGIN");
  if (txn.ok()) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      Status s = Use(w_->Statement("SAVEPOINT write_set")).Exec("SAVEPOINT");
      if (s.ok()) {
        s = ops[i].apply();
        if (!s.ok()) (void)Use(w_->Statement("ROLLBACK TO write_set")).Exec("ROLLBACK TO");
        (void)Use(w_->Statement("RELEASE write_set")).Exec("RELEASE");
      }
      results[i] = s;
    }
    CrashPoint(crash_points::kBeforeCommit);
    txn = Use(w_->Statement("COMMIT")).Exec("COMMIT");
    if (!txn.ok()) (void)Use(w_->Statement("ROLLBACK")).Exec("ROLLBACK");
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
  if (closed_) return false;
  if (OnWriterThread()) return true;
  const std::uint64_t target = std::max(last_state_seq_.load(), QueuedByThisThread(id_));
  if (committed_seq_.load() >= target) return true;  // the common case: no lock
  std::unique_lock l(mu_);
  progress_cv_.wait(l, [&] { return committed_seq_ >= target || closed_; });
  return !closed_;
}

std::uint64_t SqliteStore::StateVersion() {
  // The last state write queued is the version once it has committed (writes are numbered in
  // queue order; a later state write gives a larger number).
  const std::uint64_t version = last_state_seq_.load();
  (void)WaitForState();
  return version;
}

Status SqliteStore::WriteFunction(std::function<Status(Connection& w)> apply) {
  auto done = std::make_shared<std::promise<Status>>();
  auto future = done->get_future();
  Op op;
  op.rows = 1;
  op.apply = [this, apply = std::move(apply)] { return apply(*w_); };
  op.after_commit = [done](const Status& s) { done->set_value(s); };
  Enqueue(std::move(op));
  return future.get();
}

}  // namespace mculab::db
