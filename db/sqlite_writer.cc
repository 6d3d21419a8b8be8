// SqliteStore's writer: the transaction statements the write queue (db/write_queue.h) runs on the
// writer's connection, and the store's writes and waits, which are the queue's.
#include "db/sql_statement.h"
#include "db/sqlite_store.h"

namespace mculab::db {

class SqliteStore::WriterTransactions final : public WriteQueue::Transactions {
 public:
  explicit WriterTransactions(SqliteStore& store) : store_(store) {}
  Status Begin() override { return Run("BEGIN IMMEDIATE"); }
  Status Savepoint() override { return Run("SAVEPOINT write_set"); }
  void RollbackToSavepoint() override { (void)Run("ROLLBACK TO write_set"); }
  void ReleaseSavepoint() override { (void)Run("RELEASE write_set"); }
  Status Commit() override { return Run("COMMIT"); }
  void Rollback() override { (void)Run("ROLLBACK"); }

 private:
  Status Run(const char* sql) { return Use(store_.w_->Statement(sql)).Exec(sql); }
  SqliteStore& store_;
};

void SqliteStore::StartWriter() {
  transactions_ = std::make_unique<WriterTransactions>(*this);
  queue_ = std::make_unique<WriteQueue>(
      WriteQueue::Options{options_.max_rows_per_transaction, options_.max_queued_rows},
      *transactions_);
  queue_->Start();
}

void SqliteStore::Write(WriteSet ws, WriteDone done) {
  queue_->Write(std::move(ws), std::move(done), [this](const WriteSet& w, WriteOutcome* outcome) {
    return ApplyWriteSet(w, outcome);
  });
}

void SqliteStore::WaitForRoom() { queue_->WaitForRoom(); }
void SqliteStore::Flush() { queue_->Flush(); }
std::uint64_t SqliteStore::StateVersion() { return queue_->StateVersion(); }
std::uint64_t SqliteStore::TransactionsCommitted() const { return queue_->TransactionsCommitted(); }

Status SqliteStore::WriteFunction(std::function<Status(Connection& w)> apply) {
  return queue_->Call([this, apply = std::move(apply)] { return apply(*w_); });
}

}  // namespace mculab::db
