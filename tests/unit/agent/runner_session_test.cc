#include "agent/runner/runner_session.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "agent/boards/fake_board.h"
#include "test_workloads.h"

namespace mculab::agent {
namespace {

using testing::ConvCases;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::kSeed;

struct Recorder : SessionListener {
  std::optional<Hello> hello;
  std::vector<std::string> counters;
  std::vector<SampleMsg> samples;
  std::vector<CaseResult> cases;
  std::vector<ErrorMsg> errors;
  std::optional<Done> done;
  std::function<void(const SampleMsg&)> on_sample;

  void OnStarted(const Hello& h, const std::vector<std::string>& c) override {
    hello = h;
    counters = c;
  }
  void OnSample(const SampleMsg& s) override {
    samples.push_back(s);
    if (on_sample) on_sample(s);
  }
  void OnCaseEnd(const CaseResult& r) override { cases.push_back(r); }
  void OnLog(const LogMsg&) override {}
  void OnError(const ErrorMsg& e) override { errors.push_back(e); }
  void OnDone(const Done& d) override { done = d; }
  void OnOpSample(const OpSample& op) override { ops.push_back(op); }
  std::vector<OpSample> ops;
};

class RunnerSessionTest : public ::testing::Test {
 protected:
  SessionResult Run(FakeOptions options, std::vector<std::string> events = {}) {
    board_ = std::make_unique<FakeBoard>(testing::Info("fake-0", "fake"), options, clock_);
    auto workload = BuildWorkload(MCULAB_OP_CONV2D_S8, ConvCases(), kSeed);
    EXPECT_TRUE(workload.ok());
    RunSpec spec;
    spec.workload = *workload;
    auto runner = board_->Start(spec);
    EXPECT_TRUE(runner.ok());
    config_.op = MCULAB_OP_CONV2D_S8;
    config_.cases = ConvCases();
    config_.seed = kSeed;
    config_.iterations = kIterations;
    config_.warmup = 2;
    config_.workload_len = static_cast<std::uint32_t>(workload->size());
    config_.events = std::move(events);
    config_.run_timeout = std::chrono::seconds(30);
    config_.log_prefix = "test";
    started_ = clock_.Now();
    return RunSession(**runner, clock_, config_, rec_, cancel_);
  }
  std::chrono::milliseconds Elapsed() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now() - started_);
  }
  // Samples of one case, in delivery order.
  std::vector<std::uint32_t> Iterations(std::uint16_t case_index) const {
    std::vector<std::uint32_t> out;
    for (const auto& s : rec_.samples)
      if (s.case_index == case_index) out.push_back(s.iteration);
    return out;
  }

  static constexpr std::uint32_t kIterations = 6;
  FakeClock clock_;
  Clock::TimePoint started_;
  std::unique_ptr<FakeBoard> board_;
  SessionConfig config_;
  Recorder rec_;
  CancelToken cancel_;
};

TEST_F(RunnerSessionTest, HappyPathDeliversEverySampleInOrderAndVerifiesChecksums) {
  auto r = Run({});
  EXPECT_EQ(r.outcome, RunOutcome::kSucceeded) << r.message;
  EXPECT_TRUE(r.message.empty());
  ASSERT_TRUE(rec_.hello.has_value());
  EXPECT_EQ(rec_.hello->port, "fake");
  EXPECT_TRUE(rec_.counters.empty());
  ASSERT_EQ(rec_.samples.size(), 3 * kIterations);
  for (std::uint16_t c = 0; c < 3; ++c) {
    EXPECT_THAT(Iterations(c), ElementsAre(0, 1, 2, 3, 4, 5));
  }
  for (const auto& s : rec_.samples) {
    EXPECT_EQ(s.timer, FakeBoard::TimerValue(s.case_index, s.iteration));
  }
  ASSERT_EQ(rec_.cases.size(), 3u);
  for (std::uint16_t c = 0; c < 3; ++c) {
    EXPECT_EQ(rec_.cases[c].case_index, c);
    EXPECT_EQ(rec_.cases[c].case_id, 10 + c);
    EXPECT_TRUE(rec_.cases[c].checksum_ok);
    EXPECT_EQ(rec_.cases[c].checksum, rec_.cases[c].expected);
    EXPECT_EQ(rec_.cases[c].overhead, FakeBoard::kOverhead);
    EXPECT_EQ(rec_.cases[c].samples, kIterations);
  }
  ASSERT_TRUE(rec_.done.has_value());
  EXPECT_EQ(rec_.done->cases_run, 3);
  EXPECT_EQ(r.stats.samples, 3 * kIterations);
  EXPECT_EQ(r.stats.bad_frames, 0u);
  ASSERT_TRUE(r.exit.has_value());
  EXPECT_TRUE(r.exit->success());
  auto log = board_->last_run();
  EXPECT_THAT(log->frames_received, ElementsAre(MCULAB_MSG_CONFIGURE, MCULAB_MSG_RUN));
  EXPECT_FALSE(log->killed);
}

