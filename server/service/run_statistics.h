// A finished run's statistics computed from its stored samples in bounded memory: the samples are
// streamed from the store in (case, metric, pass) order and only one (case, metric)'s values are
// held at a time, so the memory a run's finalisation needs grows with its iterations per case
// (at most 100,000 by admission), never with the run's size. The figures are the same, bit for bit,
// as ComputePassCaseStats and CyclesByPass over the whole run (profiles.h): each group's values
// go through the same Summarize.
// Thread-safety: RunStatisticsBuilder is a plain value for one thread; ComputeRunStatistics may be
// called from any thread with no lock a store callback takes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/result.h"
#include "server/domain/profile.h"
#include "server/domain/run.h"

namespace mculab::server {

class Store;

struct RunStatistics {
  // As ComputePassCaseStats: ordered by (case, metric); the timer from pass 0 only.
  std::vector<CaseStats> stats;
  // As CyclesByPass: the timer's median per case, per pass (NaN where a pass has none).
  std::vector<std::vector<double>> cycles_by_pass;
  std::uint64_t samples = 0;  // how many samples were read
};

class RunStatisticsBuilder {
 public:
  RunStatisticsBuilder(JobId job, RunId run, Provenance provenance, std::uint32_t passes,
                       std::uint32_t cases);

  // Samples in (case_index, metric, pass) order (any order of iterations), in as many calls as
  // the caller likes.
  void Add(std::span<const Sample> samples);
  RunStatistics Finish();

 private:
  void EndGroup();
  void EndTimerPass();

  JobId job_;
  RunId run_;
  Provenance provenance_;
  RunStatistics out_;
  bool in_group_ = false;
  std::uint32_t case_ = 0, metric_ = 0, pass_ = 0;
  std::vector<double> values_;       // the current (case, metric)'s values that count
  std::vector<double> pass_values_;  // the current (case, pass)'s timer values
};

// Reads the run's samples from the store in chunks and builds its statistics.
Result<RunStatistics> ComputeRunStatistics(Store& store, JobId job, RunId run,
                                           const Provenance& provenance, std::uint32_t passes,
                                           std::uint32_t cases);

}  // namespace mculab::server
