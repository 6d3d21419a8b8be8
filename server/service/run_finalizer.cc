#include "server/service/run_finalizer.h"

#include <fmt/format.h>
#include <malloc.h>

#include "common/stats.h"
#include "server/domain/health_check.h"
#include "server/service/store.h"

namespace mculab::server {

RunReading RunFinalizer::Read(const FinalizeTarget& t,
                              std::optional<RunStatisticsInProgress> counted) {
  std::optional<RunStatistics> stats;
  if (counted) stats = counted->Finish(t.job, t.run, t.provenance, t.passes, t.cases);
  RunReading reading{
      stats ? Result<RunStatistics>(std::move(*stats))
            : ComputeRunStatistics(store_, t.job, t.run, t.provenance, t.passes, t.cases),
      store_.GetCaseResults(t.run)};
  if (reading.statistics.ok() && reading.statistics->samples >= kTrimAfterSamples) malloc_trim(0);
  return reading;
}

std::vector<UnstableCase> UnstableCases(std::span<const CaseStats> stats, std::string_view measured,
                                        double max_cv) {
  std::vector<UnstableCase> out;
  for (const CaseStats& s : stats) {
    if (s.metric_index != 0 || Stability(s.cv, measured, max_cv) != "unstable") continue;
    out.push_back(UnstableCase{s.case_index, s.cv, LimitCv(measured, max_cv)});
  }
  return out;
}

std::string DescribeUnstable(std::span<const UnstableCase> cases) {
  constexpr std::size_t kNamed = 3;
  std::string out;
  for (std::size_t i = 0; i < cases.size() && i < kNamed; ++i) {
    out += fmt::format("{}case {} (cv {:.1f}% > {:.4g}%)", i ? ", " : "", cases[i].case_index,
                       cases[i].cv * 100, cases[i].max_cv * 100);
  }
  if (cases.size() > kNamed) out += fmt::format(" and {} more", cases.size() - kNamed);
  return out;
}

RunEnd RunFinalizer::Judge(RunReading reading, JudgeInput in) {
  RunEnd out;
  if (!reading.statistics.ok() || !reading.results.ok()) {
    out.ending = RunEnding::kUnreadable;
    out.message = "the server could not read the run's results: " +
                  (reading.statistics.ok() ? reading.results.error().message
                                           : reading.statistics.error().message);
    return out;
  }
  RunStatistics& computed = *reading.statistics;
  in.verdict.cycles_by_pass = std::move(computed.cycles_by_pass);
  RunVerdict verdict = JudgeRun(in.verdict, *reading.results, computed.stats);
  out.message = std::move(verdict.message);
  if (verdict.wrong_result) {
    out.ending = RunEnding::kWrongResult;
    return out;
  }
  out.ending = RunEnding::kSucceeded;
  if (in.health_check) {
    out.health_value = HealthCheckValue(computed.stats);
    std::string off = CheckCalibration(out.health_value, in.expected_health, in.health_tolerance);
    if (!off.empty()) {
      out.ending = RunEnding::kOffCalibration;
      out.message = std::move(off);
    }
  }
  out.stats = std::move(computed.stats);
  // A case too noisy to judge runs again on the same board while the job has reruns left; a
  // health check never reruns.
  if (out.ending == RunEnding::kSucceeded && !in.health_check && in.reruns > 0) {
    const std::vector<UnstableCase> unstable = UnstableCases(out.stats, in.measured, in.max_cv);
    if (!unstable.empty() && in.reruns_done < in.reruns) {
      out.ending = RunEnding::kRerun;
      out.message = DescribeUnstable(unstable);
    } else if (!unstable.empty()) {
      out.message +=
          fmt::format("{}still unstable after {} rerun{}: {}", out.message.empty() ? "" : "; ",
                      in.reruns_done, in.reruns_done == 1 ? "" : "s", DescribeUnstable(unstable));
    }
  }
  return out;
}

}  // namespace mculab::server
