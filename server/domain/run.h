// Run: one visit of a job to a board (a job is requeued onto a new run after an infrastructure
// failure), with the provenance the runner and agent report; its state machine; and the result
// records a run produces: raw samples, per-case checksum results and per-case statistics.
//
//   assigned -> preparing -> running -> succeeded | workload_failed | infra_failed | cancelled |
//                                       timed_out
//
// A run may skip preparing or running (the agent had nothing to flash, or its report of the
// state crossed the run's end) and may end from any state that is not final. ApplyTransition is
// the one function that changes a run's state.
// Pure: standard library only. Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/domain/job.h"

namespace mculab::server {

enum class RunState {
  kAssigned,
  kPreparing,
  kRunning,
  kSucceeded,
  kWorkloadFailed,
  kInfraFailed,
  kCancelled,
  kTimedOut,
};

inline constexpr RunState kAllRunStates[] = {
    RunState::kAssigned,       RunState::kPreparing,   RunState::kRunning,   RunState::kSucceeded,
    RunState::kWorkloadFailed, RunState::kInfraFailed, RunState::kCancelled, RunState::kTimedOut};

std::string_view RunStateName(RunState state);
std::optional<RunState> ParseRunState(std::string_view name);
bool IsFinal(RunState state);

// Every legal move of a run, in one table; any other pair is illegal.
struct RunTransitionRule {
  RunState from;
  RunState to;
};
inline constexpr RunTransitionRule kRunTransitions[] = {
    {RunState::kAssigned, RunState::kPreparing},
    {RunState::kAssigned, RunState::kRunning},
    {RunState::kPreparing, RunState::kRunning},
    // The run ends, from any state that is not final.
    {RunState::kAssigned, RunState::kSucceeded},
    {RunState::kAssigned, RunState::kWorkloadFailed},
    {RunState::kAssigned, RunState::kInfraFailed},
    {RunState::kAssigned, RunState::kCancelled},
    {RunState::kAssigned, RunState::kTimedOut},
    {RunState::kPreparing, RunState::kSucceeded},
    {RunState::kPreparing, RunState::kWorkloadFailed},
    {RunState::kPreparing, RunState::kInfraFailed},
    {RunState::kPreparing, RunState::kCancelled},
    {RunState::kPreparing, RunState::kTimedOut},
    {RunState::kRunning, RunState::kSucceeded},
    {RunState::kRunning, RunState::kWorkloadFailed},
    {RunState::kRunning, RunState::kInfraFailed},
    {RunState::kRunning, RunState::kCancelled},
    {RunState::kRunning, RunState::kTimedOut},
};
bool IsLegalTransition(RunState from, RunState to);

// What the runner said about itself and how the agent ran it (agent.proto RunStarted).
struct Provenance {
  std::string runner_version;
  std::string port;
  std::string cpu;
  std::uint64_t clock_hz = 0;
  bool emulated = false;
  std::string timer_unit;             // cycles | ns
  std::vector<std::string> counters;  // metric i + 1 is counters[i]; metric 0 is the timer
  std::string firmware_sha256;
  std::string workload_sha256;
  std::string toolchain;
  std::string board_serial;
  std::string note;
  std::uint32_t seed = 0;  // the workload's tensor-generator seed
  // The kernel set HELLO named (helium, dsp, reference); empty for a custom runtime.
  std::string kernel_set;
};

struct Run {
  RunId id = 0;
  JobId job_id = 0;
  std::uint32_t attempt = 0;
  std::string board;
  std::string agent;
  RunState state = RunState::kAssigned;
  std::int64_t created_ms = 0;
  std::int64_t finished_ms = 0;
  std::string message;
  std::uint64_t batches_expected = 0;  // RunFinished.batches_sent, 0 until then
  bool started = false;                // RunStarted received: provenance is set
  Provenance provenance;
  std::uint64_t progress_done = 0;  // measured iterations stored (maintained by the store)
};

// Moves run to `to` when kRunTransitions allows it; entering a final state sets finished_ms and
// message. Otherwise an error naming both states, and run is unchanged.
Status ApplyTransition(Run& run, RunState to, std::string message, std::int64_t now_ms);

// The name of a metric index: 0 is the timer (named by its unit), then the counters.
std::string MetricName(const Provenance& p, std::uint32_t metric);

struct Sample {
  std::uint32_t pass = 0;
  std::uint32_t case_index = 0;
  std::uint32_t iteration = 0;
  std::uint32_t metric = 0;
  std::int64_t value = 0;
};

// One agent batch: (run, sequence) identifies it; storing it twice is a no-op.
struct SampleBatch {
  RunId run_id = 0;
  std::uint64_t sequence = 0;
  std::vector<Sample> samples;
  std::uint64_t iterations = 0;  // measured iterations it carries (samples of metric 0)
};

struct CaseResult {
  RunId run_id = 0;
  std::uint32_t case_index = 0;
  std::uint32_t checksum = 0;
  std::uint32_t expected = 0;
  bool ok = false;
  std::int64_t overhead = 0;
};

struct CaseStats {
  JobId job_id = 0;
  RunId run_id = 0;
  std::uint32_t case_index = 0;
  std::uint32_t metric_index = 0;
  std::string metric;
  std::string unit;
  std::uint64_t n = 0;
  double min = 0, median = 0, mean = 0, p90 = 0, p99 = 0, stddev = 0, cv = 0, max = 0;
};

struct Artifact {
  std::string sha256;
  std::uint64_t size = 0;
  std::string name;
  std::string user;  // the uploader: the first one as read back, this upload's when written
  std::int64_t created_ms = 0;
  bool shared = false;  // an admin let every member's jobs use it
};

// An admin's decision that every member's jobs may (or may no longer) use an artifact.
struct ArtifactSharing {
  std::string sha256;
  bool shared = false;
};

}  // namespace mculab::server
