#include "cli/gate.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "cli/compare_format.h"
#include "cli/format.h"

namespace mculab::cli {
namespace {

namespace v1 = mculab::v1;
using Json = nlohmann::ordered_json;

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

std::string Pct(double v) { return FormatNumber(v) + "%"; }
// A coefficient of variation (a fraction) as a percentage: "63%", "0.42%".
std::string CvPct(double cv) { return fmt::format("{:.3g}%", cv * 100); }

std::string CaseName(const GateCase& c) {
  return "case " + std::to_string(c.id) + (c.params.empty() ? "" : " (" + c.params + ")");
}

std::string Xml(std::string_view s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 allows no control characters but tab, newline and carriage return.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
          out += '?';
        } else {
          out += ch;
        }
    }
  }
  return out;
}

// Text in a Markdown table cell: no pipe, no line break, no HTML.
std::string Md(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') {
      out += "\\|";
    } else if (ch == '\n' || ch == '\r') {
      out += ' ';
    } else if (ch == '<') {
      out += "&lt;";
    } else if (ch == '>') {
      out += "&gt;";
    } else {
      out += ch;
    }
  }
  return out;
}

std::string Interval(const GateCase& c) {
  if (!c.lo || !c.hi) return "-";
  return "[" + RatioPercent(*c.lo) + ", " + RatioPercent(*c.hi) + "]";
}

Json Optional(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? Json(*v) : Json(nullptr);
}

}  // namespace

Result<double> ParsePercent(std::string_view text, std::string_view flag) {
  std::string t = Trim(text);
  if (!t.empty() && t.back() == '%') t = Trim(std::string_view(t).substr(0, t.size() - 1));
  double v = 0;
  const char* end = t.data() + t.size();
  auto [p, ec] = std::from_chars(t.data(), end, v);
  if (t.empty() || ec != std::errc() || p != end || !std::isfinite(v) || v < 0 || v > 1000) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("{} takes a percentage from 0 to 1000 (2 and 2% mean the same), "
                                 "got '{}'",
                                 flag, text));
  }
  return v;
}

