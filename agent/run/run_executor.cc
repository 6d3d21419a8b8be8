#include "agent/run/run_executor.h"

#include <spdlog/spdlog.h>

#include <optional>

#include "agent/run/run_plan.h"
#include "agent/run/run_reporter.h"
#include "agent/runner/runner_session.h"

namespace mculab::agent {
namespace {

RunFinishedRecord Finish(std::uint64_t run_id, RunOutcome outcome, const std::string& message,
                         std::uint64_t batches, Spool& spool, RunSink& sink) {
  RunFinishedRecord fin;
  fin.run_id = run_id;
  fin.outcome = outcome;
  // A runner's text ends up here: bounded, so the end of a run always fits in a message.
  constexpr std::size_t kMaxMessage = 4096;
  fin.message = message.size() > kMaxMessage ? message.substr(0, kMaxMessage) + "..." : message;
  fin.batches_sent = static_cast<std::uint32_t>(batches);
  if (auto s = spool.PutFinished(fin); !s) {
    spdlog::error("run {}: cannot spool RunFinished: {}", run_id, s.error().message);
  }
  sink.Send(fin);
  return fin;
}

// The outcome in the run's summary line as the server names it (tools read "SUCCEEDED in").
const char* OutcomeTag(RunOutcome o) {
  switch (o) {
    case RunOutcome::kSucceeded:
      return "SUCCEEDED";
    case RunOutcome::kWorkloadFailed:
      return "WORKLOAD_FAILED";
    case RunOutcome::kInfraFailed:
      return "INFRA_FAILED";
    case RunOutcome::kCancelled:
      return "CANCELLED";
    case RunOutcome::kTimedOut:
      return "TIMED_OUT";
  }
  return "INFRA_FAILED";
}

void SendState(RunSink& sink, std::uint64_t run_id, const char* state, const std::string& msg) {
  sink.Send(RunStateRecord{run_id, state, msg});
}

// How a run ended, and the figures its summary line reports.
struct RunEnd {
  RunOutcome outcome = RunOutcome::kSucceeded;
  std::string message;
  SessionStats stats;                              // the last pass's
  std::optional<Clock::TimePoint> runner_started;  // the first pass's (dispatch latency)
};

// Runs the plan's passes back to back on `board`, their events to `reporter`; stops at the first
// pass that does not succeed.
RunEnd RunPasses(const RunAssignment& a, const AgentPlan& plan, const PreparedWorkload& w,
                 Board& board, RunReporter& reporter, RunSink& sink, Clock& clock,
                 CancelToken& cancel, const ExecutorOptions& options, Clock::TimePoint started,
                 const std::string& prefix) {
  RunEnd end;
  const auto whole =
      a.timeout_s != 0 ? std::chrono::seconds(a.timeout_s) : board.Info().default_timeout;
  for (const AgentPass& pass : plan.passes) {
    RunSpec spec;
    spec.run_id = a.run_id;
    spec.workload = w.bytes;
    spec.timeout = whole;
    spec.emulated_events = pass.emulated_events;
    spec.firmware = w.firmware;
    spec.own_runner = w.model;
    if (cancel.cancelled()) {
      end.outcome = cancel.reason() == CancelReason::kByServer ? RunOutcome::kCancelled
                                                               : RunOutcome::kInfraFailed;
      end.message = "stopped before the runner started";
      return end;
    }
    auto runner = board.Start(spec);
    if (!runner) {
      spdlog::warn("{}: the board failed to start the runner: {}", prefix, runner.error().message);
      end.outcome = RunOutcome::kInfraFailed;
      end.message = "board " + board.Info().name + ": " + runner.error().message;
      return end;
    }
    if (!end.runner_started) end.runner_started = clock.Now();
    SendState(sink, a.run_id, "running",
              plan.passes.size() > 1
                  ? fmt::format("pass {} of {}", pass.index + 1, plan.passes.size())
                  : std::string());
    SessionConfig sc;
    sc.op = w.op_id;
    sc.cases = w.cases;
    sc.seed = w.seed;
    sc.iterations = a.iterations;
    sc.warmup = a.warmup;
    sc.workload_len = static_cast<std::uint32_t>(spec.workload.size());
    sc.events = pass.runner_events;
    sc.profile_ops = a.profile_ops;
    sc.report_memory = a.report_memory;
    sc.custom_runner = w.custom_runner;
    sc.model_checksum = w.model_checksum;
    sc.hello_timeout = options.hello_timeout;
    sc.run_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(spec.timeout) -
                     std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now() - started);
    sc.abort_grace = options.abort_grace;
    sc.log_prefix = prefix;
    reporter.BeginPass(pass, (*runner)->provenance());
    const SessionResult result = RunSession(**runner, clock, sc, reporter, cancel);
    end.outcome = result.outcome;
    end.message = result.message;
    end.stats = result.stats;
    if (Status merged = reporter.EndPass(**runner, result.outcome == RunOutcome::kSucceeded);
        !merged.ok()) {
      end.outcome = RunOutcome::kInfraFailed;
      end.message = merged.error().message;
    }
    runner->reset();  // the runner is gone and its temp files removed before RunFinished
    if (end.outcome != RunOutcome::kSucceeded) {
      if (plan.passes.size() > 1) end.message = fmt::format("pass {}: {}", pass.index, end.message);
      return end;
    }
  }
  return end;
}

}  // namespace

