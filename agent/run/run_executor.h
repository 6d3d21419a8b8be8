// ExecuteRun: one Assignment on one Board, from building the workload to RunFinished.
//
//   A custom-runner assignment (op "custom", firmware_sha256 set) first gets the runner and blob
//   from the ArtifactCache (fetched from the server unless cached, SHA-256 verified) and builds a
//   custom workload (case ids + blob; one case, id 0, when the job names none); the board runs
//   that runner instead of its own, and checksums are reported unverified.
//
//   RunState preparing -> build the workload (op catalog, BuildWorkload; seed from the assignment
//   or the fixed default) -> board.Start -> RunState running -> RunSession; on HELLO RunStarted
//   (provenance), samples gathered into SampleBatch messages (metric 0 = the timer, then the
//   counters) with per-run sequence numbers 0, 1, 2, ..., CaseDone per case -> RunFinished.
//
// Everything the server must not lose (RunStarted, CaseDone, batches, RunFinished) is written to
// the Spool before it is handed to the RunSink; RunState is transient. No gRPC here: the sink is
// the link (or a test).
// Thread-safety: runs on the calling (board worker) thread; `cancel` may be set from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "agent.pb.h"
#include "agent/boards/board.h"
#include "agent/io/clock.h"
#include "agent/link/spool.h"
#include "agent/runner/cancel_token.h"

namespace mculab::agent {

// Where a run's messages go once spooled. Must not block on a board; may drop a message when the
// server is unreachable (the spool replays what matters after the reconnect).
class RunSink {
 public:
  virtual ~RunSink() = default;
  virtual void Send(const v1::AgentMessage& message) = 0;
  // The same for a message the caller is done with: a sink that keeps it may take it uncopied.
  virtual void Send(v1::AgentMessage&& message) {
    Send(static_cast<const v1::AgentMessage&>(message));
  }
};

inline constexpr std::uint32_t kDefaultSeed = 0x6d63756c;  // "mcul"

struct ExecutorOptions {
  std::size_t max_batch_samples = 1024;  // sample rows per SampleBatch (>= 256 per DESIGN §6)
  std::chrono::milliseconds max_batch_age{200};  // so progress shows while a slow case runs
  std::chrono::milliseconds hello_timeout{10'000};
  std::chrono::milliseconds abort_grace{1'000};
  // Where custom runners and blobs come from (Assignment.firmware_sha256/blob_sha256); null: this
  // agent cannot run custom-runner jobs (they fail with a message saying so).
  class ArtifactCache* artifacts = nullptr;
  // Computes a model job's expected output checksum, sandboxed; null: this agent refuses model
  // jobs (they fail saying so).
  const class ModelReference* model_reference = nullptr;
  // When the link received the assignment (the run summary's dispatch figures count from there);
  // unset: from the call to ExecuteRun.
  std::optional<Clock::TimePoint> received_at;
};

// Runs the assignment to its end and returns the RunFinished it spooled and sent.
v1::RunFinished ExecuteRun(const v1::Assignment& assignment, Board& board, Spool& spool,
                           RunSink& sink, Clock& clock, CancelToken& cancel,
                           const ExecutorOptions& options = {});

// The workload header's flags the assignment asks for: MCULAB_WORKLOAD_REFERENCE_KERNELS when it
// says reference_kernels (`mculab submit --kernels reference`), else 0 (the runner's fastest set).
// ExecuteRun sets them on operator-benchmark and model workloads, never on a custom runner's.
std::uint32_t WorkloadFlagsOf(const v1::Assignment& assignment);

// Spools and sends RunFinished for a run that never reached a board (unknown board, cancelled
// while queued, agent stopping).
v1::RunFinished FinishUnstartedRun(std::uint64_t run_id, v1::RunFinished::Outcome outcome,
                                   const std::string& message, Spool& spool, RunSink& sink);

}  // namespace mculab::agent
