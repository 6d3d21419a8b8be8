#include "agent/run/run_executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "agent/boards/fake_board.h"
#include "agent/io/temp_dir.h"
#include "common/sha256.h"
#include "mculab/workload.h"
#include "run_records.h"
#include "test_workloads.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class RunExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::Create("mculab-executor-test-");
    ASSERT_TRUE(d.ok());
    dir_ = std::move(*d);
    auto s = Spool::Open(dir_->path());
    ASSERT_TRUE(s.ok());
    spool_ = std::move(*s);
  }

  RunAssignment Assignment(std::uint32_t iterations) {
    RunAssignment a;
    a.run_id = 42;
    a.job_id = 7;
    a.board = "fake-0";
    a.op = "conv2d_s8";
    a.iterations = iterations;
    a.warmup = 1;
    a.seed = testing::kSeed;
    a.pass = 0;
    std::uint32_t index = 0;
    for (const auto& c : testing::ConvCases()) a.cases.push_back(RunCase{index++, c.id, c.params});
    return a;
  }

  // Runs the conv assignment with or without `--kernels reference` and checks the workload the
  // board got: the sweep with exactly `flags` in its header (outside the body's CRC).
  RunStartedRecord RunKernels(bool reference, std::uint32_t flags) {
    auto a = Assignment(3);
    a.reference_kernels = reference;
    EXPECT_EQ(WorkloadFlagsOf(a), flags);
    auto fin = Execute(a);
    EXPECT_EQ(fin.outcome, RunOutcome::kSucceeded) << fin.message;
    auto started = sink_.All<RunStartedRecord>();
    if (started.size() != 1u) {
      ADD_FAILURE() << started.size() << " RunStarted";
      return {};
    }
    auto workload = BuildWorkload(MCULAB_OP_CONV2D_S8, testing::ConvCases(), testing::kSeed);
    EXPECT_TRUE(workload.ok());
    SetWorkloadFlags(*workload, flags);
    EXPECT_EQ(started[0].workload_sha256, Sha256Hex(std::span<const std::uint8_t>(*workload)));
    return started[0];
  }

  RunFinishedRecord Execute(const RunAssignment& a, FakeOptions fake = {}) {
    board_ = std::make_unique<FakeBoard>(testing::Info("fake-0", "fake"), fake, clock_);
    ExecutorOptions o;
    o.max_batch_samples = 256;
    return ExecuteRun(a, *board_, *spool_, sink_, clock_, cancel_, o);
  }

  FakeClock clock_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<FakeBoard> board_;
  testing::RecordingSink sink_;
  CancelToken cancel_;
};

TEST_F(RunExecutorTest, AServerThatReadsColumnsGetsTheSameRowsMarkedAsColumnsInTheSpoolToo) {
  auto a = Assignment(200);
  a.events.push_back("instructions");
  ASSERT_EQ(Execute(a).outcome, RunOutcome::kSucceeded);
  auto as_rows = sink_.All<SampleBatchRecord>();
  sink_.sent.clear();
  spool_->Close(42);

  a.sample_columns = true;
  ASSERT_EQ(Execute(a).outcome, RunOutcome::kSucceeded);
  auto as_columns = sink_.All<SampleBatchRecord>();
  ASSERT_EQ(as_columns.size(), as_rows.size());
  for (std::size_t i = 0; i < as_columns.size(); ++i) {
    EXPECT_FALSE(as_rows[i].as_columns);
    EXPECT_TRUE(as_columns[i].as_columns);
    EXPECT_EQ(as_columns[i].sequence, as_rows[i].sequence);
    EXPECT_EQ(as_columns[i].rows, as_rows[i].rows);
  }
  // The spool holds what was sent (no ack came), replayed as it was sent.
  std::vector<SampleBatchRecord> replayed;
  spool_->Replay(42, [&](RunMessage&& m) {
    if (auto* b = std::get_if<SampleBatchRecord>(&m)) replayed.push_back(std::move(*b));
    return true;
  });
  EXPECT_EQ(replayed, as_columns);
}

