// RunEnds (run_ends.h): closing runs, failing them, cancel grace periods, finalisation.
#include "server/service/run_ends.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "server/domain/health_check.h"
#include "server/service/agent_desk.h"
#include "server/service/board_upkeep.h"
#include "server/service/job_desk.h"
#include "server/service/results.h"
#include "server/service/scheduling.h"

namespace mculab::server {

void RunEnds::ArmCancelGraceLocked(RunId run) {
  st_.runs.ArmCancelGrace(run, st_.clock.NowMs() + st_.config.cancel_grace_ms);
  st_.bg_cv.notify_all();
}

void RunEnds::ExpireCancelGraceLocked(Effects& fx) {
  const std::int64_t now = st_.clock.NowMs();
  bool any = false;
  for (const RunId id : st_.runs.TakeEndedGraces(now)) {
    ActiveRun* r = st_.runs.Find(id);
    if (r == nullptr || !r->job_ended) continue;  // closed by an earlier one
    const std::string why = fmt::format("agent {} did not confirm the end of run {} within {} ms",
                                        r->run.agent, id, st_.config.cancel_grace_ms);
    spdlog::warn("board {}: {}; taking it offline", r->run.board, why);
    if (Board* b = st_.boards.Find(r->run.board)) {
      p_.upkeep->SetBoardHealthLocked(*b, BoardHealth::kUnknown, why, fx);
    }
    CloseRunLocked(*r, r->end_state, why, /*board_offline=*/true, fx);
    any = true;
  }
  if (any) p_.scheduling->ScheduleLocked(fx);
}

void RunEnds::Finalize(RunId run_id) {
  FinalizeTarget target;
  std::optional<RunStatisticsInProgress> counted;
  {
    std::lock_guard l(st_.mu);
    ActiveRun* r = st_.runs.Find(run_id);
    if (r == nullptr) return;
    target.run = run_id;
    target.provenance = r->run.provenance;
    target.job = r->run.job_id;
    target.passes = r->passes;
    if (const ActiveJob* aj = st_.jobs.Find(target.job)) target.cases = aj->job.num_cases;
    // When the statistics counted every batch stored (this server queued them all; the store keeps
    // a sequence once, and finalisation waits for every batch announced to commit), they need no
    // read of the samples.
    if (r->statistics.batches() == r->committed.size()) counted = std::move(r->statistics);
    r->statistics.Abandon();
  }
  // Without the lock: the store's commit callbacks take it.
  RunReading reading = st_.finalizer.Read(target, std::move(counted));

  std::unique_lock l(st_.mu);
  ActiveRun* found_run = st_.runs.Find(run_id);
  if (found_run == nullptr) return;
  ActiveRun& run = *found_run;
  const std::string board = run.run.board;
  Effects fx;
  ActiveJob* found = st_.jobs.Find(target.job);
  if (run.job_ended || found == nullptr || found->job.last_run_id != run_id ||
      !IsOnBoard(found->job.state)) {
    CloseRunLocked(run, run.job_ended ? run.end_state : RunState::kSucceeded, "", false, fx);
    p_.scheduling->ScheduleLocked(fx);
    st_.CommitLocked(fx);
    l.unlock();
    st_.Deliver(fx);
    return;
  }
  ActiveJob& aj = *found;
  JudgeInput in;
  in.verdict.num_cases = aj.job.num_cases;
  in.verdict.iterations = aj.job.iterations;
  in.verdict.custom_runner = !aj.job.firmware_artifact.empty();
  in.verdict.reported_failures = run.checksum_failures;
  in.verdict.passes = target.passes;
  in.verdict.pass_tolerance = st_.config.pass_cycles_tolerance;
  in.verdict.emulated = target.provenance.emulated;
  const Board* b = st_.boards.Find(aj.job.board);
  const bool health_check = BoardUpkeep::IsHealthCheck(aj.job) && b != nullptr;
  in.health_check = health_check;
  if (health_check) in.expected_health = ExpectedHealthValue(*b, st_.config.health_expected);
  in.health_tolerance = st_.config.health_tolerance;
  in.reruns = aj.job.reruns;
  in.reruns_done = aj.job.reruns_done;
  in.max_cv = aj.job.max_cv_pct / 100;
  in.measured = MeasuredOfRun(target.provenance);
  RunEnd out = RunFinalizer::Judge(std::move(reading), std::move(in));

  const std::string actor = "agent:" + run.run.agent;
  switch (out.ending) {
    case RunEnding::kUnreadable:
      spdlog::error("run {}: {}", run_id, out.message);
      FailJobOfRunLocked(run, JobState::kFailed, out.message, "server", fx);
      CloseRunLocked(run, RunState::kInfraFailed, out.message, false, fx);
      break;
    case RunEnding::kWrongResult:
      FailJobOfRunLocked(run, JobState::kFailed, out.message, "server", fx);
      CloseRunLocked(run, RunState::kWorkloadFailed, out.message, false, fx);
      break;
    case RunEnding::kOffCalibration:
    case RunEnding::kSucceeded:
    case RunEnding::kRerun: {
      if (health_check) aj.health_median = out.health_value;
      // A rerun's samples and statistics stay too (the next run's statistics replace them).
      fx.writes.case_stats = std::move(out.stats);
      if (aj.job.state != JobState::kRunning) {
        (void)p_.jobs->TransitionLocked(aj, JobState::kRunning, "implied by the run's end", actor,
                                        fx);
      }
      if (out.ending == RunEnding::kOffCalibration) {
        // The measurement is sound; the board is not what it was calibrated as.
        FailJobOfRunLocked(run, JobState::kFailed, out.message, "server", fx);
        CloseRunLocked(run, RunState::kSucceeded, out.message, false, fx);
        break;
      }
      if (out.ending == RunEnding::kRerun) {
        ++aj.job.reruns_done;
        aj.job.board = board;  // the same board: another board's figures are another series
        const std::string& why = out.message;
        aj.job.message = fmt::format("rerun {} of {} on board {}: {}", aj.job.reruns_done,
                                     aj.job.reruns, board, why);
        (void)p_.jobs->TransitionLocked(aj, JobState::kQueued,
                                        fmt::format("rerun {} of {}: {} (run {})",
                                                    aj.job.reruns_done, aj.job.reruns, why, run_id),
                                        "server", fx);
        CloseRunLocked(run, RunState::kSucceeded, "rerun: " + why, false, fx);
        spdlog::info("job {} runs again on board {} (rerun {} of {}): {}", target.job, board,
                     aj.job.reruns_done, aj.job.reruns, why);
        break;
      }
      aj.job.message = out.message;
      (void)p_.jobs->TransitionLocked(aj, JobState::kSucceeded,
                                      fmt::format("finished on board {} (run {})", board, run_id),
                                      actor, fx);
      CloseRunLocked(run, RunState::kSucceeded, out.message, false, fx);
      spdlog::info("job {} succeeded on board {}{}", target.job, board,
                   out.message.empty() ? "" : " (" + out.message + ")");
      break;
    }
  }
  p_.scheduling->ScheduleLocked(fx);
  st_.CommitLocked(fx);
  l.unlock();
  st_.Deliver(fx);
}

void RunEnds::CloseRunLocked(ActiveRun& r, RunState state, const std::string& message,
                             bool board_offline, Effects& fx) {
  const RunId id = r.run.id;
  if (Status s = ApplyTransition(r.run, state, message, st_.clock.NowMs()); !s.ok()) {
    // An active run is never final, so every end is legal; should that break, the run is still
    // closed (its board freed) and the refused move logged.
    spdlog::error("{}", s.error().message);
  }
  fx.writes.runs.push_back(r.run);
  Board* b = st_.boards.Find(r.run.board);
  if (b != nullptr && b->current_job == r.run.job_id) {
    b->current_job = 0;
    const bool offline =
        board_offline || b->state == BoardState::kOffline || p_.agents->BoardUnavailableLocked(*b);
    p_.upkeep->SetBoardStateLocked(
        *b, offline ? BoardState::kOffline : BoardUpkeep::FreeState(*b),
        fmt::format("job {} (run {}) {}", r.run.job_id, id, RunStateName(state)), fx);
  }
  if (!board_offline) {
    p_.agents->SendToAgentLocked(r.run.agent, RunClosed{id}, fx);
  }
  st_.runs.Remove(id);  // r is gone
}

void RunEnds::FailJobOfRunLocked(ActiveRun& r, JobState to, const std::string& message,
                                 const std::string& actor, Effects& fx) {
  ActiveJob* aj = st_.jobs.Find(r.run.job_id);
  if (aj == nullptr || r.job_ended || aj->job.last_run_id != r.run.id ||
      !IsOnBoard(aj->job.state)) {
    return;
  }
  aj->job.message = message;
  (void)p_.jobs->TransitionLocked(*aj, to, message, actor, fx);
}

void RunEnds::InfraFailLocked(ActiveRun& r, const std::string& why, const std::string& actor,
                              bool board_offline, Effects& fx) {
  if (Board* b = st_.boards.Find(r.run.board)) {
    p_.upkeep->SetBoardHealthLocked(*b, BoardHealth::kUnknown, "infrastructure failure: " + why,
                                    fx);
  }
  ActiveJob* found = st_.jobs.Find(r.run.job_id);
  if (found != nullptr && !r.job_ended && found->job.last_run_id == r.run.id &&
      IsOnBoard(found->job.state)) {
    ActiveJob& aj = *found;
    // A health check is about this board: its failure is the check's answer, not a retry.
    const JobState to = BoardUpkeep::IsHealthCheck(aj.job)
                            ? JobState::kFailed
                            : AfterInfraFailure(aj.job, st_.config.max_attempts);
    aj.job.message =
        to == JobState::kQueued
            ? fmt::format("infrastructure failure on board {}: {}; requeued (attempt {} of {})",
                          r.run.board, why, CountedAttempts(aj.job), st_.config.max_attempts)
            : fmt::format("infrastructure failure on board {}: {}; gave up after {} attempts",
                          r.run.board, why, CountedAttempts(aj.job));
    (void)p_.jobs->TransitionLocked(aj, to, "infrastructure failure: " + why, actor, fx);
  }
  CloseRunLocked(r, r.job_ended ? r.end_state : RunState::kInfraFailed, why, board_offline, fx);
}

void RunEnds::MaybeFinalizeLocked(ActiveRun& r) {
  if (!r.finish_received || r.finalizing) return;
  const auto expected = r.run.batches_expected;
  const auto have = static_cast<std::uint64_t>(
      std::distance(r.committed.begin(), r.committed.lower_bound(expected)));
  if (have < expected) return;
  st_.runs.QueueFinalize(r);
  st_.bg_cv.notify_all();
}

}  // namespace mculab::server
