#include "server/service/run_finalizer.h"

#include <malloc.h>

#include "server/domain/health_check.h"
#include "server/service/store.h"

namespace mculab::server {

RunReading RunFinalizer::Read(const FinalizeTarget& t) {
  RunReading reading{ComputeRunStatistics(store_, t.job, t.run, t.provenance, t.passes, t.cases),
                     store_.GetCaseResults(t.run)};
  if (reading.statistics.ok() && reading.statistics->samples >= kTrimAfterSamples) malloc_trim(0);
  return reading;
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
  return out;
}

}  // namespace mculab::server
