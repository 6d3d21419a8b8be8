// A board's health check (DESIGN.md §3): a small known workload whose checksum is checked like any
// job's and whose median timer value is compared with the board's calibration. These functions
// say what the check measured, what it is compared with, and whether it is within tolerance.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "server/domain/board.h"
#include "server/domain/run.h"

namespace mculab::server {

// What a health check measured: case 0's median timer value (metric 0), rounded; 0 when absent.
std::int64_t HealthCheckValue(std::span<const CaseStats> stats);

// The value the check is compared with: the one configured for the board's kind (`configured`,
// by kind) when there is one, else on an emulated board its own calibration (a timer on silicon
// or a host varies, so it is compared only with a configured value); 0 or less: no comparison.
std::int64_t ExpectedHealthValue(const Board& board,
                                 const std::map<std::string, std::int64_t>& configured);

// Empty when `measured` is within tolerance × expected of `expected` (or there is nothing to
// compare with); otherwise why the check failed, with both numbers.
std::string CheckCalibration(std::int64_t measured, std::int64_t expected, double tolerance);

}  // namespace mculab::server
