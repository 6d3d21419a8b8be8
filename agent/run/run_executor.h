// ExecuteRun: one RunAssignment on one Board, from building the workload to RunFinishedRecord.
//
//   RunState preparing (deferred: said only if the runner is not started within
//   ExecutorOptions::preparing_after) -> PrepareWorkload (agent/run/workload_preparation.h) -> per
//   pass of the plan (agent/run/run_plan.h): board.Start -> RunState running -> RunSession, its
//   events turned into spooled, sequenced messages by the RunReporter (agent/run/run_reporter.h) ->
//   the RunFinishedRecord, spooled and sent.
//
// Everything the server must not lose (RunStarted, CaseDone, batches, RunFinished) is written to
// the Spool before it is handed to the RunSink; RunState is transient. No wire types here: the
// sink is the link (which translates at its edge) or a test.
// Thread-safety: runs on the calling (board worker) thread; `cancel` may be set from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "agent/boards/board.h"
#include "agent/io/clock.h"
#include "agent/run/run_types.h"
#include "agent/run/spool.h"
#include "agent/run/workload_preparation.h"
#include "agent/runner/cancel_token.h"

namespace mculab::agent {

struct ExecutorOptions {
  std::size_t max_batch_samples = 1024;          // sample rows per batch (>= 256 per DESIGN §6)
  std::chrono::milliseconds max_batch_age{200};  // so progress shows while a slow case runs
  std::chrono::milliseconds hello_timeout{10'000};
  std::chrono::milliseconds abort_grace{1'000};
  // A run whose runner has not started this long after the run began tells the server it is
  // "preparing" (flashing, a cold emulator, a model's reference output); a faster one says only
  // "running" (RunSink::SendDeferred).
  std::chrono::milliseconds preparing_after{20};
  // Where custom runners and blobs come from (RunAssignment::firmware_sha256/blob_sha256); null:
  // this agent cannot run custom-runner jobs (they fail with a message saying so).
  ArtifactCache* artifacts = nullptr;
  // Computes a model job's expected output checksum, sandboxed; null: this agent refuses model
  // jobs (they fail saying so).
  const ModelReference* model_reference = nullptr;
  // When the link received the assignment (the run summary's dispatch figures count from there);
  // unset: from the call to ExecuteRun.
  std::optional<Clock::TimePoint> received_at;
};

// Runs the assignment to its end and returns the RunFinishedRecord it spooled and sent.
RunFinishedRecord ExecuteRun(const RunAssignment& assignment, Board& board, Spool& spool,
                             RunSink& sink, Clock& clock, CancelToken& cancel,
                             const ExecutorOptions& options = {});

// Spools and sends the end of a run that never reached a board (unknown board, cancelled while
// queued, agent stopping).
RunFinishedRecord FinishUnstartedRun(std::uint64_t run_id, RunOutcome outcome,
                                     const std::string& message, Spool& spool, RunSink& sink);

}  // namespace mculab::agent
