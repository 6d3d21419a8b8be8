// The job sandbox (agent/io/sandbox.h) for real: programs run through bubblewrap exactly as the
// agent runs QEMU and host runners, and try to reach what a job's runner must never reach.
#include "agent/io/sandbox.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "agent/io/fd.h"
#include "agent/io/subprocess.h"
#include "agent/io/temp_dir.h"

namespace mculab::agent {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

struct Ran {
  ExitStatus status;
  std::string out;
};

// Runs `script` with /usr/bin/sh inside the sandbox, `work` as the run's folder.
Ran RunInside(const Sandbox& sandbox, const std::string& script, const fs::path& work,
              const std::vector<fs::path>& read_only = {}) {
  EXPECT_TRUE(sandbox.PrepareWorkDir(work).ok());
  auto argv = sandbox.Wrap({"/usr/bin/sh", "-c", script}, read_only, work);
  EXPECT_TRUE(argv.ok()) << argv.error().message;
  auto r = RealProcessRunner().Run(*argv, std::chrono::seconds(20));
  EXPECT_TRUE(r.ok()) << r.error().message;
  return {r->status, r->output};
}

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Sandbox::Create(MakeSandboxConfig("auto"));
    ASSERT_TRUE(s.ok()) << s.error().message;
    sandbox_ = *s;
    if (!sandbox_->fallback_reason().empty()) {
      std::cout << "bubblewrap does not work here, testing the namespaces sandbox: "
                << sandbox_->fallback_reason() << "\n";
    }
    auto secret = TempDir::Create("mculab-secret-");
    ASSERT_TRUE(secret.ok());
    secret_ = std::move(*secret);
    token_ = secret_->path() / "agent.token";
    std::ofstream(token_) << "mcl_a_secret\n";
    fs::permissions(secret_->path(),
                    fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
    fs::permissions(token_, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    auto work = TempDir::Create("mculab-work-");
    ASSERT_TRUE(work.ok());
    work_ = std::move(*work);
  }
  std::optional<Sandbox> sandbox_;
  std::unique_ptr<TempDir> secret_, work_;
  fs::path token_;
};

TEST_F(SandboxTest, TheAgentsStartupCheckPasses) { EXPECT_TRUE(sandbox_->Check().ok()); }

TEST_F(SandboxTest, NeverRunsAsRoot) {
  auto r = RunInside(*sandbox_, "id -u", work_->path());
  ASSERT_TRUE(r.status.success()) << r.out;
  EXPECT_NE(r.out, "0\n") << "the sandboxed process runs as root";
  if (::geteuid() != 0) {
    EXPECT_EQ(r.out, std::to_string(::geteuid()) + "\n");
  }
}

#define SKIP_WITHOUT_PRIVATE_FILES()                                                        \
  if (!sandbox_->private_files())                                                           \
  GTEST_SKIP() << "bubblewrap cannot build a mount namespace on this machine (a chroot?): " \
               << sandbox_->fallback_reason()

TEST_F(SandboxTest, CannotReadFilesItWasNotGiven) {
  SKIP_WITHOUT_PRIVATE_FILES();
  // Even world-readable, the token is not in the sandbox's view of the file system.
  auto r = RunInside(*sandbox_, "cat " + token_.string() + " && echo LEAKED", work_->path());
  EXPECT_FALSE(r.status.success());
  EXPECT_THAT(r.out, Not(HasSubstr("mcl_a_secret")));
  EXPECT_THAT(r.out, Not(HasSubstr("LEAKED")));
  for (const char* p : {"/root", "/home", "/etc/passwd", "/work", "/var"}) {
    auto ls = RunInside(*sandbox_, std::string("ls ") + p + " && echo VISIBLE", work_->path());
    EXPECT_THAT(ls.out, Not(HasSubstr("VISIBLE"))) << p << " is visible: " << ls.out;
  }
}

TEST_F(SandboxTest, ReadsTheFilesItIsGivenButCannotChangeThem) {
  SKIP_WITHOUT_PRIVATE_FILES();
  auto r = RunInside(
      *sandbox_, "cat " + token_.string() + "; echo x >> " + token_.string() + " && echo CHANGED",
      work_->path(), {token_});
  EXPECT_THAT(r.out, HasSubstr("mcl_a_secret"));
  EXPECT_THAT(r.out, Not(HasSubstr("CHANGED")));
  std::ifstream in(token_);
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, "mcl_a_secret\n");
}

TEST_F(SandboxTest, WritesOnlyItsOwnFolderAndAPrivateTmp) {
  SKIP_WITHOUT_PRIVATE_FILES();
  const fs::path outside = secret_->path() / "created-by-runner";
  auto r = RunInside(*sandbox_,
                     "echo ok > " + (work_->path() / "out.txt").string() +
                         " && echo tmp > /tmp/t && touch " + outside.string() +
                         " ; touch /usr/x 2>/dev/null && echo USR",
                     work_->path());
  EXPECT_THAT(r.out, Not(HasSubstr("USR")));
  EXPECT_TRUE(fs::exists(work_->path() / "out.txt")) << r.out;
  EXPECT_FALSE(fs::exists(outside));
  EXPECT_FALSE(fs::exists("/tmp/t") &&
               fs::last_write_time("/tmp/t") > fs::last_write_time(work_->path() / "out.txt"));
}

