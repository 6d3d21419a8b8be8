// RunnerSession: the agent's side of one runner-protocol conversation (docs/runner-protocol.md).
//
//   wait for HELLO (bounded) -> CONFIGURE (iterations, warm-up, workload length, counter mask)
//   -> RUN -> CASE_START / SAMPLE... / CASE_END per case, LOG and ERROR at any time -> DONE
//
// Every case's checksum is checked against the same kernel run on this host (ReferenceChecksum),
// except for a custom runner (op MCULAB_OP_CUSTOM), whose output the agent cannot compute: its
// cases are reported unverified (CaseResult::verified false), never as passing;
// a mismatch fails the run as a workload failure naming the case and both checksums. Corrupt
// frames and stray bytes are logged and counted but not fatal, unless they cost a sample: a gap in
// a case's iterations fails the run (an infrastructure failure) instead of storing a hole.
//
// Failure classes:
//   workload failed  runner ERROR, checksum mismatch, bad input (unknown event, workload too big)
//   infra failed     no HELLO, link closed or process died before DONE, lost samples, a restart
//   timed out        the run's deadline passed
//   cancelled        the CancelToken fired (or infra failed when the reason is agent shutdown)
// On cancel and timeout the session sends ABORT, waits up to abort_grace for DONE, then kills.
// Whatever happens the runner is killed and reaped before Run() returns.
//
// Thread-safety: one session runs on one thread; the listener is called on that thread. Only the
// CancelToken is touched from elsewhere.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/boards/board.h"
#include "agent/io/clock.h"
#include "agent/runner/cancel_token.h"
#include "common/runner_messages.h"
#include "common/workload_builder.h"

namespace mculab::agent {

enum class RunOutcome { kSucceeded, kWorkloadFailed, kInfraFailed, kCancelled, kTimedOut };
const char* RunOutcomeName(RunOutcome o);

struct SessionConfig {
  std::uint16_t op = 0;
  std::vector<WorkloadCase> cases;  // as in the workload, for the reference checksums
  std::uint32_t seed = 0;
  std::uint32_t iterations = 1;
  std::uint32_t warmup = 0;
  std::uint32_t workload_len = 0;
  // Counters to read besides the timer, by the names in the runner's HELLO ("cycles" is the timer).
  std::vector<std::string> events;
  bool profile_ops = false;    // CONFIGURE OP_PROFILE: OP_SAMPLE frames to OnOpSample
  bool report_memory = false;  // CONFIGURE MEMORY: MEMORY frames to OnMemory
  // The job's own runner (uploaded): whatever it does wrong on the link (no HELLO, exits or closes
  // the link early, garbage) is the job's failure, never the board's.
  bool custom_runner = false;
  // A model job (op MCULAB_OP_CUSTOM on the lab's TFLite runner): every case's checksum must be
  // this one, the output of the same interpreter run on this host (common/tflite_model.h).
  std::optional<std::uint32_t> model_checksum;
  std::chrono::milliseconds hello_timeout{10'000};
  std::chrono::milliseconds run_timeout{300'000};  // from the start of the session
  std::chrono::milliseconds abort_grace{1'000};
  std::chrono::milliseconds exit_grace{2'000};  // after DONE, for the process to exit by itself
  std::chrono::milliseconds poll_slice{50};     // how often the CancelToken is looked at
  std::string log_prefix;                       // "run 42 on an547-0" in log lines
};

struct CaseResult {
  std::uint16_t case_index = 0;
  std::int64_t case_id = 0;
  std::uint32_t checksum = 0;
  std::uint32_t expected = 0;
  bool checksum_ok = false;
  bool verified = true;  // false for a custom runner: no reference, checksum_ok means nothing
  std::uint64_t overhead = 0;
  std::vector<std::uint64_t> counter_overhead;  // per counter, as the samples' counters
  std::uint32_t samples = 0;
};

class SessionListener {
 public:
  virtual ~SessionListener() = default;
  // After HELLO was accepted, before CONFIGURE. `counters` are the counters that will follow the
  // timer in every sample, in order.
  virtual void OnStarted(const Hello& hello, const std::vector<std::string>& counters) = 0;
  // Samples arrive in order: per case, iterations 0, 1, 2, ... without gaps.
  virtual void OnSample(const SampleMsg& sample) = 0;
  // A case's per-op profile and memory report (when asked for), before its OnCaseEnd.
  virtual void OnOpSample(const OpSample&) {}
  virtual void OnMemory(const MemoryReport&) {}
  virtual void OnCaseEnd(const CaseResult& result) = 0;
  virtual void OnLog(const LogMsg& log) = 0;
  virtual void OnError(const ErrorMsg& error) = 0;
  virtual void OnDone(const Done& done) = 0;
};

struct SessionStats {
  std::uint64_t frames = 0;         // good frames
  std::uint64_t bad_frames = 0;     // dropped: CRC, COBS, truncated, unknown type, ...
  std::uint64_t skipped_bytes = 0;  // bytes outside good frames
  std::uint64_t samples = 0;
  std::uint32_t cases_done = 0;
  // From the start of the session (-1 when it never came): where a run's time goes.
  std::chrono::milliseconds to_hello{-1};
  std::chrono::milliseconds to_done{-1};
  std::chrono::milliseconds to_exit{-1};  // the runner's process gone (after DONE or a kill)
};

struct SessionResult {
  RunOutcome outcome = RunOutcome::kSucceeded;
  std::string message;  // empty on success
  SessionStats stats;
  std::optional<ExitStatus> exit;  // the runner process's end, when known
};

SessionResult RunSession(RunnerProcess& runner, Clock& clock, const SessionConfig& config,
                         SessionListener& listener, const CancelToken& cancel);

}  // namespace mculab::agent