TEST_F(RunnerSessionTest, RequestedCountersAreSelectedByNameInTheRunnersOrder) {
  auto r = Run({}, {"cycles", "loads", "instructions"});
  ASSERT_EQ(r.outcome, RunOutcome::kSucceeded) << r.message;
  EXPECT_THAT(rec_.counters, ElementsAre("instructions", "loads"));
  ASSERT_FALSE(rec_.samples.empty());
  for (const auto& s : rec_.samples) {
    EXPECT_THAT(s.counters, ElementsAre(FakeBoard::CounterValue(0, s.iteration),
                                        FakeBoard::CounterValue(1, s.iteration)));
  }
}

TEST_F(RunnerSessionTest, EventTheRunnerCannotCountIsAWorkloadFailureNamingIt) {
  auto r = Run({}, {"branches"});
  EXPECT_EQ(r.outcome, RunOutcome::kWorkloadFailed);
  EXPECT_THAT(r.message, HasSubstr("cannot count \"branches\""));
  EXPECT_THAT(r.message, HasSubstr("instructions, loads, stores"));
  EXPECT_TRUE(board_->last_run()->frames_received.empty());  // never told to RUN
  EXPECT_TRUE(board_->last_run()->killed);
}

TEST_F(RunnerSessionTest, MoreCountersThanTheRunnerReadsAtOnceIsAWorkloadFailure) {
  auto r = Run({}, {"instructions", "loads", "stores"});
  EXPECT_EQ(r.outcome, RunOutcome::kWorkloadFailed);
  EXPECT_THAT(r.message, HasSubstr("at most 2"));
}

TEST_F(RunnerSessionTest, GarbageBetweenFramesIsSkipped) {
  auto r = Run({.fault = FakeFault::kGarbage});
  EXPECT_EQ(r.outcome, RunOutcome::kSucceeded) << r.message;
  EXPECT_EQ(rec_.samples.size(), 3 * kIterations);
  EXPECT_GT(r.stats.skipped_bytes, 0u);
}

TEST_F(RunnerSessionTest, BadCrcFrameIsCountedNotFatal) {
  auto r = Run({.fault = FakeFault::kBadCrc, .fault_case = 1});
  EXPECT_EQ(r.outcome, RunOutcome::kSucceeded) << r.message;
  EXPECT_EQ(r.stats.bad_frames, 1u);
  EXPECT_EQ(rec_.samples.size(), 3 * kIterations);
}

TEST_F(RunnerSessionTest, LostSampleFailsTheRunInsteadOfStoringAHole) {
  auto r = Run({.fault = FakeFault::kLoseSample, .fault_case = 0});
  EXPECT_EQ(r.outcome, RunOutcome::kInfraFailed);
  EXPECT_THAT(r.message, HasSubstr("lost samples in case 0 (id 10): expected iteration 3, got 4"));
  EXPECT_THAT(Iterations(0), ElementsAre(0, 1, 2));  // nothing after the gap
  EXPECT_TRUE(board_->last_run()->killed);
}

TEST_F(RunnerSessionTest, RunnerErrorIsAWorkloadFailureWithItsText) {
  auto r = Run({.fault = FakeFault::kRunnerError, .fault_case = 1});
  EXPECT_EQ(r.outcome, RunOutcome::kWorkloadFailed);
  EXPECT_THAT(r.message, HasSubstr("runner error bad parameters in case 1 (id 11)"));
  EXPECT_THAT(r.message, HasSubstr("kernel larger than the padded input"));
  ASSERT_EQ(rec_.errors.size(), 1u);
  EXPECT_EQ(rec_.cases.size(), 1u);
}

TEST_F(RunnerSessionTest, ChecksumMismatchIsAWorkloadFailureNamingTheCaseAndBothChecksums) {
  auto r = Run({.fault = FakeFault::kWrongChecksum, .fault_case = 2});
  EXPECT_EQ(r.outcome, RunOutcome::kWorkloadFailed);
  ASSERT_EQ(rec_.cases.size(), 3u);
  EXPECT_TRUE(rec_.cases[0].checksum_ok);
  EXPECT_TRUE(rec_.cases[1].checksum_ok);
  EXPECT_FALSE(rec_.cases[2].checksum_ok);
  char expected[160];
  std::snprintf(expected, sizeof(expected),
                "checksum mismatch in case 2 (id 12): the runner reported 0x%08x, the host "
                "reference is 0x%08x",
                rec_.cases[2].checksum, rec_.cases[2].expected);
  EXPECT_THAT(r.message, HasSubstr(expected));
}

