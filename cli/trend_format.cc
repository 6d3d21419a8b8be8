#include "cli/trend_format.h"

#include <fmt/format.h>

#include <map>

#include "cli/format.h"
#include "common/time_text.h"
#include "proto/json/documents.h"

namespace mculab::cli {
namespace {

namespace v1 = mculab::v1;

std::string CaseText(const v1::Series& s) {
  const v1::GetSeriesRequest& r = s.request();
  std::string out = r.op();
  if (r.has_params()) {
    for (int i = 0; i < r.params_size(); ++i) {
      out += i == 0 ? " " : ",";
      if (i < s.param_names_size()) out += s.param_names(i) + "=";
      out += std::to_string(r.params(i));
    }
  }
  if (r.has_case_id()) out += " case " + std::to_string(r.case_id());
  if (!r.runner().empty()) out += " runner " + r.runner();
  if (!r.model().empty()) out += " " + r.model();
  return out;
}

std::string Percent(double ratio) { return fmt::format("{:+.1f}%", (ratio - 1) * 100); }

}  // namespace

std::string RenderTrend(const v1::Series& s) {
  const v1::GetSeriesRequest& r = s.request();
  std::string out = fmt::format("series: {} on {}", CaseText(s), r.kind());
  std::vector<std::string> narrowed;
  if (!r.user().empty()) narrowed.push_back("user " + r.user());
  if (!r.label().empty()) narrowed.push_back("label ~ \"" + r.label() + "\"");
  for (const auto& [k, v] : std::map<std::string, std::string>(r.tags().begin(), r.tags().end())) {
    narrowed.push_back("tag " + k + "=" + v);
  }
  for (std::size_t i = 0; i < narrowed.size(); ++i) out += (i == 0 ? ", " : " ") + narrowed[i];
  out += fmt::format("\n{} job{}{}\n", s.jobs_size(), s.jobs_size() == 1 ? "" : "s",
                     s.unit().empty() ? "" : ", medians in " + s.unit() + " with 95% intervals");
  if (s.jobs_size() == 0) {
    out +=
        "no succeeded job of this case matches (only jobs whose run succeeded are in a series)\n";
    return out;
  }
  out += fmt::format(
      "change points (a step where {} jobs either side do not overlap, at least {}): {}\n",
      r.window(), FormatNumber(r.min_step() * 100) + "%",
      s.changes_size() == 0 ? "none" : std::to_string(s.changes_size()));
  std::map<std::uint64_t, const v1::SeriesChange*> change_at;
  for (const v1::SeriesChange& c : s.changes()) {
    change_at[c.after_job()] = &c;
    out += fmt::format("  job {} -> job {}: {} -> {} {} ({}, {})  mculab compare {} {}\n",
                       c.before_job(), c.after_job(), FormatNumber(c.before()),
                       FormatNumber(c.after()), s.unit(), Percent(c.ratio()),
                       c.ratio() > 1 ? "slower" : "faster", c.before_job(), c.after_job());
  }
  std::vector<std::vector<std::string>> rows;
  for (const v1::SeriesJob& j : s.jobs()) {
    std::string runner = j.runner_version();
    if (!j.runner_name().empty()) runner = j.runner_name() + " " + runner;
    if (!j.firmware_sha256().empty()) runner += " " + j.firmware_sha256().substr(0, 8);
    if (!j.model_sha256().empty()) runner += " model " + j.model_sha256().substr(0, 8);
    if (j.model_changed()) {
      runner += " (model file changed)";
    } else if (j.runner_changed()) {
      runner += " (changed)";
    }
    std::string change;
    if (auto it = change_at.find(j.id()); it != change_at.end()) {
      change = "step " + Percent(it->second->ratio());
    }
    rows.push_back({std::to_string(j.id()), UtcTimeText(j.created_ms()), j.board(), j.measured(),
                    FormatNumber(j.median()),
                    "[" + FormatNumber(j.lo()) + ", " + FormatNumber(j.hi()) + "]",
                    std::to_string(j.n()), runner, change, j.label()});
  }
  out += RenderTable({"job", "submitted", "board", "timing", "median", "95% interval", "n",
                      "runner", "change", "label"},
                     rows);
  return out;
}

}  // namespace mculab::cli
