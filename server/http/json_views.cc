#include "server/http/json_views.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "common/lists.h"

namespace mculab::server::http {
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