GateOutcome Gate(const v1::Comparison& c, const GateThresholds& t) {
  GateOutcome out;
  out.thresholds = t;
  if (c.jobs_size() >= 1) {
    out.baseline = c.jobs(0).id();
    out.baseline_board = c.jobs(0).board();
    out.unit = c.jobs(0).unit();
  }
  if (c.jobs_size() >= 2) {
    const v1::ComparedJob& j = c.jobs(1);
    out.job = j.id();
    out.board = j.board();
    out.measured = j.measured();
    out.workload = j.workload();
  }
  if (c.jobs_size() != 2) {
    out.not_compared =
        fmt::format("a gate compares one job with one baseline, got {} jobs", c.jobs_size());
  } else if (!c.ratio_refused().empty()) {
    out.not_compared = c.ratio_refused();
  } else if (!c.verdict_refused().empty()) {
    out.not_compared = c.verdict_refused();
  }
  const double up = 1 + t.max_regression_pct / 100;
  const double down = t.max_improvement_pct ? 1 - *t.max_improvement_pct / 100 : 0;
  const bool exact = out.measured == "emulated";
  int compared = 0, unstable_cases = 0;
  for (const v1::ComparedCase& cc : c.cases()) {
    GateCase g;
    g.id = cc.id();
    g.params = CaseParamsText(c, cc);
    const v1::ComparedCell* base = cc.cells_size() > 0 ? &cc.cells(0) : nullptr;
    const v1::ComparedCell* mine = cc.cells_size() > 1 ? &cc.cells(1) : nullptr;
    if (base && base->has_median()) g.baseline = base->median();
    if (mine && mine->has_median()) g.median = mine->median();
    if (base && base->has_variation()) {
      g.baseline_stability = base->variation().stability();
      g.baseline_cv = base->variation().cv();
    }
    if (mine && mine->has_variation()) {
      g.stability = mine->variation().stability();
      g.cv = mine->variation().cv();
    }
    const bool unstable = g.stability == "unstable" || g.baseline_stability == "unstable";
    if (mine && mine->has_ratio()) {
      g.ratio = mine->ratio();
      g.lo = mine->lo();
      g.hi = mine->hi();
      g.verdict = mine->verdict();
    }
    const std::string figures =
        g.ratio
            ? fmt::format("{} -> {} {}, {} (95% interval {})", FormatNumber(*g.baseline),
                          FormatNumber(*g.median), out.unit, RatioPercent(*g.ratio), Interval(g))
            : "";
    if (!g.baseline) {
      g.outcome = "missing in the baseline";
      g.message = fmt::format("{} is not in baseline job {}: nothing to compare it with",
                              CaseName(g), out.baseline);
    } else if (!g.median) {
      g.outcome = "missing in the job";
      g.message =
          fmt::format("{} of baseline job {} is not in job {}", CaseName(g), out.baseline, out.job);
    } else if (!g.ratio) {
      g.outcome = "not compared";
      g.message = CaseName(g) + ": " +
                  (!cc.refused().empty()       ? cc.refused()
                   : !out.not_compared.empty() ? out.not_compared
                                               : std::string("no ratio could be taken"));
    } else if (!out.not_compared.empty()) {
      g.outcome = "not compared";
      g.message = CaseName(g) + ": " + figures + "; " + out.not_compared;
    } else if (unstable) {
      ++unstable_cases;
      g.outcome = "unstable";
      const double limit = (g.stability == "unstable" ? mine : base)->variation().max_cv();
      g.message = fmt::format(
          "{} is unstable: cv {} in the baseline, {} in this job, above the {} allowed; {} is "
          "no verdict (run more iterations, quiet the board, or set --max-cv)",
          CaseName(g), g.baseline_cv ? CvPct(*g.baseline_cv) : "?", g.cv ? CvPct(*g.cv) : "?",
          CvPct(limit), figures);
    } else {
      ++compared;
      if (*g.lo > up) {
        g.outcome = "regressed";
        g.failed = true;
        g.message =
            fmt::format("{} regressed: {}, wholly above the {} allowed{}", CaseName(g), figures,
                        Pct(t.max_regression_pct),
                        exact ? " (emulated: the count is exact, so the change is real)" : "");
      } else if (t.max_improvement_pct && *g.hi < down) {
        g.outcome = "improved beyond the limit";
        g.failed = true;
        g.message = fmt::format(
            "{} improved beyond the {} expected: {}; check that it still does the same work",
            CaseName(g), Pct(*t.max_improvement_pct), figures);
      } else {
        g.outcome = "passed";
        g.message = fmt::format("{}: {}, {}", CaseName(g), figures,
                                g.verdict.empty() ? "no verdict" : g.verdict);
      }
    }
    out.cases.push_back(std::move(g));
  }
  if (out.not_compared.empty() && compared == 0) {
    out.not_compared = c.cases_size() == 0 ? "the jobs have no cases"
                       : unstable_cases > 0
                           ? "every case measured by both jobs is unstable: their timings vary "
                             "too much to judge"
                           : "no case was measured by both jobs";
  }
  int failed = 0;
  for (const GateCase& g : out.cases) failed += g.failed ? 1 : 0;
  int missing = 0;
  for (const GateCase& g : out.cases) missing += g.outcome.starts_with("missing") ? 1 : 0;
  std::string limits = "regression limit " + Pct(t.max_regression_pct);
  if (t.max_improvement_pct) limits += ", improvement limit " + Pct(*t.max_improvement_pct);
  if (failed > 0) {
    out.exit_code = kExitRegressed;
    out.status = "regressed";
    out.summary = fmt::format(
        "gate failed: {} of {} case{} of job {} beyond the limits against "
        "baseline job {} ({})",
        failed, compared, compared == 1 ? "" : "s", out.job, out.baseline, limits);
  } else if (!out.not_compared.empty()) {
    out.exit_code = kExitNotCompared;
    out.status = "not compared";
    out.summary = fmt::format(
        "gate not decided: job {} could not be compared with baseline job "
        "{}: {}",
        out.job, out.baseline, out.not_compared);
  } else {
    out.exit_code = 0;
    out.status = "passed";
    out.summary = fmt::format(
        "gate passed: {} case{} of job {} within the limits against "
        "baseline job {} ({})",
        compared, compared == 1 ? "" : "s", out.job, out.baseline, limits);
  }
  if (missing > 0) {
    out.summary += fmt::format("; {} case{} missing on one side", missing, missing == 1 ? "" : "s");
  }
  if (unstable_cases > 0 && compared > 0) {
    out.summary += fmt::format("; {} case{} unstable, not judged", unstable_cases,
                               unstable_cases == 1 ? "" : "s");
  }
  return out;
}

