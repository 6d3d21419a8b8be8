#include "cli/compare_format.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <vector>

#include "cli/format.h"

namespace mculab::cli {
namespace {

namespace v1 = mculab::v1;

std::string Finite(double v) { return std::isfinite(v) ? FormatNumber(v) : "inf"; }

}  // namespace

std::string CaseParamsText(const v1::Comparison& c, const v1::ComparedCase& cc) {
  std::string out;
  for (int i = 0; i < cc.params_size(); ++i) {
    if (i > 0) out += ",";
    if (i < c.param_names_size()) out += c.param_names(i) + "=";
    out += std::to_string(cc.params(i));
  }
  return out;
}

std::string RatioPercent(double ratio) {
  if (!std::isfinite(ratio)) return "inf";
  return fmt::format("{:+.1f}%", (ratio - 1) * 100);
}

std::string VariationText(const v1::Variation& v) {
  if (v.stability() == "exact") return "exact";
  std::string out = fmt::format("{:.1f}%", v.cv() * 100);
  if (v.stability() == "unstable") out += fmt::format(" unstable (> {:.3g}%)", v.max_cv() * 100);
  return out;
}

std::string OutlierText(const v1::Variation& v) {
  const std::uint64_t outliers = v.low_outliers() + v.high_outliers();
  if (outliers == 0 && v.warmup() == 0) return "";
  std::string out;
  if (outliers > 0) {
    std::vector<std::string> at;
    for (std::uint32_t i : v.outlier_iterations()) at.push_back(std::to_string(i));
    out = fmt::format("{} outlier{} of {} ({} high, {} low; iteration{} {}{}), kept", outliers,
                      outliers == 1 ? "" : "s", v.n(), v.high_outliers(), v.low_outliers(),
                      at.size() == 1 ? "" : "s", fmt::join(at, ", "),
                      outliers > static_cast<std::uint64_t>(at.size()) ? ", ..." : "");
  }
  if (v.warmup() > 0) {
    if (!out.empty()) out += "; ";
    out += fmt::format("warm-up: the first {} iteration{} above the rest", v.warmup(),
                       v.warmup() == 1 ? "" : "s");
  }
  return out;
}

std::string RenderComparison(const v1::Comparison& c) {
  std::string out;
  std::vector<std::vector<std::string>> jobs;
  std::string unit;
  for (int k = 0; k < c.jobs_size(); ++k) {
    const v1::ComparedJob& j = c.jobs(k);
    if (k == 0) unit = j.unit();
    std::string ran = j.workload();
    if (!j.sha256().empty()) ran += " " + j.sha256().substr(0, 8);
    jobs.push_back({std::to_string(j.id()) + (k == 0 ? " (baseline)" : ""), j.board(), j.measured(),
                    j.unit(), ran, j.kernel_set().empty() ? "-" : j.kernel_set(), j.label()});
  }
  out += RenderTable({"job", "board", "timing", "unit", "ran", "kernels", "label"}, jobs);
  if (!c.ratio_refused().empty()) out += "no ratio: " + c.ratio_refused() + "\n";
  if (!c.verdict_refused().empty()) out += "no verdict: " + c.verdict_refused() + "\n";
  out += fmt::format(
      "{} case{}; medians{}; ratio = median / job {}'s median with its bootstrap 95% interval\n",
      c.cases_size(), c.cases_size() == 1 ? "" : "s", unit.empty() ? "" : " in " + unit,
      c.jobs_size() > 0 ? std::to_string(c.jobs(0).id()) : "?");
  std::vector<std::string> header = {"case", "params"};
  for (int k = 0; k < c.jobs_size(); ++k) {
    const std::string id = std::to_string(c.jobs(k).id());
    header.push_back("job " + id);
    header.push_back("cv " + id);
    if (k > 0) {
      header.push_back("ratio " + id);
      header.push_back("95% interval");
      header.push_back("verdict");
    }
  }
  std::vector<std::vector<std::string>> rows;
  for (const v1::ComparedCase& cc : c.cases()) {
    std::vector<std::string> row = {std::to_string(cc.id()), CaseParamsText(c, cc)};
    for (int k = 0; k < cc.cells_size(); ++k) {
      const v1::ComparedCell& cell = cc.cells(k);
      row.push_back(cell.has_median() ? FormatNumber(cell.median()) : "missing");
      row.push_back(cell.has_variation() ? VariationText(cell.variation()) : "-");
      if (k == 0) continue;
      if (!cell.has_ratio()) {
        row.insert(row.end(), {"-", "-",
                               !cell.has_median() || !cc.cells(0).has_median() ? "case missing"
                               : !cc.refused().empty()                         ? "not compared"
                                                                               : "-"});
        continue;
      }
      row.push_back(fmt::format("{} ({})", Finite(cell.ratio()), RatioPercent(cell.ratio())));
      row.push_back("[" + Finite(cell.lo()) + ", " + Finite(cell.hi()) + "]");
      row.push_back(cell.verdict().empty() ? "-" : cell.verdict());
    }
    rows.push_back(std::move(row));
  }
  out += RenderTable(header, rows);
  bool unstable = false;
  for (const v1::ComparedCase& cc : c.cases()) {
    if (!cc.refused().empty())
      out += "case " + std::to_string(cc.id()) + ": " + cc.refused() + "\n";
    for (int k = 0; k < cc.cells_size() && k < c.jobs_size(); ++k) {
      if (!cc.cells(k).has_variation()) continue;
      const v1::Variation& v = cc.cells(k).variation();
      unstable = unstable || v.stability() == "unstable";
      const std::string text = OutlierText(v);
      if (!text.empty()) {
        out += fmt::format("case {} in job {}: {}\n", cc.id(), c.jobs(k).id(), text);
      }
    }
  }
  if (unstable) {
    out +=
        "unstable: the timings vary more than the limit (cv = stddev / mean), so a ratio is no "
        "verdict on speed; run more iterations, quiet the board, or set --max-cv\n";
  }
  if (c.layers_size() == 0) return out;
  const bool exact = c.jobs_size() > 0 && c.jobs(0).measured() == "emulated";
  out += fmt::format(
      "\nper layer: the mean per invocation{}; {}\n", unit.empty() ? "" : " in " + unit,
      exact ? "emulated counts are exact, so a ratio is the whole change"
            : "the profile keeps totals, not samples: ratios without intervals or verdicts");
  std::vector<std::string> lheader = {"case", "op", "type", "name"};
  for (int k = 0; k < c.jobs_size(); ++k) {
    const std::string id = std::to_string(c.jobs(k).id());
    lheader.push_back("job " + id);
    if (k > 0) {
      lheader.push_back("ratio " + id);
      lheader.push_back("verdict");
    }
  }
  std::vector<std::vector<std::string>> lrows;
  for (const v1::ComparedLayer& l : c.layers()) {
    std::vector<std::string> row = {std::to_string(l.case_id()), std::to_string(l.op_index()),
                                    l.type(), l.name()};
    for (int k = 0; k < l.cells_size(); ++k) {
      const v1::ComparedCell& cell = l.cells(k);
      row.push_back(cell.has_median() ? FormatNumber(cell.median()) : "missing");
      if (k == 0) continue;
      row.push_back(cell.has_ratio()
                        ? fmt::format("{} ({})", Finite(cell.ratio()), RatioPercent(cell.ratio()))
                        : "-");
      row.push_back(cell.verdict().empty() ? "-" : cell.verdict());
    }
    lrows.push_back(std::move(row));
  }
  out += RenderTable(lheader, lrows);
  return out;
}

}  // namespace mculab::cli
