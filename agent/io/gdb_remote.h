// GdbRemote: a client of the GDB remote serial protocol over TCP (Boost.Asio) or a unix socket, for
// every GDB server a lab meets: pyOCD, OpenOCD, J-Link's, QEMU's gdbstub. No gdb binary.
//
// The wire: packets `$payload#cs` (cs: the payload's byte sum mod 256 in two hex digits), each
// acknowledged with `+` (or `-`: send again) until QStartNoAckMode is accepted. Replies may be
// run-length encoded (`x*n`: n-29 more x) and binary data escaped (`}` then the byte ^ 0x20, for
// `}`, `#`, `$`, `*`). `E NN` replies become errors naming the request.
//
// Every call takes its time from the `timeout` given at Connect (per call) and measures it on the
// injected clock; the socket waits run in slices so a fake clock ends them as soon as it passes the
// deadline. Errors: kDeadlineExceeded (no reply in time), kUnavailable (connection lost or
// refused), kDataLoss (a corrupt packet in no-ack mode, or too many bad checksums),
// kFailedPrecondition (the server answered `E NN` or does not support the request).
//
// Thread-safety: one thread at a time, except Interrupt(), which only sends the break byte and may
// be called from another thread while a call waits for a stop.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agent/io/clock.h"
#include "agent/io/fd.h"
#include "common/result.h"

namespace mculab::agent {

// One register of the target description (<reg name= bitsize= regnum=>).
struct GdbRegister {
  std::string name;
  int regnum = 0;
  int bitsize = 32;
};

// One region of the memory map (qXfer:memory-map:read).
struct GdbMemoryRegion {
  enum class Type { kRam, kRom, kFlash };
  Type type = Type::kRam;
  std::uint64_t start = 0;
  std::uint64_t length = 0;
  std::uint64_t blocksize = 0;  // flash erase unit
  bool Contains(std::uint64_t addr) const { return addr >= start && addr - start < length; }
};

// Why the target stopped: `S05`, `T05thread:01;...`, `W00` (exited), `X09` (killed).
struct GdbStopReply {
  char kind = 'S';
  int signal = 0;
  std::string raw;
  bool exited() const { return kind == 'W' || kind == 'X'; }
};

// Pure protocol helpers (unit-tested on their own).
std::string GdbChecksum(std::string_view payload);  // two lowercase hex digits
std::string GdbFrame(std::string_view payload);     // $payload#cs
std::string GdbEscapeBinary(std::span<const std::uint8_t> data);
// Undoes run-length encoding and binary escapes of a received payload.
Result<std::string> GdbDecodePayload(std::string_view raw);
std::string GdbHex(std::span<const std::uint8_t> data);
// The CRC-32 of `qCRC` (GDB's compare-sections): polynomial 0x04c11db7, MSB first, initial value
// 0xffffffff, no final inversion.
std::uint32_t GdbCrc32(std::span<const std::uint8_t> data);
Result<std::vector<std::uint8_t>> GdbUnhex(std::string_view hex);
// Registers of a target description document in order; `include` fetches an xi:include'd file.
Result<std::vector<GdbRegister>> GdbParseRegisters(
    std::string_view xml, const std::function<Result<std::string>(const std::string&)>& include);
Result<std::vector<GdbMemoryRegion>> GdbParseMemoryMap(std::string_view xml);
Result<GdbStopReply> GdbParseStopReply(std::string_view payload);
// The start of a packet for messages (40 characters, binary bytes as '.').
std::string Printable(std::string_view payload);

class GdbRemote;

// Connects to a GDB server that is still starting: retries while the port refuses, every few
// milliseconds (on `clock`) for at most `timeout`, and gives up early when `keep_trying` returns
// false (the server process died). `call_timeout` becomes the connection's per-call timeout.
Result<std::unique_ptr<GdbRemote>> ConnectGdbWhenUp(const std::string& host, std::uint16_t port,
                                                    std::chrono::milliseconds timeout,
                                                    std::chrono::milliseconds call_timeout,
                                                    Clock& clock,
                                                    const std::function<bool()>& keep_trying = {});

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
Result<std::uint16_t> FreeLocalTcpPort();

class GdbRemote {
 public:
  // Connects to host:port and does the handshake (qSupported, QStartNoAckMode when offered).
  static Result<std::unique_ptr<GdbRemote>> Connect(const std::string& host, std::uint16_t port,
                                                    std::chrono::milliseconds timeout,
                                                    Clock& clock);
  // Takes a connected stream socket (e.g. a unix socket to QEMU's `-gdb chardev:...`) and does
  // the handshake.
  static Result<std::unique_ptr<GdbRemote>> Adopt(UniqueFd fd, std::chrono::milliseconds timeout,
                                                  Clock& clock);
  ~GdbRemote();
  GdbRemote(const GdbRemote&) = delete;
  GdbRemote& operator=(const GdbRemote&) = delete;

  // Sends one packet and returns the decoded reply payload ("E NN" is an error).
  Result<std::string> Request(std::string_view payload);
  // Sends one packet without waiting for a reply (continue); acked in ack mode.
  Status Send(std::string_view payload);

  std::size_t packet_size() const { return packet_size_; }
  // Packets sent so far (requests and sends), for benchmarks.
  std::uint64_t packets_sent() const { return packets_sent_; }
  bool no_ack() const { return no_ack_; }
  const std::string& supported() const { return supported_; }

