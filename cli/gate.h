// The benchmark gate of a team's CI (`mculab gate`, `mculab submit --wait --baseline`): a job is
// compared with its baseline case by case (the comparison of GET /api/v1/compare), and the exit
// status says whether a case regressed beyond the threshold with its whole 95% interval. The
// reports CI systems show (JUnit XML, a Markdown table, JSON) are written from the same outcome.
// Pure: tested without a network (docs/ci.md says how a CI job uses it).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "lab.pb.h"

namespace mculab::cli {

// Exit statuses of a gate (0: no case regressed; 1 and 2 are every command's: a failed request or
// job, bad usage).
inline constexpr int kExitRegressed = 3;    // a case regressed (or improved) beyond its threshold
inline constexpr int kExitNotCompared = 4;  // no comparison could be made (see GateOutcome)

struct GateThresholds {
  double max_regression_pct = 0;  // a case fails when its interval lies wholly above 1 + this %
  // A case fails when its interval lies wholly below 1 - this % (a suspicious speed-up); none:
  // improvements never fail.
  std::optional<double> max_improvement_pct;
};

// "2", "2%", "2.5 %" -> 2.5: a percentage from 0 to 1000. The error names the flag and the text.
Result<double> ParsePercent(std::string_view text, std::string_view flag);

struct GateCase {
  std::int64_t id = 0;
  std::string params;  // "N=1,in=8" (empty for a case id alone)
  std::optional<double> baseline, median;
  std::optional<double> ratio, lo, hi;
  // the comparison's: slower, faster, no change, unclear, unstable; "" when none
  std::string verdict;
  // How far each side's timings can be trusted (the comparison's Variation): exact, steady or
  // unstable, with its cv (a fraction); "" and nullopt for a side that lacks the case.
  std::string baseline_stability, stability;
  std::optional<double> baseline_cv, cv;
  // passed | regressed | improved beyond the limit | unstable (never a regression or an
  // improvement: judged by no threshold) | missing in the job | missing in the baseline | not
  // compared
  std::string outcome;
  bool failed = false;
  std::string message;  // one sentence with the figures
};

struct GateOutcome {
  std::uint64_t baseline = 0, job = 0;
  std::string unit, measured, workload, board, baseline_board;
  GateThresholds thresholds;
  std::vector<GateCase> cases;
  // Why the jobs could not be compared ("" when they were): the comparison refused a ratio or a
  // verdict, or no case was measured by both.
  std::string not_compared;
  int exit_code = 0;    // 0, kExitRegressed or kExitNotCompared
  std::string status;   // passed | regressed | not compared
  std::string summary;  // one line
};

// `comparison` holds two jobs: the baseline first, then the job gated.
GateOutcome Gate(const mculab::v1::Comparison& comparison, const GateThresholds& thresholds);
// A gate that never got to a comparison (no baseline found, the job itself failed): no cases,
// status "not compared", `why` as the reason, the exit code given (kExitNotCompared, or 1 for a
// job that failed), so the reports still say what happened.
GateOutcome GateNotRun(std::uint64_t job, std::uint64_t baseline, const GateThresholds& thresholds,
                       std::string why, int exit_code);

// The outcome as text: the summary, then one row per case.
std::string RenderGate(const GateOutcome& outcome);
// JUnit XML: one test suite, one test case per benchmark case; a failure for a case beyond its
// threshold (the figures in the message), skipped for a case missing on one side or unstable, an
// error for every case when no comparison could be made.
std::string GateJUnit(const GateOutcome& outcome);
// A Markdown table for a merge-request comment or a GitHub step summary, linking the job, the
// baseline and their compare page under `web_url` (the lab's web address, ending in '/').
std::string GateMarkdown(const GateOutcome& outcome, const std::string& web_url);
// The outcome as JSON, with the comparison's own document under "comparison".
nlohmann::ordered_json GateJson(const GateOutcome& outcome,
                                const nlohmann::ordered_json& comparison);

// The web address for report links: MCULAB_WEB_URL when given, else http://HOST:8080/ on the
// gRPC server's host. Always ends in '/'.
std::string WebUrl(const std::string& given, const std::string& server_address);

// "--report FORMAT:FILE" parsed: format junit, markdown or json; the error names what is wrong.
struct ReportSpec {
  std::string format;
  std::string path;
};
Result<ReportSpec> ParseReportSpec(std::string_view text);

// The code a job measures, from the CI's variables: GitHub Actions (GITHUB_SHA, GITHUB_HEAD_REF
// for a pull request else GITHUB_REF_NAME, the run's page from GITHUB_SERVER_URL,
// GITHUB_REPOSITORY and GITHUB_RUN_ID) or GitLab CI (CI_COMMIT_SHA, CI_COMMIT_REF_NAME,
// CI_JOB_URL). Empty where none is set.
struct CodeRefs {
  std::string commit, branch, url;
};
CodeRefs CodeRefsFromCi(const std::map<std::string, std::string>& env);

// "--baseline JOB|label:TEXT|branch:NAME" parsed: a job id, or the newest succeeded job of the
// same cases and board kind with that exact label or of that branch.
struct BaselineSpec {
  std::uint64_t job = 0;  // when given by id
  std::string label;
  std::string branch;
};
Result<BaselineSpec> ParseBaselineSpec(std::string_view text);

}  // namespace mculab::cli
