#include "server/http/json_views.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/lists.h"

namespace mculab::server::http {
namespace {

// JSON has no infinity: a ratio whose resamples divided by zero is null.
Json Number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

}  // namespace

Json CaseSamplesJson(const CaseSamples& s) {
  Json j;
  j["job"] = s.job;
  j["case"] = s.case_index;
  j["metric"] = s.metric;
  j["unit"] = s.unit;
  j["n"] = s.n;
  j["downsampled"] = s.points.downsampled;
  j["iterations"] = s.points.iterations;
  j["values"] = s.points.values;
  if (s.histogram) {
    Json h;
    h["lo"] = s.histogram->lo;
    h["hi"] = s.histogram->hi;
    h["counts"] = s.histogram->counts;
    j["histogram"] = std::move(h);
  }
  return j;
}

Json ComparisonJson(const Comparison& c, const HostBoards& host) {
  Json j;
  Json jobs = Json::array();
  std::set<std::string> units;
  std::set<std::string_view> kinds;
  for (const ComparedJob& job : c.jobs) {
    const std::string_view measured =
        MeasuredKind(job.emulated, job.unit == "ns" || host.names.contains(job.board));
    units.insert(job.unit);
    kinds.insert(measured);
    Json o;
    o["id"] = job.id;
    o["label"] = job.label;
    o["op"] = job.op;
    o["board"] = job.board;
    o["unit"] = job.unit;
    o["emulated"] = job.emulated;
    o["measured"] = measured;
    o["workload"] = job.workload;
    o["kernel_set"] = job.kernel_set;
    o["kind"] = job.kind;
    jobs.push_back(std::move(o));
  }
  j["jobs"] = std::move(jobs);
  std::string refused = c.refused;
  if (!refused.empty()) {
    // Different workloads: said by the service.
  } else if (units.size() > 1) {
    refused = "the jobs are measured in different units (" +
              JoinList(std::vector<std::string>(units.begin(), units.end())) +
              "): a ratio of their medians means nothing";
  } else if (kinds.size() > 1) {
    refused = "the jobs are of different kinds (" +
              JoinList(std::vector<std::string>(kinds.begin(), kinds.end())) +
              "): emulated, host and silicon figures measure different things, so a ratio "
              "between them means nothing";
  }
  j["ratio_refused"] = refused.empty() ? Json(nullptr) : Json(refused);
  // Ratios shown, but no faster/slower: instruction counts of different emulated board kinds.
  j["verdict_refused"] =
      !refused.empty() || c.no_verdict.empty() ? Json(nullptr) : Json(c.no_verdict);
  j["param_names"] = c.param_names;
  Json cases = Json::array();
  for (const ComparedCase& cc : c.cases) {
    Json o;
    o["id"] = cc.id;
    o["params"] = cc.params;
    o["refused"] = cc.refused.empty() ? Json(nullptr) : Json(cc.refused);
    Json medians = Json::array();
    for (const auto& m : cc.medians) medians.push_back(m ? Json(*m) : Json(nullptr));
    o["medians"] = std::move(medians);
    Json ratios = Json::array();
    for (const auto& r : cc.ratios) {
      if (!r || !refused.empty()) {
        ratios.push_back(nullptr);
        continue;
      }
      Json x;
      x["ratio"] = Number(r->ratio);
      x["lo"] = Number(r->lo);
      x["hi"] = Number(r->hi);
      x["significant"] = r->significant;
      ratios.push_back(std::move(x));
    }
    o["ratios"] = std::move(ratios);
    cases.push_back(std::move(o));
  }
  j["cases"] = std::move(cases);
  return j;
}

Json LiveSamplesJson(const LiveSamples& s) {
  Json j;
  j["id"] = s.job;
  j["case"] = s.case_index;
  j["iterations"] = s.iterations;
  j["values"] = s.values;
  return j;
}

Json JobEventJson(const JobEvent& e) {
  Json j;
  j["id"] = e.job_id;
  j["state"] = std::string(JobStateName(e.state));
  j["progress_done"] = e.progress_done;
  j["progress_total"] = e.progress_total;
  j["board"] = e.board;
  j["message"] = e.message;
  return j;
}

Json ErrorJson(const std::string& message) {
  Json j;
  j["error"] = message;
  return j;
}

std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace mculab::server::http