TEST_F(RunExecutorTest, SendsProvenanceSequencedBatchesCaseResultsAndTheEnd) {
  auto a = Assignment(200);  // 600 samples: 256 + 256 + 88
  a.events.push_back("instructions");
  auto fin = Execute(a);
  EXPECT_EQ(fin.outcome, RunOutcome::kSucceeded) << fin.message;
  EXPECT_EQ(fin.batches_sent, 5u);  // 1200 rows (timer + one counter) in batches of 256

  // "preparing" is held back (said only if the runner is slow to start); "running" is sent.
  ASSERT_EQ(sink_.deferred.size(), 1u);
  EXPECT_EQ(sink_.deferred[0].first.state, "preparing");
  EXPECT_EQ(sink_.deferred[0].first.run_id, 42u);
  EXPECT_EQ(sink_.deferred[0].second, ExecutorOptions{}.preparing_after);
  auto states = sink_.All<RunStateRecord>();
  ASSERT_EQ(states.size(), 1u);
  EXPECT_EQ(states[0].state, "running");

  auto started = sink_.All<RunStartedRecord>();
  ASSERT_EQ(started.size(), 1u);
  const auto& rs = started[0];
  EXPECT_EQ(rs.run_id, 42u);
  EXPECT_EQ(rs.port, "fake");
  EXPECT_EQ(rs.cpu, "cortex-m55");
  EXPECT_TRUE(rs.emulated);
  EXPECT_EQ(rs.timer_unit, "cycles");
  EXPECT_THAT(rs.counters, ElementsAre("instructions"));
  EXPECT_EQ(rs.seed, testing::kSeed);
  EXPECT_EQ(rs.firmware_sha256.size(), 64u);
  auto workload = BuildWorkload(MCULAB_OP_CONV2D_S8, testing::ConvCases(), testing::kSeed);
  EXPECT_EQ(rs.workload_sha256, Sha256Hex(std::span<const std::uint8_t>(*workload)));
  EXPECT_THAT(rs.note, HasSubstr("fake board"));

  auto batches = sink_.All<SampleBatchRecord>();
  ASSERT_EQ(batches.size(), 5u);
  std::size_t rows = 0;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    EXPECT_EQ(batches[i].sequence, i);
    EXPECT_EQ(batches[i].run_id, 42u);
    rows += batches[i].rows.size();
  }
  EXPECT_EQ(rows, 1200u);
  const auto& first = batches[0].rows;
  EXPECT_EQ(first[0].metric, 0u);
  EXPECT_EQ(first[0].value, static_cast<std::int64_t>(FakeBoard::TimerValue(0, 0)));
  EXPECT_EQ(first[1].metric, 1u);
  EXPECT_EQ(first[1].value, FakeBoard::CounterValue(0, 0));

  auto cases = sink_.All<CaseDoneRecord>();
  ASSERT_EQ(cases.size(), 3u);
  for (const auto& c : cases) {
    EXPECT_TRUE(c.checksum_ok);
    EXPECT_EQ(c.overhead, static_cast<std::int64_t>(FakeBoard::kOverhead));
    EXPECT_THAT(c.counter_overhead, ElementsAre(1));
  }

  ASSERT_TRUE(std::holds_alternative<RunFinishedRecord>(sink_.sent.back()));
  // Everything but RunState waits in the spool for the server.
  EXPECT_THAT(spool_->PendingBatches(42), ElementsAre(0, 1, 2, 3, 4));
  EXPECT_TRUE(spool_->HasFinished(42));
}

