#include "db/sqlite_rows.h"

#include "db/sql_util.h"

namespace mculab::db {

const char* const kJobCols =
    "j.id, j.user_name, j.kind, j.board, j.op, j.label, j.state, j.iterations, j.warmup, "
    "j.num_cases, j.cases_artifact, j.timeout_s, j.attempts, j.created_ms, j.started_ms, "
    "j.finished_ms, j.message, j.assigned_board, j.last_run_id, COALESCE(r.progress_done, 0), "
    "j.priority, j.firmware_artifact, j.blob_artifact, j.tags, j.origin, j.kernels, "
    "COALESCE(r.kernel_set, ''), j.model_name, j.model_sha256, j.model_summary, j.commit_sha, "
    "j.branch, j.code_url, j.reruns, j.max_cv_pct, j.reruns_done "
    "FROM jobs j LEFT JOIN runs r ON r.id = j.last_run_id ";

Result<Job> ReadJob(Use& u) {
  Job j;
  j.id = u.Int(0);
  j.user = u.Text(1);
  j.kind = u.Text(2);
  j.board = u.Text(3);
  j.op = u.Text(4);
  j.label = u.Text(5);
  std::string state = u.Text(6);
  auto parsed = server::ParseJobState(state);
  if (!parsed) {
    return MakeError(ErrorCode::kDataLoss,
                     "job " + std::to_string(j.id) + " has an unknown state '" + state + "'");
  }
  j.state = *parsed;
  j.iterations = u.U32(7);
  j.warmup = u.U32(8);
  j.num_cases = u.U32(9);
  j.cases_artifact = u.Text(10);
  j.timeout_s = u.U32(11);
  j.attempts = u.U32(12);
  j.created_ms = u.Int(13);
  j.started_ms = u.Int(14);
  j.finished_ms = u.Int(15);
  j.message = u.Text(16);
  j.assigned_board = u.Text(17);
  j.last_run_id = u.Int(18);
  j.progress_done = u.UInt(19);
  j.priority = server::ParseJobPriority(u.Text(20)).value_or(server::JobPriority::kNormal);
  j.firmware_artifact = u.Text(21);
  j.blob_artifact = u.Text(22);
  j.tags = TagsFromJson(u.Text(23));
  j.origin = server::ParseJobOrigin(u.Text(24)).value_or(server::JobOrigin::kUser);
  j.reference_kernels = u.Text(25) == "reference";
  j.kernel_set_ran = u.Text(26);
  j.model_name = u.Text(27);
  j.model_sha256 = u.Text(28);
  j.model_summary = u.Text(29);
  j.commit = u.Text(30);
  j.branch = u.Text(31);
  j.url = u.Text(32);
  j.reruns = u.U32(33);
  j.max_cv_pct = u.Real(34);
  j.reruns_done = u.U32(35);
  return j;
}

const char* const kRunCols =
    "id, job_id, attempt, board, agent, state, created_ms, finished_ms, message, "
    "batches_expected, progress_done, started, runner_version, port, cpu, clock_hz, emulated, "
    "timer_unit, counters, firmware_sha256, workload_sha256, toolchain, board_serial, note, seed, "
    "kernel_set "
    "FROM runs ";

Result<Run> ReadRun(Use& u) {
  Run r;
  r.id = u.Int(0);
  r.job_id = u.Int(1);
  r.attempt = u.U32(2);
  r.board = u.Text(3);
  r.agent = u.Text(4);
  std::string state = u.Text(5);
  auto parsed = server::ParseRunState(state);
  if (!parsed) {
    return MakeError(ErrorCode::kDataLoss,
                     "run " + std::to_string(r.id) + " has an unknown state '" + state + "'");
  }
  r.state = *parsed;
  r.created_ms = u.Int(6);
  r.finished_ms = u.Int(7);
  r.message = u.Text(8);
  r.batches_expected = u.UInt(9);
  r.progress_done = u.UInt(10);
  r.started = u.Bool(11);
  auto& p = r.provenance;
  p.runner_version = u.Text(12);
  p.port = u.Text(13);
  p.cpu = u.Text(14);
  p.clock_hz = u.UInt(15);
  p.emulated = u.Bool(16);
  p.timer_unit = u.Text(17);
  p.counters = SplitStrings(u.Text(18));
  p.firmware_sha256 = u.Text(19);
  p.workload_sha256 = u.Text(20);
  p.toolchain = u.Text(21);
  p.board_serial = u.Text(22);
  p.note = u.Text(23);
  p.seed = u.U32(24);
  p.kernel_set = u.Text(25);
  return r;
}

const char* const kBoardCols =
    "name, kind, agent, tags, emulated, serial, ram_bytes, state, health, current_job, updated_ms, "
    "holder, lease_until_ms, reservation_note, hold, health_failures, calibration, approved "
    "FROM boards ";

Result<Board> ReadBoard(Use& u) {
  Board b;
  b.name = u.Text(0);
  b.kind = u.Text(1);
  b.agent = u.Text(2);
  b.tags = TagsFromJson(u.Text(3));
  b.emulated = u.Bool(4);
  b.serial = u.Text(5);
  b.ram_bytes = u.UInt(6);
  auto state = server::ParseBoardState(u.Text(7));
  auto health = server::ParseBoardHealth(u.Text(8));
  if (!state || !health) {
    return MakeError(ErrorCode::kDataLoss, "board " + b.name + " has an unknown state or health");
  }
  b.state = *state;
  b.health = *health;
  b.current_job = u.Int(9);
  b.updated_ms = u.Int(10);
  b.holder = u.Text(11);
  b.lease_until_ms = u.Int(12);
  b.reservation_note = u.Text(13);
  b.hold = u.Bool(14);
  b.health_failures = u.U32(15);
  b.calibration = u.Int(16);
  b.approved = u.Bool(17);
  return b;
}

std::uint64_t ReadCount(Use& u) { return u.UInt(0); }

}  // namespace mculab::db
