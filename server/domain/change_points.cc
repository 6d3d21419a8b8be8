#include "server/domain/change_points.h"

#include <algorithm>
#include <cmath>

namespace mculab::server {
namespace {

double MedianOf(std::span<const TrendPoint> w) {
  std::vector<double> m;
  m.reserve(w.size());
  for (const TrendPoint& p : w) m.push_back(p.median);
  std::sort(m.begin(), m.end());
  const std::size_t n = m.size();
  return n % 2 == 1 ? m[n / 2] : (m[n / 2 - 1] + m[n / 2]) / 2;
}

// The gap between the windows' intervals relative to the level before: > 0 when separated.
double Gap(std::span<const TrendPoint> before, std::span<const TrendPoint> after) {
  double before_lo = before[0].lo, before_hi = before[0].hi;
  for (const TrendPoint& p : before) {
    before_lo = std::min(before_lo, p.lo);
    before_hi = std::max(before_hi, p.hi);
  }
  double after_lo = after[0].lo, after_hi = after[0].hi;
  for (const TrendPoint& p : after) {
    after_lo = std::min(after_lo, p.lo);
    after_hi = std::max(after_hi, p.hi);
  }
  return std::max(after_lo - before_hi, before_lo - after_hi);
}

}  // namespace

std::vector<ChangePoint> FindChangePoints(std::span<const TrendPoint> points,
                                          const ChangePointOptions& options) {
  std::vector<ChangePoint> out;
  const std::size_t k = std::max<std::size_t>(1, options.window);
  const std::size_t n = points.size();
  if (n < 2 * k) return out;
  // Whether job i starts a new level, and the gap that says so (0 when it does not).
  auto score = [&](std::size_t i, ChangePoint* cp) {
    const auto before = points.subspan(i - k, k);
    const auto after = points.subspan(i, k);
    const double gap = Gap(before, after);
    if (!(gap > 0)) return 0.0;
    cp->index = i;
    cp->before = MedianOf(before);
    cp->after = MedianOf(after);
    cp->ratio = cp->before != 0 ? cp->after / cp->before : 0;
    const double step =
        cp->before != 0 ? std::abs(cp->after / cp->before - 1) : (cp->after != 0 ? INFINITY : 0);
    if (step < options.min_relative_step) return 0.0;
    return gap;
  };
  std::size_t i = k;
  while (i + k <= n) {
    ChangePoint best;
    double best_gap = score(i, &best);
    if (best_gap <= 0) {
      ++i;
      continue;
    }
    // A step spread over neighbouring jobs: keep the widest gap among the consecutive passes.
    for (std::size_t j = i + 1; j + k <= n && j < i + k; ++j) {
      ChangePoint cp;
      const double g = score(j, &cp);
      if (g <= 0) break;
      if (g > best_gap) {
        best_gap = g;
        best = cp;
      }
    }
    out.push_back(best);
    i = best.index + k;
  }
  return out;
}

}  // namespace mculab::server
