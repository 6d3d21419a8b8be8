// FvpBoard: its command lines (pure), its config keys, and whole runs against a fake FVP
// (fake_fvp.cc: checks the command line, serves UART0 on a TCP port, runs the host runner as the
// "application") behind the real mculab-fvp-relay, inside the job sandbox. Arm's FVP itself cannot
// be installed here.
#include "agent/boards/fvp_board.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "agent/config.h"
#include "agent/io/subprocess.h"
#include "real_runner_test_util.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

bool HasPair(const std::vector<std::string>& argv, const std::string& flag,
             const std::string& value) {
  for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] == flag && argv[i + 1] == value) return true;
  }
  return false;
}

TEST(FvpArgvTest, NoWindowsRawUartMacsRunnerAndWorkloadAtItsAddress) {
  FvpOptions o;
  o.fvp = "/opt/fvp/FVP_Corstone_SSE-300_Ethos-U55";
  o.num_macs = 256;
  o.workload_addr = 0x60001000;
  auto argv = FvpArgv(o, "/fw/runner.elf", "/run/workload.bin");
  EXPECT_EQ(argv[0], "/opt/fvp/FVP_Corstone_SSE-300_Ethos-U55");
  EXPECT_TRUE(HasPair(argv, "-C", "mps3_board.visualisation.disable-visualisation=1"));
  for (const char* t :
       {"telnetterminal0", "telnetterminal1", "telnetterminal2", "telnetterminal5"}) {
    EXPECT_TRUE(HasPair(argv, "-C", std::string("mps3_board.") + t + ".start_telnet=0")) << t;
  }
  EXPECT_TRUE(HasPair(argv, "-C", "mps3_board.telnetterminal0.mode=raw"));
  EXPECT_TRUE(HasPair(argv, "-C", "ethosu.num_macs=256"));
  EXPECT_TRUE(HasPair(argv, "-a", "cpu0=/fw/runner.elf"));
  EXPECT_TRUE(HasPair(argv, "--data", "cpu0=/run/workload.bin@0x60001000"));
}

TEST(FvpArgvTest, ExtraOptionsComeBeforeTheApplication) {
  FvpOptions o;
  o.extra_options = {"-C", "cpu0.CFGITCMSZ=9"};
  auto argv = FvpArgv(o, "r.elf", "w.bin");
  auto extra = std::find(argv.begin(), argv.end(), "cpu0.CFGITCMSZ=9");
  auto app = std::find(argv.begin(), argv.end(), "-a");
  ASSERT_NE(extra, argv.end());
  EXPECT_LT(extra, app);
}

TEST(FvpArgvTest, RelayServesTerminalZeroOnTheRunSocketThenRunsTheFvp) {
  FvpOptions o;
  o.relay = "/usr/lib/mculab/mculab-fvp-relay";
  o.start_timeout = std::chrono::seconds(45);
  auto argv = FvpRelayArgv(o, "/run/link.sock", "r.elf", "w.bin");
  ASSERT_GE(argv.size(), 9u);
  EXPECT_THAT(std::vector<std::string>(argv.begin(), argv.begin() + 8),
              ElementsAre("/usr/lib/mculab/mculab-fvp-relay", "--socket", "/run/link.sock",
                          "--terminal", "telnetterminal0", "--start-timeout-s", "45", "--"));
  EXPECT_EQ(argv[8], o.fvp.string());
}

TEST(FvpArgvTest, InstallDirIsTheRootAboveModels) {
  EXPECT_EQ(FvpInstallDir("/opt/arm/FVP/models/Linux64_GCC-9.3/FVP_Corstone_SSE-300_Ethos-U55"),
            "/opt/arm/FVP");
  EXPECT_EQ(FvpInstallDir("/opt/other/FVP_Corstone_SSE-300_Ethos-U55"), "/opt/other");
}

TEST(FvpArgvTest, NoteCarriesArmsCaveat) {
  FvpOptions o;
  const auto note = FvpNote(o);
  EXPECT_THAT(note, HasSubstr("emulated (FVP)"));
  EXPECT_THAT(note, HasSubstr("CPU cycle counts are not representative"));
  EXPECT_THAT(note, HasSubstr("NPU"));
  EXPECT_THAT(note, HasSubstr("approximate"));
}

constexpr const char* kFvpBoard = R"([[board]]
name = "fvp-0"
kind = "corstone300-fvp"
backend = "fvp"
firmware = "runner.elf"
)";

