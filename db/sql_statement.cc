#include "db/sql_statement.h"

namespace mculab::db {

Error SqlError(sqlite3* db, const std::string& what) {
  return MakeError(ErrorCode::kInternal, what + ": " + (db ? sqlite3_errmsg(db) : "no database"));
}

Stmt::Stmt(sqlite3* db, const std::string& sql) : db_(db) {
  if (sqlite3_prepare_v3(db, sql.c_str(), static_cast<int>(sql.size()) + 1,
                         SQLITE_PREPARE_PERSISTENT, &s_, nullptr) != SQLITE_OK ||
      s_ == nullptr) {
    error_ = SqlError(db, "preparing \"" + sql + "\"");
    sqlite3_finalize(s_);
    s_ = nullptr;
  }
}

Connection::~Connection() {
  statements_.clear();
  sqlite3_close(db_);
}

Stmt& Connection::Statement(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) {
    // One that failed to prepare (a busy schema, say) is prepared again once nothing uses it.
    if (!it->second->error() || it->second->in_use()) return *it->second;
    statements_.erase(it);
  }
  if (statements_.size() >= kMaxStatements) {
    std::erase_if(statements_, [](const auto& entry) { return !entry.second->in_use(); });
  }
  return *statements_.emplace(sql, std::make_unique<Stmt>(db_, sql)).first->second;
}

Status ExecScript(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    return MakeError(ErrorCode::kInternal, msg);
  }
  return {};
}

}  // namespace mculab::db
