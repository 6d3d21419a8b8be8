// mculab-fvp-relay: runs an Arm FVP inside the job sandbox and carries its UART to the agent.
//
//   mculab-fvp-relay --socket PATH [--terminal telnetterminal0] [--start-timeout-s 60] -- FVP
//   ARGS...
//
// The FVP offers its UARTs only as TCP ports ("telnetterminal0: Listening for serial connection on
// port 5000" on its stdout), and the job sandbox has no network the agent can reach: a new network
// namespace with only its own loopback. So this relay runs inside the sandbox next to the FVP: it
// starts the FVP, reads that line, connects to the port on the sandbox's loopback, and only then
// listens on the unix socket PATH (in the run's folder, which the agent sees); it serves the one
// connection the agent makes and copies bytes both ways. Everything else the FVP prints is copied
// to stderr (the run's diagnostics). The port is read from the line, not assumed, so a busy port
// (sandbox off) is handled.
//
// Exit: the FVP's own exit code when it ends; 3 when the FVP ended or failed before its UART was
// reachable; 4 on a start-up timeout; 2 on a bad command line. Messages start "mculab-fvp-relay:".
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int kExitBadUsage = 2;
constexpr int kExitNoUart = 3;
constexpr int kExitTimeout = 4;

pid_t g_fvp = -1;

[[noreturn]] void Die(int code, const std::string& msg) {
  std::fprintf(stderr, "mculab-fvp-relay: %s\n", msg.c_str());
  if (g_fvp > 0) {
    ::kill(g_fvp, SIGKILL);
    ::waitpid(g_fvp, nullptr, 0);
  }
  std::exit(code);
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

double Now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// A new network namespace (sandbox mode "namespaces") starts with loopback down; bubblewrap brings
// it up itself. Bringing it up needs CAP_NET_ADMIN in the namespace: when that is missing, the
// connect below fails and says so.
void BringLoopbackUp() {
  int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return;
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  if (::ioctl(s, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP);
    (void)::ioctl(s, SIOCSIFFLAGS, &ifr);
  }
  ::close(s);
}

std::string ExitText(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

int ConnectLoopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Die(kExitNoUart, Errno("socket"));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    const int err = errno;
    std::string msg = "cannot connect to the FVP's UART on 127.0.0.1:" + std::to_string(port) +
                      ": " + std::strerror(err);
    if (err == ENETUNREACH || err == EADDRNOTAVAIL) {
      msg +=
          " (loopback is down in this sandbox and the relay may not bring it up: use [sandbox] "
          "mode = \"bwrap\", which gives the sandbox its own working loopback)";
    }
    Die(kExitNoUart, msg);
  }
  return fd;
}

int ListenUnix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Die(kExitNoUart, Errno("socket"));
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof(a.sun_path)) Die(kExitBadUsage, "socket path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || ::listen(fd, 1) != 0) {
    Die(kExitNoUart, Errno("listening on " + path));
  }
  return fd;
}

