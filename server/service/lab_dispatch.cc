// Lab: dispatch. When a scheduling pass runs (and when nothing can have changed since the last),
// assigning the jobs the Dispatcher placed (dispatcher.h), and what a queued job waits for.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <limits>

#include "common/crash_point.h"
#include "common/op_catalog.h"
#include "common/time_text.h"
#include "server/domain/admission.h"
#include "server/domain/queue_position.h"
#include "server/domain/scheduler.h"
#include "server/service/lab.h"
#include "server/service/model_admission.h"
#include "server/service/profiles.h"

namespace mculab::server {

void Lab::ScheduleLocked(Effects& fx) {
  if (stopping_ || failed_) return;
  const std::int64_t now = clock_.NowMs();
  // Nothing can change the answer of a pass that placed nothing until a job or a board changes
  // (each such change is a write: this Effects's since its last pass, or an earlier Effects's
  // through CommitLocked) or a lease ends.
  if (!schedule_stale_ && WriteMark(fx) == fx.scheduled_mark && now < schedule_recheck_ms_) {
    return;
  }
  schedule_stale_ = false;
  fx.scheduled_mark = WriteMark(fx);
  schedule_recheck_ms_ = kNoDeadline;
  const std::optional<std::vector<Placement>> placements =
      dispatch_.Plan(now, schedule_recheck_ms_);
  if (!placements) return;
  ++schedule_passes_;
  bool refused = false;
  for (const Placement& p : *placements) {
    ActiveJob& aj = *jobs_.Find(p.job);  // queued, so not final
    AssignLocked(aj, boards_.all().at(p.board), fx);
    refused = refused || aj.job.state == JobState::kQueued;
  }
  // What the placements wrote needs no second pass (the boards they took are busy, the jobs
  // assigned); a placement AssignLocked refused (its agent is gone) leaves the schedule stale.
  fx.scheduled_mark = WriteMark(fx);
  if (refused) schedule_stale_ = true;
}

void Lab::AssignLocked(ActiveJob& aj, Board& board, Effects& fx) {
  if (!sessions_.Connected(board.agent)) {
    spdlog::error("board {} is idle but its agent {} is not connected", board.name, board.agent);
    return;
  }
  const std::int64_t now = clock_.NowMs();
  Run run;
  std::optional<RunId> reserve_to;
  run.id = runs_.TakeId(reserve_to);
  if (reserve_to) fx.writes.reserve_run_ids_to = *reserve_to;
  run.job_id = aj.job.id;
  run.board = board.name;
  run.agent = board.agent;
  run.state = RunState::kAssigned;
  run.created_ms = now;
  aj.job.assigned_board = board.name;
  aj.job.last_run_id = run.id;
  aj.job.progress_done = 0;
  if (Status s = TransitionLocked(aj, JobState::kAssigned, "scheduled on board " + board.name,
                                  "server", fx);
      !s.ok()) {
    return;
  }
  run.attempt = aj.job.attempts;
  dispatch_.Assigned(aj.job.user, now);
  board.current_job = aj.job.id;
  SetBoardStateLocked(board, BoardState::kBusy, fmt::format("job {}", aj.job.id), fx);
  fx.writes.runs.push_back(run);
  ActiveRun fresh;
  fresh.run = run;
  ActiveRun& active = runs_.Add(std::move(fresh));

  jobs_.SetDeadline(aj, now + static_cast<std::int64_t>(aj.job.timeout_s) * 1000);
  bg_cv_.notify_all();

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
  PlanPassesLocked(aj, board, active, a, fx);
  a.firmware_sha256 = aj.job.firmware_artifact;
  a.blob_sha256 = aj.job.blob_artifact;
  a.reference_kernels = aj.job.reference_kernels;
  SendToAgentLocked(board.agent, std::move(a), fx);
  spdlog::info("job {} -> board {} (run {}, attempt {})", aj.job.id, board.name, run.id,
               run.attempt);
}

void Lab::AddQueueWait(Job& job) { AddQueueWaits({&job}); }

void Lab::AddQueueWaits(const std::vector<Job*>& jobs) {
  std::vector<JobId> queued;
  for (const Job* j : jobs) {
    if (j->state == JobState::kQueued) queued.push_back(j->id);
  }
  if (queued.empty()) return;
  std::lock_guard l(mu_);
  const std::vector<std::uint32_t> positions = dispatch_.QueuePositions(queued);
  const std::int64_t now = clock_.NowMs();
  std::size_t i = 0;
  for (Job* j : jobs) {
    if (j->state != JobState::kQueued) continue;
    const std::uint32_t position = positions[i++];
    const ActiveJob* aj = jobs_.Find(j->id);
    if (position == 0 || aj == nullptr) continue;  // no longer queued
    j->wait = dispatch_.Wait(*aj, position, now);
  }
}

}  // namespace mculab::server
