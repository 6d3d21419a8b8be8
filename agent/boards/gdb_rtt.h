// RttPump: the runner's link over RTT, read by the agent through its GDB connection (the firmware
// side is firmware_stub/core/rtt.h, built into a port's `-rtt` ELF). A GDB server cannot read
// memory while the core runs, so the runner calls mculab_rtt_flush() outside every timed region;
// the pump has a hardware breakpoint there. At each stop it takes the new bytes of the up ring
// (advancing RdOff), puts pending input into the down ring (advancing WrOff), returns from the
// flush function itself (PC = LR: no step over the breakpoint needed) and continues. When the
// runner waits for input (mculab_rtt_waiting) and there is none, the core stays halted until
// Write() brings some.
//
// Thread-safety: Read() and Write() from the run's thread, Stop() from any thread; the pump's own
// thread owns the GDB connection between Start() and Stop().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "agent/boards/elf_symbols.h"
#include "agent/io/gdb_remote.h"
#include "common/result.h"

namespace mculab::agent {

struct RttSymbols {
  std::uint32_t control_block = 0;  // _SEGGER_RTT
  std::uint32_t flush = 0;          // mculab_rtt_flush (Thumb bit cleared)
  std::uint32_t waiting = 0;        // mculab_rtt_waiting: 1 while the runner waits for input
};
// kFailedPrecondition naming the missing symbol when the runner has no RTT link.
Result<RttSymbols> FindRttSymbols(std::span<const std::uint8_t> elf);

struct RttStats {
  std::uint64_t stops = 0;
  std::chrono::microseconds stopped{0};  // time the core spent halted for the link
  std::uint64_t bytes_up = 0;
  std::uint64_t bytes_down = 0;
};

class RttPump {
 public:
  RttPump(GdbRemote& gdb, RttSymbols symbols) : gdb_(gdb), sym_(symbols) {}
  ~RttPump() { Stop(); }

  // Sets the breakpoint; call with the core halted, before the runner starts.
  Status Arm();
  // The core has just been continued: the pump's thread takes over the connection.
  void Start();
  // Ends the pump's thread and leaves the core halted (halting it if it runs). Idempotent.
  void Stop();

  // As RunnerProcess::Read/Write.
  Result<std::size_t> Read(std::span<std::uint8_t> buf, std::chrono::milliseconds timeout);
  Status Write(std::span<const std::uint8_t> bytes);

  RttStats stats();
  std::string error();

 private:
  void Loop();
  Status ServiceStop(bool& waiting);
  Status Drain();
  Status Feed();

  GdbRemote& gdb_;
  RttSymbols sym_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool stopped_ = false;
  bool running_ = false;  // the core runs (a halt is needed to stop it)
  bool closed_ = false;   // the link is gone (error_ says why)
  std::string error_;
  std::deque<std::uint8_t> rx_;
  std::deque<std::uint8_t> tx_;
  RttStats stats_;
  // The buffers' places, read at the first stop.
  std::uint32_t up_buf_ = 0, up_size_ = 0, down_buf_ = 0, down_size_ = 0;
  bool have_layout_ = false;
};

}  // namespace mculab::agent
