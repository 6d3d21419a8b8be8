// Test helper: a runner as a child process and the agent's end of its link, decoded with
// FrameStream. The host runner talks over pipes; QEMU gets one end of a socketpair as its
// chardev (-chardev socket,fd=N), so there is no socket path to wait for.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/frame_stream.h"
#include "common/runner_messages.h"

extern char** environ;

namespace mculab::test_support {

constexpr int kRunnerTimeoutMs = 30000;

class RunnerLink {
 public:
  // bin/mculab-runner-host [workload]: frames on its stdin/stdout.
  static std::unique_ptr<RunnerLink> SpawnHost(const std::string& runner,
                                               const std::string& workload) {
    std::vector<std::string> argv{runner};
    if (!workload.empty()) argv.push_back(workload);
    int in[2], out[2];
    EXPECT_EQ(pipe2(in, O_CLOEXEC), 0);
    EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
    auto link = std::unique_ptr<RunnerLink>(new RunnerLink());
    link->Spawn(argv, {{in[0], 0}, {out[1], 1}});
    close(in[0]);
    close(out[1]);
    link->to_runner_ = in[1];
    link->from_runner_ = out[0];
    return link;
  }

  // qemu-system-arm -M mps3-an547 with the runner ELF, the workload at 0x60000000 and UART0 on a
  // socketpair.
  // `extra` goes at the end of QEMU's command line (e.g. -plugin lib.so,out=...).
  static std::unique_ptr<RunnerLink> SpawnQemu(const std::string& qemu, const std::string& elf,
                                               const std::string& workload, int icount_shift,
                                               const std::vector<std::string>& extra = {}) {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    // fd 3 in the child: dup2 clears FD_CLOEXEC on the copy.
    std::vector<std::string> argv{qemu,
                                  "-M",
                                  "mps3-an547",
                                  "-kernel",
                                  elf,
                                  "-icount",
                                  "shift=" + std::to_string(icount_shift) + ",sleep=off",
                                  "-sandbox",
                                  "on,obsolete=deny,elevateprivileges=deny,spawn=deny,"
                                  "resourcecontrol=deny",
                                  "-display",
                                  "none",
                                  "-monitor",
                                  "none",
                                  "-chardev",
                                  "socket,id=link,fd=3",
                                  "-serial",
                                  "chardev:link"};
    if (!workload.empty()) {
      argv.push_back("-device");
      argv.push_back("loader,file=" + workload + ",addr=0x60000000");
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto link = std::unique_ptr<RunnerLink>(new RunnerLink());
    link->Spawn(argv, {{sv[1], 3}});
    close(sv[1]);
    link->to_runner_ = sv[0];
    link->from_runner_ = sv[0];
    link->shared_fd_ = true;
    return link;
  }

  // qemu-system-arm -M `machine` (mps2-an500, ...) with the runner ELF, the workload at
  // `workload_addr`, UART0 on a socketpair, no semihosting (the runner parks its core after DONE)
  // and QEMU's seccomp sandbox.
  static std::unique_ptr<RunnerLink> SpawnQemuMachine(
      const std::string& qemu, const std::string& machine, const std::string& elf,
      const std::string& workload, std::uint32_t workload_addr, int icount_shift) {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    std::vector<std::string> argv{
        qemu,
        "-M",
        machine,
        "-kernel",
        elf,
        "-icount",
        "shift=" + std::to_string(icount_shift) + ",sleep=off",
        "-sandbox",
        "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
        "-display",
        "none",
        "-monitor",
        "none",
        "-chardev",
        "socket,id=link,fd=3",
        "-serial",
        "chardev:link"};
    if (!workload.empty()) {
      char addr[16];
      snprintf(addr, sizeof addr, "0x%08x", workload_addr);
      argv.push_back("-device");
      argv.push_back("loader,file=" + workload + ",addr=" + addr);
    }
    auto link = std::unique_ptr<RunnerLink>(new RunnerLink());
    link->Spawn(argv, {{sv[1], 3}});
    close(sv[1]);
    link->to_runner_ = sv[0];
    link->from_runner_ = sv[0];
    link->shared_fd_ = true;
    return link;
  }

  // True while the runner process has not exited (a parked emulated core keeps QEMU running).
  bool Running() {
    int status = 0;
    if (exited_ || waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      return false;
    }
    return true;
  }

  ~RunnerLink() {
    CloseInput();
    if (from_runner_ >= 0) close(from_runner_);
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  void Send(const Bytes& b) {
    ASSERT_EQ(write(to_runner_, b.data(), b.size()), static_cast<ssize_t>(b.size()));
  }

  void CloseInput() {
    if (shared_fd_) {
      if (to_runner_ >= 0) shutdown(to_runner_, SHUT_WR);
    } else if (to_runner_ >= 0) {
      close(to_runner_);
    }
    to_runner_ = -1;
  }

  // How long Next() waits for a frame (kRunnerTimeoutMs unless set): a test whose one iteration
  // emulates hundreds of millions of instructions gives it more, as the machine may be loaded.
  void SetFrameTimeoutMs(int ms) { frame_timeout_ms_ = ms; }

  // The next event from the runner; nullopt at end of stream or after the timeout.
  std::optional<FrameEvent> Next() {
    for (;;) {
      if (auto ev = stream_.Next()) return ev;
      pollfd p{from_runner_, POLLIN, 0};
      if (poll(&p, 1, frame_timeout_ms_) <= 0) {
        ADD_FAILURE() << "no frame from the runner within " << frame_timeout_ms_ << " ms";
        return std::nullopt;
      }
      std::uint8_t buf[4096];
      const ssize_t n = read(from_runner_, buf, sizeof buf);
      if (n <= 0) return std::nullopt;
      stream_.Feed(std::span<const std::uint8_t>(buf, static_cast<size_t>(n)));
    }
  }

  // The next frame, which must be a good one of `type`; its payload.
  Bytes Expect(std::uint8_t type) {
    auto ev = Next();
    if (!ev) {
      ADD_FAILURE() << "stream ended, expected " << mculab_msg_type_name(type);
      return {};
    }
    EXPECT_TRUE(ev->ok()) << ev->Describe();
    EXPECT_EQ(ev->type, type) << "got " << ev->Describe() << ", expected "
                              << mculab_msg_type_name(type);
    return ev->payload;
  }

  // Exit status (128 + signal when killed), -1 after the timeout.
  // For an emulated board: after DONE the runner parks its core (no semihosting to exit with), so
  // QEMU must still be running; then it is stopped as the agent stops it. True when it was.
  bool StopParked() {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      ADD_FAILURE() << "QEMU exited by itself after DONE (status " << status
                    << "): the runner must park, not exit the emulation";
      return false;
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    exited_ = true;
    return true;
  }

  int Wait() {
    int status = 0;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kRunnerTimeoutMs);
    for (;;) {
      const pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) break;
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "runner did not exit";
        return -1;
      }
      poll(nullptr, 0, 5);
    }
    exited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  const FrameStream& stream() const { return stream_; }