TEST_F(RunExecutorTest, ReferenceKernelsSetTheWorkloadFlagAndTheRunnersReportIsTheKernelSet) {
  const RunStartedRecord rs = RunKernels(true, MCULAB_WORKLOAD_REFERENCE_KERNELS);
  // What ran is what the runner's HELLO said (the fake names the set as the generic runner does).
  EXPECT_EQ(rs.kernel_set, "reference");
}

TEST_F(RunExecutorTest, TheDefaultIsTheFastSetWithNoWorkloadFlag) {
  const RunStartedRecord rs = RunKernels(false, 0);
  EXPECT_EQ(rs.kernel_set, "helium");
  EXPECT_THAT(rs.runner_version, HasSubstr("(builtin-helium)"));
}

TEST_F(RunExecutorTest, AMessageTooLargeToSendFailsTheJobAndIsNeitherSpooledNorSent) {
  // A spool that takes 1,500 bytes per message: the run's start fits, a batch of 256 rows does not.
  auto small = Spool::Open(dir_->path() / "small", false, 1500);
  ASSERT_TRUE(small.ok());
  board_ = std::make_unique<FakeBoard>(testing::Info("fake-0", "fake"), FakeOptions{}, clock_);
  ExecutorOptions o;
  o.max_batch_samples = 256;
  auto a = Assignment(200);
  auto fin = ExecuteRun(a, *board_, **small, sink_, clock_, cancel_, o);
  EXPECT_EQ(fin.outcome, RunOutcome::kWorkloadFailed);
  EXPECT_THAT(fin.message, HasSubstr("sample batch"));
  EXPECT_THAT(fin.message, HasSubstr("1500 bytes"));
  EXPECT_EQ(fin.batches_sent, 0u);  // no sequence number was used for the refused batch
  EXPECT_TRUE(sink_.All<SampleBatchRecord>().empty());
  EXPECT_TRUE((*small)->PendingBatches(42).empty());
  EXPECT_TRUE((*small)->HasFinished(42));  // the run's end is spooled: the server learns of it
  EXPECT_TRUE(board_->last_run()->abort_received() || board_->last_run()->killed);
}

TEST_F(RunExecutorTest, ABoardThatEmulatesLabelsTheRunEmulatedWhateverTheRunnerSays) {
  FakeOptions fake;
  fake.hello_emulated = false;  // e.g. the Corstone-300 runner on the FVP: its DWT counts
  fake.board_emulates = true;
  Execute(Assignment(2), fake);
  auto started = sink_.All<RunStartedRecord>();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_TRUE(started[0].emulated);

  sink_.sent.clear();
  fake.board_emulates = false;  // silicon behind a probe: the runner's word stands
  auto a = Assignment(2);
  a.run_id = 43;
  Execute(a, fake);
  started = sink_.All<RunStartedRecord>();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_FALSE(started[0].emulated);
}

