// SqlStore<C>'s member definitions: the writer's queue and the read pool here, the reads and
// account writes in sql_store_reads.h, sql_store_series.h and sql_store_accounts.h. Included only
// where SqlStore is instantiated (db/sqlite_store.cc, db/pg_store.cc). db-internal.
#pragma once

#include <algorithm>

#include "db/sql_store.h"
#include "db/sql_store_accounts.h"
#include "db/sql_store_reads.h"
#include "db/sql_store_series.h"

namespace mculab::db {

template <typename C>
void SqlStore<C>::StartStore(WriteQueue::Transactions& transactions, std::unique_ptr<C> first) {
  idle_reads_.push_back(first.get());
  reads_.push_back(std::move(first));
  queue_ = std::make_unique<WriteQueue>(
      WriteQueue::Options{limits_.max_rows_per_transaction, limits_.max_queued_rows}, transactions);
  queue_->Start();
}

template <typename C>
void SqlStore<C>::CloseStore() {
  if (queue_ != nullptr) queue_->Close();  // nullptr: opening failed before the writer started
  {
    // Reads in progress end first; later ones fail.
    std::unique_lock l(pool_mu_);
    reads_closed_ = true;
    pool_cv_.wait(l, [&] { return idle_reads_.size() == reads_.size() && opening_ == 0; });
    idle_reads_.clear();
    reads_.clear();
  }
  w_.reset();
}

template <typename C>
void SqlStore<C>::Write(WriteSet ws, WriteDone done) {
  queue_->Write(std::move(ws), std::move(done), [this](const WriteSet& w, WriteOutcome* outcome) {
    return ApplyWriteSet(w, outcome);
  });
}

template <typename C>
void SqlStore<C>::WaitForRoom() {
  queue_->WaitForRoom();
}

template <typename C>
void SqlStore<C>::Flush() {
  queue_->Flush();
}

template <typename C>
std::uint64_t SqlStore<C>::StateVersion() {
  return queue_->StateVersion();
}

template <typename C>
std::optional<std::vector<JobId>> SqlStore<C>::JobsWrittenSince(std::uint64_t version) {
  return queue_->JobsWrittenSince(version);
}

template <typename C>
std::uint64_t SqlStore<C>::TransactionsCommitted() const {
  return queue_->TransactionsCommitted();
}

template <typename C>
Status SqlStore<C>::WriteFunction(std::function<Status(C& w)> apply) {
  return queue_->Call([this, apply = std::move(apply)] { return apply(*w_); });
}

template <typename C>
Result<typename SqlStore<C>::ReadLease> SqlStore<C>::StartRead() {
  if (queue_ == nullptr || !queue_->WaitForState()) {
    return MakeError(ErrorCode::kUnavailable, "the store is closed");
  }
  std::unique_lock l(pool_mu_);
  while (true) {
    if (reads_closed_) return MakeError(ErrorCode::kUnavailable, "the store is closed");
    if (!idle_reads_.empty()) {
      C* c = idle_reads_.back();
      idle_reads_.pop_back();
      return ReadLease(this, c);
    }
    if (reads_.size() + opening_ < std::max<std::size_t>(1, limits_.max_read_connections)) {
      // Opened without the lock (a PostgreSQL connection is a network round trip or more).
      ++opening_;
      l.unlock();
      auto c = OpenReadConnection();
      l.lock();
      --opening_;
      pool_cv_.notify_all();
      if (!c.ok()) return c.error();
      if (reads_closed_) return MakeError(ErrorCode::kUnavailable, "the store is closed");
      reads_.push_back(std::move(*c));
      return ReadLease(this, reads_.back().get());
    }
    pool_cv_.wait(l);
  }
}

template <typename C>
void SqlStore<C>::EndRead(C* c) {
  {
    std::lock_guard l(pool_mu_);
    idle_reads_.push_back(c);
  }
  pool_cv_.notify_all();
}

}  // namespace mculab::db
