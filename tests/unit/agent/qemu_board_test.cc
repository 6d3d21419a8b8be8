// QemuBoard against the real an547 runner ELF under qemu-system-arm. Skipped, saying why, when
// QEMU or the ELF is not there.
#include "agent/boards/qemu_board.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "agent/boards/elf_symbols.h"
#include "agent/io/subprocess.h"
#include "real_runner_test_util.h"

namespace mculab::agent {
namespace {

using ::testing::HasSubstr;

class QemuBoardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string elf = MCULAB_AN547_ELF;
    if (elf.empty() || !std::filesystem::exists(elf)) {
      GTEST_SKIP() << "the an547 runner ELF is not built (" << (elf.empty() ? "no path" : elf)
                   << ")";
    }
    auto probe =
        RealProcessRunner().Run({"qemu-system-arm", "--version"}, std::chrono::seconds(10));
    if (!probe.ok() || !probe->status.success()) {
      GTEST_SKIP() << "qemu-system-arm is not installed";
    }
    options_.firmware = elf;
  }
  QemuBoard Board() {
    return QemuBoard(testing::Info("an547-0", "corstone300-qemu"), options_, RealClock(),
                     testing::DefaultSandbox());
  }
  QemuOptions options_;
};

// Where the runner's region markers go, as its linker script placed them: what the counting
// plugin is told to watch, so a runner from another release is counted right.
TEST(RunnerElf, MarkerRegionIsTheLinkerScriptsSymbol) {
  EXPECT_EQ(MarkerRegion("/nonexistent.elf"), 0u);
  const std::string not_elf = ::testing::TempDir() + "/not-an-elf";
  std::ofstream(not_elf) << "#!/bin/sh\n";
  EXPECT_EQ(MarkerRegion(not_elf), 0u);
  const std::string elf = MCULAB_AN547_ELF;
  if (elf.empty() || !std::filesystem::exists(elf)) {
    GTEST_SKIP() << "the an547 runner ELF is not built (" << (elf.empty() ? "no path" : elf) << ")";
  }
  EXPECT_EQ(MarkerRegion(elf), 0x60FF0000u);
  // The identity the board reads once per firmware carries it, from the same bytes as the hash.
  auto id = IdentifyFirmware(elf);
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(id->marker_region, 0x60FF0000u);
  auto script = IdentifyFirmware(not_elf);
  ASSERT_TRUE(script.ok());
  EXPECT_EQ(script->marker_region, 0u);
}

TEST_F(QemuBoardTest, RunsTheAn547RunnerWithVerifiedChecksums) {
  auto board = Board();
  auto run = testing::RunOnBoard(board, 5);
  ASSERT_EQ(run.result.outcome, RunOutcome::kSucceeded) << run.result.message;
  ASSERT_TRUE(run.listener.hello.has_value());
  EXPECT_EQ(run.listener.hello->port, "an547");
  EXPECT_EQ(run.listener.hello->cpu, "cortex-m55");
  EXPECT_TRUE(run.listener.hello->emulated);
  EXPECT_EQ(run.listener.hello->workload_addr, 0x60000000u);
  EXPECT_EQ(run.listener.samples.size(), 15u);
  ASSERT_EQ(run.listener.cases.size(), 3u);
  for (const auto& c : run.listener.cases) EXPECT_TRUE(c.checksum_ok) << c.case_index;
  for (const auto& s : run.listener.samples) EXPECT_GT(s.timer, 0u);
  ASSERT_TRUE(run.result.exit.has_value());
  EXPECT_TRUE(run.result.exit->success()) << run.result.exit->ToString();
  EXPECT_EQ(run.result.stats.bad_frames, 0u);
  EXPECT_THAT(run.provenance.toolchain, HasSubstr("GCC"));
  EXPECT_THAT(run.provenance.note, HasSubstr("emulated"));
  const auto& st = run.result.stats;
  std::cout << "QEMU an547 run (3 conv2d cases x 5 iterations): " << run.wall.count()
            << " ms wall; board.Start (spawn + socket connect) " << run.start.count()
            << " ms, then HELLO at +" << st.to_hello.count() << " ms, DONE at +"
            << st.to_done.count() << " ms, QEMU exited at +" << st.to_exit.count() << " ms\n";
  RecordProperty("wall_ms", static_cast<int>(run.wall.count()));
}

