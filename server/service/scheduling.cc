// Scheduling (scheduling.h).
#include "server/service/scheduling.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "server/domain/scheduler.h"
#include "server/service/agent_desk.h"
#include "server/service/board_upkeep.h"
#include "server/service/job_desk.h"
#include "server/service/run_measures.h"

namespace mculab::server {

void Scheduling::ScheduleLocked(Effects& fx) {
  if (st_.stopping || st_.failed) return;
  const std::int64_t now = st_.clock.NowMs();
  // Nothing can change the answer of a pass that placed nothing until a job or a board changes
  // (each such change is a write: this Effects's since its last pass, or an earlier Effects's
  // through CommitLocked) or a lease ends.
  if (!st_.schedule_stale && WriteMark(fx) == fx.scheduled_mark && now < st_.schedule_recheck_ms) {
    return;
  }
  st_.schedule_stale = false;
  fx.scheduled_mark = WriteMark(fx);
  st_.schedule_recheck_ms = kNoDeadline;
  const std::optional<std::vector<Placement>> placements =
      st_.dispatch.Plan(now, st_.schedule_recheck_ms);
  if (!placements) return;
  ++st_.schedule_passes;
  bool refused = false;
  for (const Placement& p : *placements) {
    ActiveJob& aj = *st_.jobs.Find(p.job);  // queued, so not final
    AssignLocked(aj, st_.boards.all().at(p.board), fx);
    refused = refused || aj.job.state == JobState::kQueued;
  }
  // What the placements wrote needs no second pass (the boards they took are busy, the jobs
  // assigned); a placement AssignLocked refused (its agent is gone) leaves the schedule stale.
  fx.scheduled_mark = WriteMark(fx);
  if (refused) st_.schedule_stale = true;
}

void Scheduling::AssignLocked(ActiveJob& aj, Board& board, Effects& fx) {
  if (!st_.sessions.Connected(board.agent)) {
    spdlog::error("board {} is idle but its agent {} is not connected", board.name, board.agent);
    return;
  }
  const std::int64_t now = st_.clock.NowMs();
  Run run;
  std::optional<RunId> reserve_to;
  run.id = st_.runs.TakeId(reserve_to);
  if (reserve_to) fx.writes.reserve_run_ids_to = *reserve_to;
  run.job_id = aj.job.id;
  run.board = board.name;
  run.agent = board.agent;
  run.state = RunState::kAssigned;
  run.created_ms = now;
  aj.job.assigned_board = board.name;
  aj.job.last_run_id = run.id;
  aj.job.progress_done = 0;
  if (Status s = p_.jobs->TransitionLocked(aj, JobState::kAssigned,
                                           "scheduled on board " + board.name, "server", fx);
      !s.ok()) {
    return;
  }
  run.attempt = aj.job.attempts;
  st_.dispatch.Assigned(aj.job.user, now);
  board.current_job = aj.job.id;
  p_.upkeep->SetBoardStateLocked(board, BoardState::kBusy, fmt::format("job {}", aj.job.id), fx);
  fx.writes.runs.push_back(run);
  ActiveRun fresh;
  fresh.run = run;
  ActiveRun& active = st_.runs.Add(std::move(fresh));

  st_.jobs.SetDeadline(aj, now + static_cast<std::int64_t>(aj.job.timeout_s) * 1000);
  st_.bg_cv.notify_all();

  RunAssignment a;
  a.run = run.id;
  a.job = aj.job.id;
  a.board = board.name;
  a.op = aj.job.op;
  a.cases = aj.cases;
  a.iterations = aj.job.iterations;
  a.warmup = aj.job.warmup;
  a.timeout_s = aj.job.timeout_s;
  a.pass = 0;
  p_.measures->PlanPassesLocked(aj, board, active, a, fx);
  a.firmware_sha256 = aj.job.firmware_artifact;
  a.blob_sha256 = aj.job.blob_artifact;
  a.reference_kernels = aj.job.reference_kernels;
  p_.agents->SendToAgentLocked(board.agent, std::move(a), fx);
  spdlog::info("job {} -> board {} (run {}, attempt {})", aj.job.id, board.name, run.id,
               run.attempt);
}

}  // namespace mculab::server