GateOutcome GateNotRun(std::uint64_t job, std::uint64_t baseline, const GateThresholds& t,
                       std::string why, int exit_code) {
  GateOutcome out;
  out.job = job;
  out.baseline = baseline;
  out.thresholds = t;
  out.not_compared = std::move(why);
  out.exit_code = exit_code;
  out.status = "not compared";
  out.summary = fmt::format("gate not decided: job {}: {}", job, out.not_compared);
  return out;
}

std::string RenderGate(const GateOutcome& g) {
  std::string out = g.summary + "\n";
  std::vector<std::vector<std::string>> rows;
  for (const GateCase& c : g.cases) {
    rows.push_back({std::to_string(c.id), c.params.empty() ? "-" : c.params,
                    c.baseline ? FormatNumber(*c.baseline) : "missing",
                    c.median ? FormatNumber(*c.median) : "missing",
                    c.ratio ? RatioPercent(*c.ratio) : "-", Interval(c),
                    c.verdict.empty() ? "-" : c.verdict, c.outcome});
  }
  out += RenderTable({"case", "params", "job " + std::to_string(g.baseline),
                      "job " + std::to_string(g.job), "change", "95% interval", "verdict", "gate"},
                     rows);
  for (const GateCase& c : g.cases) {
    if (c.outcome != "passed") out += c.message + "\n";
  }
  return out;
}