TEST(EmulatedInstructions, TicksOfVirtualTimeBecomeExecutedInstructions) {
  // shift 5: 32 ns per instruction; a 32 MHz tick is 31.25 ns, a 25 MHz tick 40 ns.
  EXPECT_EQ(EmulatedInstructions(1024, 32'000'000, 5), 1000u);
  EXPECT_EQ(EmulatedInstructions(100, 25'000'000, 5), 125u);
  EXPECT_EQ(EmulatedInstructions(3, 25'000'000, 5), 4u);  // 3.75, rounded to the nearest
  EXPECT_EQ(EmulatedInstructions(33'869'917, 32'000'000, 0), 1'058'434'906u);
  EXPECT_EQ(EmulatedInstructions(7, 0, 5), 7u) << "no clock: left as it is";
  EXPECT_EQ(EmulatedInstructions(7, 32'000'000, -1), 7u) << "not under icount";
  // No overflow for a long run: 2^40 ticks.
  EXPECT_EQ(EmulatedInstructions(1ULL << 40, 32'000'000, 5), 1'073'741'824'000ULL);
}

TEST_F(RunExecutorTest, UnderQemuIcountTheTimerIsReportedInInstructions) {
  FakeOptions fake;
  fake.icount_shift = 5;  // the fake's HELLO: cycles at 32 MHz
  auto fin = Execute(Assignment(4), fake);
  ASSERT_EQ(fin.outcome, RunOutcome::kSucceeded) << fin.message;
  auto started = sink_.All<RunStartedRecord>();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].timer_unit, "instructions");
  EXPECT_EQ(started[0].clock_hz, 32'000'000u);
  auto batches = sink_.All<SampleBatchRecord>();
  ASSERT_FALSE(batches.empty());
  const auto& first = batches[0].rows;
  ASSERT_GT(first.size(), 0u);
  EXPECT_EQ(first[0].metric, 0u);
  EXPECT_EQ(first[0].value, static_cast<std::int64_t>(
                                EmulatedInstructions(FakeBoard::TimerValue(0, 0), 32'000'000, 5)));
  EXPECT_NE(first[0].value, static_cast<std::int64_t>(FakeBoard::TimerValue(0, 0)));
  auto cases = sink_.All<CaseDoneRecord>();
  ASSERT_FALSE(cases.empty());
  EXPECT_EQ(cases[0].overhead,
            static_cast<std::int64_t>(EmulatedInstructions(FakeBoard::kOverhead, 32'000'000, 5)));

  // Without icount (silicon, the FVP) the runner's cycles stand.
  sink_.sent.clear();
  auto a = Assignment(2);
  a.run_id = 43;
  Execute(a, FakeOptions{});
  started = sink_.All<RunStartedRecord>();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].timer_unit, "cycles");
}

TEST_F(RunExecutorTest, SequenceNumbersContinueFromTheSpool) {
  // A run id whose batches 0..2 were spooled by an earlier attempt never reuses them.
  ASSERT_TRUE(spool_->BeginRun(42).ok());
  for (std::uint64_t s = 0; s < 3; ++s) {
    SampleBatchRecord b;
    b.run_id = 42;
    b.sequence = s;
    ASSERT_TRUE(spool_->PutBatch(b).ok());
  }
  auto fin = Execute(Assignment(4));
  EXPECT_EQ(fin.outcome, RunOutcome::kSucceeded) << fin.message;
  auto batches = sink_.All<SampleBatchRecord>();
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].sequence, 3u);
  EXPECT_EQ(fin.batches_sent, 4u);
}

TEST_F(RunExecutorTest, UnknownOpIsAWorkloadFailureBeforeTheBoardStarts) {
  auto a = Assignment(3);
  a.op = "softmax_s16";
  auto fin = Execute(a);
  EXPECT_EQ(fin.outcome, RunOutcome::kWorkloadFailed);
  EXPECT_THAT(fin.message, HasSubstr("unknown op \"softmax_s16\""));
  EXPECT_EQ(board_->last_run(), nullptr);
  EXPECT_TRUE(spool_->HasFinished(42));
}

TEST_F(RunExecutorTest, BadCaseParametersAreAWorkloadFailureNamingTheCase) {
  auto a = Assignment(3);
  a.cases[1].params[0] = 0;  // N = 0
  auto fin = Execute(a);
  EXPECT_EQ(fin.outcome, RunOutcome::kWorkloadFailed);
  EXPECT_THAT(fin.message, HasSubstr("case 11"));
}

TEST_F(RunExecutorTest, SessionOutcomesMapToTheProtocol) {
  EXPECT_EQ(Execute(Assignment(4), {.fault = FakeFault::kWrongChecksum}).outcome,
            RunOutcome::kWorkloadFailed);
  spool_->Close(42);
  EXPECT_EQ(Execute(Assignment(4), {.fault = FakeFault::kCrash}).outcome, RunOutcome::kInfraFailed);
  spool_->Close(42);
  EXPECT_EQ(Execute(Assignment(4), {.fault = FakeFault::kHang}).outcome, RunOutcome::kTimedOut);
}

