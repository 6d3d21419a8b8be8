// The run's vocabulary: what the executor is given (RunAssignment) and what it reports
// (RunMessage), as plain structs. The wire (proto/agent.proto) is translated to and from these at
// the link's edge only (agent/link/run_wire.h); the spool stores them in a format of its own
// (agent/run/spool_record.h, docs/agent-spool.md). Field names follow agent.proto's so a reader
// can match them; the comments there say what each field means.
//
// Thread-safety: plain values.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "agent/runner/runner_session.h"

namespace mculab::agent {

// One case of the job's sweep: its index in the job, the user's id, the operator's parameters.
struct RunCase {
  std::uint32_t index = 0;
  std::int64_t id = 0;
  std::vector<std::int32_t> params;
};

// A pass: the events counted besides the timer, run back to back with the other passes.
struct RunPass {
  std::uint32_t index = 0;
  std::vector<std::string> events;
};

// What the server asks the agent to run (agent.proto Assignment).
struct RunAssignment {
  std::uint64_t run_id = 0;
  std::uint64_t job_id = 0;
  std::string board;
  std::string op;
  std::vector<RunCase> cases;
  std::uint32_t iterations = 0;
  std::uint32_t warmup = 0;
  std::uint32_t timeout_s = 0;  // 0: the board's default
  std::uint32_t pass = 0;
  std::vector<std::string> events;
  std::uint32_t seed = 0;       // 0: kDefaultSeed
  std::vector<RunPass> passes;  // empty: one pass of `events`
  bool profile_ops = false;
  bool report_memory = false;
  std::string firmware_sha256;  // a custom runner
  std::string blob_sha256;
  bool sample_columns = false;  // the server reads a batch's column form
  bool reference_kernels = false;
};

// A memory figure: a runner's MEMORY report (source "runner") or the ELF's sections ("elf").
struct MemoryFigureRecord {
  std::int32_t case_index = 0;  // -1: the whole firmware
  std::string source;
  std::string category;
  std::uint64_t used = 0;
  std::uint64_t reserved = 0;
  friend bool operator==(const MemoryFigureRecord&, const MemoryFigureRecord&) = default;
};

struct OpMetricRecord {
  std::uint32_t metric = 0;  // 0 = the timer, i = RunStartedRecord::counters[i - 1]
  std::uint64_t count = 0;
  std::uint64_t sum = 0;
  std::uint64_t min = 0;
  std::uint64_t max = 0;
  friend bool operator==(const OpMetricRecord&, const OpMetricRecord&) = default;
};

struct OpProfileRecord {
  std::uint32_t op_index = 0;
  std::string type;
  std::string name;
  std::uint32_t count = 0;
  bool unclosed = false;
  std::vector<OpMetricRecord> metrics;
  friend bool operator==(const OpProfileRecord&, const OpProfileRecord&) = default;
};

// The run's provenance, sent once per run when the first runner says HELLO.
struct RunStartedRecord {
  std::uint64_t run_id = 0;
  std::string runner_version;
  std::string port;
  std::string cpu;
  std::uint64_t clock_hz = 0;
  bool emulated = false;
  std::string timer_unit;
  std::vector<std::string> counters;
  std::string firmware_sha256;
  std::string workload_sha256;
  std::string toolchain;
  std::string board_serial;
  std::string note;
  std::uint32_t seed = 0;
  std::vector<MemoryFigureRecord> firmware_memory;
  std::string kernel_set;
  friend bool operator==(const RunStartedRecord&, const RunStartedRecord&) = default;
};

// One case's end in one pass.
struct CaseDoneRecord {
  std::uint64_t run_id = 0;
  std::uint32_t case_index = 0;
  std::uint32_t checksum = 0;
  std::uint32_t expected_checksum = 0;
  bool checksum_ok = false;
  std::int64_t overhead = 0;
  std::vector<std::int64_t> counter_overhead;
  std::uint32_t pass = 0;
  std::vector<OpProfileRecord> ops;
  std::vector<MemoryFigureRecord> memory;
  bool checksum_unverified = false;
  friend bool operator==(const CaseDoneRecord&, const CaseDoneRecord&) = default;
};

struct SampleRow {
  std::uint32_t case_index = 0;
  std::uint32_t iteration = 0;
  std::uint32_t metric = 0;  // 0 = the timer, i = RunStartedRecord::counters[i - 1]
  std::int64_t value = 0;
  friend bool operator==(const SampleRow&, const SampleRow&) = default;
};

// A numbered batch of samples: sequence 0, 1, 2, ... per run; the server acknowledges each.
struct SampleBatchRecord {
  std::uint64_t run_id = 0;
  std::uint64_t sequence = 0;
  std::uint32_t pass = 0;
  // The form the server reads (RunAssignment::sample_columns): the same rows either way.
  bool as_columns = false;
  std::vector<SampleRow> rows;
  friend bool operator==(const SampleBatchRecord&, const SampleBatchRecord&) = default;
};

struct RunFinishedRecord {
  std::uint64_t run_id = 0;
  RunOutcome outcome = RunOutcome::kSucceeded;
  std::string message;
  std::uint32_t batches_sent = 0;  // the last sequence number + 1
  friend bool operator==(const RunFinishedRecord&, const RunFinishedRecord&) = default;
};

// Where the run is (preparing | running): transient, never spooled.
struct RunStateRecord {
  std::uint64_t run_id = 0;
  std::string state;
  std::string message;
  friend bool operator==(const RunStateRecord&, const RunStateRecord&) = default;
};

// What a run reports. Everything but RunStateRecord is spooled before it is sent.
using RunMessage = std::variant<RunStartedRecord, CaseDoneRecord, SampleBatchRecord,
                                RunFinishedRecord, RunStateRecord>;

// The run a message belongs to.
inline std::uint64_t RunIdOf(const RunMessage& m) {
  return std::visit([](const auto& r) { return r.run_id; }, m);
}

// Where a run's messages go once spooled (the link, or a test). Must not block on a board; may
// drop a message when the server is unreachable (the spool replays what matters after the
// reconnect).
class RunSink {
 public:
  virtual ~RunSink() = default;
  virtual void Send(RunMessage message) = 0;
  // A state worth saying only if it lasts: sent once `after` has passed, unless a later message
  // of the same run is sent first (a run whose runner starts at once reports only "running":
  // one message and one commit less on the dispatch path). This default sends it at once.
  virtual void SendDeferred(RunStateRecord state, std::chrono::milliseconds after) {
    (void)after;
    Send(std::move(state));
  }
};

}  // namespace mculab::agent
