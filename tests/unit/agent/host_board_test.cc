// HostBoard against the real mculab-runner-host (built by firmware_stub/).
#include "agent/boards/host_board.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/io/temp_dir.h"
#include "mculab/workload.h"
#include "real_runner_test_util.h"

namespace mculab::agent {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

HostBoard Board() {
  return HostBoard(testing::Info("host-0", "host"), MCULAB_RUNNER_HOST, false,
                   testing::DefaultSandbox());
}

TEST(HostBoard, RunsTheRealHostRunnerWithVerifiedChecksums) {
  auto board = Board();
  auto run = testing::RunOnBoard(board, 5);
  ASSERT_EQ(run.result.outcome, RunOutcome::kSucceeded) << run.result.message;
  ASSERT_TRUE(run.listener.hello.has_value());
  EXPECT_EQ(run.listener.hello->port, "host");
  EXPECT_EQ(run.listener.hello->timer_unit, "ns");
  EXPECT_FALSE(run.listener.hello->emulated);
  EXPECT_EQ(run.listener.samples.size(), 15u);
  ASSERT_EQ(run.listener.cases.size(), 3u);
  for (const auto& c : run.listener.cases) EXPECT_TRUE(c.checksum_ok) << c.case_index;
  for (const auto& s : run.listener.samples) EXPECT_GT(s.timer, 0u);
  ASSERT_TRUE(run.result.exit.has_value());
  EXPECT_TRUE(run.result.exit->success()) << run.result.exit->ToString();
  EXPECT_EQ(run.result.stats.bad_frames, 0u);
  EXPECT_EQ(run.provenance.firmware_sha256.size(), 64u);
  EXPECT_THAT(run.provenance.toolchain, HasSubstr("GCC"));
}

TEST(HostBoard, CancelAbortsTheRealRunner) {
  auto board = Board();
  CancelToken cancel;
  // Cancel as soon as the first sample arrives: the runner must answer ABORT and be gone.
  auto run = testing::RunOnBoard(board, 20000, std::chrono::seconds(60), &cancel,
                                 [&](const SampleMsg&) { cancel.Cancel(CancelReason::kByServer); });
  EXPECT_EQ(run.result.outcome, RunOutcome::kCancelled) << run.result.message;
  EXPECT_LT(run.listener.samples.size(), 3u * 20000u);
  ASSERT_TRUE(run.result.exit.has_value());
  EXPECT_LT(run.wall, std::chrono::seconds(5));
}

TEST(HostBoard, RunnerPreparedAheadRunsTheJobLikeAColdStart) {
  auto board = Board();
  auto cold = testing::RunOnBoard(board, 5);
  ASSERT_EQ(cold.result.outcome, RunOutcome::kSucceeded) << cold.result.message;
  EXPECT_EQ(board.prepared_starts(), 0u);
  for (int round = 1; round <= 2; ++round) {
    board.Prepare();
    auto warm = testing::RunOnBoard(board, 5);
    ASSERT_EQ(warm.result.outcome, RunOutcome::kSucceeded) << warm.result.message;
    EXPECT_EQ(board.prepared_starts(), static_cast<std::uint64_t>(round));
    ASSERT_EQ(warm.listener.cases.size(), 3u);
    for (const auto& c : warm.listener.cases) EXPECT_TRUE(c.checksum_ok) << c.case_index;
    EXPECT_EQ(warm.listener.samples.size(), cold.listener.samples.size());
    EXPECT_EQ(warm.provenance.firmware_sha256, cold.provenance.firmware_sha256);
    ASSERT_TRUE(warm.result.exit.has_value());
    EXPECT_TRUE(warm.result.exit->success()) << warm.result.exit->ToString();
  }
}

TEST(HostBoard, CustomRunnerNeverUsesTheRunnerPreparedAhead) {
  HostBoard board(testing::Info("host-0", "host"), MCULAB_RUNNER_HOST, true,
                  testing::DefaultSandbox());
  board.Prepare();
  auto workload = BuildWorkload(MCULAB_OP_CONV2D_S8, testing::ConvCases(), testing::kSeed);
  ASSERT_TRUE(workload.ok());
  RunSpec spec;
  spec.workload = *workload;
  spec.firmware = MCULAB_RUNNER_HOST;
  auto proc = board.Start(spec);
  ASSERT_TRUE(proc.ok()) << proc.error().message;
  EXPECT_EQ(board.prepared_starts(), 0u);
  // The prepared runner is still there for the next ordinary job.
  auto warm = testing::RunOnBoard(board, 2);
  EXPECT_EQ(warm.result.outcome, RunOutcome::kSucceeded) << warm.result.message;
  EXPECT_EQ(board.prepared_starts(), 1u);
}

TEST(HostBoard, RunnerReplacedAfterItWasPreparedStartsAnewWithTheNewIdentity) {
  auto dir = TempDir::Create("mculab-host-board-test-");
  ASSERT_TRUE(dir.ok());
  const auto runner = (*dir)->path() / "runner";
  auto bytes = ReadFile(MCULAB_RUNNER_HOST);
  ASSERT_TRUE(bytes.ok());
  ASSERT_TRUE(WriteFile(runner, *bytes).ok());
  std::filesystem::permissions(
      runner, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                  std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                  std::filesystem::perms::others_exec);
  HostBoard board(testing::Info("host-0", "host"), runner, false, testing::DefaultSandbox());
  board.Prepare();
  // A new build installed meanwhile (a new file renamed into place; trailing bytes change its
  // hash, not what it does).
  const auto next = (*dir)->path() / "runner.new";
  ASSERT_TRUE(WriteFile(next, *bytes + std::string("new build")).ok());
  std::filesystem::permissions(next, std::filesystem::status(runner).permissions());
  std::filesystem::rename(next, runner);
  auto run = testing::RunOnBoard(board, 2);
  ASSERT_EQ(run.result.outcome, RunOutcome::kSucceeded) << run.result.message;
  EXPECT_EQ(board.prepared_starts(), 0u);
  auto id = IdentifyFirmware(runner);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(run.provenance.firmware_sha256, id->sha256);
}

TEST(HostBoard, MissingRunnerBinaryIsABoardError) {
  HostBoard board(testing::Info("host-0", "host"), "/nonexistent/mculab-runner-host", false,
                  testing::DefaultSandbox());
  RunSpec spec;
  spec.workload = {1, 2, 3};
  auto proc = board.Start(spec);
  ASSERT_FALSE(proc.ok());
  EXPECT_THAT(proc.error().message, HasSubstr("/nonexistent/mculab-runner-host"));
}

// A job's own runner (tests/hostile_runner, attack 4) writes a line to its stderr, replaces every
// file of its run folder and the file behind its stderr by links to a file only the agent may read
// (its token), and dies. The job's message shows the runner's stderr and nothing of that file, in
// every sandbox mode the agent has.
TEST(HostBoard, ARunnerThatSwapsItsFilesForLinksShowsNothingOfTheAgentsFiles) {
  auto secret = TempDir::Create("mculab-agent-secret-");
  ASSERT_TRUE(secret.ok());
  const auto token = (*secret)->path() / "agent.token";
  ASSERT_TRUE(WriteFile(token, "mcl_a_agents_own_secret\n").ok());
  ::chmod(token.c_str(), 0600);
  const std::string blob =
      token.string() + "\n" + ((*secret)->path() / "marker").string() + "\n0\n";
  const std::int64_t ids[1] = {4};
  std::vector<std::uint8_t> workload(mculab_workload_custom_blob_offset(1) + blob.size());
  workload.resize(mculab_workload_write_custom(
      workload.data(), workload.size(), testing::kSeed, ids, 1,
      reinterpret_cast<const std::uint8_t*>(blob.data()), blob.size()));
  ASSERT_FALSE(workload.empty());
  std::vector<std::string> modes = {"auto"};
  if (::geteuid() == 0) modes.push_back("namespaces");  // the runner as nobody over host files
  for (const auto& mode : modes) {
    SCOPED_TRACE(mode);
    auto sandbox = Sandbox::Create(MakeSandboxConfig(mode));
    ASSERT_TRUE(sandbox.ok()) << sandbox.error().message;
    HostBoard board(testing::Info("host-0", "host"), MCULAB_RUNNER_HOST, true, *sandbox);
    RunSpec spec;
    spec.workload = workload;
    spec.firmware = MCULAB_HOSTILE_RUNNER_HOST;
    auto proc = board.Start(spec);
    ASSERT_TRUE(proc.ok()) << proc.error().message;
    SessionConfig c;
    c.op = MCULAB_OP_CUSTOM;
    c.cases = {WorkloadCase{4, {}}};
    c.seed = testing::kSeed;
    c.iterations = 1;
    c.workload_len = static_cast<std::uint32_t>(workload.size());
    c.run_timeout = std::chrono::seconds(30);
    c.custom_runner = true;
    testing::CollectingListener listener;
    CancelToken none;
    const auto result = RunSession(**proc, RealClock(), c, listener, none);
    EXPECT_EQ(result.outcome, RunOutcome::kWorkloadFailed) << result.message;
    EXPECT_THAT(result.message, HasSubstr("hostile-runner-stderr-marker"));
    EXPECT_THAT(result.message, Not(HasSubstr("mcl_a_agents_own_secret")));
    EXPECT_THAT((*proc)->Diagnostics(), Not(HasSubstr("mcl_a_agents_own_secret")));
    auto counts = (*proc)->EmulatedCounts();
    if (!counts.ok()) {
      EXPECT_THAT(counts.error().message, Not(HasSubstr("mcl_a_agents_own_secret")));
    }
  }
}

}  // namespace
}  // namespace mculab::agent