// Copies what is readable on `from` to `to`; false at end of stream or on an error.
bool Pump(int from, int to) {
  char buf[4096];
  ssize_t n = ::read(from, buf, sizeof(buf));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  for (ssize_t off = 0; off < n;) {
    ssize_t w = ::write(to, buf + off, static_cast<std::size_t>(n - off));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) {
      pollfd p{to, POLLOUT, 0};
      ::poll(&p, 1, 1000);
      continue;
    }
    if (w <= 0) return false;
    off += w;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket_path, terminal = "telnetterminal0";
  double start_timeout = 60;
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) Die(kExitBadUsage, "option " + a + " needs a value");
    if (a == "--socket") {
      socket_path = argv[++i];
    } else if (a == "--terminal") {
      terminal = argv[++i];
    } else if (a == "--start-timeout-s") {
      start_timeout = std::atof(argv[++i]);
    } else {
      Die(kExitBadUsage, "unknown option " + a +
                             " (usage: mculab-fvp-relay --socket PATH [--terminal NAME] "
                             "[--start-timeout-s N] -- FVP ARGS...)");
    }
  }
  if (socket_path.empty() || i >= argc || start_timeout <= 0) {
    Die(kExitBadUsage,
        "usage: mculab-fvp-relay --socket PATH [--terminal NAME] "
        "[--start-timeout-s N] -- FVP ARGS...");
  }
  ::signal(SIGPIPE, SIG_IGN);
  BringLoopbackUp();

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) Die(kExitNoUart, Errno("pipe"));
  g_fvp = ::fork();
  if (g_fvp < 0) Die(kExitNoUart, Errno("fork"));
  if (g_fvp == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(out[1], STDOUT_FILENO);
    ::execvp(argv[i], argv + i);
    std::fprintf(stderr, "mculab-fvp-relay: cannot run the FVP %s: %s\n", argv[i],
                 std::strerror(errno));
    ::_exit(127);
  }
  ::close(out[1]);
  const int fvp_out = out[0];

  // Start-up: the FVP's stdout, line by line, until our terminal's port is announced.
  const std::string marker = terminal + ": Listening for serial connection on port ";
  const double deadline = Now() + start_timeout;
  std::string line;
  int port = -1;
  bool fvp_out_open = true;
  while (port < 0) {
    const double left = deadline - Now();
    if (left <= 0) {
      Die(kExitTimeout, "the FVP did not announce " + terminal + "'s port in " +
                            std::to_string(static_cast<int>(start_timeout)) + " s");
    }
    pollfd p{fvp_out, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char c;
    ssize_t n = ::read(fvp_out, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int status = 0;
      ::waitpid(g_fvp, &status, 0);
      g_fvp = -1;
      if (!line.empty()) std::fprintf(stderr, "%s\n", line.c_str());
      Die(kExitNoUart,
          "the FVP ended (" + ExitText(status) + ") before " + terminal + " was listening");
    }
    if (c != '\n') {
      line += c;
      continue;
    }
    std::fprintf(stderr, "%s\n", line.c_str());
    if (line.rfind(marker, 0) == 0) port = std::atoi(line.c_str() + marker.size());
    line.clear();
  }
  if (port <= 0 || port > 65535) Die(kExitNoUart, "the FVP announced an invalid port");
  const int uart = ConnectLoopback(port);
  const int listener = ListenUnix(socket_path);
  std::fprintf(stderr, "mculab-fvp-relay: %s on 127.0.0.1:%d relayed to %s\n", terminal.c_str(),
               port, socket_path.c_str());

  int agent = -1;
  for (;;) {
    std::vector<pollfd> fds;
    fds.push_back({agent < 0 ? listener : agent, POLLIN, 0});
    fds.push_back({uart, static_cast<short>(agent < 0 ? 0 : POLLIN), 0});
    if (fvp_out_open) fds.push_back({fvp_out, POLLIN, 0});
    int r = ::poll(fds.data(), fds.size(), 200);
    if (r < 0 && errno != EINTR) Die(kExitNoUart, Errno("poll"));
    int status = 0;
    if (::waitpid(g_fvp, &status, WNOHANG) == g_fvp) {
      g_fvp = -1;
      std::fprintf(stderr, "mculab-fvp-relay: the FVP ended (%s)\n", ExitText(status).c_str());
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (r <= 0) continue;
    if (fds[0].revents) {
      if (agent < 0) {
        agent = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (agent < 0 && errno != EINTR && errno != EAGAIN) Die(kExitNoUart, Errno("accept"));
      } else if (!Pump(agent, uart)) {
        Die(0, "the agent closed the link");
      }
    }
    if (fds[1].revents && !Pump(uart, agent)) Die(0, "the FVP closed its UART");
    if (fvp_out_open && fds.size() > 2 && fds[2].revents && !Pump(fvp_out, STDERR_FILENO)) {
      fvp_out_open = false;
    }
  }
}
