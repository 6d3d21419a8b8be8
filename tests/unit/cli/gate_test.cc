// The CI gate and `mculab compare`'s table (cli/gate.h, cli/compare_format.h): the outcome of a
// comparison, the exit statuses, the reports, the flags' parsing. Pure: no network.
#include "cli/gate.h"

#include <gtest/gtest.h>

#include "cli/compare_format.h"
#include "proto/json/documents.h"

namespace mculab::cli {
namespace {

namespace v1 = mculab::v1;

struct Row {
  Row(std::int64_t id_, std::optional<double> base_, std::optional<double> mine_, double ratio_ = 0,
      double lo_ = 0, double hi_ = 0, std::string verdict_ = "")
      : id(id_),
        base(base_),
        mine(mine_),
        ratio(ratio_),
        lo(lo_),
        hi(hi_),
        verdict(std::move(verdict_)) {}
  std::int64_t id;
  std::optional<double> base, mine;
  double ratio, lo, hi;
  std::string verdict;
};

// A baseline (job 10) and the job gated (job 11), fully_connected_s8 on the host board.
v1::Comparison Comparison(const std::vector<Row>& rows, const std::string& measured = "host") {
  v1::Comparison c;
  for (std::uint64_t id : {10u, 11u}) {
    v1::ComparedJob* j = c.add_jobs();
    j->set_id(id);
    j->set_board("host-0");
    j->set_unit(measured == "emulated" ? "instructions" : "ns");
    j->set_emulated(measured == "emulated");
    j->set_measured(measured);
    j->set_workload("op fully_connected_s8");
    j->set_label(id == 10 ? "main <b>|x" : "mr 42");
  }
  for (const char* n : {"N", "in_features", "out_features"}) c.add_param_names(n);
  for (const Row& r : rows) {
    v1::ComparedCase* cc = c.add_cases();
    cc->set_id(r.id);
    for (int p : {1, 8, 4}) cc->add_params(p);
    v1::ComparedCell* a = cc->add_cells();
    a->set_has_median(r.base.has_value());
    a->set_median(r.base.value_or(0));
    v1::ComparedCell* b = cc->add_cells();
    b->set_has_median(r.mine.has_value());
    b->set_median(r.mine.value_or(0));
    if (r.base && r.mine) {
      b->set_has_ratio(true);
      b->set_ratio(r.ratio);
      b->set_lo(r.lo);
      b->set_hi(r.hi);
      b->set_significant(r.lo > 1 || r.hi < 1);
      b->set_verdict(r.verdict);
    }
  }
  return c;
}

TEST(Gate, TheSameFiguresPassAtOnePercent) {
  const GateOutcome g = Gate(Comparison({{0, 100, 100, 1, 1, 1, "no change"},
                                         {1, 200, 201, 1.005, 0.99, 1.02, "unclear"}}),
                             {1, std::nullopt});
  EXPECT_EQ(g.exit_code, 0);
  EXPECT_EQ(g.status, "passed");
  EXPECT_EQ(g.cases.size(), 2u);
  EXPECT_EQ(g.cases[0].outcome, "passed");
  EXPECT_NE(g.summary.find("2 cases of job 11 within the limits"), std::string::npos) << g.summary;
}

// A regression fails only when the whole interval is above the threshold.
TEST(Gate, ARegressionBeyondTheThresholdWithItsWholeIntervalFails) {
  GateOutcome g = Gate(
      Comparison({{0, 100, 100, 1, 1, 1, "no change"}, {1, 100, 120, 1.2, 1.15, 1.25, "slower"}}),
      {2, std::nullopt});
  EXPECT_EQ(g.exit_code, kExitRegressed);
  EXPECT_EQ(g.status, "regressed");
  EXPECT_EQ(g.cases[1].outcome, "regressed");
  EXPECT_TRUE(g.cases[1].failed);
  EXPECT_NE(g.cases[1].message.find("+20.0%"), std::string::npos) << g.cases[1].message;
  // The interval reaches below 1.02: not sure enough to fail.
  g = Gate(Comparison({{1, 100, 120, 1.2, 1.01, 1.4, "slower"}}), {2, std::nullopt});
  EXPECT_EQ(g.exit_code, 0);
  // Within the threshold.
  g = Gate(Comparison({{1, 100, 101, 1.01, 1.008, 1.012, "slower"}}), {2, std::nullopt});
  EXPECT_EQ(g.exit_code, 0);
  EXPECT_EQ(g.cases[0].verdict, "slower") << "the verdict is still shown";
}

TEST(Gate, AnEmulatedCountThatMovedIsReal) {
  const GateOutcome g =
      Gate(Comparison({{0, 1000, 1010, 1.01, 1.01, 1.01, "slower"}}, "emulated"), {0, {}});
  EXPECT_EQ(g.exit_code, kExitRegressed);
  EXPECT_NE(g.cases[0].message.find("emulated: the count is exact"), std::string::npos);
}

TEST(Gate, ASuspiciousImprovementFailsOnlyWhenAsked) {
  const auto c = Comparison({{0, 100, 50, 0.5, 0.45, 0.55, "faster"}});
  EXPECT_EQ(Gate(c, {1, std::nullopt}).exit_code, 0);
  const GateOutcome g = Gate(c, {1, 30.0});
  EXPECT_EQ(g.exit_code, kExitRegressed);
  EXPECT_EQ(g.cases[0].outcome, "improved beyond the limit");
}

TEST(Gate, MissingCasesAreReportedNotGuessed) {
  const GateOutcome g = Gate(
      Comparison(
          {{0, 100, 100, 1, 1, 1, "no change"}, {1, 100, std::nullopt}, {2, std::nullopt, 100}}),
      {1, std::nullopt});
  EXPECT_EQ(g.exit_code, 0);
  EXPECT_EQ(g.cases[1].outcome, "missing in the job");
  EXPECT_EQ(g.cases[2].outcome, "missing in the baseline");
  EXPECT_NE(g.summary.find("2 cases missing on one side"), std::string::npos) << g.summary;
}

TEST(Gate, NoComparisonIsItsOwnStatus) {
  v1::Comparison c = Comparison({{0, 100, 100, 1, 1, 1, "no change"}});
  c.set_ratio_refused("the jobs measured different things");
  c.mutable_cases(0)->mutable_cells(1)->set_has_ratio(false);
  GateOutcome g = Gate(c, {1, std::nullopt});
  EXPECT_EQ(g.exit_code, kExitNotCompared);
  EXPECT_EQ(g.status, "not compared");
  EXPECT_NE(g.summary.find("measured different things"), std::string::npos);
  // Nothing in common.
  g = Gate(Comparison({{0, 100, std::nullopt}, {1, std::nullopt, 100}}), {1, std::nullopt});
  EXPECT_EQ(g.exit_code, kExitNotCompared);
  EXPECT_EQ(g.not_compared, "no case was measured by both jobs");
  // A regression still wins over cases that could not be compared.
  v1::Comparison mixed = Comparison({{0, 100, 150, 1.5, 1.4, 1.6, "slower"}, {1, 100, 100}});
  mixed.mutable_cases(1)->set_refused("case 1 has other parameters");
  mixed.mutable_cases(1)->mutable_cells(1)->set_has_ratio(false);
  g = Gate(mixed, {1, std::nullopt});
  EXPECT_EQ(g.exit_code, kExitRegressed);
  EXPECT_EQ(g.cases[1].outcome, "not compared");
}

TEST(GateReports, JUnitHasAFailurePerRegressionAndEscapes) {
  const GateOutcome g = Gate(Comparison({{0, 100, 100, 1, 1, 1, "no change"},
                                         {1, 100, 130, 1.3, 1.2, 1.4, "slower"},
                                         {2, 100, std::nullopt}}),
                             {1, std::nullopt});
  const std::string x = GateJUnit(g);
  EXPECT_NE(x.find("<testsuites name=\"mculab\" tests=\"3\" failures=\"1\" errors=\"0\" "
                   "skipped=\"1\">"),
            std::string::npos)
      << x;
  EXPECT_NE(x.find("name=\"case 1 (N=1,in_features=8,out_features=4)\""), std::string::npos);
  EXPECT_NE(x.find("<failure type=\"regressed\" message=\"case 1"), std::string::npos) << x;
  EXPECT_NE(x.find("+30.0%"), std::string::npos);
  EXPECT_NE(x.find("<skipped message="), std::string::npos);
  EXPECT_EQ(x.find("<b>"), std::string::npos);
}

TEST(GateReports, MarkdownNamesTheCaseTheRatioAndLinksThePages) {
  const GateOutcome g =
      Gate(Comparison({{1, 100, 130, 1.3, 1.2, 1.4, "slower"}}), {1, std::nullopt});
  const std::string md = GateMarkdown(g, "http://lab.example:8080/");
  EXPECT_NE(md.find("**FAILED**"), std::string::npos) << md;
  EXPECT_NE(md.find("[#11](http://lab.example:8080/job.html?id=11)"), std::string::npos) << md;
  EXPECT_NE(md.find("[compare](http://lab.example:8080/compare.html?jobs=10,11)"),
            std::string::npos);
  EXPECT_NE(md.find("| 1 | N=1,in_features=8,out_features=4 | 100 | 130 | +30.0% | [+20.0%, "
                    "+40.0%] | slower | **regressed** |"),
            std::string::npos)
      << md;
}

// No baseline found, or the job failed: the reports still say what happened.
TEST(GateReports, AGateThatNeverComparedStillWritesItsReports) {
  const GateOutcome g = GateNotRun(12, 0, {1, std::nullopt}, "no baseline: none on main", 4);
  EXPECT_EQ(g.exit_code, kExitNotCompared);
  const std::string x = GateJUnit(g);
  EXPECT_NE(x.find("tests=\"1\" failures=\"0\" errors=\"1\""), std::string::npos) << x;
  EXPECT_NE(x.find("<error type=\"not compared\" message=\"no baseline: none on main\"/>"),
            std::string::npos)
      << x;
  const std::string md = GateMarkdown(g, "http://lab/");
  EXPECT_NE(md.find("Job [#12](http://lab/job.html?id=12): no comparison."), std::string::npos)
      << md;
  EXPECT_EQ(md.find("id=0"), std::string::npos);
  EXPECT_NE(RenderGate(g).find("gate not decided: job 12: no baseline"), std::string::npos);
}

TEST(GateReports, JsonCarriesTheOutcomeAndTheComparison) {
  const v1::Comparison c = Comparison({{1, 100, 130, 1.3, 1.2, 1.4, "slower"}});
  const GateOutcome g = Gate(c, {5, 50.0});
  const auto j = GateJson(g, ComparisonDocument(c));
  EXPECT_EQ(j["status"], "regressed");
  EXPECT_EQ(j["exit_code"], kExitRegressed);
  EXPECT_EQ(j["max_regression_pct"], 5.0);
  EXPECT_EQ(j["max_improvement_pct"], 50.0);
  EXPECT_EQ(j["cases"][0]["outcome"], "regressed");
  EXPECT_EQ(j["comparison"]["cases"][0]["ratios"][1]["verdict"], "slower");
}

TEST(GateFlags, PercentagesBaselinesReportsAndCodeRefs) {
  EXPECT_DOUBLE_EQ(*ParsePercent("2", "--max-regression"), 2);
  EXPECT_DOUBLE_EQ(*ParsePercent("2%", "--max-regression"), 2);
  EXPECT_DOUBLE_EQ(*ParsePercent(" 2.5 % ", "--max-regression"), 2.5);
  for (const char* bad : {"", "%", "-1", "two", "2%%", "1e9", "nan"}) {
    auto r = ParsePercent(bad, "--max-regression");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("--max-regression takes a percentage"), std::string::npos);
  }
  EXPECT_EQ(ParseBaselineSpec("42")->job, 42u);
  EXPECT_EQ(ParseBaselineSpec("label:nightly main")->label, "nightly main");
  EXPECT_EQ(ParseBaselineSpec("branch:main")->branch, "main");
  for (const char* bad : {"", "0", "x1", "label:", "branch:", "12a"}) {
    EXPECT_FALSE(ParseBaselineSpec(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseReportSpec("junit:out/r.xml")->path, "out/r.xml");
  EXPECT_EQ(ParseReportSpec("markdown:r.md")->format, "markdown");
  EXPECT_FALSE(ParseReportSpec("html:r.html").ok());
  EXPECT_FALSE(ParseReportSpec("junit:").ok());
  EXPECT_FALSE(ParseReportSpec("junit").ok());

  EXPECT_EQ(WebUrl("", "lab.example:7420"), "http://lab.example:8080/");
  EXPECT_EQ(WebUrl("", "[::1]:7420"), "http://[::1]:8080/");
  EXPECT_EQ(WebUrl("https://lab/x", "ignored:1"), "https://lab/x/");

  CodeRefs gh = CodeRefsFromCi({{"GITHUB_SHA", "abc1234"},
                                {"GITHUB_REF_NAME", "7/merge"},
                                {"GITHUB_HEAD_REF", "feature"},
                                {"GITHUB_REPOSITORY", "o/r"},
                                {"GITHUB_RUN_ID", "99"}});
  EXPECT_EQ(gh.commit, "abc1234");
  EXPECT_EQ(gh.branch, "feature") << "a pull request's own branch";
  EXPECT_EQ(gh.url, "https://github.com/o/r/actions/runs/99");
  CodeRefs gl = CodeRefsFromCi({{"CI_COMMIT_SHA", "def5678"},
                                {"CI_COMMIT_REF_NAME", "main"},
                                {"CI_JOB_URL", "https://g/j"}});
  EXPECT_EQ(gl.branch, "main");
  EXPECT_EQ(gl.url, "https://g/j");
  EXPECT_EQ(CodeRefsFromCi({}).commit, "");
}

TEST(RenderComparison, ShowsMediansRatiosIntervalsAndVerdicts) {
  v1::Comparison c = Comparison({{0, 100, 130, 1.3, 1.2, 1.4, "slower"}, {1, 100, std::nullopt}});
  const std::string t = RenderComparison(c);
  EXPECT_NE(t.find("10 (baseline)"), std::string::npos) << t;
  EXPECT_NE(t.find("1.3 (+30.0%)"), std::string::npos) << t;
  EXPECT_NE(t.find("[1.2, 1.4]"), std::string::npos) << t;
  EXPECT_NE(t.find("slower"), std::string::npos);
  EXPECT_NE(t.find("case missing"), std::string::npos);
  c.set_verdict_refused("different emulated board kinds");
  EXPECT_NE(RenderComparison(c).find("no verdict: different emulated board kinds"),
            std::string::npos);
}

// Sets each side's variation of case `k`: (stability, cv) for the baseline and the job.
void SetVariation(v1::Comparison& c, int k, const std::string& base, double base_cv,
                  const std::string& mine, double mine_cv, double max_cv = 0.10) {
  for (int side = 0; side < 2; ++side) {
    v1::Variation* v = c.mutable_cases(k)->mutable_cells(side)->mutable_variation();
    v->set_stability(side == 0 ? base : mine);
    v->set_cv(side == 0 ? base_cv : mine_cv);
    v->set_max_cv(max_cv);
    v->set_n(20);
  }
}

// An unstable case is reported, never a regression or an improvement on its own: the other cases
// decide; when every case is unstable nothing was judged (exit 4).
TEST(Gate, AnUnstableCaseIsNeverARegression) {
  v1::Comparison c = Comparison(
      {{0, 100, 200, 2, 1.5, 2.5, "unstable"}, {1, 100, 100, 1, 0.999, 1.001, "no change"}});
  SetVariation(c, 0, "steady", 0.02, "unstable", 0.63);
  SetVariation(c, 1, "steady", 0.01, "steady", 0.01);
  GateOutcome g = Gate(c, {1, 5});
  EXPECT_EQ(g.exit_code, 0) << g.summary;
  EXPECT_EQ(g.cases[0].outcome, "unstable");
  EXPECT_FALSE(g.cases[0].failed);
  EXPECT_NE(g.cases[0].message.find("cv 2% in the baseline, 63% in this job"), std::string::npos)
      << g.cases[0].message;
  EXPECT_NE(g.cases[0].message.find("10%"), std::string::npos) << g.cases[0].message;
  EXPECT_NE(g.summary.find("1 case unstable, not judged"), std::string::npos) << g.summary;
  const std::string junit = GateJUnit(g);
  EXPECT_NE(junit.find("skipped=\"1\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("failures=\"0\""), std::string::npos) << junit;
  EXPECT_NE(GateMarkdown(g, "http://lab/").find("| unstable |"), std::string::npos);
  const auto doc = GateJson(g, nullptr);
  EXPECT_EQ(doc["cases"][0]["stability"], "unstable");
  EXPECT_EQ(doc["cases"][0]["baseline_stability"], "steady");

  // The baseline's noise counts as much as the job's; the same regression on steady sides fails.
  SetVariation(c, 0, "unstable", 0.3, "steady", 0.01);
  EXPECT_EQ(Gate(c, {1, 5}).cases[0].outcome, "unstable");
  SetVariation(c, 0, "steady", 0.01, "steady", 0.01);
  EXPECT_EQ(Gate(c, {1, 5}).exit_code, kExitRegressed);

  v1::Comparison all = Comparison({{0, 100, 200, 2, 1.5, 2.5, "unstable"}});
  SetVariation(all, 0, "unstable", 0.2, "unstable", 0.4);
  g = Gate(all, {1, std::nullopt});
  EXPECT_EQ(g.exit_code, kExitNotCompared);
  EXPECT_NE(g.not_compared.find("every case measured by both jobs is unstable"), std::string::npos)
      << g.not_compared;
}

TEST(RenderComparison, ShowsEachSidesVariationOutliersAndWarmUp) {
  v1::Comparison c = Comparison({{0, 100, 200, 2, 1.5, 2.5, "unstable"}});
  SetVariation(c, 0, "steady", 0.004, "unstable", 0.63);
  v1::Variation* v = c.mutable_cases(0)->mutable_cells(1)->mutable_variation();
  v->set_high_outliers(2);
  v->add_outlier_iterations(0);
  v->add_outlier_iterations(7);
  v->set_warmup(1);
  const std::string t = RenderComparison(c);
  EXPECT_NE(t.find("0.4%"), std::string::npos) << t;
  EXPECT_NE(t.find("63.0% unstable (> 10%)"), std::string::npos) << t;
  EXPECT_NE(t.find("case 0 in job 11: 2 outliers of 20 (2 high, 0 low; iterations 0, 7), kept; "
                   "warm-up: the first 1 iteration above the rest"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("unstable: the timings vary more than the limit"), std::string::npos) << t;
  c.mutable_cases(0)->mutable_cells(0)->mutable_variation()->set_stability("exact");
  EXPECT_EQ(VariationText(c.cases(0).cells(0).variation()), "exact");
}

}  // namespace
}  // namespace mculab::cli
