#include "agent/io/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

extern char** environ;

namespace mculab::agent {
namespace {

void IgnoreSigpipeOnce() {
  static std::once_flag once;
  std::call_once(once, [] { ::signal(SIGPIPE, SIG_IGN); });
}

Status MakePipe(UniqueFd& read_end, UniqueFd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return MakeError(ErrorCode::kInternal, ErrnoMessage("pipe2", errno));
  }
  read_end.Reset(fds[0]);
  write_end.Reset(fds[1]);
  return {};
}

ExitStatus FromWaitStatus(int ws) {
  ExitStatus s;
  if (WIFEXITED(ws)) {
    s.exited = true;
    s.code = WEXITSTATUS(ws);
  } else {
    s.exited = false;
    s.signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
  }
  return s;
}

[[noreturn]] void ChildFail(int status_fd, int err) {
  (void)!::write(status_fd, &err, sizeof(err));
  ::_exit(127);
}

// In the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void ChildExec(const char* path, char* const* argv, pid_t parent, int in_fd,
                            int out_fd, bool err_to_out, int err_in, rlim_t memory_limit,
                            int status_fd) {
  auto fail = [status_fd](int err) { ChildFail(status_fd, err); };
  ::setpgid(0, 0);
  // Killed with the agent's spawning thread (a worker lives as long as the agent), so that an agent
  // killed with -9 leaves no QEMU or runner behind.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  // A crashing runner or emulator must not fill the disk with core files.
  const struct rlimit no_core { 0, 0 };
  ::setrlimit(RLIMIT_CORE, &no_core);
  if (memory_limit != 0) {
    const struct rlimit as { memory_limit, memory_limit };
    if (::setrlimit(RLIMIT_AS, &as) != 0) fail(errno);
  }
  int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) fail(errno);
  if (::dup2(in_fd >= 0 ? in_fd : devnull, 0) < 0) fail(errno);
  if (::dup2(out_fd >= 0 ? out_fd : devnull, 1) < 0) fail(errno);
  int err_fd = devnull;
  if (err_to_out) {
    err_fd = 1;
  } else if (err_in >= 0) {
    err_fd = err_in;
  }
  if (::dup2(err_fd, 2) < 0) fail(errno);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execve(path, argv, environ);
  ChildFail(status_fd, errno);
}

}  // namespace

Result<std::string> ResolveProgram(const std::string& argv0) {
  if (argv0.find('/') != std::string::npos) {
    if (::access(argv0.c_str(), X_OK) != 0) {
      return MakeError(ErrorCode::kNotFound, ErrnoMessage("cannot start " + argv0, errno));
    }
    return argv0;
  }
  const char* path_env = std::getenv("PATH");
  std::string path = path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
  std::size_t pos = 0;
  while (pos <= path.size()) {
    std::size_t end = path.find(':', pos);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(pos, end - pos);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + argv0;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    pos = end + 1;
  }
  return MakeError(ErrorCode::kNotFound, "cannot start " + argv0 + ": not found in PATH");
}

std::filesystem::path BesideThisProgram(const std::filesystem::path& relative) {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  auto p = (exe.parent_path() / relative).lexically_normal();
  return std::filesystem::is_regular_file(p, ec) ? p : std::filesystem::path();
}

std::string ExitStatus::ToString() const {
  if (exited) return "exit status " + std::to_string(code);
  return "killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
}

std::string JoinArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    if (a.empty() || a.find_first_of(" \t\"'") != std::string::npos) {
      out += '\'' + a + '\'';
    } else {
      out += a;
    }
  }
  return out;
}

