// Lab: a finished run's statistics (computed from the stored raw samples once every batch the
// agent sent is committed) and a job's results (read by job_results.h).
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
    auto r = runs_.find(run_id);
    if (r == runs_.end()) return;
    provenance = r->second.run.provenance;
    job_id = r->second.run.job_id;
    passes = r->second.passes;
    if (auto j = jobs_.find(job_id); j != jobs_.end()) cases = j->second.job.num_cases;
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
  auto r = runs_.find(run_id);
  if (r == runs_.end()) return;
  ActiveRun& run = r->second;
  const std::string board = run.run.board;
  Tx tx;
  auto it = jobs_.find(job_id);
  if (run.job_ended || it == jobs_.end() || it->second.job.last_run_id != run_id ||
      !IsOnBoard(it->second.job.state)) {
    CloseRunLocked(run, run.job_ended ? run.end_state : RunState::kSucceeded, "", false, tx);
  } else if (!computed.ok() || !results.ok()) {
    const std::string msg = "the server could not read the run's results: " +
                            (computed.ok() ? results.error().message : computed.error().message);
    spdlog::error("run {}: {}", run_id, msg);
    FailJobOfRunLocked(run, JobState::kFailed, msg, "server", tx);
    CloseRunLocked(run, RunState::kInfraFailed, msg, false, tx);
  } else {
    ActiveJob& aj = it->second;
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
      FailJobOfRunLocked(run, JobState::kFailed, verdict.message, "server", tx);
      CloseRunLocked(run, RunState::kWorkloadFailed, verdict.message, false, tx);
    } else {
      const std::string& message = verdict.message;
      const std::string actor = "agent:" + run.run.agent;
      const std::string calibration =
          IsHealthCheck(aj.job) ? CheckCalibrationLocked(aj, stats) : std::string();
      tx.writes.case_stats = std::move(stats);
      if (aj.job.state != JobState::kRunning) {
        (void)TransitionLocked(aj, JobState::kRunning, "implied by the run's end", actor, tx);
      }
      if (!calibration.empty()) {
        // The measurement is sound; the board is not what it was calibrated as.
        FailJobOfRunLocked(run, JobState::kFailed, calibration, "server", tx);
        CloseRunLocked(run, RunState::kSucceeded, calibration, false, tx);
        ScheduleLocked(tx);
        CommitLocked(tx);
        l.unlock();
        Deliver(tx);
        return;
      }
      aj.job.message = message;
      (void)TransitionLocked(aj, JobState::kSucceeded,
                             fmt::format("finished on board {} (run {})", board, run_id), actor,
                             tx);
      CloseRunLocked(run, RunState::kSucceeded, message, false, tx);
      spdlog::info("job {} succeeded on board {}{}", job_id, board,
                   message.empty() ? "" : " (" + message + ")");
    }
  }
  ScheduleLocked(tx);
  CommitLocked(tx);
  l.unlock();
  Deliver(tx);
}

Result<JobResults> Lab::GetResults(const Caller& caller, JobId id, bool include_samples) {
  if (Status s = RequireRole(caller, Role::kViewer, "reading results"); !s.ok()) return s.error();
  return ReadJobResults(*this, store_, caller, id, include_samples);
}

}  // namespace mculab::server
