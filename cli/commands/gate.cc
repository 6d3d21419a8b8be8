// `mculab compare`, `mculab gate` and the gate of `mculab submit --wait --baseline`.
#include "cli/gate.h"

#include <fstream>
#include <iostream>

#include "cli/commands/commands.h"
#include "cli/compare_format.h"
#include "proto/json/documents.h"

namespace mculab::cli {
namespace {

v1::Comparison Compare(Client& c, const std::vector<uint64_t>& ids, double max_cv_pct) {
  v1::CompareRequest req;
  for (uint64_t id : ids) req.add_ids(id);
  req.set_max_cv_pct(max_cv_pct);
  v1::Comparison rep;
  auto ctx = c.Context(120);
  grpc::Status s = c.stub().Compare(ctx.get(), req, &rep);
  if (!s.ok()) c.Fail(s, "compare");
  return rep;
}

// The newest succeeded job older than `job` of the same op (and model) and board kind with the
// label or branch the spec names; 0 and why not when there is none.
uint64_t FindBaseline(Client& c, const v1::Job& job, const BaselineSpec& spec, std::string* why) {
  if (spec.job != 0) return spec.job;
  v1::ListJobsRequest req;
  req.set_state("succeeded");
  req.set_kind(job.kind());
  req.set_op(job.op());
  req.set_model(job.model_name());
  req.set_label(spec.label);
  req.set_branch(spec.branch);
  req.set_before_id(job.id());
  req.set_limit(500);
  v1::ListJobsReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().ListJobs(ctx.get(), req, &rep);
  if (!s.ok()) c.Fail(s, "finding the baseline");
  for (const v1::Job& j : rep.jobs()) {
    if (!spec.label.empty() && j.label() != spec.label) continue;  // the filter is a substring
    if (!spec.branch.empty() && j.branch() != spec.branch) continue;
    if (j.firmware_artifact().empty() != job.firmware_artifact().empty()) continue;
    return j.id();
  }
  const std::string what = !spec.label.empty() ? "with the label '" + spec.label + "'"
                                               : "of branch '" + spec.branch + "'";
  *why = "no baseline: no succeeded " + job.op() +
         (job.model_name().empty() ? "" : " " + job.model_name()) + " job on board kind " +
         job.kind() + " " + what + " before job " + std::to_string(job.id()) +
         "; run one first, or give --baseline JOB_ID";
  return 0;
}

void WriteReport(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out << text;
  if (!out) {
    std::cerr << "mculab: cannot write the report " << path << "\n";
    std::exit(1);
  }
  std::cerr << "wrote " << path << "\n";
}

}  // namespace

Result<PreparedGate> PrepareGate(const GateOptions& o) {
  PreparedGate p;
  auto base = ParseBaselineSpec(o.baseline);
  if (!base.ok()) return base.error();
  p.baseline = *base;
  auto up = ParsePercent(o.max_regression, "--max-regression");
  if (!up.ok()) return up.error();
  p.thresholds.max_regression_pct = *up;
  if (!o.max_improvement.empty()) {
    auto down = ParsePercent(o.max_improvement, "--max-improvement");
    if (!down.ok()) return down.error();
    if (*down >= 100) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "--max-improvement must be under 100%: a job cannot take less than no time");
    }
    p.thresholds.max_improvement_pct = *down;
  }
  if (!o.max_cv.empty()) {
    auto cv = ParsePercent(o.max_cv, "--max-cv");
    if (!cv.ok()) return cv.error();
    p.max_cv_pct = *cv;
  }
  for (const std::string& r : o.reports) {
    auto spec = ParseReportSpec(r);
    if (!spec.ok()) return spec.error();
    p.reports.push_back(*spec);
  }
  return p;
}

int CmdCompare(Client& c, const std::vector<uint64_t>& ids, bool json, const std::string& max_cv) {
  if (ids.size() < 2 || ids.size() > 8)
    throw UsageError{"compare takes 2 to 8 job ids, the first being the baseline; got " +
                     std::to_string(ids.size())};
  double max_cv_pct = 0;
  if (!max_cv.empty()) {
    auto cv = ParsePercent(max_cv, "--max-cv");
    if (!cv.ok()) throw UsageError{cv.error().message};
    max_cv_pct = *cv;
  }
  v1::Comparison rep = Compare(c, ids, max_cv_pct);
  if (json)
    std::cout << ComparisonDocument(rep).dump(2) << "\n";
  else
    std::cout << RenderComparison(rep);
  return 0;
}

// Writes the reports and prints the outcome; returns its exit code.
int Report(Client& c, const GateOutcome& g, const nlohmann::ordered_json& comparison,
           const PreparedGate& p, const GateOptions& o) {
  const std::string web =
      WebUrl(o.web_url.empty() ? Environment()["MCULAB_WEB_URL"] : o.web_url, c.config().server);
  const nlohmann::ordered_json doc = GateJson(g, comparison);
  for (const ReportSpec& r : p.reports) {
    if (r.format == "junit") {
      WriteReport(r.path, GateJUnit(g));
    } else if (r.format == "markdown") {
      WriteReport(r.path, GateMarkdown(g, web));
    } else {
      WriteReport(r.path, doc.dump(2) + "\n");
    }
  }
  if (o.json)
    std::cout << doc.dump(2) << "\n";
  else
    std::cout << RenderGate(g);
  if (g.exit_code != 0 && g.cases.empty()) std::cerr << "mculab: " << g.summary << "\n";
  if (g.exit_code == kExitRegressed) {
    // The lab posts a failed gate to its webhooks ([notify]); the gate's status stands either way.
    v1::ReportGateRequest req;
    req.set_job(g.job);
    req.set_baseline(g.baseline);
    req.set_summary(g.summary);
    v1::ReportGateReply rep;
    auto ctx = c.Context();
    grpc::Status s = c.stub().ReportGate(ctx.get(), req, &rep);
    if (!s.ok()) {
      std::cerr << "mculab: warning: the lab was not told of the failed gate: " << s.error_message()
                << "\n";
    }
  }
  return g.exit_code;
}

int RunGate(Client& c, const v1::Job& job, const PreparedGate& p, const GateOptions& o) {
  std::string why;
  const uint64_t baseline = FindBaseline(c, job, p.baseline, &why);
  if (baseline == 0) {
    return Report(c, GateNotRun(job.id(), 0, p.thresholds, why, kExitNotCompared), nullptr, p, o);
  }
  if (baseline == job.id()) throw UsageError{"--baseline names the job gated itself"};
  const v1::Comparison cmp = Compare(c, {baseline, job.id()}, p.max_cv_pct);
  return Report(c, Gate(cmp, p.thresholds), ComparisonDocument(cmp), p, o);
}

int GateFailedJob(Client& c, const v1::Job& job, const PreparedGate& p, const GateOptions& o) {
  return Report(
      c,
      GateNotRun(job.id(), p.baseline.job, p.thresholds,
                 "the job " + job.state() + (job.message().empty() ? "" : ": " + job.message()) +
                     "; nothing to compare",
                 1),
      nullptr, p, o);
}

int CmdGate(Client& c, uint64_t id, const GateOptions& o) {
  auto p = PrepareGate(o);
  if (!p.ok()) throw UsageError{p.error().message};
  v1::Results res = GetResults(c, id, false);
  if (res.job().state() != "succeeded") return GateFailedJob(c, res.job(), *p, o);
  return RunGate(c, res.job(), *p, o);
}

}  // namespace mculab::cli