std::string GateJUnit(const GateOutcome& g) {
  int failures = 0, errors = 0, skipped = 0;
  for (const GateCase& c : g.cases) {
    if (c.failed) {
      ++failures;
    } else if (c.outcome.starts_with("missing") || c.outcome == "unstable") {
      ++skipped;
    } else if (c.outcome == "not compared") {
      ++errors;
    }
  }
  // Nothing compared at all: one test case, "comparison", in error.
  const bool nothing = g.cases.empty() && !g.not_compared.empty();
  if (nothing) ++errors;
  const std::size_t tests = g.cases.size() + (nothing ? 1 : 0);
  const std::string suite =
      fmt::format("mculab gate: job {} against baseline job {}", g.job, g.baseline);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"mculab\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n",
      tests, failures, errors, skipped);
  out += fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\">\n",
      Xml(suite), tests, failures, errors, skipped);
  out += "    <properties>\n";
  for (const auto& [k, v] :
       std::vector<std::pair<std::string, std::string>>{{"job", std::to_string(g.job)},
                                                        {"baseline", std::to_string(g.baseline)},
                                                        {"board", g.board},
                                                        {"measured", g.measured},
                                                        {"unit", g.unit},
                                                        {"workload", g.workload},
                                                        {"status", g.status}}) {
    out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", Xml(k), Xml(v));
  }
  out += "    </properties>\n";
  const std::string classname = "mculab." + (g.workload.empty() ? "job" : g.workload);
  for (const GateCase& c : g.cases) {
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">", Xml(classname),
                       Xml(CaseName(c)));
    if (c.failed) {
      out += fmt::format("\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    ",
                         Xml(c.outcome), Xml(c.message), Xml(c.message));
    } else if (c.outcome.starts_with("missing") || c.outcome == "unstable") {
      out += fmt::format("\n      <skipped message=\"{}\"/>\n    ", Xml(c.message));
    } else if (c.outcome == "not compared") {
      out += fmt::format("\n      <error type=\"not compared\" message=\"{}\">{}</error>\n    ",
                         Xml(c.message), Xml(c.message));
    } else {
      out += fmt::format("\n      <system-out>{}</system-out>\n    ", Xml(c.message));
    }
    out += "</testcase>\n";
  }
  if (nothing) {
    out += fmt::format(
        "    <testcase classname=\"{}\" name=\"comparison\" time=\"0\">\n      <error "
        "type=\"not compared\" message=\"{}\"/>\n    </testcase>\n",
        Xml(classname), Xml(g.not_compared));
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string GateMarkdown(const GateOutcome& g, const std::string& web) {
  const std::string mark = g.status == "passed"      ? "passed"
                           : g.status == "regressed" ? "**FAILED**"
                                                     : "**not decided**";
  std::string out = fmt::format("### mculab benchmark gate: {}\n\n", mark);
  if (g.baseline == 0) {
    out += fmt::format("Job [#{0}]({1}job.html?id={0}): no comparison.\n\n", g.job, web);
  } else {
    out += fmt::format(
        "Job [#{0}]({2}job.html?id={0}) on {3} against baseline [#{1}]({2}job.html?id={1}) on "
        "{4}: [compare]({2}compare.html?jobs={1},{0}). {5}{6}.\n\n",
        g.job, g.baseline, web, Md(g.board.empty() ? "?" : g.board),
        Md(g.baseline_board.empty() ? "?" : g.baseline_board), Md(g.workload),
        g.measured.empty() ? "" : ", " + Md(g.measured));
  }
  out += Md(g.summary) + "\n\n";
  out += fmt::format(
      "| case | params | baseline ({0}) | this job ({0}) | change | 95% interval | "
      "verdict | gate |\n",
      Md(g.unit.empty() ? "?" : g.unit));
  out += "|---:|---|---:|---:|---:|---|---|---|\n";
  for (const GateCase& c : g.cases) {
    const std::string gate = c.failed ? "**" + c.outcome + "**" : c.outcome;
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} |\n", c.id, Md(c.params.empty() ? "-" : c.params),
        c.baseline ? FormatNumber(*c.baseline) : "missing",
        c.median ? FormatNumber(*c.median) : "missing", c.ratio ? RatioPercent(*c.ratio) : "-",
        Interval(c), c.verdict.empty() ? "-" : c.verdict, gate);
  }
  bool notes = false;
  for (const GateCase& c : g.cases) {
    if (c.outcome == "passed") continue;
    if (!notes) out += "\n";
    notes = true;
    out += "- " + Md(c.message) + "\n";
  }
  return out;
}

nlohmann::ordered_json GateJson(const GateOutcome& g, const nlohmann::ordered_json& comparison) {
  Json j;
  j["status"] = g.status;
  j["exit_code"] = g.exit_code;
  j["summary"] = g.summary;
  j["job"] = g.job;
  j["baseline"] = g.baseline;
  j["board"] = g.board;
  j["baseline_board"] = g.baseline_board;
  j["measured"] = g.measured;
  j["workload"] = g.workload;
  j["unit"] = g.unit;
  j["max_regression_pct"] = g.thresholds.max_regression_pct;
  j["max_improvement_pct"] = Optional(g.thresholds.max_improvement_pct);
  j["not_compared"] = g.not_compared.empty() ? Json(nullptr) : Json(g.not_compared);
  Json cases = Json::array();
  for (const GateCase& c : g.cases) {
    Json o;
    o["id"] = c.id;
    o["params"] = c.params;
    o["baseline"] = Optional(c.baseline);
    o["median"] = Optional(c.median);
    o["ratio"] = Optional(c.ratio);
    o["lo"] = Optional(c.lo);
    o["hi"] = Optional(c.hi);
    o["verdict"] = c.verdict.empty() ? Json(nullptr) : Json(c.verdict);
    o["baseline_stability"] =
        c.baseline_stability.empty() ? Json(nullptr) : Json(c.baseline_stability);
    o["stability"] = c.stability.empty() ? Json(nullptr) : Json(c.stability);
    o["baseline_cv"] = Optional(c.baseline_cv);
    o["cv"] = Optional(c.cv);
    o["outcome"] = c.outcome;
    o["failed"] = c.failed;
    o["message"] = c.message;
    cases.push_back(std::move(o));
  }
  j["cases"] = std::move(cases);
  j["comparison"] = comparison;
  return j;
}

