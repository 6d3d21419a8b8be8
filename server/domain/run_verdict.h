// The verdict on a run once every batch its agent sent is committed and its statistics are
// computed: a wrong result (a checksum that differs from the host reference) fails the job as a
// workload failure; otherwise the job succeeds, with the flags worth showing beside its figures
// (cases with missing iterations or no checksum report, passes that disagree on cycles, checksums
// that cannot be verified). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "server/domain/run.h"

namespace mculab::server {

// "case 3: checksum 0x0000beef, expected 0x0000cafe".
std::string ChecksumFailure(std::uint32_t case_index, std::uint32_t checksum,
                            std::uint32_t expected);

struct RunVerdictInput {
  std::uint32_t num_cases = 0;
  std::uint32_t iterations = 0;  // per case
  // An uploaded runner: the lab has no reference for its runtime, so its checksums are not
  // verified (and the verdict says so).
  bool custom_runner = false;
  // Failures the agent reported as the cases ended (ChecksumFailure text), in report order.
  std::vector<std::string> reported_failures;
  // Pass agreement (pass_planner.h CheckPassAgreement): the run's passes, their cycles per case,
  // the tolerance, and whether the board is emulated.
  std::uint32_t passes = 1;
  std::vector<std::vector<double>> cycles_by_pass;
  double pass_tolerance = 0;
  bool emulated = false;
};

struct RunVerdict {
  bool wrong_result = false;  // fail the job: a workload failure
  // wrong_result: "wrong result (checksum mismatch): " and each failure; otherwise the flags
  // joined by "; " (empty when there is nothing to flag).
  std::string message;
};

// `results`: the stored per-case checksum results; `stats`: the run's per-case statistics.
RunVerdict JudgeRun(const RunVerdictInput& in, std::span<const CaseResult> results,
                    std::span<const CaseStats> stats);

}  // namespace mculab::server
