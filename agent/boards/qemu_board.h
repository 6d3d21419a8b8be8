// QemuBoard: an emulated Corstone-300 (Cortex-M55, `qemu-system-arm -M mps3-an547`), one QEMU
// process per run. The workload goes in with QEMU's generic loader device at the runner's workload
// address; the runner's UART0 is a unix-socket chardev the agent connects to (never -nographic:
// its stdio mux swallows byte 0x01, which COBS frames contain). Time is emulated: with
// `-icount shift=N,sleep=off` each instruction lasts 2^N ns of virtual time, so SysTick counts are
// deterministic and say nothing about silicon cycles.
// Thread-safety: as Board.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "agent/boards/board.h"
#include "agent/boards/firmware_identity.h"
#include "agent/io/clock.h"
#include "agent/io/sandbox.h"

namespace mculab::agent {

struct QemuOptions {
  std::string qemu_binary = "qemu-system-arm";
  std::string machine = "mps3-an547";  // or "mps2-an500" (Cortex-M7, the an500 runner port)
  std::filesystem::path firmware;      // the runner ELF
  int icount_shift = 5;
  std::uint32_t workload_addr = 0x60000000;  // an547 DDR, where the runner looks
  // The QEMU counting plugin (libmculab-qemu-counters.so); empty: the board counts no events.
  std::filesystem::path plugin;
  // Run a job's own runner ELF (RunSpec::firmware); off unless the agent's config allows it.
  bool allow_custom_runners = false;
  // Warm: the next run's QEMU is started halted (-S) with its link open while the current run
  // goes, the runner loaded into it over QEMU's gdbstub and booted to its HELLO, then halted
  // while it waits for its CONFIGURE (GdbBoard with `warm`); when the run comes only the
  // workload is written and the core resumed, so the gap between jobs is that write, not QEMU's
  // start nor the runner's boot. Runs that count emulated events (the plugin is a start-up
  // option) or bring their own runner start cold.
  bool warm = false;
};

// QEMU's own seccomp filter, on every QEMU the agent starts: no obsolete system calls, no
// privilege changes, no fork/exec, no scheduler or resource changes.
inline constexpr const char* kQemuSandboxOption =
    "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny";

// The QEMU command line for one run (pure; unit-tested).
std::vector<std::string> QemuArgv(const QemuOptions& options,
                                  const std::filesystem::path& link_socket,
                                  const std::filesystem::path& workload_file);

// The GDB server template of a warm QEMU board: QemuArgv's machine, icount, sandbox and link,
// halted (-S), with the gdbstub on a unix socket ({gdb}) and nothing loaded.
std::string QemuWarmServerTemplate(const QemuOptions& options);

// The board's counter units: the plugin's emulated unit when a plugin is configured.
std::vector<CounterUnitInfo> QemuCounterUnits(const QemuOptions& options);

// The provenance note for results from this backend.
std::string QemuNote(const QemuOptions& options);

class GdbBoard;

class QemuBoard final : public Board {
 public:
  QemuBoard(BoardInfo info, QemuOptions options, Clock& clock, Sandbox sandbox);
  ~QemuBoard() override;
  const BoardInfo& Info() const override { return info_; }
  Result<std::unique_ptr<RunnerProcess>> Start(const RunSpec& spec) override;
  // Runs that found their QEMU started ahead (warm boards).
  int warm_starts() const;
  // Warm boards: the last warm Start's wait for its QEMU and its load over GDB (zero otherwise).
  struct WarmTimes {
    std::chrono::microseconds wait{0};
    std::chrono::microseconds load{0};
    std::uint64_t load_packets = 0;  // GDB packets the load took
  };
  WarmTimes last_warm_times() const;

 private:
  std::unique_ptr<GdbBoard> warm_;  // the warm path, when options.warm
  BoardInfo info_;
  QemuOptions options_;
  Clock& clock_;
  Sandbox sandbox_;
  FirmwareFile firmware_;
};

}  // namespace mculab::agent
