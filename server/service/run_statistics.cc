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

Result<RunStatistics> ComputeRunStatistics(ResultStore& store, JobId job, RunId run,
                                           const Provenance& provenance, std::uint32_t passes,
                                           std::uint32_t cases) {
  RunStatisticsBuilder builder(job, run, provenance, passes, cases);
  Status s = store.ScanSamples(run, [&](std::span<const Sample> chunk) { builder.Add(chunk); });
  if (!s.ok()) return s.error();
  return builder.Finish();
}

}  // namespace mculab::server
