// HostBoard against the real mculab-runner-host (built by firmware_stub/).
#include "agent/boards/host_board.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "real_runner_test_util.h"

namespace mculab::agent {
namespace {

using ::testing::HasSubstr;

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

TEST(HostBoard, MissingRunnerBinaryIsABoardError) {
  HostBoard board(testing::Info("host-0", "host"), "/nonexistent/mculab-runner-host", false,
                  testing::DefaultSandbox());
  RunSpec spec;
  spec.workload = {1, 2, 3};
  auto proc = board.Start(spec);
  ASSERT_FALSE(proc.ok());
  EXPECT_THAT(proc.error().message, HasSubstr("/nonexistent/mculab-runner-host"));
}

}  // namespace
}  // namespace mculab::agent
