// What a job's results are made of, computed from the stored raw samples (DESIGN.md §6).
// Thread-safety: pure functions and plain values.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/stats.h"
#include "server/domain/board.h"
#include "server/domain/job.h"
#include "server/domain/profile.h"
#include "server/domain/run.h"

namespace mculab::server {

// One CaseStats per (case, metric) present in `samples`, ordered by (case, metric): metric 0 is
// the timer (named and united by the run's timer unit), metric i > 0 is the run's counter i - 1
// (unit "count"). Samples of every pass are pooled (one pass per job until the pass planner).
std::vector<CaseStats> ComputeCaseStats(JobId job, RunId run, const Provenance& provenance,
                                        std::span<const Sample> samples);

// The statistics of one (case, metric) from its values: named and united as ComputeCaseStats says.
CaseStats CaseStatsOf(JobId job, RunId run, const Provenance& provenance, std::uint32_t case_index,
                      std::uint32_t metric_index, std::span<const double> values);
// The same from the values' Summarize, computed earlier (as each case of a run is stored).
CaseStats CaseStatsOf(JobId job, RunId run, const Provenance& provenance, std::uint32_t case_index,
                      std::uint32_t metric_index, const Summary& summary);

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

// A job's results: the one read model behind `mculab show` (gRPC GetResults) and the HTTP API's
// job document (job_results.h reads it).
struct JobResults {
  Job job;
  std::optional<Run> run;  // the latest run, when the job has been on a board
  // How the job measures (DESIGN.md section 7): from its run's runner once it started, else from
  // the lab's boards it can run on. `measured` is kMeasuredEmulated, kMeasuredHost or
  // kMeasuredSilicon.
  bool emulated = false;
  std::string measured;
  // A custom runner's job (Job::firmware_artifact): the runner's uploaded file name, which names
  // its series (SeriesQuery::runner); empty otherwise, or when the upload is gone.
  std::string runner_name;
  std::vector<std::string> param_names;
  // Every case of the job in sweep order; a case's statistics are stored once the run succeeded,
  // else computed from the raw samples of a case whose every iteration is stored, else empty.
  std::vector<CaseOutcome> cases;
  std::vector<RawSeries> samples;  // only when asked for
  // The latest run's events, passes, op profiles and memory.
  std::vector<std::string> events;  // asked for at submit
  std::vector<RunPass> passes;
  std::vector<OpProfileRow> ops;
  std::vector<MemoryFigure> memory;
};

// How a result was measured, three things never mixed in a verdict (DESIGN.md section 7):
// "emulated" (QEMU counts instructions in virtual time), "host" (the runner as a native Linux
// process, timed in ns) and "silicon" (an MCU's own counters).
inline constexpr std::string_view kMeasuredEmulated = "emulated";
inline constexpr std::string_view kMeasuredHost = "host";
inline constexpr std::string_view kMeasuredSilicon = "silicon";
// The one place that decides it. A run that started is what its runner said: emulated when an
// emulator ran it, host when its port is "host" or its timer counts ns, else silicon. Before its
// run starts, a job is what the boards it can run on are (MeasuredBeforeTheRun, job_results.cc):
// emulated if one of its kind is, host if the board it runs on is a host board.
std::string_view MeasuredOfRun(bool emulated, std::string_view port, std::string_view timer_unit);
std::string_view MeasuredOfRun(const Provenance& provenance);
// A board whose agent runs the runner as a native process says so with the tag timing=host (the
// agent adds it to every board of backend "host").
bool IsHostBoard(const Board& board);
std::string_view MeasuredOfBoard(bool emulated, bool host_board);

// Groups sorted samples (pass, case, metric, iteration) into series.
std::vector<RawSeries> GroupSamples(const Provenance& provenance, std::span<const Sample> samples);

}  // namespace mculab::server
