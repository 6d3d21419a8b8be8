#include "db/write_queue.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <future>

#include "common/crash_point.h"

namespace mculab::db {
namespace {

// The last write this thread queued to each queue, by the queue's id: what a read on this thread
// must wait for besides the state every read waits for.
thread_local std::vector<std::pair<std::uint64_t, std::uint64_t>> t_queued;

std::uint64_t QueuedByThisThread(std::uint64_t queue) {
  for (const auto& [id, seq] : t_queued) {
    if (id == queue) return seq;
  }
  return 0;
}

void RecordQueuedByThisThread(std::uint64_t queue, std::uint64_t seq) {
  for (auto& [id, last] : t_queued) {
    if (id == queue) {
      last = seq;
      return;
    }
  }
  t_queued.emplace_back(queue, seq);
}

}  // namespace

std::uint64_t WriteQueue::NextQueueId() {
  static std::atomic<std::uint64_t> next{1};
  return next++;
}

WriteQueue::WriteQueue(Options options, Transactions& transactions)
    : options_(options), transactions_(transactions) {}

WriteQueue::~WriteQueue() { Close(); }

void WriteQueue::Start() {
  writer_ = std::thread([this] { WriterLoop(); });
  writer_id_ = writer_.get_id();
}

void WriteQueue::Close() {
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
}

void WriteQueue::Enqueue(Op op) {
  {
    std::unique_lock l(mu_);
    if (!closing_) {
      op.seq = next_seq_++;
      if (!op.samples_only) {
        last_state_seq_.store(op.seq);
        written_.push_back(Written{op.seq, std::move(op.series_jobs)});
        if (written_.size() > kWrittenLog) {
          written_dropped_ = written_.front().seq;
          written_.pop_front();
        }
      }
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

void WriteQueue::WriterLoop() {
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

void WriteQueue::CommitBatch(std::vector<Op>& ops) {
  std::vector<Status> results(ops.size());
  Status txn = transactions_.Begin();
  if (txn.ok()) {
    for (std::size_t i = 0; i < ops.size(); ++i) {
      Status s = transactions_.Savepoint();
      if (s.ok()) {
        s = ops[i].apply();
        if (!s.ok()) transactions_.RollbackToSavepoint();
        transactions_.ReleaseSavepoint();
      }
      results[i] = s;
    }
    CrashPoint(crash_points::kBeforeCommit);
    txn = transactions_.Commit();
    if (!txn.ok()) transactions_.Rollback();
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
    if (txn.ok()) ++committed_transactions_;
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

void WriteQueue::Write(server::WriteSet ws, server::WriteDone done, Apply apply) {
  auto shared = std::make_shared<server::WriteSet>(std::move(ws));
  auto outcome = std::make_shared<server::WriteOutcome>();
  Op op;
  op.rows = std::max<std::size_t>(1, shared->Rows());
  // Rows of state besides the samples (an empty write only orders a callback after the commits).
  op.samples_only = shared->Rows() == (shared->batch ? shared->batch->samples.size() + 1 : 0);
  if (!op.samples_only) op.series_jobs = shared->SeriesJobs();
  op.apply = [shared, outcome, apply = std::move(apply)] {
    *outcome = server::WriteOutcome{};  // a retried apply starts over
    return apply(*shared, outcome.get());
  };
  if (done) {
    op.after_commit = [done = std::move(done), outcome](const Status& s) {
      server::WriteOutcome o = s.ok() ? *outcome : server::WriteOutcome{};
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

Status WriteQueue::Call(std::function<Status()> apply) {
  auto done = std::make_shared<std::promise<Status>>();
  auto future = done->get_future();
  Op op;
  op.rows = 1;
  op.apply = std::move(apply);
  op.after_commit = [done](const Status& s) { done->set_value(s); };
  Enqueue(std::move(op));
  return future.get();
}

void WriteQueue::WaitForRoom() {
  if (OnWriterThread()) return;
  std::unique_lock l(mu_);
  progress_cv_.wait(l, [&] { return queued_rows_ <= options_.max_queued_rows || closing_; });
}

void WriteQueue::Flush() {
  if (OnWriterThread()) return;
  std::unique_lock l(mu_);
  const std::uint64_t target = next_seq_ - 1;
  progress_cv_.wait(l, [&] { return done_seq_ >= target || closed_; });
}

bool WriteQueue::WaitForState() {
  if (closed_) return false;
  if (OnWriterThread()) return true;
  const std::uint64_t target = std::max(last_state_seq_.load(), QueuedByThisThread(id_));
  if (committed_seq_.load() >= target) return true;  // the common case: no lock
  std::unique_lock l(mu_);
  progress_cv_.wait(l, [&] { return committed_seq_ >= target || closed_; });
  return !closed_;
}

std::uint64_t WriteQueue::StateVersion() {
  // The last state write queued is the version once it has committed (writes are numbered in
  // queue order; a later state write gives a larger number).
  const std::uint64_t version = last_state_seq_.load();
  (void)WaitForState();
  return version;
}

std::optional<std::vector<server::JobId>> WriteQueue::JobsWrittenSince(
    std::uint64_t version) const {
  std::lock_guard l(mu_);
  if (version < written_dropped_) return std::nullopt;  // forgotten
  std::vector<server::JobId> ids;
  // Newest first: only the writes after `version` are read.
  for (auto it = written_.rbegin(); it != written_.rend() && it->seq > version; ++it) {
    if (!it->series_jobs) return std::nullopt;
    ids.insert(ids.end(), it->series_jobs->begin(), it->series_jobs->end());
  }
  return ids;
}

std::uint64_t WriteQueue::TransactionsCommitted() const {
  std::lock_guard l(mu_);
  return committed_transactions_;
}

}  // namespace mculab::db
