// Summary statistics of one case's measurements (DESIGN.md §6): n, min, max, median, mean, p90,
// p99, sample standard deviation and coefficient of variation.
//
// Percentiles use linear interpolation between the closest ranks (the "R-7" definition, NumPy's
// default): for sorted values x[0..n-1] and fraction p, h = (n - 1) * p and the percentile is
// x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]). The median is the 0.5 percentile.
// stddev is the sample standard deviation (divides by n - 1); cv = stddev / |mean|.
// Edge cases: n = 0 gives every field 0; n = 1 gives stddev = cv = 0; cv is 0 when mean is 0.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace mculab {

struct Summary {
  std::uint64_t n = 0;
  double min = 0;
  double max = 0;
  double median = 0;
  double mean = 0;
  double p90 = 0;
  double p99 = 0;
  double stddev = 0;
  double cv = 0;
};

Summary Summarize(std::span<const double> values);

// The cv above which a case's timings are unstable, by how they were measured ("emulated", "host"
// or "silicon"): a host process shares its cores with the rest of the machine; a microcontroller's
// cycle counter with interrupts off varies by well under 1% for the same work; an emulated count
// is exact (0: never unstable).
inline constexpr double kDefaultMaxCvHost = 0.10;
inline constexpr double kDefaultMaxCvSilicon = 0.02;
double DefaultMaxCv(std::string_view measured);

// The one stability rule that compare, the gate, reruns, `show` and the CSV export apply to a
// case's timer: "exact" for an emulated count; otherwise "unstable" when its cv is above the
// limit, else "steady". The limit is `max_cv` (a fraction: a job's --max-cv / 100) or, when that
// is 0, DefaultMaxCv(measured); LimitCv gives it (0 for emulated).
double LimitCv(std::string_view measured, double max_cv);
std::string_view Stability(double cv, std::string_view measured, double max_cv);

// The p-th fraction (0..1) of already sorted values, interpolated as described above; 0 when empty.
double PercentileOfSorted(std::span<const double> sorted, double p);

}  // namespace mculab
