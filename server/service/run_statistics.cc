#include "server/service/run_statistics.h"

#include <limits>
#include <utility>

#include "common/stats.h"
#include "server/service/results.h"
#include "server/service/store.h"

namespace mculab::server {

RunStatisticsBuilder::RunStatisticsBuilder(JobId job, RunId run, Provenance provenance,
                                           std::uint32_t passes, std::uint32_t cases)
    : job_(job), run_(run), provenance_(std::move(provenance)) {
  out_.cycles_by_pass.assign(passes,
                             std::vector<double>(cases, std::numeric_limits<double>::quiet_NaN()));
}

void RunStatisticsBuilder::Add(std::span<const Sample> samples) {
  for (const Sample& s : samples) {
    if (in_group_ && (s.case_index != case_ || s.metric != metric_)) {
      EndGroup();
    } else if (in_group_ && s.pass != pass_) {
      EndTimerPass();
    }
    in_group_ = true;
    case_ = s.case_index;
    metric_ = s.metric;
    pass_ = s.pass;
    const auto v = static_cast<double>(s.value);
    // The timer is shown from pass 0 (every pass measures it); a counter from every pass.
    if (s.metric != 0 || s.pass == 0) values_.push_back(v);
    if (s.metric == 0) pass_values_.push_back(v);
    ++out_.samples;
  }
}

void RunStatisticsBuilder::EndTimerPass() {
  if (metric_ == 0 && !pass_values_.empty() && pass_ < out_.cycles_by_pass.size() &&
      case_ < out_.cycles_by_pass[pass_].size()) {
    out_.cycles_by_pass[pass_][case_] = Summarize(pass_values_).median;
  }
  pass_values_.clear();
}

void RunStatisticsBuilder::EndGroup() {
  EndTimerPass();
  if (!values_.empty()) {
    out_.stats.push_back(CaseStatsOf(job_, run_, provenance_, case_, metric_, values_));
  }
  values_.clear();
  in_group_ = false;
}

RunStatistics RunStatisticsBuilder::Finish() {
  if (in_group_) EndGroup();
  values_.shrink_to_fit();
  pass_values_.shrink_to_fit();
  return std::move(out_);
}

std::vector<RunStatisticsInProgress::EndedPassCase> RunStatisticsInProgress::AddBatch(
    std::uint64_t sequence, std::span<const Sample> samples) {
  std::vector<EndedPassCase> ended;
  if (!sequences_.insert(sequence).second || abandoned_) return ended;
  for (const Sample& s : samples) {
    if (!in_pass_case_ || s.pass != pass_ || s.case_index != case_) {
      if (in_pass_case_) ended.push_back(EndPassCase());
      if (ended_.contains({s.pass, s.case_index})) {
        Abandon();  // the (pass, case) came back: its values are not all here
        return {};
      }
      in_pass_case_ = true;
      pass_ = s.pass;
      case_ = s.case_index;
    }
    if (last_metric_ >= values_.size() || values_[last_metric_].first != s.metric) {
      last_metric_ = 0;
      while (last_metric_ < values_.size() && values_[last_metric_].first != s.metric) {
        ++last_metric_;
      }
      if (last_metric_ == values_.size()) values_.emplace_back(s.metric, std::vector<double>{});
    }
    if (++held_ > kMaxHeldValues) {
      Abandon();
      return {};
    }
    values_[last_metric_].second.push_back(static_cast<double>(s.value));
    ++samples_;
  }
  return ended;
}

RunStatisticsInProgress::EndedPassCase RunStatisticsInProgress::EndPassCase() {
  ended_.insert({pass_, case_});
  EndedPassCase out{pass_, case_, std::move(values_)};
  values_ = {};
  last_metric_ = 0;
  held_ = 0;
  in_pass_case_ = false;
  ++out_;
  return out;
}

RunStatisticsInProgress::PassCaseSummary RunStatisticsInProgress::Summarise(EndedPassCase ended) {
  PassCaseSummary out{ended.pass, ended.case_index, {}};
  for (const auto& [metric, values] : ended.values) {
    if (!values.empty()) out.summaries.emplace_back(metric, Summarize(values));
  }
  return out;
}

void RunStatisticsInProgress::Apply(const PassCaseSummary& s) {
  for (const auto& [metric, summary] : s.summaries) {
    if (metric == 0) {
      // The timer's median in every pass (CyclesByPass); its statistics from pass 0 only.
      timer_medians_[{s.pass, s.case_index}] = summary.median;
      if (s.pass == 0) stats_[{s.case_index, 0}] = summary;
    } else if (!stats_.emplace(std::pair{s.case_index, metric}, summary).second) {
      // A counter of this case in another pass too: its statistics pool both passes' values.
      Abandon();
      return;
    }
  }
}

void RunStatisticsInProgress::AddSummaries(std::vector<PassCaseSummary> summaries) {
  for (const PassCaseSummary& s : summaries) {
    if (abandoned_) return;
    --out_;
    Apply(s);
  }
}

void RunStatisticsInProgress::Add(std::uint64_t sequence, std::span<const Sample> samples) {
  std::vector<PassCaseSummary> summaries;
  for (EndedPassCase& e : AddBatch(sequence, samples)) summaries.push_back(Summarise(std::move(e)));
  AddSummaries(std::move(summaries));
}

void RunStatisticsInProgress::Abandon() {
  abandoned_ = true;
  in_pass_case_ = false;
  out_ = 0;
  held_ = 0;
  values_ = {};
  ended_ = {};
  stats_ = {};
  timer_medians_ = {};
}

std::optional<RunStatistics> RunStatisticsInProgress::Finish(JobId job, RunId run,
                                                             const Provenance& provenance,
                                                             std::uint32_t passes,
                                                             std::uint32_t cases) {
  if (in_pass_case_ && !abandoned_) AddSummaries({Summarise(EndPassCase())});
  if (out_ > 0) Abandon();  // a (pass, case)'s summary is still on its way
  if (abandoned_) return std::nullopt;
  RunStatistics out;
  out.samples = samples_;
  out.cycles_by_pass.assign(passes,
                            std::vector<double>(cases, std::numeric_limits<double>::quiet_NaN()));
  for (const auto& [key, median] : timer_medians_) {
    const auto [pass, case_index] = key;
    if (pass < passes && case_index < cases) out.cycles_by_pass[pass][case_index] = median;
  }
  out.stats.reserve(stats_.size());
  for (const auto& [key, summary] : stats_) {
    out.stats.push_back(CaseStatsOf(job, run, provenance, key.first, key.second, summary));
  }
  Abandon();
  return out;
}

Result<RunStatistics> ComputeRunStatistics(ResultStore& store, JobId job, RunId run,
                                           const Provenance& provenance, std::uint32_t passes,
                                           std::uint32_t cases) {
  RunStatisticsBuilder builder(job, run, provenance, passes, cases);
  Status s = store.ScanSamples(run, [&](std::span<const Sample> chunk) { builder.Add(chunk); });
  if (!s.ok()) return s.error();
  return builder.Finish();
}

}  // namespace mculab::server
