// Row readers of the SQLite store: the columns a job, run or board is read from (each ends in its
// FROM clause), and the reader of one such row. db-internal.
#pragma once

#include <string>

#include "db/sql_statement.h"
#include "db/sqlite_store.h"

namespace mculab::db {

extern const char* const kJobCols;
extern const char* const kRunCols;
extern const char* const kBoardCols;

Result<Job> ReadJob(Use& u);
Result<Run> ReadRun(Use& u);
Result<Board> ReadBoard(Use& u);
// A count or sequence in the first column.
std::uint64_t ReadCount(Use& u);

}  // namespace mculab::db