TEST(FvpConfigTest, ReadsTheFvpKeys) {
  auto cfg = ParseAgentConfig(std::string(kFvpBoard) + R"(fvp = "/opt/fvp/FVP"
num_macs = 64
fvp_options = ["-C", "a.b=1"]
start_timeout_s = 90
allow_custom_runners = true
)",
                              "a.toml", "/etc/mculab");
  ASSERT_TRUE(cfg.ok()) << cfg.error().message;
  const auto& b = cfg->boards[0];
  EXPECT_EQ(b.backend, "fvp");
  EXPECT_EQ(b.fvp, "/opt/fvp/FVP");
  EXPECT_EQ(b.num_macs, 64);
  EXPECT_THAT(b.fvp_options, ElementsAre("-C", "a.b=1"));
  EXPECT_EQ(b.start_timeout_s, 90u);
  EXPECT_TRUE(b.allow_custom_runners);
  EXPECT_EQ(b.firmware, "/etc/mculab/runner.elf");
}

TEST(FvpConfigTest, RejectsAMacCountTheNpuDoesNotHave) {
  auto cfg = ParseAgentConfig(std::string(kFvpBoard) + "num_macs = 100\n", "a.toml", "/");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr("32, 64, 128 or 256"));
}

TEST(FvpConfigTest, RejectsOptionsThatAreNotAnArrayOfStrings) {
  auto cfg = ParseAgentConfig(std::string(kFvpBoard) + "fvp_options = \"-C a=1\"\n", "a.toml", "/");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr("fvp_options"));
}

TEST(FvpConfigTest, NeedsTheRunnerElf) {
  auto cfg =
      ParseAgentConfig("[[board]]\nname = \"f\"\nkind = \"k\"\nbackend = \"fvp\"\n", "a.toml", "/");
  ASSERT_FALSE(cfg.ok());
  EXPECT_THAT(cfg.error().message, HasSubstr("firmware"));
}

// Runs against the fake FVP through the real relay, in the job sandbox.
class FvpBoardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto s = testing::DefaultSandbox();
        s.kind() == Sandbox::Kind::kNamespaces && s.drops_privileges()) {
      GTEST_SKIP() << "the FVP board needs the bubblewrap sandbox when the agent is root, and "
                      "bubblewrap does not work here: "
                   << s.fallback_reason();
    }
    options_.fvp = MCULAB_FAKE_FVP;
    options_.relay = MCULAB_FVP_RELAY;
    options_.firmware = MCULAB_RUNNER_HOST;  // the fake FVP runs it as the application
  }
  FvpBoard Board() {
    return FvpBoard(testing::Info("fvp-0", "corstone300-fvp"), options_, RealClock(),
                    testing::DefaultSandbox());
  }
  void Behave(const std::string& behaviour) {
    options_.extra_options = {"-C", "fake.behaviour=" + behaviour};
  }
  FvpOptions options_;
};

TEST_F(FvpBoardTest, RunsTheRunnerBehindTheFvpsUartAndLabelsItEmulated) {
  auto board = Board();
  EXPECT_TRUE(board.Info().emulated);
  auto run = testing::RunOnBoard(board, 5);
  ASSERT_EQ(run.result.outcome, RunOutcome::kSucceeded) << run.result.message;
  ASSERT_TRUE(run.listener.hello.has_value());
  EXPECT_EQ(run.listener.samples.size(), 15u);
  ASSERT_EQ(run.listener.cases.size(), 3u);
  for (const auto& c : run.listener.cases) EXPECT_TRUE(c.checksum_ok) << c.case_index;
  EXPECT_EQ(run.result.stats.bad_frames, 0u);
  EXPECT_THAT(run.provenance.note, HasSubstr("emulated (FVP)"));
  EXPECT_TRUE(run.provenance.emulated);
  EXPECT_EQ(run.provenance.workload_addr, 0x60000000u);
  EXPECT_FALSE(run.provenance.firmware_sha256.empty());
}

