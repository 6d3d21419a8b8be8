// Summary statistics against values computed by hand.
#include "common/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace mculab {
namespace {

TEST(Stats, EmptyInputGivesZeroes) {
  Summary s = Summarize({});
  EXPECT_EQ(s.n, 0u);
  EXPECT_EQ(s.median, 0);
  EXPECT_EQ(s.stddev, 0);
  EXPECT_EQ(s.cv, 0);
}

TEST(Stats, SingleValueHasNoSpread) {
  std::vector<double> v = {42};
  Summary s = Summarize(v);
  EXPECT_EQ(s.n, 1u);
  EXPECT_EQ(s.min, 42);
  EXPECT_EQ(s.max, 42);
  EXPECT_EQ(s.median, 42);
  EXPECT_EQ(s.mean, 42);
  EXPECT_EQ(s.p90, 42);
  EXPECT_EQ(s.p99, 42);
  EXPECT_EQ(s.stddev, 0);
  EXPECT_EQ(s.cv, 0);
}

TEST(Stats, FourValuesByHand) {
  // Sorted: 100 105 110 120. Median: between ranks 1 and 2 -> 107.5. Mean 435/4 = 108.75.
  // p90: h = 3 * 0.9 = 2.7 -> 110 + 0.7 * 10 = 117. p99: h = 2.97 -> 110 + 0.97 * 10 = 119.7.
  // Squared deviations: 76.5625 + 14.0625 + 1.5625 + 126.5625 = 218.75; / 3 -> 72.91666...
  std::vector<double> v = {110, 100, 120, 105};
  Summary s = Summarize(v);
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.min, 100);
  EXPECT_DOUBLE_EQ(s.max, 120);
  EXPECT_DOUBLE_EQ(s.median, 107.5);
  EXPECT_DOUBLE_EQ(s.mean, 108.75);
  EXPECT_DOUBLE_EQ(s.p90, 117);
  EXPECT_NEAR(s.p99, 119.7, 1e-9);
  EXPECT_NEAR(s.stddev, std::sqrt(218.75 / 3), 1e-12);
  EXPECT_NEAR(s.cv, std::sqrt(218.75 / 3) / 108.75, 1e-12);
}

TEST(Stats, OddCountMedianIsTheMiddleValue) {
  std::vector<double> v = {5, 1, 3};
  EXPECT_DOUBLE_EQ(Summarize(v).median, 3);
}

TEST(Stats, PercentilesInterpolateBetweenClosestRanks) {
  // 1..11: h = 10 * p, so every tenth is an exact rank and p = 0.95 falls halfway.
  std::vector<double> v;
  for (int i = 1; i <= 11; ++i) v.push_back(i);
  EXPECT_DOUBLE_EQ(PercentileOfSorted(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(PercentileOfSorted(v, 0.9), 10);
  EXPECT_DOUBLE_EQ(PercentileOfSorted(v, 0.95), 10.5);
  EXPECT_DOUBLE_EQ(PercentileOfSorted(v, 1.0), 11);
}

TEST(Stats, ConstantValuesHaveZeroDeviation) {
  std::vector<double> v(100, 7);
  Summary s = Summarize(v);
  EXPECT_EQ(s.stddev, 0);
  EXPECT_EQ(s.cv, 0);
  EXPECT_EQ(s.p99, 7);
}

TEST(Stats, LargeCycleCountsKeepTheirPrecision) {
  // A small spread on a large offset: a one-pass sum of squares would lose it.
  std::vector<double> v = {1e12 + 1, 1e12 + 2, 1e12 + 3};
  Summary s = Summarize(v);
  EXPECT_DOUBLE_EQ(s.mean, 1e12 + 2);
  EXPECT_NEAR(s.stddev, 1.0, 1e-6);
}

TEST(Stats, ZeroMeanGivesZeroCv) {
  std::vector<double> v = {-1, 1};
  Summary s = Summarize(v);
  EXPECT_EQ(s.mean, 0);
  EXPECT_EQ(s.cv, 0);
  EXPECT_NEAR(s.stddev, std::sqrt(2.0), 1e-12);
}

}  // namespace
// The one stability rule (compare, the gate, reruns, show, export): an emulated count is exact;
// otherwise the job's limit, or the kind's default when it gives none.
TEST(Stats, StabilityIsExactEmulatedOtherwiseTheLimitOrTheKindsDefault) {
  EXPECT_EQ(Stability(5.0, "emulated", 0.01), "exact");
  EXPECT_EQ(LimitCv("emulated", 0.01), 0.0);
  EXPECT_EQ(Stability(0.09, "host", 0), "steady");
  EXPECT_EQ(Stability(0.11, "host", 0), "unstable");
  EXPECT_EQ(Stability(0.03, "silicon", 0), "unstable");
  EXPECT_EQ(Stability(0.03, "silicon", 0.05), "steady");
  EXPECT_EQ(Stability(0.05, "host", 0.05), "steady");  // at the limit: steady
  EXPECT_EQ(LimitCv("host", 0), kDefaultMaxCvHost);
  EXPECT_EQ(LimitCv("silicon", 0.5), 0.5);
}

}  // namespace mculab
