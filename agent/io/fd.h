// UniqueFd: owns one file descriptor and closes it. Byte I/O with timeouts over a descriptor.
// Thread-safety: a UniqueFd is a value; the I/O functions are safe to call on distinct fds from
// distinct threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "common/result.h"

namespace mculab::agent {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Waits up to `timeout` for bytes on fd and reads what is there (at most buf.size()).
// Returns the count read, 0 when nothing arrived in time, kUnavailable at end of stream (the peer
// closed or the process exited) and kInternal on other errors.
Result<std::size_t> ReadSome(int fd, std::span<std::uint8_t> buf,
                             std::chrono::milliseconds timeout);

// Writes all of `data`, waiting up to `timeout` in total for the peer to take it.
// kUnavailable when the peer is gone, kDeadlineExceeded when it stops reading.
Status WriteAll(int fd, std::span<const std::uint8_t> data, std::chrono::milliseconds timeout);

Status SetNonBlocking(int fd);

// "what: strerror(errno)" for messages.
std::string ErrnoMessage(const std::string& what, int err);

}  // namespace mculab::agent
