#include "agent/io/unix_socket.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

namespace mculab::agent {

Result<UniqueFd> ConnectUnixSocket(const std::filesystem::path& path,
                                   std::chrono::milliseconds timeout, Clock& clock,
                                   const std::function<bool()>& keep_trying) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string p = path.string();
  if (p.size() >= sizeof(addr.sun_path)) {
    return MakeError(ErrorCode::kInvalidArgument, "socket path too long: " + p);
  }
  std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
  const auto deadline = clock.Now() + timeout;
  int last_err = 0;
  for (;;) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return MakeError(ErrorCode::kInternal, ErrnoMessage("socket", errno));
    int r;
    do {
      r = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
    } while (r < 0 && errno == EINTR);
    if (r == 0) {
      if (auto s = SetNonBlocking(fd.get()); !s) return s.error();
      return fd;
    }
    last_err = errno;
    if (last_err != ENOENT && last_err != ECONNREFUSED && last_err != EAGAIN) {
      return MakeError(ErrorCode::kUnavailable, ErrnoMessage("connect " + p, last_err));
    }
    if (keep_trying && !keep_trying()) {
      return MakeError(ErrorCode::kUnavailable,
                       "gave up connecting to " + p + ": the listening process is gone");
    }
    if (clock.Now() >= deadline) {
      return MakeError(
          ErrorCode::kDeadlineExceeded,
          ErrnoMessage("no listener on " + p + " after " + std::to_string(timeout.count()) + " ms",
                       last_err));
    }
    clock.SleepFor(std::chrono::milliseconds(2));
  }
}

}  // namespace mculab::agent
