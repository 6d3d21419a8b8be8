#include "server/http/trend_api.h"

#include <fmt/format.h>

#include <cstdlib>

#include "common/lists.h"
#include "server/wire/documents.h"

namespace mculab::server::http {
namespace {

constexpr std::size_t kMaxText = 256;

Error Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

}  // namespace

Result<TrendRequest> ParseTrendRequest(const QueryParams& q) {
  TrendRequest r;
  SeriesQuery& s = r.series;
  struct TextParam {
    const char* name;
    std::string* into;
  };
  const TextParam text[] = {{"kind", &s.kind},   {"op", &s.op},     {"runner", &s.runner},
                            {"model", &s.model}, {"user", &s.user}, {"label", &s.label_contains}};
  for (const auto& [name, into] : text) {
    auto v = q.Get(name);
    if (!v) continue;
    if (v->size() > kMaxText) {
      return Invalid(fmt::format("{} is longer than {} characters", name, kMaxText));
    }
    *into = std::move(*v);
  }
  if (auto params = q.Get("params")) {
    if (params->size() > kMaxText) {
      return Invalid(fmt::format("params is longer than {} characters", kMaxText));
    }
    auto values = ParseIntList(*params);
    if (!values) {
      return Invalid(fmt::format(
          "params must be the case's integer parameters separated by commas, got \"{}\"", *params));
    }
    s.params = std::move(*values);
  }
  auto case_id = q.OptionalInt("case", INT64_MIN + 1, INT64_MAX);
  if (!case_id.ok()) return case_id.error();
  s.case_id = *case_id;
  if (auto tags = q.Get("tag")) {
    if (tags->size() > kMaxText) {
      return Invalid(fmt::format("tag is longer than {} characters", kMaxText));
    }
    for (const std::string& t : SplitList(*tags)) {
      const std::size_t eq = t.find('=');
      if (eq == 0 || eq == std::string::npos) {
        return Invalid(
            fmt::format("tag must be key=value pairs separated by commas, got \"{}\"", *tags));
      }
      s.tags[t.substr(0, eq)] = t.substr(eq + 1);
    }
  }
  auto limit = q.Int("limit", 1, kMaxSeriesJobs, 200);
  if (!limit.ok()) return limit.error();
  s.limit = static_cast<std::uint32_t>(*limit);
  auto window = q.Int("window", 1, 50, 3);
  if (!window.ok()) return window.error();
  r.detector.window = static_cast<std::size_t>(*window);
  if (auto step = q.Get("min_step")) {
    char* end = nullptr;
    const double v = std::strtod(step->c_str(), &end);
    if (end != step->c_str() + step->size() || !(v >= 0 && v < 10)) {
      return Invalid(
          fmt::format("min_step must be a fraction from 0 to 10 (0.01 is 1%), got \"{}\"", *step));
    }
    r.detector.min_relative_step = v;
  }
  return r;
}

Json ChangedJobsJson(const ChangedJobs& changed, const HostBoards& host) {
  Json j;
  j["total"] = changed.jobs.size();
  j["offset"] = 0;
  j["limit"] = changed.jobs.size();
  j["scanned"] = changed.scanned;
  j["truncated"] = changed.truncated;
  Json jobs = Json::array();
  for (const ChangedJob& c : changed.jobs) {
    Json o = wire::ListedJobDocument(JobRow{c.job, c.emulated, host.Has(c.job)});
    Json list = Json::array();
    for (const JobCaseChange& cc : c.changes) {
      Json x;
      x["case_id"] = cc.case_id;
      x["params"] = cc.params;
      Json series;
      series["kind"] = cc.series.kind;
      series["op"] = cc.series.op;
      series["params"] = cc.series.params ? Json(*cc.series.params) : Json(nullptr);
      series["case"] = cc.series.case_id ? Json(*cc.series.case_id) : Json(nullptr);
      series["runner"] = cc.series.runner;
      series["model"] = cc.series.model;
      x["series"] = std::move(series);
      x["index"] = cc.change.index;
      x["before_job"] = cc.change.before_job;
      x["after_job"] = cc.change.after_job;
      x["before"] = cc.change.before;
      x["after"] = cc.change.after;
      x["ratio"] = cc.change.ratio;
      list.push_back(std::move(x));
    }
    o["changes"] = std::move(list);
    jobs.push_back(std::move(o));
  }
  j["jobs"] = std::move(jobs);
  return j;
}

}  // namespace mculab::server::http
