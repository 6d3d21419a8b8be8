// GdbBoard: a board behind any GDB server (pyOCD, OpenOCD, J-Link's, QEMU's gdbstub), driven over
// the GDB remote protocol (agent/io/gdb_remote.h). Per run:
//   1. start the board's GDB server from its command template ({port}, {serial}, {target},
//      {link}, {firmware} substituted), open the runner's link (a unix or TCP socket, or a serial
//      port), wait for the GDB port and connect;
//   2. optionally send a monitor command (`reset halt`); program the runner ELF's PT_LOAD segments:
//      those in a flash region of the server's memory map through vFlashErase/Write/Done, and only
//      when the ELF's SHA-256 differs from what this agent last flashed there (remembered under the
//      state dir) or the server's CRCs (qCRC) say the flash holds something else, and verified by
//      CRC after writing; the others (RAM, which does not outlive a reset or a server restart) over
//      `X` every run;
//   3. write the workload to RAM at `workload_addr`, set VTOR, SP and PC from the vector table
//      (xPSR's Thumb bit), and continue.
// The returned RunnerProcess reads the link. Kill() halts the core over GDB, then stops the server
// process; the destructor does the same, and so does the session after DONE (the runner parks its
// core). A QEMU server is killed by the destructor and reaped (its folder removed) on a thread of
// the board's, so the next run does not wait for the old QEMU's exit. A server that dies is an
// infrastructure failure (the link read reports it). A QEMU server runs in the job sandbox (no
// network: its GDB and UART connections must be unix sockets). The runner has no process of its
// own: Wait() waits for the server's. Thread-safety: as Board.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/boards/board.h"
#include "agent/boards/firmware_identity.h"
#include "agent/io/clock.h"
#include "agent/io/reaper.h"
#include "agent/io/sandbox.h"

namespace mculab::agent {

struct GdbBoardOptions {
  // The GDB server command; placeholders {port} {gdb} {serial} {target} {link} {firmware}.
  std::string server_command;
  // How the agent reaches the server: "tcp" (host:port; port 0 picks a free local port, passed as
  // {port}) or "unix" (a socket in the run's folder, passed as {gdb}: for a server inside the
  // job sandbox, which has no network).
  std::string gdb_link = "tcp";
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  // The runner's link: "unix" (a socket in the run's folder, passed as {link}; the server listens),
  // "unix:PATH", "tcp:HOST:PORT", a serial port path (opened at `baud`), "serial": the probe's
  // virtual COM port, found under `by_id_dir` by `serial` at every run (agent/io/serial_link.h:
  // reopened when the probe re-enumerates), or "rtt": the runner's RTT buffers read over the GDB
  // connection itself (gdb_rtt.h).
  std::string link = "unix";
  std::uint32_t baud = 115200;
  std::filesystem::path by_id_dir = "/dev/serial/by-id";
  std::chrono::milliseconds serial_reopen_grace{5000};
  std::string serial;
  std::string target;
  std::filesystem::path firmware;
  std::uint32_t workload_addr = 0;
  std::uint32_t vector_table = 0;          // 0: the start of the lowest executable PT_LOAD segment
  std::string reset_command;               // a monitor command after connecting, e.g. "reset halt"
  std::filesystem::path state_dir;         // holds <board>.flashed-sha256
  std::chrono::seconds start_timeout{20};  // server start to GDB connection
  std::chrono::seconds call_timeout{10};   // each GDB request
  std::chrono::seconds flash_timeout{180};
  // Load a job's own runner ELF (RunSpec::firmware) onto the board; off unless the config allows.
  bool allow_custom_runners = false;
  // Warm: while a run goes, the next run's server is started, its links opened and the core
  // halted, the runner's RAM segments loaded and, for QEMU with a socket link, the runner booted
  // to its HELLO and halted again, so the next Start only writes the workload and resumes (for
  // servers that start afresh per run, i.e. QEMU; a job's own runner starts a server of its
  // own).
  bool warm = false;
  std::string note;       // the provenance note; empty: "... behind GDB server <program> ..."
  int icount_shift = -1;  // a QEMU started with -icount shift=N: RunProvenance::icount_shift
};

// pyOCD's GDB server as a template for `pyocd` (the program to run), e.g.
// "pyocd gdbserver -t {target} --uid {serial} --port {port}": what a board configured with
// backend = "pyocd" runs (that backend is this one with pyOCD's template, the probe's serial port
// as its link and "reset halt" after connecting).
std::string PyocdServerTemplate(const std::string& pyocd);

// Whether the server command is QEMU (argv[0] named qemu-system-*): then it runs in the job
// sandbox like every emulator the agent starts, with QEMU's own seccomp filter added.
bool IsQemuServer(const std::vector<std::string>& argv);

// One PT_LOAD segment of an ELF32 little-endian file.
struct ElfLoadSegment {
  std::uint32_t paddr = 0;  // load (physical) address
  std::uint32_t memsz = 0;
  bool executable = false;
  std::vector<std::uint8_t> data;  // the file bytes (filesz)
};
Result<std::vector<ElfLoadSegment>> ElfLoadSegments(std::span<const std::uint8_t> elf);

// Splits a command template like a shell would (whitespace, '...' and "..." quotes, backslash),
// then substitutes {name} placeholders in each word. An unknown placeholder is an error.
Result<std::vector<std::string>> ExpandCommandTemplate(
    const std::string& templ, const std::map<std::string, std::string>& values);

class GdbBoard final : public Board {
 public:
  // `sandbox` confines a QEMU server (a probe server needs the USB devices and runs unconfined).
  GdbBoard(BoardInfo info, GdbBoardOptions options, Clock& clock,
           Sandbox sandbox = Sandbox::None());
  ~GdbBoard() override;
  const BoardInfo& Info() const override { return info_; }
  Result<std::unique_ptr<RunnerProcess>> Start(const RunSpec& spec) override;

