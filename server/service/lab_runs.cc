// Lab: runs ending. Closing a run (its board freed or taken offline, the agent told), failing it
// as an infrastructure or workload failure, a finished run's statistics (computed from the stored
// raw samples once every batch the agent sent is committed) and a job's results (job_results.h).
#include <fmt/format.h>
#include <malloc.h>
#include <spdlog/spdlog.h>

#include <map>

#include "common/op_catalog.h"
#include "server/domain/run_verdict.h"
#include "server/service/job_results.h"
#include "server/service/lab.h"
#include "server/service/profiles.h"
#include "server/service/run_statistics.h"

namespace mculab::server {
namespace {
// Runs with at least this many samples are followed by malloc_trim.
constexpr std::uint64_t kTrimAfterSamples = 100'000;
}  // namespace

void Lab::Finalize(RunId run_id) {
  Provenance provenance;
  JobId job_id = 0;
  std::uint32_t passes = 1;
  std::uint32_t cases = 0;
  {
    std::lock_guard l(mu_);
    const ActiveRun* r = runs_.Find(run_id);
    if (r == nullptr) return;
    provenance = r->run.provenance;
    job_id = r->run.job_id;
    passes = r->passes;
    if (const ActiveJob* aj = jobs_.Find(job_id)) cases = aj->job.num_cases;
  }
  // Reads without the lock (the store's commit callbacks take it). The samples are streamed, never
  // loaded: the memory this takes does not grow with the run.
  auto computed = ComputeRunStatistics(store_, job_id, run_id, provenance, passes, cases);
  auto results = store_.GetCaseResults(run_id);
  std::vector<CaseStats> stats;
  std::vector<std::vector<double>> cycles_by_pass;
  if (computed.ok()) {
    stats = std::move(computed->stats);
    cycles_by_pass = std::move(computed->cycles_by_pass);
    // A large run leaves freed pages in malloc's arenas (SQLite's sorter, the ingest queue's
    // batches): give them back so the server's resident size returns to its resting level.
    if (computed->samples >= kTrimAfterSamples) malloc_trim(0);
  }

  std::unique_lock l(mu_);
  ActiveRun* found_run = runs_.Find(run_id);
  if (found_run == nullptr) return;
  ActiveRun& run = *found_run;
  const std::string board = run.run.board;
  Effects fx;
  ActiveJob* found = jobs_.Find(job_id);
  if (run.job_ended || found == nullptr || found->job.last_run_id != run_id ||
      !IsOnBoard(found->job.state)) {
    CloseRunLocked(run, run.job_ended ? run.end_state : RunState::kSucceeded, "", false, fx);
  } else if (!computed.ok() || !results.ok()) {
    const std::string msg = "the server could not read the run's results: " +
                            (computed.ok() ? results.error().message : computed.error().message);
    spdlog::error("run {}: {}", run_id, msg);
    FailJobOfRunLocked(run, JobState::kFailed, msg, "server", fx);
    CloseRunLocked(run, RunState::kInfraFailed, msg, false, fx);
  } else {
    ActiveJob& aj = *found;
    RunVerdictInput in;
    in.num_cases = aj.job.num_cases;
    in.iterations = aj.job.iterations;
    in.custom_runner = !aj.job.firmware_artifact.empty();
    in.reported_failures = run.checksum_failures;
    in.passes = passes;
    in.cycles_by_pass = std::move(cycles_by_pass);
    in.pass_tolerance = config_.pass_cycles_tolerance;
    in.emulated = provenance.emulated;
    const RunVerdict verdict = JudgeRun(in, *results, stats);
    if (verdict.wrong_result) {
      FailJobOfRunLocked(run, JobState::kFailed, verdict.message, "server", fx);
      CloseRunLocked(run, RunState::kWorkloadFailed, verdict.message, false, fx);
    } else {
      const std::string& message = verdict.message;
      const std::string actor = "agent:" + run.run.agent;
      const std::string calibration =
          IsHealthCheck(aj.job) ? CheckCalibrationLocked(aj, stats) : std::string();
      fx.writes.case_stats = std::move(stats);
      if (aj.job.state != JobState::kRunning) {
        (void)TransitionLocked(aj, JobState::kRunning, "implied by the run's end", actor, fx);
      }
      if (!calibration.empty()) {
        // The measurement is sound; the board is not what it was calibrated as.
        FailJobOfRunLocked(run, JobState::kFailed, calibration, "server", fx);
        CloseRunLocked(run, RunState::kSucceeded, calibration, false, fx);
        ScheduleLocked(fx);
        CommitLocked(fx);
        l.unlock();
        Deliver(fx);
        return;
      }
      aj.job.message = message;
      (void)TransitionLocked(aj, JobState::kSucceeded,
                             fmt::format("finished on board {} (run {})", board, run_id), actor,
                             fx);
      CloseRunLocked(run, RunState::kSucceeded, message, false, fx);
      spdlog::info("job {} succeeded on board {}{}", job_id, board,
                   message.empty() ? "" : " (" + message + ")");
    }
  }
  ScheduleLocked(fx);
  CommitLocked(fx);
  l.unlock();
  Deliver(fx);
}

Result<JobResults> Lab::GetResults(const Caller& caller, JobId id, bool include_samples) {
  if (Status s = RequireRole(caller, Role::kViewer, "reading results"); !s.ok()) return s.error();
  return ReadJobResults(*this, store_, caller, id, include_samples);
}

// ---------------------------------------------------------------------------------------------
// Runs ending

void Lab::CloseRunLocked(ActiveRun& r, RunState state, const std::string& message,
                         bool board_offline, Effects& fx) {
  const RunId id = r.run.id;
  if (Status s = ApplyTransition(r.run, state, message, clock_.NowMs()); !s.ok()) {
    // An active run is never final, so every end is legal; should that break, the run is still
    // closed (its board freed) and the refused move logged.
    spdlog::error("{}", s.error().message);
  }
  fx.writes.runs.push_back(r.run);
  Board* b = boards_.Find(r.run.board);
  if (b != nullptr && b->current_job == r.run.job_id) {
    b->current_job = 0;
    const bool offline =
        board_offline || b->state == BoardState::kOffline || BoardUnavailableLocked(*b);
    SetBoardStateLocked(*b, offline ? BoardState::kOffline : FreeState(*b),
                        fmt::format("job {} (run {}) {}", r.run.job_id, id, RunStateName(state)),
                        fx);
  }
  if (!board_offline) {
    SendToAgentLocked(r.run.agent, RunClosed{id}, fx);
  }
  runs_.Remove(id);  // r is gone
}

void Lab::FailJobOfRunLocked(ActiveRun& r, JobState to, const std::string& message,
                             const std::string& actor, Effects& fx) {
  ActiveJob* aj = jobs_.Find(r.run.job_id);
  if (aj == nullptr || r.job_ended || aj->job.last_run_id != r.run.id ||
      !IsOnBoard(aj->job.state)) {
    return;
  }
  aj->job.message = message;
  (void)TransitionLocked(*aj, to, message, actor, fx);
}

void Lab::InfraFailLocked(ActiveRun& r, const std::string& why, const std::string& actor,
                          bool board_offline, Effects& fx) {
  if (Board* b = boards_.Find(r.run.board)) {
    SetBoardHealthLocked(*b, BoardHealth::kUnknown, "infrastructure failure: " + why, fx);
  }
  ActiveJob* found = jobs_.Find(r.run.job_id);
  if (found != nullptr && !r.job_ended && found->job.last_run_id == r.run.id &&
      IsOnBoard(found->job.state)) {
    ActiveJob& aj = *found;
    // A health check is about this board: its failure is the check's answer, not a retry.
    const JobState to =
        IsHealthCheck(aj.job) ? JobState::kFailed : AfterInfraFailure(aj.job, config_.max_attempts);
    aj.job.message =
        to == JobState::kQueued
            ? fmt::format("infrastructure failure on board {}: {}; requeued (attempt {} of {})",
                          r.run.board, why, aj.job.attempts, config_.max_attempts)
            : fmt::format("infrastructure failure on board {}: {}; gave up after {} attempts",
                          r.run.board, why, aj.job.attempts);
    (void)TransitionLocked(aj, to, "infrastructure failure: " + why, actor, fx);
  }
  CloseRunLocked(r, r.job_ended ? r.end_state : RunState::kInfraFailed, why, board_offline, fx);
}

void Lab::MaybeFinalizeLocked(ActiveRun& r) {
  if (!r.finish_received || r.finalizing) return;
  const auto expected = r.run.batches_expected;
  const auto have = static_cast<std::uint64_t>(
      std::distance(r.committed.begin(), r.committed.lower_bound(expected)));
  if (have < expected) return;
  runs_.QueueFinalize(r);
  bg_cv_.notify_all();
}

}  // namespace mculab::server