Result<std::unique_ptr<Subprocess>> Subprocess::Spawn(const SpawnOptions& options) {
  if (options.argv.empty()) return MakeError(ErrorCode::kInvalidArgument, "empty command line");
  IgnoreSigpipeOnce();

  UniqueFd in_read, in_write, out_read, out_write;
  if (options.pipe_stdin) {
    if (auto s = MakePipe(in_read, in_write); !s) return s.error();
  }
  if (options.pipe_stdout) {
    if (auto s = MakePipe(out_read, out_write); !s) return s.error();
  }

  auto program = ResolveProgram(options.argv[0]);
  if (!program) return program.error();
  std::vector<char*> argv;
  argv.reserve(options.argv.size() + 1);
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  UniqueFd status_read, status_write;
  if (auto s = MakePipe(status_read, status_write); !s) return s.error();

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return MakeError(ErrorCode::kInternal, ErrnoMessage("fork", errno));
  if (pid == 0) {
    ChildExec(program->c_str(), argv.data(), parent, in_read.get(), out_write.get(),
              options.pipe_stdout && options.stderr_to_stdout, options.stderr_fd,
              static_cast<rlim_t>(options.memory_limit), status_write.get());
  }
  status_write.Reset();
  in_read.Reset();
  out_write.Reset();
  // The status pipe closes on exec (success) or carries the child's errno (failure).
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(status_read.get(), &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  if (n == sizeof(child_errno)) {
    int ws = 0;
    while (::waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    return MakeError(child_errno == ENOENT || child_errno == EACCES ? ErrorCode::kNotFound
                                                                    : ErrorCode::kInternal,
                     ErrnoMessage("cannot start " + options.argv[0], child_errno));
  }
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  std::unique_ptr<Subprocess> p(new Subprocess(pid, std::move(pidfd)));
  if (options.pipe_stdin) {
    if (auto s = SetNonBlocking(in_write.get()); !s) return s.error();
    p->stdin_ = std::move(in_write);
  }
  if (options.pipe_stdout) {
    if (auto s = SetNonBlocking(out_read.get()); !s) return s.error();
    p->stdout_ = std::move(out_read);
  }
  return p;
}

Subprocess::~Subprocess() {
  Kill();
  (void)Wait(std::chrono::hours(24));
}

void Subprocess::Kill() {
  std::lock_guard lock(mu_);
  // Until reaped the pid (and so the group id) cannot be reused, so this never hits a stranger.
  if (!status_) ::killpg(pid_, SIGKILL);
}

bool Subprocess::TryReapLocked() {
  if (status_) return true;
  int ws = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &ws, WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == pid_) {
    status_ = FromWaitStatus(ws);
    return true;
  }
  if (r < 0 && errno == ECHILD) {  // reaped elsewhere: nothing more to know
    status_ = ExitStatus{false, 0, 0};
    return true;
  }
  return false;
}

Result<ExitStatus> Subprocess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (TryReapLocked()) return *status_;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return MakeError(ErrorCode::kDeadlineExceeded,
                       "process " + std::to_string(pid_) + " still running");
    }
    if (pidfd_.valid()) {
      pollfd p{pidfd_.get(), POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(left.count()));
    } else {
      std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(2)));
    }
  }
}

namespace {

class PosixProcessRunner final : public ProcessRunner {
 public:
  Result<CommandResult> Run(const std::vector<std::string>& argv,
                            std::chrono::milliseconds timeout) override {
    SpawnOptions o;
    o.argv = argv;
    o.pipe_stdout = true;
    o.stderr_to_stdout = true;
    auto proc = Subprocess::Spawn(o);
    if (!proc) return proc.error();
    UniqueFd out = (*proc)->TakeStdout();
    constexpr std::size_t kKeep = 64 * 1024;
    CommandResult result;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::uint8_t buf[4096];
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        (*proc)->Kill();
        return MakeError(ErrorCode::kDeadlineExceeded, JoinArgv(argv) + " did not finish within " +
                                                           std::to_string(timeout.count()) + " ms");
      }
      auto n = ReadSome(out.get(), buf, left);
      if (!n) break;  // end of output
      result.output.append(reinterpret_cast<const char*>(buf), *n);
      if (result.output.size() > 2 * kKeep) result.output.erase(0, result.output.size() - kKeep);
    }
    if (result.output.size() > kKeep) result.output.erase(0, result.output.size() - kKeep);
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    auto status = (*proc)->Wait(std::max(left, std::chrono::milliseconds(0)));
    if (!status) {
      (*proc)->Kill();
      return MakeError(ErrorCode::kDeadlineExceeded,
                       JoinArgv(argv) + " closed its output but did not exit in time");
    }
    result.status = *status;
    return result;
  }
};

}  // namespace

ProcessRunner& RealProcessRunner() {
  static PosixProcessRunner runner;
  return runner;
}

}  // namespace mculab::agent
