// The prepared statements of one connection of the SQLite store. db-internal.
#pragma once

#include "db/sql_statement.h"
#include "db/sqlite_store.h"

namespace mculab::db {

// Rows per multi-row sample INSERT (6 parameters each, well under SQLite's parameter limit).
constexpr int kSamplesPerInsert = 64;

// Every prepared statement of one connection. The writer's connection uses the write ones, the
// read connection the read ones; each is prepared on its own connection.
class SqliteStore::Statements {
 public:
  // Writes.
  Stmt begin, commit, rollback, savepoint, release, rollback_to;
  Stmt insert_artifact, upsert_board, upsert_run, update_job, insert_transition,
      insert_board_transition, upsert_case_result, upsert_case_stats, insert_batch, insert_sample,
      insert_samples_multi, add_progress, insert_job, insert_case, reserve_ids;
  // Reads.
  Stmt get_job, list_jobs, list_active_jobs, get_cases, get_transitions, list_boards,
      get_board_transitions, get_run, list_runs, max_job, max_run, get_samples, count_samples,
      scan_samples, get_case_results, get_case_stats, get_artifact, artifact_usage,
      artifacts_before, user_version, journal_mode;
  Stmt list_batches;

  Status PrepareWrites(sqlite3* db);
  Status PrepareReads(sqlite3* db);
};

}  // namespace mculab::db
