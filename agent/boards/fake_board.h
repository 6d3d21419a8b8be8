// FakeBoard: a runner simulated in process, speaking the real runner protocol frames (HELLO,
// CASE_START, SAMPLE, CASE_END, LOG, ERROR, DONE) with deterministic values, and able to
// misbehave on purpose. It computes its checksums with the host reference kernels, so a clean run
// verifies. Selected by configuration (`backend = "fake"`, `fault = "..."`) like any board.
//
// Faults (applied at case `fault_case`):
//   crash          the runner dies half-way through the case's samples (link closes, SIGSEGV)
//   garbage        stray bytes on the link before every case (e.g. a boot banner)
//   bad_crc        a LOG frame with a corrupted byte before the case
//   lose_sample    one SAMPLE frame of the case arrives corrupted
//   runner_error   the runner reports ERROR(BAD_PARAMS) for the case and stops
//   wrong_checksum the case's CASE_END checksum is wrong
//   hang           the runner stops talking half-way through the case and ignores ABORT
//   no_hello       the runner never says HELLO
//   ignore_abort   a normal runner that ignores ABORT (so the agent has to kill it)
//
// The fake waits on the Clock it is given: with a FakeClock a hang costs no wall time.
// Thread-safety: as Board. FakeRunLog is safe to read from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/boards/board.h"
#include "agent/io/clock.h"
#include "mculab/runner_protocol.h"

namespace mculab::agent {

enum class FakeFault {
  kNone,
  kCrash,
  kGarbage,
  kBadCrc,
  kLoseSample,
  kRunnerError,
  kWrongChecksum,
  kHang,
  kNoHello,
  kIgnoreAbort,
  kFloodOps,  // thousands of OP_SAMPLE frames at the end of the fault case (a hostile runner)
};

const char* FakeFaultName(FakeFault f);
Result<FakeFault> ParseFakeFault(const std::string& name);
// "none, crash, garbage, ..." for messages.
std::string FakeFaultNames();

struct FakeOptions {
  FakeFault fault = FakeFault::kNone;
  std::uint16_t fault_case = 0;
  std::string cpu = "cortex-m55";
  std::vector<std::string> counters = {"instructions", "loads", "stores"};
  std::uint8_t max_counters = 2;
  // An emulated counter unit the fake board counts itself, like QemuBoard's plugin:
  // RunSpec::emulated_events picks from it, EmulatedCounts() gives EmulatedValue() per measured
  // iteration. Empty: no such unit.
  std::vector<std::string> emulated_events{};
  std::uint32_t emulated_max = 2;
  // Waited (on the Clock) before each SAMPLE: a slow runner, so tests can kill things mid-run.
  std::chrono::milliseconds sample_delay{0};
  bool hello_emulated = true;   // what the fake runner's HELLO says
  bool board_emulates = false;  // RunProvenance::emulated (a backend like the FVP's)
  int icount_shift = -1;        // RunProvenance::icount_shift (a backend like QEMU's)
};

// What the last run's fake runner received and suffered: for tests.
struct FakeRunLog {
  std::mutex mu;
  std::vector<std::uint8_t> frames_received;  // types, in order
  bool killed = false;
  std::filesystem::path firmware;  // the custom runner the run was given, if any
  std::vector<std::uint8_t> blob;  // the blob of its custom workload, as the runner saw it
  bool abort_received() {
    std::lock_guard lock(mu);
    for (auto t : frames_received)
      if (t == MCULAB_MSG_ABORT) return true;
    return false;
  }
};

class FakeBoard final : public Board {
 public:
  FakeBoard(BoardInfo info, FakeOptions options, Clock& clock);
  const BoardInfo& Info() const override { return info_; }
  Result<std::unique_ptr<RunnerProcess>> Start(const RunSpec& spec) override;
  std::shared_ptr<FakeRunLog> last_run() const;

  // The timer value the fake reports for (case, iteration): tests check samples against it.
  static std::uint64_t TimerValue(std::uint16_t case_index, std::uint32_t iteration);
  static std::uint32_t CounterValue(std::uint32_t counter, std::uint32_t iteration);
  static constexpr std::uint64_t kOverhead = 12;
  // The value of the fake's emulated event `event` (index in FakeOptions::emulated_events).
  static std::uint64_t EmulatedValue(std::uint32_t event, std::uint16_t case_index,
                                     std::uint32_t iteration);

 private:
  BoardInfo info_;
  FakeOptions options_;
  Clock& clock_;
  mutable std::mutex mu_;
  std::shared_ptr<FakeRunLog> last_run_;
};

}  // namespace mculab::agent
