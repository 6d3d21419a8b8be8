// SqliteStore's writer: the transaction statements the write queue (db/write_queue.h) runs on the
// writer's connection.
#include "db/sql_statement.h"
#include "db/sqlite_store.h"

namespace mculab::db {
namespace {

class WriterTransactions final : public WriteQueue::Transactions {
 public:
  explicit WriterTransactions(Connection& w) : w_(w) {}
  // IMMEDIATE: the write lock at once, so a reader in WAL mode never makes a commit fail busy.
  Status Begin() override { return Run("BEGIN IMMEDIATE"); }
  Status Savepoint() override { return Run("SAVEPOINT write_set"); }
  void RollbackToSavepoint() override { (void)Run("ROLLBACK TO write_set"); }
  void ReleaseSavepoint() override { (void)Run("RELEASE write_set"); }
  Status Commit() override { return Run("COMMIT"); }
  void Rollback() override { (void)Run("ROLLBACK"); }

 private:
  Status Run(const char* sql) { return Use(w_.Statement(sql)).Exec(sql); }
  Connection& w_;
};

}  // namespace

std::unique_ptr<WriteQueue::Transactions> MakeWriterTransactions(Connection& w) {
  return std::make_unique<WriterTransactions>(w);
}

}  // namespace mculab::db