RunFinishedRecord FinishUnstartedRun(std::uint64_t run_id, RunOutcome outcome,
                                     const std::string& message, Spool& spool, RunSink& sink) {
  if (auto s = spool.BeginRun(run_id); !s) {
    spdlog::error("run {}: {}", run_id, s.error().message);
  }
  return Finish(run_id, outcome, message, spool.NextSequence(run_id), spool, sink);
}

RunFinishedRecord ExecuteRun(const RunAssignment& a, Board& board, Spool& spool, RunSink& sink,
                             Clock& clock, CancelToken& cancel, const ExecutorOptions& options) {
  const std::uint64_t run_id = a.run_id;
  const std::string prefix = "run " + std::to_string(run_id) + " on " + board.Info().name;
  const auto started = clock.Now();
  if (auto s = spool.BeginRun(run_id); !s) {
    RunFinishedRecord fin{run_id, RunOutcome::kInfraFailed,
                          "the agent cannot spool results: " + s.error().message, 0};
    sink.Send(fin);
    return fin;
  }
  sink.SendDeferred(
      RunStateRecord{run_id, "preparing", "building the workload, starting the runner"},
      options.preparing_after);
  auto workload = PrepareWorkload(a, board.Info(), {options.artifacts, options.model_reference});
  if (!workload) {
    const bool infra = IsInfrastructureError(workload.error());
    spdlog::warn("{}: {}{}", prefix, infra ? "" : "workload failed: ", workload.error().message);
    return Finish(run_id, infra ? RunOutcome::kInfraFailed : RunOutcome::kWorkloadFailed,
                  workload.error().message, spool.NextSequence(run_id), spool, sink);
  }
  const auto workload_built = clock.Now();

  const AgentPlan plan = PlanOf(a, board.Info());
  RunReporter reporter(a, plan, workload->sha256, workload->seed, spool, sink, clock, cancel,
                       BatchLimits{options.max_batch_samples, options.max_batch_age}, prefix);
  reporter.set_note_extra(workload->note);
  RunEnd end =
      RunPasses(a, plan, *workload, board, reporter, sink, clock, cancel, options, started, prefix);
  reporter.Flush();

  if (!reporter.oversized().empty()) {
    end.outcome = RunOutcome::kWorkloadFailed;
    end.message = reporter.oversized();
  } else if (!reporter.spool_error().empty()) {
    end.outcome = RunOutcome::kInfraFailed;
    end.message = "the agent cannot spool results: " + reporter.spool_error();
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now() - started);
  auto us = [&, from = options.received_at.value_or(started)](Clock::TimePoint t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t - from).count();
  };
  spdlog::info(
      "{}: {} in {} ms (after the assignment arrived: run began at {} us, workload built at {} us, "
      "runner started at {} us; runner HELLO at {} ms, DONE at {} ms, gone at {} ms): {} samples "
      "in {} batches{}{}",
      prefix, OutcomeTag(end.outcome), ms.count(), us(started), us(workload_built),
      end.runner_started ? us(*end.runner_started) : -1, end.stats.to_hello.count(),
      end.stats.to_done.count(), end.stats.to_exit.count(), reporter.samples(), reporter.batches(),
      end.message.empty() ? "" : ": ", end.message);
  return Finish(run_id, end.outcome, end.message, reporter.batches(), spool, sink);
}

}  // namespace mculab::agent
