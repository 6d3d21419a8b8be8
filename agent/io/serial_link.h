// SerialLink: the runner's link over a serial port (a debug probe's virtual COM port), through
// Boost.Asio's serial_port: raw 8N1 (Asio's open() clears every termios translation), the
// configured baud rate, no flow control. The port is either a fixed path or found under
// /dev/serial/by-id by the probe's USB serial number (FindSerialPortBySerial).
// When the port goes away mid-run (a probe that re-enumerates: its tty hangs up, then comes back,
// possibly under another /dev/ttyACMn that the by-id link follows), Read() reopens it, looking the
// port up again, for up to `reopen_grace`; meanwhile it returns "nothing yet". The bytes in flight
// are lost: the frame codec drops the cut frame and resynchronises at the next delimiter, and the
// runner session decides what the loss means. A port that stays away is kUnavailable.
// Thread-safety: one thread reads and writes; Close() may be called from another thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "agent/io/clock.h"
#include "common/result.h"

namespace mculab::agent {

struct SerialLinkOptions {
  std::filesystem::path path;  // a fixed port; empty: the one under by_id_dir holding `serial`
  std::string serial;          // the probe's USB serial number
  std::filesystem::path by_id_dir = "/dev/serial/by-id";
  std::uint32_t baud = 115200;
  std::chrono::milliseconds reopen_grace{5000};
};

class SerialLink {
 public:
  static Result<std::unique_ptr<SerialLink>> Open(SerialLinkOptions options, Clock& clock);
  ~SerialLink();

  // Up to `timeout` for bytes; 0: none in time (or the port is being reopened); kUnavailable
  // when the port went away and did not come back within the grace.
  Result<std::size_t> Read(std::span<std::uint8_t> buf, std::chrono::milliseconds timeout);
  // kUnavailable when the port is gone, kDeadlineExceeded when the bytes do not go out in time.
  Status Write(std::span<const std::uint8_t> bytes,
               std::chrono::milliseconds timeout = std::chrono::seconds(2));
  // The port open now (after a reopen, possibly another /dev node).
  std::filesystem::path port() const;
  // How many times the port was reopened after going away.
  int reopens() const;

 private:
  class Impl;
  explicit SerialLink(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The port `options` name now: the fixed path, or the by-id lookup.
Result<std::filesystem::path> ResolveSerialPort(const SerialLinkOptions& options);

}  // namespace mculab::agent
