// The counter and profile use-case helpers, pure so they are tested without a Lab: events and the
// metrics they make, the statistics of a run with several passes, and the passes' agreement on
// cycles. Thread-safety: pure functions over
// plain values.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "server/domain/pass_planner.h"
#include "server/domain/profile.h"
#include "server/domain/run.h"

namespace mculab::server {

// Whether every unit of the board is emulated (and it has at least one).
bool AllEmulated(const BoardUnits& units);

// Normalises a job's requested events: trimmed, lower case, empty names and "cycles" dropped,
// duplicates once. kInvalidArgument for a name that is not [a-z0-9_]{1,32}.
Result<std::vector<std::string>> NormalizeEvents(const std::vector<std::string>& events);

// The metrics of a run with these passes: the union of the passes' events (cycles excluded), in
// pass order: metric i + 1 is union[i] (Provenance::counters).
std::vector<std::string> RunCounters(const PassPlan& plan);

// Per-case statistics of a run whose samples may come from several passes: the timer (metric 0)
// from pass 0 only (every pass measures it; pass 0 is the one shown), every counter from the pass
// that counted it. One pass: the same as ComputeCaseStats.
std::vector<CaseStats> ComputePassCaseStats(JobId job, RunId run, const Provenance& provenance,
                                            std::span<const Sample> samples);

// The median of the timer per case, per pass: cycles_by_pass[pass][case] (NaN for a case a pass
// has no samples of), for CheckPassAgreement.
std::vector<std::vector<double>> CyclesByPass(std::span<const Sample> samples, std::uint32_t passes,
                                              std::uint32_t cases);

}  // namespace mculab::server
