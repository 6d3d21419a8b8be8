// What the web page draws and compares, computed from raw samples (docs/http-api.md): a long run
// downsampled for a plot, a histogram of every sample, and the bootstrap confidence interval of a
// ratio of medians. Pure functions of their inputs (the bootstrap's randomness comes from the
// seed). Thread-safety: pure.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/service/store.h"

namespace mculab::server {

struct Downsampled {
  std::vector<std::uint32_t> iterations;  // ascending
  std::vector<std::int64_t> values;
  bool downsampled = false;
};

// At most `max_points` points (max_points >= 2) of a series in iteration order. A longer series
// is cut into max_points / 2 equal buckets and each bucket keeps its smallest and its largest
// value (the first of equal ones, one point when they are the same), in iteration order, so
// spikes survive; shorter series come back whole.
Downsampled DownsampleMinMax(std::span<const SeriesPoint> series, std::size_t max_points);

struct Histogram {
  double lo = 0;  // the smallest value
  double hi = 0;  // the largest value, counted in the last bin
  std::vector<std::uint64_t> counts;
};

// `bins` (>= 1) equal-width bins from the smallest to the largest value. Identical values give
// lo == hi and a single count; no values give lo = hi = 0 and no counts.
Histogram MakeHistogram(std::span<const double> values, std::size_t bins);

struct RatioInterval {
  double ratio = 0;  // median(other) / median(base)
  double lo = 0;     // the bootstrap 95% interval of that ratio
  double hi = 0;
  bool significant = false;  // the interval excludes 1
};

inline constexpr int kBootstrapResamples = 2000;

// Within this relative band around 1 an interval that holds 1 means "no change" (1%).
inline constexpr double kNoChangeBand = 0.01;

// What a ratio of times says (docs/http-api.md, GET /api/v1/compare): "slower" or "faster" when
// its 95% interval excludes 1 (above or below), "no change" when the interval holds 1 and lies
// within 1 +- kNoChangeBand (an emulated count that did not move gives exactly 1), "unclear" when
// it holds 1 but is wider: the samples cannot tell.
std::string_view RatioVerdict(const RatioInterval& r);

// The ratio of medians of `other` to `base` and its 95% bootstrap percentile interval:
// `resamples` times, both samples are resampled with replacement (each at its own size) and the
// ratio of the resamples' medians is taken; the interval is their 2.5th and 97.5th percentiles.
// Medians and percentiles interpolate as common/stats.h does. Every raw sample takes part, at
// O(n log n) cost instead of O(n) per resample: for sorted values the k-th smallest of n indices
// drawn uniformly is floor(n * U(k)), where U(k), the k-th order statistic of n uniform numbers,
// is Beta(k, n + 1 - k) distributed; the next one above it is the smallest of the n - k uniform
// numbers above U(k). So one resample's median costs two gamma and one uniform draw, with exactly
// the distribution that drawing n indices would give. Deterministic for a given seed (and
// standard library). nullopt when either side is empty or the base median is 0.
std::optional<RatioInterval> BootstrapMedianRatio(std::span<const double> base,
                                                  std::span<const double> other, std::uint64_t seed,
                                                  int resamples = kBootstrapResamples);

struct MedianInterval {
  double median = 0;
  double lo = 0;  // the bootstrap 95% interval of the median
  double hi = 0;
};

// The median of `values` and its 95% bootstrap percentile interval: the 2.5th and 97.5th
// percentiles of the medians of `resamples` resamples with replacement (drawn as
// BootstrapMedianRatio draws them). Deterministic for a given seed. nullopt when empty.
std::optional<MedianInterval> BootstrapMedian(std::span<const double> values, std::uint64_t seed,
                                              int resamples = kBootstrapResamples);

// How far one case's timings can be trusted (docs/http-api.md, GET /api/v1/compare): judged from
// the timer's values of pass 0 in iteration order.
struct Variation {
  // "exact": an emulated count, the same work gives the same figure, nothing to judge; "steady":
  // cv at most max_cv; "unstable": cv above it, so no ratio to another job is a verdict on speed.
  std::string stability;
  double cv = 0;      // stddev / |mean| of every value (common/stats.h)
  double max_cv = 0;  // the limit it was judged by (a fraction); 0 for exact
  std::uint64_t n = 0;
  // Values outside Tukey's fences, [Q1 - 1.5 IQR, Q3 + 1.5 IQR]: shown, never dropped.
  std::uint64_t low_outliers = 0, high_outliers = 0;
  std::vector<std::uint32_t> outlier_iterations;  // the first kListedOutliers, ascending
  // Warm-up: how many iterations from the first, in a row, lie above the upper fence (caches,
  // branch predictors and clocks settling); 0 when the first does not.
  std::uint32_t warmup = 0;
};

inline constexpr std::size_t kListedOutliers = 8;

// Judges `series` (iteration order) measured as `measured` ("emulated", "host", "silicon")
// against `max_cv` (a fraction; 0: DefaultMaxCv, common/stats.h). Emulated series are exact
// whatever their cv; outliers and warm-up are counted for every kind.
Variation JudgeVariation(std::span<const SeriesPoint> series, std::string_view measured,
                         double max_cv = 0);

// A sorted sample and draws of the median of a resample of it (see BootstrapMedianRatio).
class ResampledMedian {
 public:
  explicit ResampledMedian(std::span<const double> values);
  double median() const { return median_; }
  // The median of one resample with replacement of the values (same size).
  double Draw(std::mt19937_64& rng);

 private:
  std::size_t Index(double u) const;

  std::vector<double> sorted_;
  double median_ = 0;
  double frac_ = 0;    // 0.5 when the median interpolates between two order statistics
  std::size_t k_ = 1;  // the lower order statistic of the median, 1-based
  double above_ = 1;   // n - k: how many order statistics lie above the k-th
};

}  // namespace mculab::server
