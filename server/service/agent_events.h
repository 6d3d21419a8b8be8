// What an agent tells the Lab (its registration, then events about its boards and runs) and what
// the Lab tells an agent (commands), as plain values: the service's vocabulary for the agent link.
// server/rpc/agent_wire.h converts them from and to agent.proto's messages; nothing here knows
// the wire. Run and job ids are the Lab's; counters and metrics follow agent.proto's meaning
// (metric 0 is the timer, metric i the run's counters[i - 1]).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "server/domain/job.h"
#include "server/domain/profile.h"
#include "server/domain/run.h"

namespace mculab::server {

// ---- agent -> Lab ----

// A board as its agent registers it.
struct RegisteredBoard {
  std::string name;
  std::string kind;
  std::map<std::string, std::string> tags;
  bool emulated = false;
  std::string serial;
  std::uint64_t ram_bytes = 0;
  BoardUnits units;  // what it can count, per counter unit
  // Non-empty: the agent has the board but it cannot take work now, and why.
  std::string offline;
  // Whether it runs a job's own runner and, when it does not, what to change.
  bool custom_runners = false;
  std::string custom_runners_off;
};

// The first thing an agent says on its stream.
struct AgentRegistration {
  std::string agent;  // the agent's (host's) name
  std::string version;
  std::vector<RegisteredBoard> boards;
  // Runs the agent still has unacknowledged batches or a live process for (after a reconnect).
  std::vector<RunId> active_runs;
};

// The agent is alive; `stopping`: it is shutting down and its boards must get no new work.
struct AgentHeartbeat {
  bool stopping = false;
};

// A board of the agent went away (offline says why) or came back (offline empty).
struct BoardStatusReport {
  std::string board;
  std::string offline;
};

// A run moved forward on the agent: RunState::kPreparing or RunState::kRunning.
struct RunPhaseReport {
  RunId run = 0;
  RunState state = RunState::kPreparing;
  std::string message;
};

// The run's runner started: what it said about itself and how the agent ran it.
struct RunStartedReport {
  RunId run = 0;
  Provenance provenance;
  std::vector<MemoryFigure> firmware_memory;  // from the runner ELF (source "elf"), run_id = run
};

// One batch of samples; (run, sequence) identifies it. Every sample's pass is the batch's.
struct SampleBatchReport {
  RunId run = 0;
  std::uint64_t sequence = 0;
  std::uint32_t pass = 0;
  std::vector<Sample> samples;
};

// One case of one pass ended on the board.
struct CaseDoneReport {
  RunId run = 0;
  std::uint32_t case_index = 0;
  std::uint32_t pass = 0;
  std::uint32_t checksum = 0;           // the runner's output checksum
  std::uint32_t expected_checksum = 0;  // the same kernel run on the agent's host
  bool checksum_ok = false;
  // A custom runner: the agent has no reference, so checksum_ok means nothing.
  bool checksum_unverified = false;
  std::int64_t overhead = 0;         // empty-case measurement in the timer's unit
  std::vector<OpProfileRow> ops;     // the case's per-op profile, one row per (op, metric)
  std::vector<MemoryFigure> memory;  // the case's memory report (source "runner")
};

enum class RunOutcome {
  kSucceeded,
  kWorkloadFailed,  // the runner reported an error or a checksum mismatch: not the board's fault
  kInfraFailed,     // the board, emulator or probe failed
  kCancelled,
  kTimedOut,
};

struct RunFinishedReport {
  RunId run = 0;
  RunOutcome outcome = RunOutcome::kInfraFailed;
  std::string message;
  std::uint32_t batches_sent = 0;  // the last sequence number + 1
};

// Everything an agent says after its registration.
using AgentEvent = std::variant<AgentHeartbeat, BoardStatusReport, RunPhaseReport, RunStartedReport,
                                SampleBatchReport, CaseDoneReport, RunFinishedReport>;

// ---- Lab -> agent ----

// The registration is accepted.
struct AgentRegistered {
  std::string agent;
  std::uint32_t heartbeat_ms = 0;
};

// One pass of a run: the events it counts besides the timer ("cycles"), which every pass has.
struct PassAssignment {
  std::uint32_t index = 0;
  std::vector<std::string> events;
};

// A run for one of the agent's boards.
struct RunAssignment {
  RunId run = 0;
  JobId job = 0;
  std::string board;
  std::string op;
  std::vector<CaseSpec> cases;  // case index = position
  std::uint32_t iterations = 0;
  std::uint32_t warmup = 0;
  std::uint32_t timeout_s = 0;
  std::uint32_t pass = 0;
  // The run's metrics besides the timer: the union of the passes' events, in pass order.
  std::vector<std::string> events;
  std::uint32_t seed = 0;              // 0: the agent's default
  std::vector<PassAssignment> passes;  // run back to back; empty: one pass of `events`
  bool profile_ops = false;
  bool report_memory = false;
  // A custom runner (op "custom"): the runner and the blob, by SHA-256 ("" when not).
  std::string firmware_sha256;
  std::string blob_sha256;
  bool reference_kernels = false;  // the workload's REFERENCE_KERNELS flag
};

// The run must stop (the job was cancelled or ended).
struct RunCancel {
  RunId run = 0;
  std::string reason;
};

// The batch is committed; the agent may drop it from its spool.
struct BatchAck {
  RunId run = 0;
  std::uint64_t sequence = 0;
};

// The server has everything of the run (or no longer wants it); the agent may drop its spool.
struct RunClosed {
  RunId run = 0;
};

using AgentCommand = std::variant<AgentRegistered, RunAssignment, RunCancel, BatchAck, RunClosed>;

}  // namespace mculab::server
