// A finished run's statistics computed from its stored samples in bounded memory: the samples are
// streamed from the store in (case, metric, pass) order and only one (case, metric)'s values are
// held at a time, so the memory a run's finalisation needs grows with its iterations per case
// (at most 100,000 by admission), never with the run's size. The figures are the same, bit for bit,
// as ComputePassCaseStats and CyclesByPass over the whole run (profiles.h): each group's values
// go through the same Summarize.
//
// RunStatisticsInProgress computes the same figures as a run's batches are queued for the store,
// so that a run's end reads no sample back: see its comment.
// Thread-safety: RunStatisticsBuilder and RunStatisticsInProgress are plain values for one thread
// (the Lab keeps one per active run under its lock); ComputeRunStatistics may be called from any
// thread with no lock a store callback takes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/stats.h"
#include "server/domain/profile.h"
#include "server/domain/run.h"

namespace mculab::server {

class ResultStore;

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

// A run's statistics computed from its sample batches in the order they are stored (the order the
// Lab queues them to the one writer), as each (pass, case) ends, so the run's end needs no read
// of its samples. Agents send a pass's cases one after another, so a (pass, case)'s samples arrive
// together: its values are held until another (pass, case) begins, then handed out to be
// summarised (Summarize) and only the summaries are kept. Memory: the values of one (pass, case), 8
// bytes each, at most kMaxHeldValues (2 MiB) per run, plus one Summary per (case, metric) and one
// median per (pass, case). The figures are the same, bit for bit, as ComputeRunStatistics reads
// from the store: Summarize sorts a group's values first, so only which values a group holds
// counts, never their order, and the groups are the same (the timer from pass 0, a counter from
// every pass; the timer's median per (pass, case)).
//
// It gives up, and the run's end reads its samples back, when it cannot be sure to hold exactly
// what the store holds: a (pass, case) that comes back after another began (a batch replayed out of
// order), a counter of a case in two passes, a (pass, case) larger than kMaxHeldValues, batches
// stored before it began (a server restarted mid-run: Abandon), or an ended (pass, case) whose
// summary was not added by Finish. A batch is counted once by its sequence, as the store stores it
// once.
class RunStatisticsInProgress {
 public:
  static constexpr std::size_t kMaxHeldValues = std::size_t{1} << 18;

  // One (pass, case)'s values once another (pass, case) began, by metric: summarised by
  // Summarise (outside any lock: a case of 100,000 iterations takes milliseconds to sort) and
  // handed back with AddSummaries.
  struct EndedPassCase {
    std::uint32_t pass = 0, case_index = 0;
    std::vector<std::pair<std::uint32_t, std::vector<double>>> values;
  };
  struct PassCaseSummary {
    std::uint32_t pass = 0, case_index = 0;
    std::vector<std::pair<std::uint32_t, Summary>> summaries;
  };

  // Counts the samples of batch `sequence` (queued for the store now, after every batch counted
  // before it); nothing when that sequence was counted already. Returns the (pass, case)s it
  // ended, usually none; until their summaries are added, Finish gives up.
  [[nodiscard]] std::vector<EndedPassCase> AddBatch(std::uint64_t sequence,
                                                    std::span<const Sample> samples);
  static PassCaseSummary Summarise(EndedPassCase ended);
  void AddSummaries(std::vector<PassCaseSummary> summaries);
  // AddBatch, Summarise and AddSummaries at once.
  void Add(std::uint64_t sequence, std::span<const Sample> samples);
  // Gives up: Finish gives nothing and the run's end reads its samples back.
  void Abandon();
  bool abandoned() const { return abandoned_; }
  // How many batches were counted (so a caller can check they are every batch stored).
  std::size_t batches() const { return sequences_.size(); }

  // The run's statistics over every batch counted, as ComputeRunStatistics would read them from
  // the store; nothing when it gave up. Leaves it abandoned.
  std::optional<RunStatistics> Finish(JobId job, RunId run, const Provenance& provenance,
                                      std::uint32_t passes, std::uint32_t cases);

 private:
  EndedPassCase EndPassCase();
  void Apply(const PassCaseSummary& summary);

  bool abandoned_ = false;
  std::set<std::uint64_t> sequences_;
  // The (pass, case) in progress and its values by metric (a handful of metrics: a linear search).
  bool in_pass_case_ = false;
  std::uint32_t pass_ = 0, case_ = 0;
  std::vector<std::pair<std::uint32_t, std::vector<double>>> values_;
  std::size_t held_ = 0;
  std::size_t last_metric_ = 0;  // values_'s index of the last sample's metric
  std::set<std::pair<std::uint32_t, std::uint32_t>> ended_;           // (pass, case)s summarised
  std::map<std::pair<std::uint32_t, std::uint32_t>, Summary> stats_;  // by (case, metric)
  std::map<std::pair<std::uint32_t, std::uint32_t>, double> timer_medians_;  // by (pass, case)
  std::uint64_t samples_ = 0;
  std::size_t out_ = 0;  // ended (pass, case)s whose summaries were not added yet
};

// Reads the run's samples from the store in chunks and builds its statistics.
Result<RunStatistics> ComputeRunStatistics(ResultStore& store, JobId job, RunId run,
                                           const Provenance& provenance, std::uint32_t passes,
                                           std::uint32_t cases);

}  // namespace mculab::server
