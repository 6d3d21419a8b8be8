// A benchmark series over time (the trend view, docs/http-api.md GET /api/v1/series): per job,
// the case's median with its bootstrap 95% interval and the job's provenance, where the runner
// or firmware changed, and the change points (server/domain/change_points.h).
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/domain/change_points.h"
#include "server/service/series_query.h"

namespace mculab::server {

struct TrendRequest {
  SeriesQuery series;
  ChangePointOptions detector;
};

struct TrendJob {
  JobId id = 0;
  std::string label;
  std::string user;
  std::string board;  // the board it ran on
  std::int64_t created_ms = 0;
  std::int64_t finished_ms = 0;
  std::uint32_t case_index = 0;
  std::int64_t case_id = 0;
  std::uint64_t n = 0;  // timer values the interval was drawn from (every pass)
  double median = 0;    // the case's median
  double lo = 0;        // its bootstrap 95% interval
  double hi = 0;
  std::string unit;
  bool emulated = false;
  std::string measured;         // MeasuredOfRun (results.h)
  std::string port;             // the runner's port ("host" for the native runner)
  std::string firmware_sha256;  // the runner the run programmed (generic or custom)
  std::string runner_version;   // as its Hello said
  std::string runner_name;      // a custom runner's uploaded file name; empty otherwise
  std::string commit, branch;   // the code it measured, as given at submit
  std::string model_sha256;     // a model series: the .tflite the job ran
  // A model series: the model file differs from the job before's (same name, other bytes).
  bool model_changed = false;
  // The firmware hash or runner version differs from the job before's (false for the first), or
  // the model file does (model_changed): either way the figures before and after measured
  // different code.
  bool runner_changed = false;
};

struct TrendChange {
  std::size_t index = 0;  // jobs[index] is the first job of the new level
  JobId before_job = 0;   // jobs[index - 1]
  JobId after_job = 0;    // jobs[index]
  double before = 0;      // the levels (medians of the detector's windows)
  double after = 0;
  double ratio = 0;  // after / before
};

struct Trend {
  SeriesQuery query;
  ChangePointOptions detector;
  std::vector<std::string> param_names;  // the op's, in catalog order; empty for custom runners
  std::string unit;                      // the newest job's
  std::vector<TrendJob> jobs;            // oldest first
  std::vector<TrendChange> changes;      // in job order
};

// A change point in the series of one case of a job: the job is the first of a new level.
struct JobCaseChange {
  std::int64_t case_id = 0;
  std::vector<std::int32_t> params;
  SeriesQuery series;  // the case's series (its kind, op, parameters or id, runner)
  TrendChange change;
};

struct ChangedJob {
  Job job;
  bool emulated = false;
  std::vector<JobCaseChange> changes;  // in case order
};

// The history's "changed" filter: of the newest `scanned` succeeded jobs that match the filter,
// those at a change point of one of their cases' series.
struct ChangedJobs {
  std::uint64_t scanned = 0;
  bool truncated = false;  // more series than kMaxChangedSeries: the newest jobs' were looked at
  std::vector<ChangedJob> jobs;  // newest first
};

inline constexpr std::uint32_t kMaxChangedScan = 500;
inline constexpr std::size_t kMaxChangedSeries = 300;

}  // namespace mculab::server
