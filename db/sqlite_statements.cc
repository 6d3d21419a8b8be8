#include "db/sqlite_statements.h"

#include "db/sqlite_rows.h"

namespace mculab::db {
namespace {

std::string MultiSampleInsert(int rows) {
  std::string sql =
      "INSERT INTO samples(run_id, pass, case_index, iteration, metric, value) VALUES ";
  for (int i = 0; i < rows; ++i) sql += i ? ",(?,?,?,?,?,?)" : "(?,?,?,?,?,?)";
  return sql;
}

}  // namespace

Status SqliteStore::Statements::PrepareWrites(sqlite3* db) {
  const std::string multi = MultiSampleInsert(kSamplesPerInsert);
  const std::pair<Stmt*, const char*> list[] = {
      {&begin, "BEGIN IMMEDIATE"},
      {&commit, "COMMIT"},
      {&rollback, "ROLLBACK"},
      {&savepoint, "SAVEPOINT write_set"},
      {&release, "RELEASE write_set"},
      {&rollback_to, "ROLLBACK TO write_set"},
      {&insert_artifact,
       "INSERT INTO artifacts(sha256, size, name, user_name, created_ms) VALUES(?,?,?,?,?) "
       "ON CONFLICT(sha256) DO NOTHING"},
      {&upsert_board,
       "INSERT INTO boards(name, kind, agent, tags, emulated, serial, ram_bytes, state, health, "
       "current_job, updated_ms, holder, lease_until_ms, reservation_note, hold, "
       "health_failures, calibration) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
       "ON CONFLICT(name) DO UPDATE SET "
       "kind=excluded.kind, agent=excluded.agent, tags=excluded.tags, "
       "emulated=excluded.emulated, serial=excluded.serial, ram_bytes=excluded.ram_bytes, "
       "state=excluded.state, health=excluded.health, current_job=excluded.current_job, "
       "updated_ms=excluded.updated_ms, holder=excluded.holder, "
       "lease_until_ms=excluded.lease_until_ms, reservation_note=excluded.reservation_note, "
       "hold=excluded.hold, health_failures=excluded.health_failures, "
       "calibration=excluded.calibration"},
      {&upsert_run,
       "INSERT INTO runs(id, job_id, attempt, board, agent, state, created_ms, finished_ms, "
       "message, batches_expected, started, runner_version, port, cpu, clock_hz, emulated, "
       "timer_unit, counters, firmware_sha256, workload_sha256, toolchain, board_serial, note, "
       "seed) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
       "ON CONFLICT(id) DO UPDATE SET "
       "state=excluded.state, finished_ms=excluded.finished_ms, message=excluded.message, "
       "batches_expected=excluded.batches_expected, started=excluded.started, "
       "runner_version=excluded.runner_version, port=excluded.port, cpu=excluded.cpu, "
       "clock_hz=excluded.clock_hz, emulated=excluded.emulated, "
       "timer_unit=excluded.timer_unit, counters=excluded.counters, "
       "firmware_sha256=excluded.firmware_sha256, workload_sha256=excluded.workload_sha256, "
       "toolchain=excluded.toolchain, board_serial=excluded.board_serial, note=excluded.note, "
       "seed=excluded.seed"},
      {&update_job,
       "UPDATE jobs SET state=?, attempts=?, started_ms=?, finished_ms=?, message=?, "
       "assigned_board=?, last_run_id=? WHERE id=?"},
      {&insert_transition,
       "INSERT INTO job_transitions(job_id, from_state, to_state, reason, actor, time_ms) "
       "VALUES(?,?,?,?,?,?)"},
      {&insert_board_transition,
       "INSERT INTO board_transitions(board, field, from_value, to_value, reason, actor, "
       "time_ms) VALUES(?,?,?,?,?,?,?)"},
      {&upsert_case_result,
       "INSERT INTO case_results(run_id, case_index, checksum, expected, ok, overhead) "
       "VALUES(?,?,?,?,?,?) ON CONFLICT(run_id, case_index) DO UPDATE SET "
       "checksum=excluded.checksum, expected=excluded.expected, ok=excluded.ok, "
       "overhead=excluded.overhead"},
      {&upsert_case_stats,
       "INSERT INTO case_stats(job_id, case_index, metric_index, run_id, metric, unit, n, min, "
       "median, mean, p90, p99, stddev, cv, max) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
       "ON CONFLICT(job_id, case_index, metric_index) DO UPDATE SET run_id=excluded.run_id, "
       "metric=excluded.metric, unit=excluded.unit, n=excluded.n, min=excluded.min, "
       "median=excluded.median, mean=excluded.mean, p90=excluded.p90, p99=excluded.p99, "
       "stddev=excluded.stddev, cv=excluded.cv, max=excluded.max"},
      {&insert_batch, "INSERT INTO batches(run_id, sequence) VALUES(?,?) ON CONFLICT DO NOTHING"},
      {&insert_sample,
       "INSERT INTO samples(run_id, pass, case_index, iteration, metric, value) "
       "VALUES(?,?,?,?,?,?)"},
      {&insert_samples_multi, multi.c_str()},
      {&add_progress, "UPDATE runs SET progress_done = progress_done + ? WHERE id = ?"},
      {&insert_job,
       "INSERT INTO jobs(id, user_name, kind, board, op, label, state, iterations, warmup, "
       "num_cases, cases_artifact, timeout_s, attempts, created_ms, started_ms, finished_ms, "
       "message, assigned_board, last_run_id, priority, firmware_artifact, blob_artifact, "
       "tags, origin) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
      {&reserve_ids,
       "INSERT INTO id_reservations(name, last) VALUES(?, ?) "
       "ON CONFLICT(name) DO UPDATE SET last = MAX(last, excluded.last)"},
      {&insert_case, "INSERT INTO job_cases(job_id, case_index, case_id, params) VALUES(?,?,?,?)"},
  };
  for (auto& [stmt, sql] : list) {
    if (Status s = stmt->Prepare(db, sql); !s.ok()) return s;
  }
  return {};
}

Status SqliteStore::Statements::PrepareReads(sqlite3* db) {
  const std::string job_one = Sql("SELECT ", kJobCols) + "WHERE j.id = ?";
  const std::string job_list =
      Sql("SELECT ", kJobCols) +
      "WHERE (?1 = '' OR j.state = ?1) AND (?2 = '' OR j.kind = ?2) "
      "AND (?3 = '' OR j.board = ?3 OR j.assigned_board = ?3) AND (?4 = '' OR j.op = ?4) "
      "AND (?5 = '' OR j.user_name = ?5) AND (?6 = 0 OR j.id < ?6) "
      "ORDER BY j.id DESC LIMIT ?7";
  const std::string job_active =
      Sql("SELECT ", kJobCols) +
      "WHERE j.state IN ('queued', 'assigned', 'preparing', 'running') ORDER BY j.id";
  const std::string run_one = Sql("SELECT ", kRunCols) + "WHERE id = ?";
  const std::string run_list = Sql("SELECT ", kRunCols) + "WHERE job_id = ? ORDER BY id";
  const std::string board_list = Sql("SELECT ", kBoardCols) + "ORDER BY name";
  const std::pair<Stmt*, const char*> list[] = {
      {&get_job, job_one.c_str()},
      {&list_jobs, job_list.c_str()},
      {&list_active_jobs, job_active.c_str()},
      {&get_cases,
       "SELECT case_index, case_id, params FROM job_cases WHERE job_id = ? "
       "ORDER BY case_index"},
      {&get_transitions,
       "SELECT job_id, from_state, to_state, reason, actor, time_ms FROM job_transitions "
       "WHERE job_id = ? ORDER BY id"},
      {&list_boards, board_list.c_str()},
      {&get_board_transitions,
       "SELECT board, field, from_value, to_value, reason, actor, time_ms FROM "
       "board_transitions WHERE board = ? ORDER BY id"},
      {&get_run, run_one.c_str()},
      {&list_runs, run_list.c_str()},
      {&max_job, "SELECT COALESCE(MAX(id), 0) FROM jobs"},
      {&max_run,
       "SELECT MAX(COALESCE((SELECT MAX(id) FROM runs), 0), "
       "COALESCE((SELECT last FROM id_reservations WHERE name = 'run'), 0))"},
      {&get_samples,
       "SELECT pass, case_index, iteration, metric, value FROM samples WHERE run_id = ?"},
      {&scan_samples,
       "SELECT pass, case_index, iteration, metric, value FROM samples WHERE run_id = ? "
       "ORDER BY case_index, metric, pass"},
      {&count_samples, "SELECT COUNT(*) FROM samples WHERE run_id = ?"},
      {&list_batches, "SELECT sequence FROM batches WHERE run_id = ? ORDER BY sequence"},
      {&get_case_results,
       "SELECT run_id, case_index, checksum, expected, ok, overhead FROM case_results "
       "WHERE run_id = ? ORDER BY case_index"},
      {&get_case_stats,
       "SELECT job_id, run_id, case_index, metric_index, metric, unit, n, min, median, mean, "
       "p90, p99, stddev, cv, max FROM case_stats WHERE job_id = ? "
       "ORDER BY case_index, metric_index"},
      {&get_artifact,
       "SELECT sha256, size, name, user_name, created_ms FROM artifacts WHERE sha256 = ?"},
      {&artifacts_before,
       "SELECT sha256, size, name, user_name, created_ms FROM artifacts WHERE created_ms < ? "
       "ORDER BY created_ms"},
      {&artifact_usage,
       "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM artifacts WHERE user_name = ?"},
      {&user_version, "PRAGMA user_version"},
      {&journal_mode, "PRAGMA journal_mode"},
  };
  for (auto& [stmt, sql] : list) {
    if (Status s = stmt->Prepare(db, sql); !s.ok()) return s;
  }
  return {};
}

}  // namespace mculab::db