TEST_F(FvpBoardTest, AnFvpThatExitsBeforeItsUartIsABoardErrorWithItsOutput) {
  Behave("exit_early");
  auto board = Board();
  RunSpec spec;
  spec.workload = {1, 2, 3};
  auto proc = board.Start(spec);
  ASSERT_FALSE(proc.ok());
  EXPECT_EQ(proc.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(proc.error().message, HasSubstr("exiting early as asked"));
  EXPECT_THAT(proc.error().message, HasSubstr("before telnetterminal0 was listening"));
}

TEST_F(FvpBoardTest, AnFvpThatNeverOpensItsPortFailsAfterTheStartTimeout) {
  Behave("no_port");
  options_.start_timeout = std::chrono::seconds(1);
  auto board = Board();
  RunSpec spec;
  spec.workload = {1, 2, 3};
  auto proc = board.Start(spec);
  ASSERT_FALSE(proc.ok());
  EXPECT_THAT(proc.error().message, HasSubstr("did not announce telnetterminal0's port in 1 s"));
}

TEST_F(FvpBoardTest, AWrongCommandLineIsReportedWithTheFvpsMessage) {
  options_.extra_options = {"-C", "ethosu.num_macs=7"};  // the model refuses it
  auto board = Board();
  RunSpec spec;
  spec.workload = {1, 2, 3};
  auto proc = board.Start(spec);
  ASSERT_FALSE(proc.ok());
  EXPECT_THAT(proc.error().message, HasSubstr("ethosu.num_macs must be"));
}

TEST_F(FvpBoardTest, GarbageOnTheUartFailsTheRunWithoutAHello) {
  Behave("garbage");
  auto board = Board();
  auto workload = BuildWorkload(MCULAB_OP_CONV2D_S8, testing::ConvCases(), testing::kSeed);
  RunSpec spec;
  spec.workload = *workload;
  auto proc = board.Start(spec);
  ASSERT_TRUE(proc.ok()) << proc.error().message;
  SessionConfig c;
  c.op = MCULAB_OP_CONV2D_S8;
  c.cases = testing::ConvCases();
  c.iterations = 1;
  c.workload_len = static_cast<std::uint32_t>(spec.workload.size());
  c.hello_timeout = std::chrono::seconds(2);
  testing::CollectingListener listener;
  CancelToken none;
  auto result = RunSession(**proc, RealClock(), c, listener, none);
  EXPECT_NE(result.outcome, RunOutcome::kSucceeded);
  EXPECT_FALSE(listener.hello.has_value());
  EXPECT_GT(result.stats.bad_frames, 0u);
}

TEST_F(FvpBoardTest, AnFvpThatHangsUpItsUartEndsTheRun) {
  Behave("hang_up");
  auto run = [&] {
    auto board = Board();
    return testing::RunOnBoard(board, 1);
  }();
  EXPECT_NE(run.result.outcome, RunOutcome::kSucceeded);
  EXPECT_FALSE(run.listener.hello.has_value());
}

TEST_F(FvpBoardTest, AMissingFvpIsABoardErrorNamingIt) {
  options_.fvp = "/nonexistent/FVP_Corstone_SSE-300_Ethos-U55";
  auto board = Board();
  RunSpec spec;
  spec.workload = {1};
  auto proc = board.Start(spec);
  ASSERT_FALSE(proc.ok());
  EXPECT_THAT(proc.error().message, HasSubstr("/nonexistent/FVP_Corstone_SSE-300_Ethos-U55"));
}

TEST_F(FvpBoardTest, UnderTheNamespacesSandboxTheLoopbackDecides) {
  // `unshare --net` leaves loopback down. A non-root agent's sandbox may bring it up (the relay
  // does); a root agent's runs as nobody without that capability, and the run says why it fails.
  auto sandbox = Sandbox::Create(MakeSandboxConfig("namespaces"));
  if (!sandbox) GTEST_SKIP() << "no namespaces sandbox here: " << sandbox.error().message;
  FvpBoard board(testing::Info("fvp-0", "corstone300-fvp"), options_, RealClock(), *sandbox);
  auto run = testing::RunOnBoard(board, 1);
  if (::geteuid() == 0) {
    EXPECT_EQ(run.result.outcome, RunOutcome::kInfraFailed);
    EXPECT_THAT(run.result.message, HasSubstr("loopback is down in this sandbox"));
    EXPECT_THAT(run.result.message, HasSubstr("mode = \"bwrap\""));
  } else {
    EXPECT_EQ(run.result.outcome, RunOutcome::kSucceeded) << run.result.message;
  }
}

TEST(FakeFvpTest, RefusesACommandLineWithoutRawUart) {
  // The fake's checks are what the board's command line is held to: prove they bite.
  auto r = RealProcessRunner().Run({MCULAB_FAKE_FVP, "-C", "ethosu.num_macs=128", "-a",
                                    "cpu0=" + std::string(MCULAB_RUNNER_HOST)},
                                   std::chrono::seconds(10));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->status.code, 2);
  EXPECT_THAT(r->output, HasSubstr("fake FVP: command line"));
}

}  // namespace
}  // namespace mculab::agent
