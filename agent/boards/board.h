// Board: one place a runner can run (an emulated Corstone-300, a Linux child process, a real board
// behind a debug probe, or an in-process fake). Everything above this interface (runner session,
// link) works the same whichever it has; the backend is chosen by configuration.
//
// A run: Start(spec) places the workload where the runner reads it, starts the runner and returns
// a RunnerProcess: the byte link to the runner plus control over its process. The RunnerProcess's
// destructor always stops the runner and cleans up (process group killed, temp files removed).
//
// Thread-safety: a Board is used by one run at a time (the agent has one worker per board);
// Info() may be called from any thread. A RunnerProcess belongs to one thread, except Kill(),
// which may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "agent/boards/region_counts.h"
#include "agent/io/subprocess.h"
#include "common/result.h"

namespace mculab::agent {

// A set of counters the board offers (agent.proto CounterUnit). `external`: counted by the board
// backend outside the runner (the QEMU plugin), so RunSpec::emulated_events selects them and
// RunnerProcess::EmulatedCounts() delivers them; otherwise the runner counts them (its HELLO).
struct CounterUnitInfo {
  std::string name;
  std::uint32_t max_simultaneous = 0;
  std::vector<std::string> events;
  bool emulated = false;
  bool external = false;
};

struct BoardInfo {
  std::string name;
  std::string kind;
  std::map<std::string, std::string> tags;
  bool emulated = false;
  std::string serial;                            // probe serial for real boards
  std::uint64_t ram_bytes = 0;                   // 0: not known
  std::string backend;                           // for logs only: nothing may branch on it
  std::chrono::seconds default_timeout{300};     // per run, when the assignment sets none
  std::vector<CounterUnitInfo> counter_units{};  // what the board counts besides the timer
  // Whether the board runs a job's own runner (RunSpec::firmware); when not, why (for the job's
  // failure message).
  bool custom_runners = false;
  std::string custom_runners_off = "this board's backend does not run custom runners";
  // The lab's own TFLite runner for model jobs (op "model"); empty: the board runs none.
  std::filesystem::path model_runner;
};

struct RunSpec {
  std::uint64_t run_id = 0;
  std::vector<std::uint8_t> workload;  // the built workload (header included)
  std::chrono::seconds timeout{300};   // whole run; backends use it to bound their own steps
  // Events of the board's external units to count in this run, e.g. the QEMU plugin's.
  std::vector<std::string> emulated_events{};
  // A custom runner (verified, from the agent's artifact cache) to run instead of the board's
  // own; empty: the board's configured runner.
  std::filesystem::path firmware;
  // `firmware` is the board's own configured model runner (BoardInfo::model_runner), not an
  // upload: it runs whether or not the board allows custom runners.
  bool own_runner = false;
};

// How the runner was run: part of the result's provenance.
struct RunProvenance {
  std::string firmware_sha256;  // the ELF or host runner binary that ran
  std::string toolchain;        // compiler that built it (the ELF's .comment)
  std::string board_serial;
  std::string note;  // what the numbers mean on this backend
  // The backend emulates the board (an FVP): results are labelled emulated even when the runner's
  // HELLO says silicon (a runner cannot always tell a cycle model from silicon).
  bool emulated = false;
  // Where the backend put the workload; 0 when it does not apply (host runner reads a file).
  std::uint32_t workload_addr = 0;
  std::string firmware_path;  // the runner ELF, for the memory report ("" when not an ELF)
  // QEMU's -icount shift N when the board runs under it (each executed instruction lasts 2^N ns of
  // virtual time), else -1. The run then reports its timer as executed instructions
  // (EmulatedInstructions): the one unit every emulated board shares (DESIGN.md section 5).
  int icount_shift = -1;
};

// A timer reading of `ticks` at `clock_hz` under QEMU -icount shift=`icount_shift`, as executed
// instructions: ticks * 10^9 / (clock_hz * 2^shift), rounded to the nearest. A tick is one clock
// period of virtual time, so the count is exact to within the tick's own length (1.25
// instructions at 25 MHz, 0.98 at 32 MHz, shift 5).
inline std::uint64_t EmulatedInstructions(std::uint64_t ticks, std::uint32_t clock_hz,
                                          int icount_shift) {
  if (clock_hz == 0 || icount_shift < 0 || icount_shift > 30) return ticks;
  const unsigned __int128 den = static_cast<unsigned __int128>(clock_hz) << icount_shift;
  const unsigned __int128 num = static_cast<unsigned __int128>(ticks) * 1'000'000'000u;
  return static_cast<std::uint64_t>((num + den / 2) / den);
}

class RunnerProcess {
 public:
  virtual ~RunnerProcess() = default;

  // Waits up to `timeout` for bytes from the runner. Returns the count (0: nothing in time),
  // kUnavailable when the link closed (the runner exited or crashed).
  virtual Result<std::size_t> Read(std::span<std::uint8_t> buf,
                                   std::chrono::milliseconds timeout) = 0;
  // kUnavailable when the link is closed, kDeadlineExceeded when the runner does not read.
  virtual Status Write(std::span<const std::uint8_t> bytes) = 0;
  // Stops the runner at once (SIGKILL to its process group, halt for a real board).
  virtual void Kill() = 0;
  // Waits for the runner's process to end; kDeadlineExceeded if it is still running.
  virtual Result<ExitStatus> Wait(std::chrono::milliseconds timeout) = 0;

  virtual const RunProvenance& provenance() const = 0;
  // Whether the runner's process ends by itself after DONE (a host runner exits). An emulator or a
  // board whose runner parks its core after DONE returns false, and the session stops it.
  virtual bool ExitsAfterDone() const { return true; }
  // What the backend saw besides the link (e.g. the tail of QEMU's stderr), for failure messages.
  virtual std::string Diagnostics() { return {}; }
  // After the runner ended: what the board backend counted for RunSpec::emulated_events, parsed
  // (a backend's output format stays inside the backend). kNotFound when the run counted none.
  virtual Result<RegionCounts> EmulatedCounts() {
    return MakeError(ErrorCode::kNotFound, "this board counts no emulated events");
  }
};

class Board {
 public:
  virtual ~Board() = default;
  virtual const BoardInfo& Info() const = 0;
  // Prepares and starts one run. An error here is the board's (infrastructure) failure.
  virtual Result<std::unique_ptr<RunnerProcess>> Start(const RunSpec& spec) = 0;
  // Called on the board's worker thread while it waits for work: get ready for the next Start
  // (a folder, a runner started ahead and waiting), so a job does not wait for that. A failure
  // here is only logged; Start then does the work itself.
  virtual void Prepare() {}
};

}  // namespace mculab::agent
