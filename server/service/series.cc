#include "server/service/series.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/stats.h"

namespace mculab::server {

Downsampled DownsampleMinMax(std::span<const SeriesPoint> series, std::size_t max_points) {
  Downsampled out;
  const std::size_t n = series.size();
  if (n <= max_points) {
    out.iterations.reserve(n);
    out.values.reserve(n);
    for (const auto& p : series) {
      out.iterations.push_back(p.iteration);
      out.values.push_back(p.value);
    }
    return out;
  }
  out.downsampled = true;
  const std::size_t buckets = std::max<std::size_t>(1, max_points / 2);
  out.iterations.reserve(2 * buckets);
  out.values.reserve(2 * buckets);
  auto emit = [&](std::size_t i) {
    out.iterations.push_back(series[i].iteration);
    out.values.push_back(series[i].value);
  };
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t start = b * n / buckets;
    const std::size_t end = (b + 1) * n / buckets;
    std::size_t lo = start;
    std::size_t hi = start;
    for (std::size_t i = start; i < end; ++i) {
      if (series[i].value < series[lo].value) lo = i;
      if (series[i].value > series[hi].value) hi = i;
    }
    emit(std::min(lo, hi));
    if (lo != hi) emit(std::max(lo, hi));
  }
  return out;
}

Histogram MakeHistogram(std::span<const double> values, std::size_t bins) {
  Histogram h;
  if (values.empty() || bins == 0) return h;
  const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  h.lo = *mn;
  h.hi = *mx;
  if (h.lo == h.hi) {
    h.counts.assign(1, values.size());
    return h;
  }
  h.counts.assign(bins, 0);
  const double width = (h.hi - h.lo) / static_cast<double>(bins);
  for (double v : values) {
    const double pos = std::floor((v - h.lo) / width);
    const std::size_t i = pos <= 0 ? 0 : std::min(bins - 1, static_cast<std::size_t>(pos));
    ++h.counts[i];
  }
  return h;
}

ResampledMedian::ResampledMedian(std::span<const double> values)
    : sorted_(values.begin(), values.end()) {
  std::sort(sorted_.begin(), sorted_.end());
  median_ = PercentileOfSorted(sorted_, 0.5);
  if (sorted_.empty()) return;
  const double h = static_cast<double>(sorted_.size() - 1) * 0.5;
  const double lo = std::floor(h);
  frac_ = h - lo;
  k_ = static_cast<std::size_t>(lo) + 1;
  above_ = static_cast<double>(sorted_.size() - k_);
}

std::size_t ResampledMedian::Index(double u) const {
  const double pos = std::floor(u * static_cast<double>(sorted_.size()));
  if (pos <= 0) return 0;
  return std::min(sorted_.size() - 1, static_cast<std::size_t>(pos));
}

double ResampledMedian::Draw(std::mt19937_64& rng) {
  const std::size_t n = sorted_.size();
  if (n == 0) return 0;
  // U(k) ~ Beta(k, n + 1 - k), as X / (X + Y) with X ~ Gamma(k), Y ~ Gamma(n + 1 - k).
  std::gamma_distribution<double> gx(static_cast<double>(k_), 1.0);
  std::gamma_distribution<double> gy(static_cast<double>(n + 1 - k_), 1.0);
  const double x = gx(rng);
  const double y = gy(rng);
  const double u = x + y > 0 ? x / (x + y) : 0.5;
  const double first = sorted_[Index(u)];
  if (frac_ == 0) return first;
  // U(k+1): the smallest of the n - k uniform numbers above U(k), which is 1 - W^(1 / (n - k))
  // of the way from U(k) to 1 for W uniform in (0, 1].
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double w = 1.0 - unit(rng);
  const double u2 = u + (1.0 - u) * (1.0 - std::pow(w, 1.0 / above_));
  const double second = sorted_[Index(u2)];
  return first + frac_ * (second - first);
}

std::optional<RatioInterval> BootstrapMedianRatio(std::span<const double> base,
                                                  std::span<const double> other, std::uint64_t seed,
                                                  int resamples) {
  if (base.empty() || other.empty() || resamples < 1) return std::nullopt;
  ResampledMedian a(base);
  ResampledMedian b(other);
  if (a.median() == 0) return std::nullopt;
  std::mt19937_64 rng(seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double ma = a.Draw(rng);
    const double mb = b.Draw(rng);
    ratios.push_back(ma != 0 ? mb / ma : std::numeric_limits<double>::infinity());
  }
  std::sort(ratios.begin(), ratios.end());
  RatioInterval r;
  r.ratio = b.median() / a.median();
  r.lo = PercentileOfSorted(ratios, 0.025);
  r.hi = PercentileOfSorted(ratios, 0.975);
  r.significant = r.lo > 1.0 || r.hi < 1.0;
  return r;
}

std::string_view RatioVerdict(const RatioInterval& r) {
  if (r.lo > 1.0) return "slower";
  if (r.hi < 1.0) return "faster";
  if (r.lo >= 1.0 - kNoChangeBand && r.hi <= 1.0 + kNoChangeBand) return "no change";
  return "unclear";
}

std::optional<MedianInterval> BootstrapMedian(std::span<const double> values, std::uint64_t seed,
                                              int resamples) {
  if (values.empty() || resamples < 1) return std::nullopt;
  ResampledMedian m(values);
  std::mt19937_64 rng(seed);
  std::vector<double> medians;
  medians.reserve(static_cast<std::size_t>(resamples));
  for (int i = 0; i < resamples; ++i) medians.push_back(m.Draw(rng));
  std::sort(medians.begin(), medians.end());
  return MedianInterval{m.median(), PercentileOfSorted(medians, 0.025),
                        PercentileOfSorted(medians, 0.975)};
}

Variation JudgeVariation(std::span<const SeriesPoint> series, std::string_view measured,
                         double max_cv) {
  Variation v;
  std::vector<double> values;
  values.reserve(series.size());
  for (const SeriesPoint& p : series) values.push_back(static_cast<double>(p.value));
  const Summary s = Summarize(values);
  v.n = s.n;
  v.cv = s.cv;
  v.max_cv = LimitCv(measured, max_cv);
  v.stability = Stability(v.cv, measured, max_cv);
  if (values.empty()) return v;
  std::sort(values.begin(), values.end());
  const double q1 = PercentileOfSorted(values, 0.25);
  const double q3 = PercentileOfSorted(values, 0.75);
  const double low = q1 - 1.5 * (q3 - q1);
  const double high = q3 + 1.5 * (q3 - q1);
  bool leading = true;
  for (const SeriesPoint& p : series) {
    const double x = static_cast<double>(p.value);
    const bool above = x > high;
    const bool below = x < low;
    if (leading && above) {
      ++v.warmup;
    } else {
      leading = false;
    }
    if (!above && !below) continue;
    (above ? v.high_outliers : v.low_outliers) += 1;
    if (v.outlier_iterations.size() < kListedOutliers) v.outlier_iterations.push_back(p.iteration);
  }
  return v;
}

}  // namespace mculab::server