TEST_F(RunExecutorTest, CancelledBeforeStartNeverStartsTheBoard) {
  cancel_.Cancel(CancelReason::kByServer);
  auto fin = Execute(Assignment(3));
  EXPECT_EQ(fin.outcome, RunOutcome::kCancelled);
  EXPECT_EQ(board_->last_run(), nullptr);
}

// ---- passes back to back, emulated counts merged into the samples ----------------------

namespace passes {

// Every (pass, case, iteration, metric) -> value of the run's batches.
std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, std::int64_t> Rows(
    const testing::RecordingSink& sink) {
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, std::int64_t>
      out;
  for (const auto& b : sink.All<SampleBatchRecord>()) {
    for (const SampleRow& s : b.rows) out[{b.pass, s.case_index, s.iteration, s.metric}] = s.value;
  }
  return out;
}

}  // namespace passes

TEST_F(RunExecutorTest, RunsEachPassAndMergesEmulatedCountsPerIteration) {
  auto a = Assignment(3);
  // Pass 0: a runner counter and an emulated event; pass 1: another emulated event.
  a.passes = {{0, {"instructions", "emu_a"}}, {1, {"emu_b"}}};
  a.events = {"instructions", "emu_a", "emu_b"};
  FakeOptions fake;
  fake.emulated_events = {"emu_a", "emu_b"};
  auto fin = Execute(a, fake);
  ASSERT_EQ(fin.outcome, RunOutcome::kSucceeded) << fin.message;

  auto started = sink_.All<RunStartedRecord>();
  ASSERT_EQ(started.size(), 1u);  // once per run, not per pass
  EXPECT_THAT(started[0].counters, ElementsAre("instructions", "emu_a", "emu_b"));

  const auto rows = passes::Rows(sink_);
  const auto cases = testing::ConvCases().size();
  for (std::uint32_t c = 0; c < cases; ++c) {
    for (std::uint32_t i = 0; i < 3; ++i) {
      const auto tv = static_cast<std::int64_t>(FakeBoard::TimerValue(c, i));
      EXPECT_EQ(rows.at({0, c, i, 0}), tv);  // cycles in every pass
      EXPECT_EQ(rows.at({1, c, i, 0}), tv);
      EXPECT_EQ(rows.at({0, c, i, 1}), FakeBoard::CounterValue(0, i));
      EXPECT_EQ(rows.at({0, c, i, 2}),
                static_cast<std::int64_t>(FakeBoard::EmulatedValue(0, c, i)));
      EXPECT_EQ(rows.at({1, c, i, 3}),
                static_cast<std::int64_t>(FakeBoard::EmulatedValue(1, c, i)));
      EXPECT_FALSE(rows.contains({1, c, i, 1}));  // pass 1 did not count instructions
      EXPECT_FALSE(rows.contains({0, c, i, 3}));
    }
  }
  auto done = sink_.All<CaseDoneRecord>();
  ASSERT_EQ(done.size(), 2 * cases);
  EXPECT_EQ(done.front().pass, 0u);
  EXPECT_EQ(done.back().pass, 1u);
}

TEST_F(RunExecutorTest, MissingEmulatedCountsFailTheRunInsteadOfStoringZeros) {
  auto a = Assignment(2);
  a.passes = {{0, {"emu_a"}}};
  a.events.push_back("emu_a");
  FakeOptions fake;
  fake.emulated_events = {"emu_b"};  // the board counts something else: no column for emu_a
  fake.emulated_max = 1;
  auto fin = Execute(a, fake);
  EXPECT_EQ(fin.outcome, RunOutcome::kWorkloadFailed) << fin.message;
  EXPECT_THAT(fin.message, HasSubstr("emu_a"));
  auto batches = sink_.All<SampleBatchRecord>();
  EXPECT_TRUE(batches.empty());
}

}  // namespace
}  // namespace mculab::agent