  // qXfer:<object>:read:<annex>, all chunks joined.
  Result<std::string> ReadXfer(const std::string& object, const std::string& annex);
  // The target description's registers (target.xml and its includes), cached.
  Result<std::vector<GdbRegister>> Registers();
  Result<GdbRegister> FindRegister(const std::string& name);
  // The memory map; an empty list when the server offers none (QEMU).
  Result<std::vector<GdbMemoryRegion>> MemoryMap();

  Result<std::vector<std::uint8_t>> ReadMemory(std::uint64_t addr, std::size_t length);
  // `X` binary writes, chunked to the packet size (`M` hex writes when X is not supported). In
  // no-ack mode (or with pipeline_with_acks), once the server's answer to the first `X` is known,
  // every chunk is sent before any reply is read (the replies come back in order): a load is one
  // burst, not one round trip per chunk.
  Status WriteMemory(std::uint64_t addr, std::span<const std::uint8_t> data);
  // WriteMemory, then Continue(); when the chunks are pipelined the continue goes in the same
  // burst, so the server starts the target as soon as it has the data (one round trip in all).
  // Pipelined with `await_replies` false, it returns once the burst is written and the target
  // may run before the writes' replies are read: the next call that reads from the server
  // (Request, WaitForStop, Monitor, a write) reads them first and fails with any error they hold.
  Status WriteMemoryAndContinue(std::uint64_t addr, std::span<const std::uint8_t> data,
                                bool await_replies = true);
  // `P` by the target description's number (`g`/`G` when P is not supported).
  Status WriteRegister(const std::string& name, std::uint64_t value);
  Result<std::uint64_t> ReadRegister(const std::string& name);

  // Resumes the target (`vCont;c` when offered, else `c`); the stop comes from WaitForStop.
  Status Continue();
  // Asks now what Continue() would ask first (vCont?), so that Continue() is one packet.
  Status PrepareContinue();
  // Waits up to `timeout` for a stop reply (console `O` packets are skipped).
  Result<GdbStopReply> WaitForStop(std::chrono::milliseconds timeout);
  // Sends the break byte (0x03). Safe from another thread.
  Status Interrupt();
  // Interrupt() then WaitForStop with the call timeout.
  Result<GdbStopReply> Halt();
  // Why the target is stopped (`?`).
  Result<GdbStopReply> QueryStop();

  // type 0: software, 1: hardware breakpoint; kind: 2 for Thumb.
  Status InsertBreakpoint(int type, std::uint64_t addr, int kind = 2);
  Status RemoveBreakpoint(int type, std::uint64_t addr, int kind = 2);

  // qRcmd (`monitor reset halt`): the command's console output.
  Result<std::string> Monitor(const std::string& command);

  // The target's CRC of a memory range (`qCRC`); nullopt when the server does not offer it.
  Result<std::optional<std::uint32_t>> Crc32(std::uint64_t addr, std::uint64_t length);

  Status FlashErase(std::uint64_t addr, std::uint64_t length);
  Status FlashWrite(std::uint64_t addr, std::span<const std::uint8_t> data);
  Status FlashDone();

  // Pipeline writes in ack mode too, leaving the replies to pipelined packets unacknowledged: for
  // QEMU's system-emulation gdbstub, which offers no no-ack mode, acks each packet as it reads it,
  // never waits for our acks, and takes any byte that comes while the target runs for a break (so
  // an ack sent after a pipelined continue would stop the target). A '-' for a pipelined packet
  // surfaces as a timeout.
  void set_pipeline_with_acks(bool on) { pipeline_with_acks_ = on; }

  // Per-call timeout (default: the one given at Connect).
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  struct Transport;

 private:
  GdbRemote(std::unique_ptr<Transport> t, std::chrono::milliseconds timeout, Clock& clock);
  Status Handshake();
  Status SendPacket(std::string_view payload, Clock::TimePoint deadline);
  // Reads one packet; acks it in ack mode unless `ack` is false.
  Result<std::string> ReadPacket(Clock::TimePoint deadline, bool ack = true);
  Result<std::uint8_t> ReadByte(Clock::TimePoint deadline);
  Status WriteRaw(std::string_view bytes);
  Error ReplyError(std::string_view request, std::string_view reply) const;
  Status ExpectOk(std::string_view request);
  Status WriteRegisterG(const GdbRegister& reg, std::uint64_t value);
  // WriteMemory, then `then` (a packet with no reply; empty: none); see WriteMemoryAndContinue.
  Status WriteMemoryThen(std::uint64_t addr, std::span<const std::uint8_t> data,
                         std::string_view then, bool await_replies);
  // Reads the replies to pipelined writes not read yet; an error in one breaks the connection.
  Status ReadUnread();
  // The `X` (or, without X, `M`) request for as much of `data` (written at `addr`) as fits one
  // packet; `taken` is how many bytes it holds.
  std::string WriteChunk(std::uint64_t addr, std::span<const std::uint8_t> data,
                         std::size_t& taken) const;

  std::unique_ptr<Transport> t_;
  std::chrono::milliseconds timeout_;
  Clock& clock_;
  std::mutex write_mu_;
  bool no_ack_ = false;
  bool pipeline_with_acks_ = false;
  std::vector<std::string> unread_;  // pipelined writes whose replies are not read yet
  std::size_t packet_size_ = 400;
  std::uint64_t packets_sent_ = 0;
  std::string supported_;
  std::optional<bool> x_supported_;
  std::optional<bool> p_supported_;
  std::optional<bool> vcont_c_;
  std::string broken_;  // set when a request failed mid-way: every later request fails with it
  std::optional<std::vector<GdbRegister>> registers_;
};

}  // namespace mculab::agent
