// RunFinalizer::Judge without a Lab or a store: how a finished run and its job end, from what the
// store gave and the job and board as the Lab knows them.
#include "server/service/run_finalizer.h"

#include <gtest/gtest.h>

namespace mculab::server {
namespace {

CaseStats TimerOf(std::uint32_t case_index, std::uint64_t n, double median) {
  CaseStats s;
  s.case_index = case_index;
  s.metric = "cycles";
  s.n = n;
  s.median = median;
  return s;
}

CaseResult ResultOf(std::uint32_t case_index, bool ok) {
  CaseResult c;
  c.case_index = case_index;
  c.checksum = ok ? 0xcafe : 0xbeef;
  c.expected = 0xcafe;
  c.ok = ok;
  return c;
}

// Two cases of 10 iterations each, both checked; case 0's median timer value is `median0`.
RunReading Reading(double median0 = 1000, bool case1_ok = true, std::uint64_t case1_n = 10) {
  RunStatistics st;
  st.stats = {TimerOf(0, 10, median0), TimerOf(1, case1_n, 2000)};
  st.cycles_by_pass = {{median0, 2000}};
  st.samples = 10 + case1_n;
  return RunReading{std::move(st),
                    std::vector<CaseResult>{ResultOf(0, true), ResultOf(1, case1_ok)}};
}

JudgeInput Input() {
  JudgeInput in;
  in.verdict.num_cases = 2;
  in.verdict.iterations = 10;
  return in;
}

TEST(RunFinalizer, ACleanRunSucceedsWithItsStatisticsAndNoFlags) {
  const RunEnd out = RunFinalizer::Judge(Reading(), Input());
  EXPECT_EQ(out.ending, RunEnding::kSucceeded);
  EXPECT_EQ(out.message, "");
  ASSERT_EQ(out.stats.size(), 2u);
  EXPECT_EQ(out.stats[1].median, 2000);
  EXPECT_EQ(out.health_value, 0);  // not a health check
}

TEST(RunFinalizer, MissingIterationsAreFlaggedNotFailed) {
  const RunEnd out = RunFinalizer::Judge(Reading(1000, true, 7), Input());
  EXPECT_EQ(out.ending, RunEnding::kSucceeded);
  EXPECT_EQ(out.message, "case 1: 7 of 10 iterations stored");
  EXPECT_EQ(out.stats.size(), 2u);
}

TEST(RunFinalizer, AWrongChecksumIsAWorkloadFailureAndStoresNoFigures) {
  const RunEnd out = RunFinalizer::Judge(Reading(1000, false), Input());
  EXPECT_EQ(out.ending, RunEnding::kWrongResult);
  EXPECT_EQ(out.message,
            "wrong result (checksum mismatch): case 1: checksum 0x0000beef, expected 0x0000cafe");
  EXPECT_TRUE(out.stats.empty());
}

TEST(RunFinalizer, AnUnreadableRunNamesTheStoresError) {
  RunReading unreadable{Error{ErrorCode::kDataLoss, "database disk image is malformed"},
                        std::vector<CaseResult>{}};
  RunEnd out = RunFinalizer::Judge(std::move(unreadable), Input());
  EXPECT_EQ(out.ending, RunEnding::kUnreadable);
  EXPECT_EQ(out.message,
            "the server could not read the run's results: database disk image is malformed");

  RunReading no_results{RunStatistics{}, Error{ErrorCode::kUnavailable, "store closed"}};
  out = RunFinalizer::Judge(std::move(no_results), Input());
  EXPECT_EQ(out.ending, RunEnding::kUnreadable);
  EXPECT_EQ(out.message, "the server could not read the run's results: store closed");
}

TEST(RunFinalizer, AHealthCheckIsComparedWithItsBoardsCalibration) {
  JudgeInput in = Input();
  in.health_check = true;
  in.expected_health = 1000;
  in.health_tolerance = 0.05;
  RunEnd out = RunFinalizer::Judge(Reading(1040.4), in);
  EXPECT_EQ(out.ending, RunEnding::kSucceeded);
  EXPECT_EQ(out.health_value, 1040);

  out = RunFinalizer::Judge(Reading(1100), in);
  EXPECT_EQ(out.ending, RunEnding::kOffCalibration);
  EXPECT_EQ(out.message, "health check: measured 1100, expected 1000 (tolerance 0.05)");
  EXPECT_EQ(out.health_value, 1100);
  EXPECT_EQ(out.stats.size(), 2u);  // the measurement is sound: its figures are kept

  in.expected_health = 0;  // nothing to compare with (a host board's first check)
  out = RunFinalizer::Judge(Reading(1100), in);
  EXPECT_EQ(out.ending, RunEnding::kSucceeded);
  EXPECT_EQ(out.health_value, 1100);
}

TEST(RunFinalizer, AWrongChecksumOnAHealthCheckIsAWrongResultFirst) {
  JudgeInput in = Input();
  in.health_check = true;
  in.expected_health = 1000;
  in.health_tolerance = 0.05;
  const RunEnd out = RunFinalizer::Judge(Reading(5000, false), in);
  EXPECT_EQ(out.ending, RunEnding::kWrongResult);
}

CaseStats Cv(std::uint32_t case_index, std::uint32_t metric_index, double cv) {
  CaseStats s = TimerOf(case_index, 10, 1000);
  s.metric_index = metric_index;
  s.cv = cv;
  return s;
}

TEST(UnstableCases, TheTimersAboveTheLimitOrTheKindsDefaultAndNeverAnEmulatedCount) {
  const std::vector<CaseStats> stats = {Cv(0, 0, 0.05), Cv(0, 1, 0.9),  // a counter: not judged
                                        Cv(1, 0, 0.12), Cv(2, 0, 0.03)};
  auto host = UnstableCases(stats, "host", 0);  // 10%
  ASSERT_EQ(host.size(), 1u);
  EXPECT_EQ(host[0].case_index, 1u);
  EXPECT_DOUBLE_EQ(host[0].max_cv, 0.10);
  auto silicon = UnstableCases(stats, "silicon", 0);  // 2%
  ASSERT_EQ(silicon.size(), 3u);
  EXPECT_EQ(DescribeUnstable(silicon),
            "case 0 (cv 5.0% > 2%), case 1 (cv 12.0% > 2%), case 2 (cv 3.0% > 2%)");
  EXPECT_EQ(UnstableCases(stats, "silicon", 0.2).size(), 0u);  // an explicit limit
  EXPECT_EQ(UnstableCases(stats, "emulated", 0.01).size(), 0u);
  std::vector<UnstableCase> many(5, UnstableCase{7, 0.5, 0.1});
  EXPECT_EQ(DescribeUnstable(many),
            "case 7 (cv 50.0% > 10%), case 7 (cv 50.0% > 10%), case 7 (cv 50.0% > 10%) and 2 more");
}

// A noisy case (case 1's timer: cv 30%) in a host run of a job that asked for reruns.
RunReading NoisyReading() {
  RunReading r = Reading();
  r.statistics->stats[1].cv = 0.30;
  return r;
}

JudgeInput RerunInput(std::uint32_t reruns, std::uint32_t done) {
  JudgeInput in = Input();
  in.reruns = reruns;
  in.reruns_done = done;
  in.measured = "host";
  return in;
}

TEST(RunFinalizer, ANoisyCaseRerunsWhileTheJobHasRerunsLeftThenSucceedsSayingSo) {
  RunEnd out = RunFinalizer::Judge(NoisyReading(), RerunInput(2, 1));
  EXPECT_EQ(out.ending, RunEnding::kRerun);
  EXPECT_EQ(out.message, "case 1 (cv 30.0% > 10%)");
  EXPECT_EQ(out.stats.size(), 2u) << "a rerun's figures are stored too";

  out = RunFinalizer::Judge(NoisyReading(), RerunInput(2, 2));
  EXPECT_EQ(out.ending, RunEnding::kSucceeded);
  EXPECT_EQ(out.message, "still unstable after 2 reruns: case 1 (cv 30.0% > 10%)");

  JudgeInput loose = RerunInput(2, 0);
  loose.max_cv = 0.5;  // the job's own limit
  EXPECT_EQ(RunFinalizer::Judge(NoisyReading(), loose).ending, RunEnding::kSucceeded);
}

TEST(RunFinalizer, NoRerunWithoutRerunsForAnEmulatedCountOrAHealthCheck) {
  RunEnd out = RunFinalizer::Judge(NoisyReading(), RerunInput(0, 0));
  EXPECT_EQ(out.ending, RunEnding::kSucceeded);
  EXPECT_EQ(out.message, "") << "no reruns asked: nothing said about stability";
  JudgeInput emulated = RerunInput(2, 0);
  emulated.measured = "emulated";
  EXPECT_EQ(RunFinalizer::Judge(NoisyReading(), emulated).ending, RunEnding::kSucceeded);
  JudgeInput health = RerunInput(2, 0);
  health.health_check = true;
  EXPECT_EQ(RunFinalizer::Judge(NoisyReading(), health).ending, RunEnding::kSucceeded);
}

}  // namespace
}  // namespace mculab::server
