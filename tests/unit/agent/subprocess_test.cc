#include "agent/io/subprocess.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "agent/io/reaper.h"
#include "agent/io/run_dir.h"
#include "agent/io/temp_dir.h"
#include "agent/io/unix_socket.h"

namespace mculab::agent {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Subprocess> Spawn(std::vector<std::string> argv, bool pipes = false) {
  SpawnOptions o;
  o.argv = std::move(argv);
  o.pipe_stdin = pipes;
  o.pipe_stdout = pipes;
  auto p = Subprocess::Spawn(o);
  EXPECT_TRUE(p.ok()) << p.error().message;
  return p.ok() ? std::move(*p) : nullptr;
}

// The child's stderr goes to the descriptor it is given, and is read back through it.
TEST(Subprocess, WritesStderrToTheGivenDescriptor) {
  auto dir = RunDir::Create("mculab-stderr-test-");
  ASSERT_TRUE(dir.ok());
  auto capture = (*dir)->CreateCapture();
  ASSERT_TRUE(capture.ok()) << capture.error().message;
  SpawnOptions o;
  o.argv = {"sh", "-c", "echo to-stderr >&2"};
  o.stderr_fd = capture->get();
  auto p = Subprocess::Spawn(o);
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_TRUE((*p)->Wait(std::chrono::seconds(10)).ok());
  EXPECT_EQ(ReadTail(capture->get()), "to-stderr");
}

TEST(Subprocess, TheMemoryLimitBoundsWhatTheChildMayMap) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: no RLIMIT_AS under it";
#endif
  SpawnOptions o;
  o.argv = {"sh", "-c", "ulimit -v"};
  o.pipe_stdout = true;
  o.memory_limit = 300ull << 20;
  auto p = Subprocess::Spawn(o);
  ASSERT_TRUE(p.ok()) << p.error().message;
  UniqueFd out = (*p)->TakeStdout();
  std::string text;
  std::uint8_t buf[64];
  for (;;) {
    auto n = ReadSome(out.get(), buf, std::chrono::seconds(5));
    if (!n || *n == 0) break;
    text.append(reinterpret_cast<const char*>(buf), *n);
  }
  EXPECT_EQ(text, std::to_string(300 * 1024) + "\n");  // KiB
}

TEST(Subprocess, ReportsTheExitStatus) {
  auto p = Spawn({"sh", "-c", "exit 3"});
  auto st = p->Wait(std::chrono::seconds(10));
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(st->exited);
  EXPECT_EQ(st->code, 3);
  EXPECT_EQ(st->ToString(), "exit status 3");
}

TEST(Subprocess, WaitTimesOutThenKillEndsIt) {
  auto p = Spawn({"sleep", "1000"});
  auto st = p->Wait(std::chrono::milliseconds(1));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::kDeadlineExceeded);
  p->Kill();
  st = p->Wait(std::chrono::seconds(10));
  ASSERT_TRUE(st.ok());
  EXPECT_FALSE(st->exited);
  EXPECT_EQ(st->signal, SIGKILL);
  EXPECT_THAT(st->ToString(), HasSubstr("killed by signal 9"));
}

TEST(Subprocess, KillTakesTheWholeProcessGroup) {
  auto p = Spawn({"sh", "-c", "sleep 1000 & echo $!; wait"}, true);
  UniqueFd out = p->TakeStdout();
  std::string line;
  std::uint8_t buf[64];
  while (line.find('\n') == std::string::npos) {
    auto n = ReadSome(out.get(), buf, std::chrono::seconds(10));
    ASSERT_TRUE(n.ok());
    ASSERT_GT(*n, 0u);
    line.append(reinterpret_cast<char*>(buf), *n);
  }
  const pid_t grandchild = std::stoi(line);
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, grandchild, 0)));
  ASSERT_TRUE(pidfd.valid());
  p->Kill();
  pollfd pfd{pidfd.get(), POLLIN, 0};
  EXPECT_EQ(::poll(&pfd, 1, 10'000), 1) << "the grandchild outlived Kill()";
}

TEST(Subprocess, PipesCarryBytesBothWays) {
  auto p = Spawn({"cat"}, true);
  UniqueFd in = p->TakeStdin();
  UniqueFd out = p->TakeStdout();
  const std::uint8_t msg[] = {0x01, 0x00, 'h', 'i', 0xff};
  ASSERT_TRUE(WriteAll(in.get(), msg, std::chrono::seconds(5)).ok());
  in.Reset();
  std::vector<std::uint8_t> got;
  std::uint8_t buf[16];
  for (;;) {
    auto n = ReadSome(out.get(), buf, std::chrono::seconds(10));
    if (!n) {
      EXPECT_EQ(n.error().code, ErrorCode::kUnavailable);  // end of stream
      break;
    }
    got.insert(got.end(), buf, buf + *n);
  }
  EXPECT_EQ(got, std::vector<std::uint8_t>(msg, msg + sizeof(msg)));
}

TEST(Subprocess, MissingProgramIsNotFound) {
  SpawnOptions o;
  o.argv = {"/nonexistent/mculab-runner"};
  auto p = Subprocess::Spawn(o);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(p.error().message, HasSubstr("/nonexistent/mculab-runner"));
}

TEST(ProcessRunner, CapturesOutputAndExitCode) {
  auto r = RealProcessRunner().Run({"sh", "-c", "echo out; echo err >&2; exit 4"},
                                   std::chrono::seconds(10));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status.code, 4);
  EXPECT_THAT(r->output, HasSubstr("out\n"));
  EXPECT_THAT(r->output, HasSubstr("err\n"));
}

