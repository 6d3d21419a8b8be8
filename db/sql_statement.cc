#include "db/sql_statement.h"

namespace mculab::db {

Error SqlError(sqlite3* db, const std::string& what) {
  return MakeError(ErrorCode::kInternal, what + ": " + (db ? sqlite3_errmsg(db) : "no database"));
}

Status ExecFixed(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    return MakeError(ErrorCode::kInternal, std::string(sql) + ": " + msg);
  }
  return {};
}

}  // namespace mculab::db