TEST_F(SandboxTest, HasNoNetwork) {
  // A listener on the host's loopback: the sandbox has its own loopback and reaches nothing.
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(listener.valid());
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener.get(), 4), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&a), &len), 0);
  const int port = ntohs(a.sin_port);
  // bash's /dev/tcp is not in sh; python3 is not in /usr for sure either: use the shell's
  // redirection through /proc's view of the namespace instead: no interface but lo, no route.
  auto r = RunInside(*sandbox_, "cat /proc/net/dev; cat /proc/net/route", work_->path());
  ASSERT_TRUE(r.status.success()) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("eth"))) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("ens"))) << r.out;
  // And a real connection attempt, where a connecting tool is installed.
  if (fs::exists("/usr/bin/python3")) {
    auto c =
        RunInside(*sandbox_,
                  "/usr/bin/python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", " +
                      std::to_string(port) + "), 2); print(\"CONNECTED\")'",
                  work_->path());
    EXPECT_THAT(c.out, Not(HasSubstr("CONNECTED")));
  }
}

TEST_F(SandboxTest, StartsWithACleanEnvironment) {
  ::setenv("MCULAB_TEST_SECRET", "s3cret", 1);
  auto r = RunInside(*sandbox_, "env", work_->path());
  ::unsetenv("MCULAB_TEST_SECRET");
  ASSERT_TRUE(r.status.success()) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("s3cret")));
}

// Root's files (the agent's token is 0600) stay closed in every mode: the runner is never root.
TEST_F(SandboxTest, CannotReadTheAgentsPrivateFilesInAnyMode) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a file only root may read";
  fs::permissions(token_, fs::perms::owner_read | fs::perms::owner_write);
  auto r = RunInside(*sandbox_, "cat " + token_.string() + " && echo LEAKED", work_->path());
  EXPECT_THAT(r.out, Not(HasSubstr("mcl_a_secret")));
  for (const auto kind : {"namespaces"}) {
    auto ns = Sandbox::Create(MakeSandboxConfig(kind));
    ASSERT_TRUE(ns.ok()) << ns.error().message;
    auto n = RunInside(*ns, "cat " + token_.string() + " && echo LEAKED", work_->path());
    EXPECT_THAT(n.out, Not(HasSubstr("mcl_a_secret"))) << kind;
    auto id = RunInside(*ns, "id -u", work_->path());
    EXPECT_NE(id.out, "0\n") << kind;
  }
}

TEST(SandboxConfig, OffMeansTheCommandLineIsUnchanged) {
  auto s = Sandbox::Create(MakeSandboxConfig("off"));
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->enabled());
  auto argv = s->Wrap({"/usr/bin/true", "x"}, {}, "/tmp");
  ASSERT_TRUE(argv.ok());
  EXPECT_EQ(*argv, (std::vector<std::string>{"/usr/bin/true", "x"}));
}

TEST(SandboxConfig, AMissingBwrapSaysWhatToInstall) {
  auto s = Sandbox::Create(MakeSandboxConfig("bwrap", "/nonexistent/bwrap"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("apt-get install bubblewrap"));
}

TEST(SandboxConfig, AnUnknownUserIsRefused) {
  auto s = Sandbox::Create(MakeSandboxConfig("auto", "bwrap", "no-such-user-mculab"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("no-such-user-mculab"));
}

TEST(SandboxConfig, RootIsNeverTheSandboxsUser) {
  auto s = Sandbox::Create(MakeSandboxConfig("auto", "bwrap", "root"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("never run as root"));
}

TEST(SandboxConfig, AnUnknownModeIsRefused) {
  auto s = Sandbox::Create(MakeSandboxConfig("chroot"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("bwrap, auto, namespaces, off"));
}

TEST(SandboxConfig, WrapHasNoNetworkNoOtherProcessesAndDiesWithTheAgent) {
  auto s = Sandbox::Create(MakeSandboxConfig("auto"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  if (!s->private_files()) GTEST_SKIP() << "bubblewrap does not work here";
  auto argv = s->Wrap({"/usr/bin/true"}, {}, "/tmp/run");
  ASSERT_TRUE(argv.ok());
  auto has = [&](const std::string& a) {
    return std::find(argv->begin(), argv->end(), a) != argv->end();
  };
  EXPECT_TRUE(has("--unshare-net") || has("--unshare-all"));
  EXPECT_TRUE(has("--unshare-pid") || has("--unshare-all"));
  EXPECT_TRUE(has("--die-with-parent"));
  EXPECT_TRUE(has("--new-session"));
  EXPECT_TRUE(has("--clearenv"));
  EXPECT_EQ(argv->back(), "/usr/bin/true");
}

}  // namespace
}  // namespace mculab::agent
