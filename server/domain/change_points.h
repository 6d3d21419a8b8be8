// Change points of a benchmark series: where a case's median moved to a new level and stayed
// there. Each job of a series is a point, its median and the 95% interval of that median. A
// change point is the first job of a new level:
//
//   job i (window <= i <= n - window) is a change point when the `window` jobs before it
//   ([i - window, i)) and the `window` jobs from it on ([i, i + window)) are separated: every
//   interval after lies above every interval before (slower), or every one below (faster); and
//   the median of the after-window's medians differs from the before-window's by at least
//   `min_relative_step` of the latter.
//
// One noisy job cannot make a change point (the jobs around it overlap the jobs on the other
// side), and a flat series whose intervals overlap has none. Where several consecutive jobs pass
// (a step spread over two jobs), the one with the widest gap between the windows is kept, and the
// next change point is looked for `window` jobs later, so the levels either side of a change
// point hold `window` jobs each. A step in the last window - 1 jobs is not reported until enough
// jobs after it agree. Pure: standard library only. Thread-safety: plain values.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace mculab::server {

struct TrendPoint {
  double median = 0;
  double lo = 0;  // the 95% interval of the median
  double hi = 0;
};

struct ChangePointOptions {
  std::size_t window = 3;           // k: jobs either side that must agree (>= 1)
  double min_relative_step = 0.01;  // the least |after / before - 1| that counts
};

struct ChangePoint {
  std::size_t index = 0;  // the first point of the new level; index - 1 is the last of the old
  double before = 0;      // the median of the medians of the window before
  double after = 0;       // the same of the window from index on
  double ratio = 0;       // after / before (0 when before is 0)
};

// In ascending index order.
std::vector<ChangePoint> FindChangePoints(std::span<const TrendPoint> points,
                                          const ChangePointOptions& options = {});

}  // namespace mculab::server