  // The firmware hash this agent last flashed on the board ("" if none recorded).
  std::string FlashedSha256() const;
  // Runs that found their server already started (warm).
  int warm_starts() const { return warm_starts_; }
  // Where the last Start's time went: waiting for (or starting) the server, then loading the
  // runner and the workload and starting the core.
  struct StartTimes {
    std::chrono::microseconds server{0};
    std::chrono::microseconds load{0};
    std::uint64_t load_packets = 0;  // GDB packets sent while loading
  };
  StartTimes last_start_times() const { return last_times_; }

 private:
  struct Server;
  std::filesystem::path StateFile() const;
  // Starts the server, opens the runner's link, connects over GDB (reset command, halted).
  Result<std::unique_ptr<Server>> StartServer(const std::filesystem::path& firmware);
  // A server started ahead: the board's own runner's RAM segments loaded into it already.
  void Preload(Server& server);
  // Preload's last step for QEMU with a socket link: runs the runner to its HELLO and halts it.
  bool BootAhead(Server& server);
  // The warm server when there is a live one for the board's own runner, else a new one.
  Result<std::unique_ptr<Server>> TakeServer(const std::filesystem::path& firmware,
                                             bool own_firmware);

  BoardInfo info_;
  GdbBoardOptions options_;
  Clock& clock_;
  Sandbox sandbox_;
  FirmwareFile firmware_;
  std::string cached_elf_sha256_;
  std::string cached_elf_;
  int warm_starts_ = 0;
  StartTimes last_times_;
  // Waits for the end of the runs' QEMU servers off the board's thread, made at the first: an
  // emulator holds nothing the next run needs, where a probe's server (ended in place) holds the
  // probe.
  std::shared_ptr<Reaper> reaper_;
  // Warm boards: the server started ahead, by warmer_ (WarmLoop), guarded by warm_mu_.
  void WarmLoop();
  std::mutex warm_mu_;
  std::condition_variable warm_cv_;
  bool warm_wanted_ = false;  // Start asked for the next server
  bool warm_busy_ = false;    // warmer_ is starting one
  bool warm_stop_ = false;
  std::optional<Result<std::unique_ptr<Server>>> warm_ready_;
  std::thread warmer_;  // last: started on the first warm Start, joined by the destructor
};

}  // namespace mculab::agent
