#include "db/store_rows.h"

namespace mculab::db {

const char* const kJobCols =
    "j.id, j.user_name, j.kind, j.board, j.op, j.label, j.state, j.iterations, j.warmup, "
    "j.num_cases, j.cases_artifact, j.timeout_s, j.attempts, j.created_ms, j.started_ms, "
    "j.finished_ms, j.message, j.assigned_board, j.last_run_id, COALESCE(r.progress_done, 0), "
    "j.priority, j.firmware_artifact, j.blob_artifact, j.tags, j.origin, j.kernels, "
    "COALESCE(r.kernel_set, ''), j.model_name, j.model_sha256, j.model_summary, j.commit_sha, "
    "j.branch, j.code_url, j.reruns, j.max_cv_pct, j.reruns_done "
    "FROM jobs j LEFT JOIN runs r ON r.id = j.last_run_id ";

const char* const kRunCols =
    "id, job_id, attempt, board, agent, state, created_ms, finished_ms, message, "
    "batches_expected, progress_done, started, runner_version, port, cpu, clock_hz, emulated, "
    "timer_unit, counters, firmware_sha256, workload_sha256, toolchain, board_serial, note, seed, "
    "kernel_set "
    "FROM runs ";

const char* const kBoardCols =
    "name, kind, agent, tags, emulated, serial, ram_bytes, state, health, current_job, updated_ms, "
    "holder, lease_until_ms, reservation_note, hold, health_failures, calibration, approved "
    "FROM boards ";

const char* const kTokenCols = "hash, id, kind, owner, created_ms, revoked_ms";

const char* const kCaseStatsCols =
    "job_id, run_id, case_index, metric_index, metric, unit, n, min, median, mean, p90, p99, "
    "stddev, cv, max";

}  // namespace mculab::db