TEST(ProcessRunner, KillsACommandThatOverrunsItsTimeout) {
  auto r = RealProcessRunner().Run({"sleep", "1000"}, std::chrono::milliseconds(20));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kDeadlineExceeded);
  EXPECT_THAT(r.error().message, HasSubstr("sleep 1000"));
}

TEST(UnixSocket, GivesUpWhenNobodyListensWithinTheTimeout) {
  auto dir = TempDir::Create("mculab-sock-test-");
  ASSERT_TRUE(dir.ok());
  FakeClock clock;  // retries advance the fake clock: no wall time spent
  auto fd = ConnectUnixSocket((*dir)->path() / "none.sock", std::chrono::seconds(15), clock);
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.error().code, ErrorCode::kDeadlineExceeded);
  EXPECT_THAT(fd.error().message, HasSubstr("none.sock"));
}

TEST(UnixSocket, StopsRetryingWhenTheListenerDied) {
  auto dir = TempDir::Create("mculab-sock-test-");
  ASSERT_TRUE(dir.ok());
  FakeClock clock;
  int asked = 0;
  auto fd = ConnectUnixSocket((*dir)->path() / "none.sock", std::chrono::seconds(15), clock,
                              [&] { return ++asked < 3; });
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(asked, 3);
}

TEST(UnixSocket, ConnectsToAListener) {
  auto dir = TempDir::Create("mculab-sock-test-");
  ASSERT_TRUE(dir.ok());
  const auto path = (*dir)->path() / "link.sock";
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener.get(), 1), 0);
  FakeClock clock;
  auto fd = ConnectUnixSocket(path, std::chrono::seconds(1), clock);
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  UniqueFd peer(::accept(listener.get(), nullptr, nullptr));
  ASSERT_TRUE(peer.valid());
  const std::uint8_t b[] = {0x42};
  ASSERT_TRUE(WriteAll(peer.get(), b, std::chrono::seconds(1)).ok());
  std::uint8_t got[1];
  auto n = ReadSome(fd->get(), got, std::chrono::seconds(5));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(got[0], 0x42);
}

}  // namespace
}  // namespace mculab::agent

namespace mculab::agent {
namespace {

// A process given to the reaper is killed at once, then reaped and its folder removed on the
// reaper's thread.
TEST(Reaper, KillsAtOnceThenReapsAndRemovesTheFolderOffTheCallersThread) {
  auto dir = RunDir::Create("mculab-reaper-test-");
  ASSERT_TRUE(dir.ok());
  const auto path = (*dir)->path();
  auto p = Spawn({"sleep", "600"});
  ASSERT_TRUE(p);
  const pid_t pid = p->pid();
  Reaper reaper;
  reaper.Give(std::move(p), std::move(*dir));
  reaper.Drain();
  EXPECT_FALSE(std::filesystem::exists(path));
  // Reaped: the pid is no child of ours any more.
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(Reaper, ItsDestructorFinishesWhatItWasGiven) {
  std::filesystem::path path;
  pid_t pid = 0;
  {
    Reaper reaper;
    auto dir = RunDir::Create("mculab-reaper-test-");
    ASSERT_TRUE(dir.ok());
    path = (*dir)->path();
    auto p = Spawn({"sleep", "600"});
    ASSERT_TRUE(p);
    pid = p->pid();
    reaper.Give(std::move(p), std::move(*dir));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
}

}  // namespace
}  // namespace mculab::agent
