// A health check's measurement against the board's calibration (server/domain/health_check.h).
#include "server/domain/health_check.h"

#include <gtest/gtest.h>

namespace mculab::server {
namespace {

TEST(HealthCheck, TheValueIsCaseZerosRoundedMedianTimer) {
  CaseStats other;
  other.case_index = 0;
  other.metric_index = 1;
  other.median = 99;
  CaseStats timer;
  timer.median = 1234.6;
  const std::vector<CaseStats> stats = {other, timer};
  EXPECT_EQ(HealthCheckValue(stats), 1235);
  EXPECT_EQ(HealthCheckValue({}), 0);
}

TEST(HealthCheck, TheConfiguredValueForTheKindComesFirstThenAnEmulatedBoardsCalibration) {
  Board b;
  b.kind = "corstone300-qemu";
  b.calibration = 500;
  b.emulated = true;
  EXPECT_EQ(ExpectedHealthValue(b, {}), 500);
  EXPECT_EQ(ExpectedHealthValue(b, {{"corstone300-qemu", 700}}), 700);
  b.emulated = false;  // silicon or a host: its timer varies, only a configured value counts
  EXPECT_EQ(ExpectedHealthValue(b, {}), 0);
  EXPECT_EQ(ExpectedHealthValue(b, {{"host", 700}}), 0);
}

TEST(HealthCheck, WithinToleranceIsHealthyAndBeyondItSaysBothNumbers) {
  EXPECT_EQ(CheckCalibration(1000, 1000, 0), "");
  EXPECT_EQ(CheckCalibration(1040, 1000, 0.05), "");
  EXPECT_EQ(CheckCalibration(1060, 1000, 0.05),
            "health check: measured 1060, expected 1000 (tolerance 0.05)");
  EXPECT_EQ(CheckCalibration(999, 1000, 0),
            "health check: measured 999, expected 1000 (tolerance 0)");
}

TEST(HealthCheck, NothingToCompareWithNeverFails) {
  EXPECT_EQ(CheckCalibration(123, 0, 0), "");
  EXPECT_EQ(CheckCalibration(123, -1, 0), "");
}

}  // namespace
}  // namespace mculab::server
