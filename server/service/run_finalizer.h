// RunFinalizer: a finished run's end, once every batch its agent sent is committed. Read takes the
// run's statistics as they were computed while its batches were stored (RunStatisticsInProgress)
// or, when those do not cover every stored batch (a server restarted mid-run, batches replayed out
// of case order), streams the run's stored samples into them; it reads the run's checksum results,
// without the Lab's lock (the memory this takes does not grow with the run); Judge says, from that
// reading and the job and board as the Lab knows them, how the run and its job end. The Lab applies
// the outcome under its lock (RunEnds::Finalize): job transition, run close, board and health.
//
// Thread-safety: Read may run on any thread and takes no lock a store callback takes; Judge is
// pure.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "server/domain/run.h"
#include "server/domain/run_verdict.h"
#include "server/service/run_statistics.h"

namespace mculab::server {

class ResultStore;

// The run to finalize, as the Lab knew it when the run was queued (copied under its lock).
struct FinalizeTarget {
  RunId run = 0;
  JobId job = 0;
  Provenance provenance;
  std::uint32_t passes = 1;
  std::uint32_t cases = 0;
};

// What the store holds of the run.
struct RunReading {
  Result<RunStatistics> statistics;
  Result<std::vector<CaseResult>> results;
};

enum class RunEnding {
  // The store could not give the run's figures: the job fails, the run is an infrastructure
  // failure.
  kUnreadable,
  // A checksum differs from the host reference: the job fails, the run is a workload failure.
  kWrongResult,
  // A health check measured soundly, but not what the board was calibrated as: the job fails,
  // the run succeeded (its figures are stored).
  kOffCalibration,
  // The job succeeds; the message holds the verdict's flags (empty when nothing is flagged) and,
  // when it asked for reruns, the cases still unstable after them.
  kSucceeded,
  // The run succeeded but a case's timer varies more than the job's limit and the job has reruns
  // left: it runs again on the same board. The message names the unstable cases
  // (DescribeUnstable); the run's figures are stored (kept with the next run's).
  kRerun,
};

struct RunEnd {
  RunEnding ending = RunEnding::kUnreadable;
  std::string message;
  std::vector<CaseStats> stats;   // to store (kOffCalibration, kSucceeded and kRerun)
  std::int64_t health_value = 0;  // a health check's measured value (HealthCheckValue)
};

// What the judgement needs from the job and its board, besides the reading.
struct JudgeInput {
  RunVerdictInput verdict;  // its cycles_by_pass comes from the reading
  // A health check on a board the lab knows: its value is compared with `expected_health`
  // (ExpectedHealthValue; 0 or less: nothing to compare with) within `health_tolerance`.
  bool health_check = false;
  std::int64_t expected_health = 0;
  double health_tolerance = 0;
  // `mculab submit --reruns N --max-cv PCT`: reruns asked and done, the limit (a fraction; 0: the
  // kind's default) and how the run measured ("emulated", "host" or "silicon").
  std::uint32_t reruns = 0;
  std::uint32_t reruns_done = 0;
  double max_cv = 0;
  std::string measured;
};

// A case whose timer (metric 0, pass 0) varied more than the limit in a succeeded run.
struct UnstableCase {
  std::uint32_t case_index = 0;
  double cv = 0;      // a fraction
  double max_cv = 0;  // the limit, a fraction
};

// The cases of `stats` (a run's, RunEnd::stats) whose timer's cv exceeds `max_cv` (a fraction;
// 0: DefaultMaxCv of `measured`, common/stats.h), in case order; none for "emulated" (exact). The
// same judgement as JudgeVariation (series.h) on the same values.
std::vector<UnstableCase> UnstableCases(std::span<const CaseStats> stats, std::string_view measured,
                                        double max_cv);

// "case 2 (cv 14.2% > 10%)", and "and N more" past the first three.
std::string DescribeUnstable(std::span<const UnstableCase> cases);

class RunFinalizer {
 public:
  // Runs with at least this many samples are followed by malloc_trim: a large run leaves freed
  // pages in malloc's arenas (SQLite's sorter, the ingest queue's batches), and giving them back
  // returns the server's resident size to its resting level.
  static constexpr std::uint64_t kTrimAfterSamples = 100'000;

  explicit RunFinalizer(ResultStore& store) : store_(store) {}

  // `counted`: the statistics counted as the run's batches were queued, when they cover every
  // batch stored; without them (or when they gave up) the samples are read back.
  RunReading Read(const FinalizeTarget& target,
                  std::optional<RunStatisticsInProgress> counted = std::nullopt);
  static RunEnd Judge(RunReading reading, JudgeInput in);

 private:
  ResultStore& store_;
};

}  // namespace mculab::server
