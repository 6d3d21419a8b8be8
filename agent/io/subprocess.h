// Subprocess: a child program in its own process group, with optional pipes to its stdin and
// stdout. Killing it kills the whole group (QEMU, a runner and anything they started), and the
// destructor always kills and reaps, so no run can leave a process behind.
//
// Spawning forks and execs with only async-signal-safe calls in between (safe in a program with
// gRPC threads). The child starts with default signal dispositions and an empty signal mask, and
// gets SIGKILL when the thread that spawned it ends (PR_SET_PDEATHSIG): spawn from long-lived
// threads (the agent's board workers), and a killed agent leaves no QEMU or runner behind. It may
// not dump core (RLIMIT_CORE 0). The
// first Spawn makes this process ignore SIGPIPE so that writing to a dead child is an error, not
// a crash.
//
// Thread-safety: Kill() may be called from any thread, including while another thread is in
// Wait(); everything else belongs to one thread at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/io/fd.h"
#include "common/result.h"

namespace mculab::agent {

struct ExitStatus {
  bool exited = true;  // false: ended by a signal
  int code = 0;        // exit code when exited
  int signal = 0;      // the signal otherwise
  bool success() const { return exited && code == 0; }
  std::string ToString() const;  // "exit status 3", "killed by signal 9 (Killed)"
};

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH when it has no '/'
  bool pipe_stdin = false;
  bool pipe_stdout = false;
  bool stderr_to_stdout = false;  // only with pipe_stdout
  // The child's stderr: this open file (RunDir::CreateCapture()), read back through the same
  // descriptor; -1: /dev/null (unless stderr_to_stdout). Never a path: a path in a run's folder is
  // the runner's to replace.
  int stderr_fd = -1;
  // RLIMIT_AS for the child (bytes; 0: none): what a workload of the job's making may allocate.
  std::uint64_t memory_limit = 0;
};

class Subprocess {
 public:
  static Result<std::unique_ptr<Subprocess>> Spawn(const SpawnOptions& options);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  // The parent's ends of the pipes (non-blocking, close-on-exec); invalid when not requested.
  UniqueFd TakeStdin() { return std::move(stdin_); }
  UniqueFd TakeStdout() { return std::move(stdout_); }

  // SIGKILL to the process group. No effect once the child has been reaped.
  void Kill();
  // Waits up to `timeout` for the child to exit and reaps it; kDeadlineExceeded if it is still
  // running. After a successful Wait, further calls return the same status at once.
  Result<ExitStatus> Wait(std::chrono::milliseconds timeout);

 private:
  Subprocess(pid_t pid, UniqueFd pidfd) : pid_(pid), pidfd_(std::move(pidfd)) {}
  bool TryReapLocked();

  const pid_t pid_;
  UniqueFd pidfd_;  // invalid when the kernel has no pidfd_open: Wait then polls waitpid
  UniqueFd stdin_;
  UniqueFd stdout_;
  std::mutex mu_;
  std::optional<ExitStatus> status_;  // set once reaped
};

// Runs a command to completion: what the pyOCD backend needs for flash and memory writes.
struct CommandResult {
  ExitStatus status;
  std::string output;  // stdout and stderr interleaved, the last 64 KiB
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // kDeadlineExceeded (after killing the process group) when it runs longer than `timeout`;
  // kNotFound when the program cannot be started. A non-zero exit is a CommandResult, not an error.
  virtual Result<CommandResult> Run(const std::vector<std::string>& argv,
                                    std::chrono::milliseconds timeout) = 0;
};

ProcessRunner& RealProcessRunner();

// A program's path: `argv0` itself when it has a '/', else the first executable match in PATH.
// kNotFound names what was looked for.
Result<std::string> ResolveProgram(const std::string& argv0);

// `relative` (a file name, or a path like "../lib/x.so") from the folder of the running program,
// when it is a regular file there; "" otherwise. How the agent finds the programs built beside it.
std::filesystem::path BesideThisProgram(const std::filesystem::path& relative);

// Joins argv for logs and messages, quoting arguments with spaces.
std::string JoinArgv(const std::vector<std::string>& argv);

}  // namespace mculab::agent
