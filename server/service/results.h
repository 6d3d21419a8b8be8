// What a job's results are made of, computed from the stored raw samples (DESIGN.md §6).
// Thread-safety: pure functions and plain values.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "server/domain/job.h"
#include "server/domain/profile.h"
#include "server/domain/run.h"

namespace mculab::server {

// One CaseStats per (case, metric) present in `samples`, ordered by (case, metric): metric 0 is
// the timer (named and united by the run's timer unit), metric i > 0 is the run's counter i - 1
// (unit "count"). Samples of every pass are pooled (one pass per job until the pass planner).
std::vector<CaseStats> ComputeCaseStats(JobId job, RunId run, const Provenance& provenance,
                                        std::span<const Sample> samples);

// A case of a job's result: its parameters, its checksum result and its statistics.
struct CaseOutcome {
  std::uint32_t index = 0;
  std::int64_t case_id = 0;
  std::vector<std::int32_t> params;
  std::optional<CaseResult> result;
  std::vector<CaseStats> stats;  // one per metric
};

// Every value of one (case, metric), in iteration order.
struct RawSeries {
  std::uint32_t case_index = 0;
  std::uint32_t pass = 0;
  std::uint32_t metric_index = 0;
  std::string metric;
  std::vector<std::int64_t> values;
};

struct JobResults {
  Job job;
  std::optional<Run> run;  // the latest run, when the job has been on a board
  std::vector<std::string> param_names;
  std::vector<CaseOutcome> cases;
  std::vector<RawSeries> samples;  // only when asked for
  // The latest run's events, passes, op profiles and memory.
  std::vector<std::string> events;  // asked for at submit
  std::vector<RunPass> passes;
  std::vector<OpProfileRow> ops;
  std::vector<MemoryFigure> memory;
};

// Groups sorted samples (pass, case, metric, iteration) into series.
std::vector<RawSeries> GroupSamples(const Provenance& provenance, std::span<const Sample> samples);

}  // namespace mculab::server
