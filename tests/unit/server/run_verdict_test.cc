// The verdict on a finished run (server/domain/run_verdict.h).
#include "server/domain/run_verdict.h"

#include <gtest/gtest.h>

#include "server/domain/pass_planner.h"

namespace mculab::server {
namespace {

CaseResult Result(std::uint32_t index, bool ok, std::uint32_t checksum = 0xbeef,
                  std::uint32_t expected = 0xbeef) {
  return CaseResult{1, index, checksum, expected, ok, 0};
}

CaseStats Timer(std::uint32_t index, std::uint64_t n) {
  CaseStats s;
  s.case_index = index;
  s.metric_index = 0;
  s.n = n;
  return s;
}

RunVerdictInput TwoCasesOfFour() {
  RunVerdictInput in;
  in.num_cases = 2;
  in.iterations = 4;
  return in;
}

TEST(RunVerdict, EveryCaseCompleteAndCorrectSucceedsWithNothingToFlag) {
  const std::vector<CaseResult> results = {Result(0, true), Result(1, true)};
  const std::vector<CaseStats> stats = {Timer(0, 4), Timer(1, 4)};
  const RunVerdict v = JudgeRun(TwoCasesOfFour(), results, stats);
  EXPECT_FALSE(v.wrong_result);
  EXPECT_EQ(v.message, "");
}

TEST(RunVerdict, AStoredChecksumMismatchIsAWrongResultNamingTheCase) {
  const std::vector<CaseResult> results = {Result(0, true), Result(1, false, 0x12, 0xcafe)};
  const std::vector<CaseStats> stats = {Timer(0, 4), Timer(1, 4)};
  const RunVerdict v = JudgeRun(TwoCasesOfFour(), results, stats);
  EXPECT_TRUE(v.wrong_result);
  EXPECT_EQ(v.message,
            "wrong result (checksum mismatch): case 1: checksum 0x00000012, expected 0x0000cafe");
}

TEST(RunVerdict, AFailureTheAgentReportedIsNotRepeatedWhenTheStoreHasItToo) {
  RunVerdictInput in = TwoCasesOfFour();
  in.reported_failures = {ChecksumFailure(1, 0, 0xcafe), ChecksumFailure(0, 1, 2)};
  const std::vector<CaseResult> results = {Result(1, false, 0, 0xcafe)};
  const RunVerdict v = JudgeRun(in, results, {});
  EXPECT_TRUE(v.wrong_result);
  EXPECT_EQ(v.message,
            "wrong result (checksum mismatch): case 1: checksum 0x00000000, expected "
            "0x0000cafe; case 0: checksum 0x00000001, expected 0x00000002");
}

TEST(RunVerdict, MissingIterationsAndMissingChecksumReportsAreFlagged) {
  const std::vector<CaseResult> results = {Result(0, true)};
  const std::vector<CaseStats> stats = {Timer(0, 4), Timer(1, 3)};
  const RunVerdict v = JudgeRun(TwoCasesOfFour(), results, stats);
  EXPECT_FALSE(v.wrong_result);
  EXPECT_EQ(v.message, "case 1: 3 of 4 iterations stored; case 1: no checksum reported");
}

TEST(RunVerdict, ACustomRunnersChecksumsAreNotVerifiedAndTheVerdictSaysSo) {
  RunVerdictInput in = TwoCasesOfFour();
  in.custom_runner = true;
  const std::vector<CaseResult> results = {Result(0, false, 1, 2), Result(1, false, 3, 4)};
  const std::vector<CaseStats> stats = {Timer(0, 4), Timer(1, 4)};
  const RunVerdict v = JudgeRun(in, results, stats);
  EXPECT_FALSE(v.wrong_result);
  EXPECT_EQ(v.message, "checksums not verified (custom firmware)");
}

TEST(RunVerdict, PassesThatDisagreeOnCyclesAreFlaggedAndOnePassIsNeverCompared) {
  RunVerdictInput in = TwoCasesOfFour();
  in.pass_tolerance = 0.02;
  in.cycles_by_pass = {{1000, 2000}, {1000, 2600}};
  const std::vector<CaseResult> results = {Result(0, true), Result(1, true)};
  const std::vector<CaseStats> stats = {Timer(0, 4), Timer(1, 4)};
  in.passes = 1;
  EXPECT_EQ(JudgeRun(in, results, stats).message, "");
  in.passes = 2;
  const RunVerdict v = JudgeRun(in, results, stats);
  EXPECT_FALSE(v.wrong_result);
  EXPECT_FALSE(v.message.empty());
  EXPECT_EQ(v.message, CheckPassAgreement(in.cycles_by_pass, 0.02, false).Summary());
}

}  // namespace
}  // namespace mculab::server