TEST_F(QemuBoardTest, SameWorkloadGivesIdenticalCountsEveryRun) {
  auto board = Board();
  auto a = testing::RunOnBoard(board, 3);
  auto b = testing::RunOnBoard(board, 3);
  ASSERT_EQ(a.result.outcome, RunOutcome::kSucceeded) << a.result.message;
  ASSERT_EQ(b.result.outcome, RunOutcome::kSucceeded) << b.result.message;
  ASSERT_EQ(a.listener.samples.size(), b.listener.samples.size());
  for (std::size_t i = 0; i < a.listener.samples.size(); ++i) {
    EXPECT_EQ(a.listener.samples[i].timer, b.listener.samples[i].timer) << "sample " << i;
  }
}

// A warm board: the next QEMU starts halted while a run goes and gets the runner and the workload
// over its gdbstub. Job after job, its counts must equal a cold start's bit for bit.
TEST_F(QemuBoardTest, AWarmBoardGivesTheColdStartsCountsJobAfterJob) {
  auto cold_board = Board();
  auto cold = testing::RunOnBoard(cold_board, 5);
  ASSERT_EQ(cold.result.outcome, RunOutcome::kSucceeded) << cold.result.message;
  ASSERT_EQ(cold.listener.samples.size(), 15u);

  options_.warm = true;
  QemuBoard warm(testing::Info("an547-warm", "corstone300-qemu"), options_, RealClock(),
                 testing::DefaultSandbox());
  for (int job = 0; job < 3; ++job) {
    auto run = testing::RunOnBoard(warm, 5);
    ASSERT_EQ(run.result.outcome, RunOutcome::kSucceeded)
        << "job " << job << ": " << run.result.message;
    EXPECT_EQ(run.result.stats.bad_frames, 0u);
    EXPECT_EQ(run.provenance.firmware_sha256, cold.provenance.firmware_sha256);
    EXPECT_THAT(run.provenance.note, HasSubstr("warm"));
    ASSERT_EQ(run.listener.cases.size(), cold.listener.cases.size());
    for (std::size_t i = 0; i < cold.listener.cases.size(); ++i) {
      EXPECT_TRUE(run.listener.cases[i].checksum_ok) << "job " << job << " case " << i;
      EXPECT_EQ(run.listener.cases[i].checksum, cold.listener.cases[i].checksum);
    }
    ASSERT_EQ(run.listener.samples.size(), cold.listener.samples.size());
    for (std::size_t i = 0; i < cold.listener.samples.size(); ++i) {
      EXPECT_EQ(run.listener.samples[i].iteration, cold.listener.samples[i].iteration);
      EXPECT_EQ(run.listener.samples[i].timer, cold.listener.samples[i].timer)
          << "job " << job << " sample " << i;
    }
    std::cout << "warm an547 job " << job << ": Start " << run.start.count() << " ms (cold "
              << cold.start.count() << " ms)\n";
  }
  // The first job started its QEMU itself; the next two found theirs waiting.
  EXPECT_EQ(warm.warm_starts(), 2);
}

TEST_F(QemuBoardTest, MissingQemuBinaryIsABoardError) {
  options_.qemu_binary = "/nonexistent/qemu-system-arm";
  auto board = Board();
  RunSpec spec;
  spec.workload = {1};
  auto proc = board.Start(spec);
  ASSERT_FALSE(proc.ok());
  EXPECT_THAT(proc.error().message, HasSubstr("/nonexistent/qemu-system-arm"));
}

// The Cortex-M7 board kind: the an500 runner port on QEMU mps2-an500, through the same backend.
TEST(QemuBoardAn500, RunsTheCortexM7RunnerWithVerifiedChecksums) {
  const std::string elf = MCULAB_AN500_ELF;
  if (elf.empty() || !std::filesystem::exists(elf)) {
    GTEST_SKIP() << "the an500 runner ELF is not built (" << (elf.empty() ? "no path" : elf) << ")";
  }
  QemuOptions o;
  o.machine = "mps2-an500";
  o.firmware = elf;
  QemuBoard board(testing::Info("an500-0", "cm7-qemu"), o, RealClock(), testing::DefaultSandbox());
  auto run = testing::RunOnBoard(board, 3);
  ASSERT_EQ(run.result.outcome, RunOutcome::kSucceeded) << run.result.message;
  ASSERT_TRUE(run.listener.hello.has_value());
  EXPECT_EQ(run.listener.hello->port, "an500");
  EXPECT_EQ(run.listener.hello->cpu, "cortex-m7");
  EXPECT_TRUE(run.listener.hello->emulated);
  ASSERT_EQ(run.listener.cases.size(), 3u);
  for (const auto& c : run.listener.cases) EXPECT_TRUE(c.checksum_ok) << c.case_index;
  EXPECT_THAT(run.provenance.note, HasSubstr("mps2-an500"));
}

}  // namespace
}  // namespace mculab::agent
