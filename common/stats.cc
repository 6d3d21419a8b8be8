#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace mculab {

double PercentileOfSorted(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0;
  p = std::clamp(p, 0.0, 1.0);
  const double h = static_cast<double>(sorted.size() - 1) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted[sorted.size() - 1];
  const double frac = h - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

Summary Summarize(std::span<const double> values) {
  Summary s;
  s.n = values.size();
  if (values.empty()) return s;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = PercentileOfSorted(sorted, 0.5);
  s.p90 = PercentileOfSorted(sorted, 0.9);
  s.p99 = PercentileOfSorted(sorted, 0.99);
  double sum = 0;
  for (double v : sorted) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  if (s.n > 1) {
    // Two-pass: subtracting the mean first keeps large cycle counts from losing precision.
    double sq = 0;
    for (double v : sorted) sq += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(s.n - 1));
  }
  s.cv = s.mean != 0 ? s.stddev / std::abs(s.mean) : 0;
  return s;
}

double DefaultMaxCv(std::string_view measured) {
  if (measured == "emulated") return 0;
  return measured == "host" ? kDefaultMaxCvHost : kDefaultMaxCvSilicon;
}

double LimitCv(std::string_view measured, double max_cv) {
  if (measured == "emulated") return 0;
  return max_cv > 0 ? max_cv : DefaultMaxCv(measured);
}

std::string_view Stability(double cv, std::string_view measured, double max_cv) {
  if (measured == "emulated") return "exact";
  return cv > LimitCv(measured, max_cv) ? "unstable" : "steady";
}

}  // namespace mculab
