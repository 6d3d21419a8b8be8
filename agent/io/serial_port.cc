#include "agent/io/serial_port.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace mculab::agent {
namespace {

Result<speed_t> BaudConstant(std::uint32_t baud) {
  switch (baud) {
    case 9600:
      return speed_t{B9600};
    case 19200:
      return speed_t{B19200};
    case 38400:
      return speed_t{B38400};
    case 57600:
      return speed_t{B57600};
    case 115200:
      return speed_t{B115200};
    case 230400:
      return speed_t{B230400};
    case 460800:
      return speed_t{B460800};
    case 921600:
      return speed_t{B921600};
    case 1000000:
      return speed_t{B1000000};
    case 2000000:
      return speed_t{B2000000};
    default:
      return MakeError(ErrorCode::kInvalidArgument,
                       "unsupported baud rate " + std::to_string(baud) +
                           " (9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600, "
                           "1000000, 2000000)");
  }
}

}  // namespace

Result<UniqueFd> OpenSerialPort(const std::filesystem::path& path, std::uint32_t baud) {
  auto speed = BaudConstant(baud);
  if (!speed) return speed.error();
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    return MakeError(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kUnavailable,
                     ErrnoMessage("cannot open serial port " + path.string(), errno));
  }
  termios t{};
  if (::tcgetattr(fd.get(), &t) != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     ErrnoMessage(path.string() + " is not a serial port", errno));
  }
  ::cfmakeraw(&t);
  t.c_cflag |= CLOCAL | CREAD;
  t.c_cflag &= ~(CSTOPB | PARENB | CRTSCTS);
  t.c_cc[VMIN] = 0;
  t.c_cc[VTIME] = 0;
  ::cfsetispeed(&t, *speed);
  ::cfsetospeed(&t, *speed);
  if (::tcsetattr(fd.get(), TCSANOW, &t) != 0) {
    return MakeError(ErrorCode::kUnavailable, ErrnoMessage("tcsetattr " + path.string(), errno));
  }
  ::tcflush(fd.get(), TCIOFLUSH);
  return fd;
}

Result<std::filesystem::path> FindSerialPortBySerial(const std::filesystem::path& by_id_dir,
                                                     const std::string& serial) {
  std::error_code ec;
  std::vector<std::string> all, matches;
  for (const auto& e : std::filesystem::directory_iterator(by_id_dir, ec)) {
    std::string name = e.path().filename().string();
    all.push_back(name);
    if (!serial.empty() && name.find(serial) != std::string::npos) matches.push_back(name);
  }
  std::sort(all.begin(), all.end());
  std::sort(matches.begin(), matches.end());
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& n : v) s += (s.empty() ? "" : ", ") + n;
    return s.empty() ? std::string("none") : s;
  };
  if (matches.empty()) {
    return MakeError(ErrorCode::kNotFound, "no serial port for probe serial " + serial + " in " +
                                               by_id_dir.string() + " (present: " + list(all) +
                                               "); set console = \"/dev/ttyACM0\"");
  }
  if (matches.size() > 1) {
    return MakeError(ErrorCode::kFailedPrecondition, "several serial ports match probe serial " +
                                                         serial + ": " + list(matches) +
                                                         "; set console to the runner's one");
  }
  auto target = std::filesystem::canonical(by_id_dir / matches[0], ec);
  if (ec)
    return MakeError(ErrorCode::kNotFound, "dangling link " + (by_id_dir / matches[0]).string());
  return target;
}

}  // namespace mculab::agent