std::string WebUrl(const std::string& given, const std::string& server_address) {
  std::string url = given;
  if (url.empty()) {
    std::string host = server_address;
    if (auto pos = host.find("://"); pos != std::string::npos) host = host.substr(pos + 3);
    if (!host.empty() && host.front() == '[') {
      host = host.substr(0, host.find(']') + 1);  // [::1]:7420
    } else if (auto colon = host.rfind(':'); colon != std::string::npos) {
      host = host.substr(0, colon);
    }
    if (host.empty()) host = "localhost";
    url = "http://" + host + ":8080/";
  }
  if (url.back() != '/') url += '/';
  return url;
}

Result<ReportSpec> ParseReportSpec(std::string_view text) {
  const auto colon = text.find(':');
  ReportSpec r;
  if (colon != std::string_view::npos) {
    r.format = std::string(text.substr(0, colon));
    r.path = std::string(text.substr(colon + 1));
  }
  if (r.format != "junit" && r.format != "markdown" && r.format != "json") {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("--report takes junit:FILE, markdown:FILE or json:FILE, got '{}'", text));
  }
  if (r.path.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("--report {}: needs a file after the colon, e.g. {}:report.{}",
                                 r.format, r.format,
                                 r.format == "junit"      ? "xml"
                                 : r.format == "markdown" ? "md"
                                                          : "json"));
  }
  return r;
}

CodeRefs CodeRefsFromCi(const std::map<std::string, std::string>& env) {
  auto get = [&](const char* name) {
    auto it = env.find(name);
    return it == env.end() ? std::string() : it->second;
  };
  CodeRefs r;
  if (!get("GITHUB_SHA").empty()) {
    r.commit = get("GITHUB_SHA");
    r.branch = !get("GITHUB_HEAD_REF").empty() ? get("GITHUB_HEAD_REF") : get("GITHUB_REF_NAME");
    if (!get("GITHUB_REPOSITORY").empty() && !get("GITHUB_RUN_ID").empty()) {
      const std::string server =
          !get("GITHUB_SERVER_URL").empty() ? get("GITHUB_SERVER_URL") : "https://github.com";
      r.url = server + "/" + get("GITHUB_REPOSITORY") + "/actions/runs/" + get("GITHUB_RUN_ID");
    }
  } else if (!get("CI_COMMIT_SHA").empty()) {
    r.commit = get("CI_COMMIT_SHA");
    r.branch = get("CI_COMMIT_REF_NAME");
    r.url = get("CI_JOB_URL");
  }
  return r;
}

Result<BaselineSpec> ParseBaselineSpec(std::string_view text) {
  BaselineSpec b;
  auto bad = [&](std::string_view why) -> Result<BaselineSpec> {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("--baseline takes a job id, label:TEXT or branch:NAME ({}), got "
                                 "'{}'",
                                 why, text));
  };
  if (text.starts_with("label:")) {
    b.label = std::string(text.substr(6));
    if (b.label.empty()) return bad("the label is empty");
    return b;
  }
  if (text.starts_with("branch:")) {
    b.branch = std::string(text.substr(7));
    if (b.branch.empty()) return bad("the branch is empty");
    return b;
  }
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, b.job);
  if (text.empty() || ec != std::errc() || p != end || b.job == 0) return bad("not a job id");
  return b;
}

}  // namespace mculab::cli
