#include "server/domain/health_check.h"

#include <charconv>
#include <cmath>

namespace mculab::server {

std::int64_t HealthCheckValue(std::span<const CaseStats> stats) {
  double median = 0;
  for (const CaseStats& s : stats) {
    if (s.case_index == 0 && s.metric_index == 0) median = s.median;
  }
  return static_cast<std::int64_t>(std::llround(median));
}

std::int64_t ExpectedHealthValue(const Board& board,
                                 const std::map<std::string, std::int64_t>& configured) {
  if (auto e = configured.find(board.kind); e != configured.end()) return e->second;
  return board.emulated ? board.calibration : 0;
}

std::string CheckCalibration(std::int64_t measured, std::int64_t expected, double tolerance) {
  if (expected <= 0) return {};
  const double diff = std::abs(static_cast<double>(measured - expected));
  if (diff <= tolerance * static_cast<double>(expected)) return {};
  char tol[32];
  auto [end, ec] = std::to_chars(tol, tol + sizeof tol, tolerance);  // shortest round trip
  return "health check: measured " + std::to_string(measured) + ", expected " +
         std::to_string(expected) + " (tolerance " +
         (ec == std::errc() ? std::string(tol, end) : std::to_string(tolerance)) + ")";
}

}  // namespace mculab::server
