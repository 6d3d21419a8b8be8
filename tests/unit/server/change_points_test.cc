// The change-point detector of a benchmark series (server/domain/change_points.h).
#include "server/domain/change_points.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace mculab::server {
namespace {

TrendPoint P(double median, double half_width) {
  return {median, median - half_width, median + half_width};
}

// `n` jobs around `level`: medians with normal noise, 95% intervals of +- `half_width`.
std::vector<TrendPoint> Noisy(std::mt19937_64& rng, std::size_t n, double level, double sd,
                              double half_width) {
  std::normal_distribution<double> noise(0, sd);
  std::vector<TrendPoint> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(P(level + noise(rng), half_width));
  return out;
}

TEST(ChangePoints, AStepIsFoundAtTheFirstJobOfTheNewLevel) {
  std::mt19937_64 rng(7);
  auto points = Noisy(rng, 12, 1000, 3, 8);
  const auto after = Noisy(rng, 9, 1100, 3, 8);  // 10% slower from job 12 on
  points.insert(points.end(), after.begin(), after.end());
  const auto found = FindChangePoints(points);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].index, 12u);
  EXPECT_NEAR(found[0].before, 1000, 6);
  EXPECT_NEAR(found[0].after, 1100, 6);
  EXPECT_NEAR(found[0].ratio, 1.1, 0.01);
}

TEST(ChangePoints, AStepDownAndBackUpGivesTwo) {
  std::vector<TrendPoint> points;
  for (int i = 0; i < 5; ++i) points.push_back(P(500, 2));
  for (int i = 0; i < 4; ++i) points.push_back(P(400, 2));
  for (int i = 0; i < 6; ++i) points.push_back(P(500, 2));
  const auto found = FindChangePoints(points);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].index, 5u);
  EXPECT_LT(found[0].ratio, 1);
  EXPECT_EQ(found[1].index, 9u);
  EXPECT_GT(found[1].ratio, 1);
}

TEST(ChangePoints, ANoisyFlatSeriesHasNone) {
  // Many seeds, so the test does not depend on one lucky draw: job-to-job noise well inside the
  // intervals' width, as repeated runs of one firmware give.
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    std::mt19937_64 rng(seed);
    const auto points = Noisy(rng, 60, 1000, 4, 10);
    EXPECT_TRUE(FindChangePoints(points).empty()) << "seed " << seed;
  }
}

TEST(ChangePoints, OneOutlierIsNotAChangePoint) {
  std::vector<TrendPoint> points;
  for (int i = 0; i < 6; ++i) points.push_back(P(200, 1));
  points.push_back(P(260, 1));
  for (int i = 0; i < 6; ++i) points.push_back(P(200, 1));
  EXPECT_TRUE(FindChangePoints(points).empty());
  // With a window of one job, the outlier is a step up and one back down.
  const auto one = FindChangePoints(points, {.window = 1, .min_relative_step = 0.01});
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(one[0].index, 6u);
  EXPECT_EQ(one[1].index, 7u);
}

TEST(ChangePoints, AStepSmallerThanTheThresholdIsIgnored) {
  // Exact cycle counts (an emulator): intervals of zero width, a step of 0.5%.
  std::vector<TrendPoint> points;
  for (int i = 0; i < 5; ++i) points.push_back(P(1000, 0));
  for (int i = 0; i < 5; ++i) points.push_back(P(1005, 0));
  EXPECT_TRUE(FindChangePoints(points).empty());
  const auto found = FindChangePoints(points, {.window = 3, .min_relative_step = 0.001});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].index, 5u);
}

TEST(ChangePoints, AStepSpreadOverTwoJobsIsReportedOnce) {
  std::vector<TrendPoint> points;
  for (int i = 0; i < 5; ++i) points.push_back(P(100, 1));
  points.push_back(P(150, 1));  // half way
  for (int i = 0; i < 5; ++i) points.push_back(P(200, 1));
  const auto found = FindChangePoints(points);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(found[0].index == 5u || found[0].index == 6u) << found[0].index;
}

TEST(ChangePoints, TooFewJobsOrAStepAtTheVeryEndGiveNone) {
  std::vector<TrendPoint> points;
  for (int i = 0; i < 5; ++i) points.push_back(P(100, 1));
  EXPECT_TRUE(FindChangePoints(points).empty());
  points.push_back(P(200, 1));
  points.push_back(P(200, 1));  // two jobs of the new level: fewer than the window of 3
  EXPECT_TRUE(FindChangePoints(points).empty());
  points.push_back(P(200, 1));
  ASSERT_EQ(FindChangePoints(points).size(), 1u);
  EXPECT_TRUE(FindChangePoints({}).empty());
}

}  // namespace
}  // namespace mculab::server