 private:
  RunnerLink() { signal(SIGPIPE, SIG_IGN); }

  void Spawn(std::vector<std::string> argv, std::vector<std::pair<int, int>> fds) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    for (auto [from, to] : fds) posix_spawn_file_actions_adddup2(&fa, from, to);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    const int rc = posix_spawn(&pid_, argv[0].c_str(), &fa, nullptr, args.data(), environ);
    EXPECT_EQ(rc, 0) << "spawning " << argv[0] << ": " << strerror(rc);
    posix_spawn_file_actions_destroy(&fa);
  }

  pid_t pid_ = -1;
  bool exited_ = false;
  bool shared_fd_ = false;
  int to_runner_ = -1;
  int from_runner_ = -1;
  int frame_timeout_ms_ = kRunnerTimeoutMs;
  FrameStream stream_{FrameSender::kRunner};
};

// A scratch path of this test process: ctest runs tests in parallel processes that share
// TempDir(), and two tests writing "calibrate.bin" at once would swap workloads.
inline std::string ScratchPath(const std::string& name) {
  return ::testing::TempDir() + "/mculab-" + std::to_string(getpid()) + "-" + name;
}

inline std::string WriteFile(const std::string& name, const Bytes& bytes) {
  const std::string path = ScratchPath(name);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  return path;
}

}  // namespace mculab::test_support
