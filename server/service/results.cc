#include "server/service/results.h"

#include <map>
#include <utility>

#include "common/stats.h"

namespace mculab::server {

std::vector<CaseStats> ComputeCaseStats(JobId job, RunId run, const Provenance& provenance,
                                        std::span<const Sample> samples) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<double>> groups;
  for (const Sample& s : samples) {
    groups[{s.case_index, s.metric}].push_back(static_cast<double>(s.value));
  }
  std::vector<CaseStats> out;
  out.reserve(groups.size());
  for (const auto& [key, values] : groups) {
    out.push_back(CaseStatsOf(job, run, provenance, key.first, key.second, values));
  }
  return out;
}

CaseStats CaseStatsOf(JobId job, RunId run, const Provenance& provenance, std::uint32_t case_index,
                      std::uint32_t metric_index, std::span<const double> values) {
  return CaseStatsOf(job, run, provenance, case_index, metric_index, Summarize(values));
}

CaseStats CaseStatsOf(JobId job, RunId run, const Provenance& provenance, std::uint32_t case_index,
                      std::uint32_t metric_index, const Summary& sum) {
  CaseStats c;
  c.job_id = job;
  c.run_id = run;
  c.case_index = case_index;
  c.metric_index = metric_index;
  c.metric = MetricName(provenance, metric_index);
  c.unit = metric_index == 0 ? (provenance.timer_unit.empty() ? "ticks" : provenance.timer_unit)
                             : "count";
  c.n = sum.n;
  c.min = sum.min;
  c.median = sum.median;
  c.mean = sum.mean;
  c.p90 = sum.p90;
  c.p99 = sum.p99;
  c.stddev = sum.stddev;
  c.cv = sum.cv;
  c.max = sum.max;
  return c;
}

std::vector<RawSeries> GroupSamples(const Provenance& provenance, std::span<const Sample> samples) {
  std::vector<RawSeries> out;
  for (const Sample& s : samples) {
    if (out.empty() || out.back().pass != s.pass || out.back().case_index != s.case_index ||
        out.back().metric_index != s.metric) {
      out.push_back(
          RawSeries{s.case_index, s.pass, s.metric, MetricName(provenance, s.metric), {}});
    }
    out.back().values.push_back(s.value);
  }
  return out;
}

bool IsHostBoard(const Board& board) {
  const auto it = board.tags.find("timing");
  return it != board.tags.end() && it->second == kMeasuredHost;
}

std::string_view MeasuredOfRun(bool emulated, std::string_view port, std::string_view timer_unit) {
  if (emulated) return kMeasuredEmulated;
  return port == "host" || timer_unit == "ns" ? kMeasuredHost : kMeasuredSilicon;
}

std::string_view MeasuredOfRun(const Provenance& p) {
  return MeasuredOfRun(p.emulated, p.port, p.timer_unit);
}

std::string_view MeasuredOfBoard(bool emulated, bool host_board) {
  return emulated ? kMeasuredEmulated : host_board ? kMeasuredHost : kMeasuredSilicon;
}

}  // namespace mculab::server
