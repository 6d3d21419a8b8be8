#include "agent/io/fd.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace mculab::agent {

void UniqueFd::Reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

std::string ErrnoMessage(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

Status SetNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return MakeError(ErrorCode::kInternal, ErrnoMessage("fcntl(O_NONBLOCK)", errno));
  }
  return {};
}

Result<std::size_t> ReadSome(int fd, std::span<std::uint8_t> buf,
                             std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  int r;
  do {
    r = ::poll(&p, 1, static_cast<int>(timeout.count()));
  } while (r < 0 && errno == EINTR);
  if (r < 0) return MakeError(ErrorCode::kInternal, ErrnoMessage("poll", errno));
  if (r == 0) return std::size_t{0};
  ssize_t n;
  do {
    n = ::read(fd, buf.data(), buf.size());
  } while (n < 0 && errno == EINTR);
  if (n > 0) return static_cast<std::size_t>(n);
  if (n == 0) return MakeError(ErrorCode::kUnavailable, "end of stream");
  if (errno == EAGAIN || errno == EWOULDBLOCK) return std::size_t{0};
  if (errno == ECONNRESET || errno == EIO) {
    return MakeError(ErrorCode::kUnavailable, ErrnoMessage("read", errno));
  }
  return MakeError(ErrorCode::kInternal, ErrnoMessage("read", errno));
}

Status WriteAll(int fd, std::span<const std::uint8_t> data, std::chrono::milliseconds timeout) {
  // Sockets get MSG_NOSIGNAL; pipes rely on SIGPIPE being ignored (see subprocess.cc).
  struct stat st {};
  const bool is_socket = ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = is_socket ? ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL)
                          : ::write(fd, data.data() + done, data.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        return MakeError(ErrorCode::kDeadlineExceeded,
                         "the runner stopped reading (write timed out)");
      }
      pollfd p{fd, POLLOUT, 0};
      int r = ::poll(&p, 1, static_cast<int>(left.count()));
      if (r < 0 && errno != EINTR) {
        return MakeError(ErrorCode::kInternal, ErrnoMessage("poll", errno));
      }
      continue;
    }
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET || errno == EIO)) {
      return MakeError(ErrorCode::kUnavailable, ErrnoMessage("write", errno));
    }
    return MakeError(ErrorCode::kInternal, ErrnoMessage("write", errno));
  }
  return {};
}

}  // namespace mculab::agent