TEST_F(RunnerSessionTest, CrashMidRunIsAnInfrastructureFailure) {
  auto r = Run({.fault = FakeFault::kCrash, .fault_case = 1});
  EXPECT_EQ(r.outcome, RunOutcome::kInfraFailed);
  EXPECT_THAT(r.message, HasSubstr("link closed before DONE in case 1 (id 11) at iteration 3"));
  EXPECT_THAT(r.message, HasSubstr("signal 11"));
}

TEST_F(RunnerSessionTest, HangTimesOutThenAbortsAndKills) {
  auto r = Run({.fault = FakeFault::kHang, .fault_case = 0});
  EXPECT_EQ(r.outcome, RunOutcome::kTimedOut);
  EXPECT_THAT(r.message, HasSubstr("exceeded its timeout of 30 s in case 0 (id 10)"));
  EXPECT_TRUE(board_->last_run()->abort_received());
  EXPECT_TRUE(board_->last_run()->killed);
  EXPECT_GE(Elapsed(), std::chrono::seconds(30) + config_.abort_grace);  // on the fake clock
}

TEST_F(RunnerSessionTest, NoHelloIsAnInfrastructureFailure) {
  auto r = Run({.fault = FakeFault::kNoHello});
  EXPECT_EQ(r.outcome, RunOutcome::kInfraFailed);
  EXPECT_THAT(r.message, HasSubstr("no HELLO from the runner within 10000 ms"));
  EXPECT_TRUE(board_->last_run()->killed);
}

// A job's own runner that never says HELLO, or dies mid-run, fails the job, not the board: the
// board did nothing wrong, so its health must not suffer and the job must not be retried elsewhere.
TEST_F(RunnerSessionTest, ACustomRunnerWithoutHelloIsTheJobsFailure) {
  config_.custom_runner = true;
  auto r = Run({.fault = FakeFault::kNoHello});
  EXPECT_EQ(r.outcome, RunOutcome::kWorkloadFailed);
  EXPECT_THAT(r.message, HasSubstr("no HELLO from the job's own runner within 10000 ms"));
  EXPECT_TRUE(board_->last_run()->killed);
}

TEST_F(RunnerSessionTest, ACustomRunnerThatCrashesIsTheJobsFailure) {
  config_.custom_runner = true;
  auto r = Run({.fault = FakeFault::kCrash, .fault_case = 1});
  EXPECT_EQ(r.outcome, RunOutcome::kWorkloadFailed);
  EXPECT_THAT(r.message, HasSubstr("the job's own runner's link closed before DONE in case 1"));
}

// A runner that floods OP_SAMPLE frames cannot grow the agent's batches and spool without bound:
// the run stops at the per-case cap and the job fails (workload), not the board.
TEST_F(RunnerSessionTest, ARunnerFloodingOperatorProfilesIsStoppedAndTheJobFails) {
  config_.custom_runner = true;
  config_.profile_ops = true;
  auto r = Run({.fault = FakeFault::kFloodOps, .fault_case = 1});
  EXPECT_EQ(r.outcome, RunOutcome::kWorkloadFailed);
  EXPECT_THAT(r.message, HasSubstr("more than 256 operator profiles (OP_SAMPLE) for one case"));
  EXPECT_LE(rec_.ops.size(), 256u);
  EXPECT_TRUE(board_->last_run()->killed);
}

TEST_F(RunnerSessionTest, CancelSendsAbortThenKills) {
  rec_.on_sample = [&](const SampleMsg& s) {
    if (s.case_index == 1 && s.iteration == 2) cancel_.Cancel(CancelReason::kByServer);
  };
  auto r = Run({});
  EXPECT_EQ(r.outcome, RunOutcome::kCancelled);
  auto log = board_->last_run();
  EXPECT_THAT(log->frames_received,
              ElementsAre(MCULAB_MSG_CONFIGURE, MCULAB_MSG_RUN, MCULAB_MSG_ABORT));
  EXPECT_TRUE(log->killed);
  ASSERT_TRUE(rec_.done.has_value());  // the runner answered the ABORT
  EXPECT_LT(Elapsed(), config_.abort_grace);
}

TEST_F(RunnerSessionTest, RunnerIgnoringAbortIsStillCancelledAndKilled) {
  rec_.on_sample = [&](const SampleMsg&) { cancel_.Cancel(CancelReason::kByServer); };
  auto r = Run({.fault = FakeFault::kIgnoreAbort});
  EXPECT_EQ(r.outcome, RunOutcome::kCancelled);
  EXPECT_TRUE(board_->last_run()->abort_received());
  EXPECT_TRUE(board_->last_run()->killed);
}

TEST_F(RunnerSessionTest, AgentShutdownIsAnInfrastructureFailure) {
  rec_.on_sample = [&](const SampleMsg&) { cancel_.Cancel(CancelReason::kShutdown); };
  auto r = Run({});
  EXPECT_EQ(r.outcome, RunOutcome::kInfraFailed);
  EXPECT_THAT(r.message, HasSubstr("agent was stopped"));
}

}  // namespace
}  // namespace mculab::agent
