#include "proto/json/documents.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/lists.h"

namespace mculab {
namespace {

using Json = nlohmann::ordered_json;
namespace v1 = mculab::v1;

// JSON has no infinity or NaN.
Json Number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

template <typename T>
Json Array(const google::protobuf::RepeatedField<T>& values) {
  return Json(std::vector<T>(values.begin(), values.end()));
}

Json Strings(const google::protobuf::RepeatedPtrField<std::string>& values) {
  return Json(std::vector<std::string>(values.begin(), values.end()));
}

// The job's fields, as the job list and the job's results both carry them at the top level.
void AddJob(const v1::Job& job, bool emulated, const std::string& measured, Json& j) {
  j["id"] = job.id();
  j["user"] = job.user();
  j["kind"] = job.kind();
  j["board"] = !job.assigned_board().empty() ? job.assigned_board() : job.board();
  j["requested_board"] = job.board();
  j["assigned_board"] = job.assigned_board();
  j["op"] = job.op();
  j["label"] = job.label();
  j["state"] = job.state();
  j["priority"] = job.priority();
  j["created_ms"] = job.created_ms();
  j["started_ms"] = job.started_ms();
  j["finished_ms"] = job.finished_ms();
  j["num_cases"] = job.num_cases();
  j["iterations"] = job.iterations();
  j["warmup"] = job.warmup();
  j["emulated"] = emulated;
  j["measured"] = measured;
  j["message"] = job.message();
  j["progress_done"] = job.progress_done();
  j["progress_total"] = job.progress_total();
  j["attempts"] = job.attempts();
  j["tags"] = Json(std::map<std::string, std::string>(job.tags().begin(), job.tags().end()));
  j["firmware_artifact"] = job.firmware_artifact();
  j["blob_artifact"] = job.blob_artifact();
  j["kernels"] = job.kernels();
  j["kernel_set"] = job.kernel_set();
  j["model_name"] = job.model_name();
  j["commit"] = job.commit();
  j["branch"] = job.branch();
  j["url"] = job.url();
  j["reruns"] = job.reruns();
  j["max_cv_pct"] = job.max_cv_pct();
  j["reruns_done"] = job.reruns_done();
  j["model_sha256"] = job.model_sha256();
  j["model_summary"] = job.model_summary();
  if (job.wait().position() > 0) {
    const v1::QueueWait& w = job.wait();
    Json o;
    o["position"] = w.position();
    o["estimated_start_ms"] = w.estimated_start_ms();
    if (!w.board().empty()) {
      o["board"] = w.board();
      o["holder"] = w.holder();
      o["lease_until_ms"] = w.lease_until_ms();
      o["note"] = w.note();
    }
    j["wait"] = std::move(o);
  }
}

Json ProvenanceJson(const v1::Results& r) {
  if (!r.has_provenance()) return nullptr;
  const v1::Provenance& p = r.provenance();
  Json j;
  j["board"] = p.board();
  j["board_kind"] = p.board_kind();
  j["board_serial"] = p.board_serial();
  j["agent"] = p.agent();
  j["runner_version"] = p.runner_version();
  j["firmware_sha256"] = p.firmware_sha256();
  j["workload_sha256"] = p.workload_sha256();
  j["toolchain"] = p.toolchain();
  j["clock_hz"] = p.clock_hz();
  j["port"] = p.port();
  j["cpu"] = p.cpu();
  j["emulated"] = p.emulated();
  j["measured"] = p.measured();
  j["timer_unit"] = p.timer_unit();
  j["counters"] = JoinList(std::vector<std::string>(p.counters().begin(), p.counters().end()));
  j["note"] = p.note();
  j["seed"] = p.seed();
  j["kernel_set"] = p.kernel_set();
  return j;
}

Json CaseJson(const v1::Results& r, const v1::CaseStats& c) {
  Json j;
  j["index"] = c.index();
  j["id"] = c.case_id();
  j["params"] = Array(c.params());
  j["metric"] = c.metric();
  j["unit"] = c.unit();
  j["n"] = c.n();
  for (const auto& [name, v] :
       {std::pair{"min", c.min()}, std::pair{"median", c.median()}, std::pair{"mean", c.mean()},
        std::pair{"p90", c.p90()}, std::pair{"p99", c.p99()}, std::pair{"stddev", c.stddev()},
        std::pair{"cv", c.cv()}, std::pair{"max", c.max()}}) {
    j[name] = Number(v);
  }
  // No verdict for a case that never ran or whose checksum the agent has not reported, and none
  // for a custom runner's output (the lab has no reference for its runtime).
  const bool reported = c.n() > 0 && c.checksum_reported();
  const bool verified = r.job().firmware_artifact().empty();
  j["checksum"] = reported ? Json(c.checksum()) : Json(nullptr);
  j["checksum_ok"] = reported && verified ? Json(c.checksum_ok()) : Json(nullptr);
  j["overhead"] = reported ? Number(c.overhead()) : Json(nullptr);
  j["checksum_verified"] = verified;
  for (const v1::RawSamples& s : r.samples()) {
    if (s.case_index() == c.index()) j["samples"][s.metric()] = Array(s.values());
  }
  return j;
}

// Counter events per case, as `mculab show` prints them: one row per case and event with the
// case's id and parameters, the pass that counted it, and its statistics.
Json EventsJson(const v1::Results& r) {
  std::map<std::string, std::uint32_t> pass_of;
  for (const v1::PassInfo& p : r.passes()) {
    for (const std::string& e : p.events()) pass_of.emplace(e, p.index());
  }
  Json rows = Json::array();
  for (const v1::CaseStats& s : r.counters()) {
    Json o;
    o["case"] = s.index();
    o["id"] = s.case_id();
    o["params"] = Array(s.params());
    o["event"] = s.metric();
    auto p = pass_of.find(s.metric());
    o["pass"] = p == pass_of.end() ? Json(nullptr) : Json(p->second);
    o["n"] = s.n();
    o["min"] = Number(s.min());
    o["median"] = Number(s.median());
    o["max"] = Number(s.max());
    o["cv"] = Number(s.cv());
    rows.push_back(std::move(o));
  }
  return rows;
}

// Per-op rows: one per (case, op, metric) of the pass that counted the metric (the timer as pass
// 0 measured it), with its share of the case's total over the ops of that metric.
Json OpsJson(const v1::Results& r) {
  auto shown = [](const v1::OpStats& o) { return !o.timer() || o.pass() == 0; };
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::string>, double> totals;
  for (const v1::OpStats& o : r.ops()) {
    if (shown(o)) totals[{o.pass(), o.case_index(), o.metric()}] += o.sum();
  }
  Json rows = Json::array();
  for (const v1::OpStats& o : r.ops()) {
    if (!shown(o)) continue;
    Json j;
    j["case"] = o.case_index();
    j["op_index"] = o.op_index();
    j["type"] = o.type();
    j["name"] = o.name();
    j["metric"] = o.metric();
    j["pass"] = o.pass();
    j["count"] = o.count();
    j["sum"] = o.sum();
    j["mean"] = o.count() > 0 ? o.sum() / static_cast<double>(o.count()) : 0.0;
    j["min"] = o.min();
    j["max"] = o.max();
    const double total = totals[{o.pass(), o.case_index(), o.metric()}];
    j["share"] = total > 0 ? o.sum() / total : 0.0;
    j["unclosed"] = o.unclosed();
    rows.push_back(std::move(j));
  }
  return rows;
}

// {"flash": {"text_bytes": ...}, "ram": {...}, "runner": {"arena_used_bytes": ...,
// "arena_reserved_bytes": ...}} (runner figures: the largest over the cases); null when none.
Json MemoryJson(const v1::Results& r) {
  if (r.memory().empty()) return nullptr;
  std::map<std::string, std::map<std::string, std::uint64_t>> groups;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> runner;
  for (const v1::MemoryStat& m : r.memory()) {
    if (m.source() == "elf") {
      const auto dot = m.category().find('.');
      const std::string group = dot == std::string::npos ? "firmware" : m.category().substr(0, dot);
      const std::string name =
          dot == std::string::npos ? m.category() : m.category().substr(dot + 1);
      groups[group][name + "_bytes"] = m.used();
    } else {
      auto& [used, reserved] = runner[m.category()];
      used = std::max(used, m.used());
      reserved = std::max(reserved, m.reserved());
    }
  }
  Json j = Json::object();
  for (const auto& [group, figures] : groups) {
    for (const auto& [name, v] : figures) j[group][name] = v;
  }
  for (const auto& [category, v] : runner) {
    j["runner"][category + "_used_bytes"] = v.first;
    j["runner"][category + "_reserved_bytes"] = v.second;
  }
  return j;
}

}  // namespace

namespace {

// A comparison's cells as two arrays: the figure per job, and the ratio per job (null for the
// first job, a missing figure and a refused ratio).
std::pair<Json, Json> Cells(const google::protobuf::RepeatedPtrField<v1::ComparedCell>& cells) {
  Json figures = Json::array();
  Json ratios = Json::array();
  for (const v1::ComparedCell& cell : cells) {
    figures.push_back(cell.has_median() ? Number(cell.median()) : Json(nullptr));
    if (!cell.has_ratio()) {
      ratios.push_back(nullptr);
      continue;
    }
    Json r;
    r["ratio"] = Number(cell.ratio());
    r["lo"] = Number(cell.lo());
    r["hi"] = Number(cell.hi());
    r["significant"] = cell.significant();
    r["verdict"] = cell.verdict().empty() ? Json(nullptr) : Json(cell.verdict());
    ratios.push_back(std::move(r));
  }
  return {std::move(figures), std::move(ratios)};
}

// Per job, how far its timings of the case can be trusted; null where it lacks the case.
Json Variations(const google::protobuf::RepeatedPtrField<v1::ComparedCell>& cells) {
  Json out = Json::array();
  for (const v1::ComparedCell& cell : cells) {
    if (!cell.has_variation()) {
      out.push_back(nullptr);
      continue;
    }
    const v1::Variation& v = cell.variation();
    Json o;
    o["stability"] = v.stability();
    o["cv"] = Number(v.cv());
    o["max_cv"] = v.stability() == "exact" ? Json(nullptr) : Number(v.max_cv());
    o["n"] = v.n();
    o["outliers"] = v.low_outliers() + v.high_outliers();
    o["low_outliers"] = v.low_outliers();
    o["high_outliers"] = v.high_outliers();
    o["outlier_iterations"] = Array(v.outlier_iterations());
    o["warmup"] = v.warmup();
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

nlohmann::ordered_json ComparisonDocument(const v1::Comparison& c) {
  Json j;
  Json jobs = Json::array();
  for (const v1::ComparedJob& job : c.jobs()) {
    Json o;
    o["id"] = job.id();
    o["label"] = job.label();
    o["op"] = job.op();
    o["board"] = job.board();
    o["unit"] = job.unit();
    o["emulated"] = job.emulated();
    o["measured"] = job.measured();
    o["workload"] = job.workload();
    o["sha256"] = job.sha256();
    o["kernel_set"] = job.kernel_set();
    o["kind"] = job.kind();
    jobs.push_back(std::move(o));
  }
  j["jobs"] = std::move(jobs);
  j["ratio_refused"] = c.ratio_refused().empty() ? Json(nullptr) : Json(c.ratio_refused());
  j["verdict_refused"] = c.verdict_refused().empty() ? Json(nullptr) : Json(c.verdict_refused());
  j["param_names"] = Strings(c.param_names());
  Json cases = Json::array();
  for (const v1::ComparedCase& cc : c.cases()) {
    Json o;
    o["id"] = cc.id();
    o["params"] = Array(cc.params());
    o["refused"] = cc.refused().empty() ? Json(nullptr) : Json(cc.refused());
    auto [medians, ratios] = Cells(cc.cells());
    o["medians"] = std::move(medians);
    o["ratios"] = std::move(ratios);
    o["variation"] = Variations(cc.cells());
    cases.push_back(std::move(o));
  }
  j["cases"] = std::move(cases);
  Json layers = Json::array();
  for (const v1::ComparedLayer& l : c.layers()) {
    Json o;
    o["case"] = l.case_id();
    o["op_index"] = l.op_index();
    o["type"] = l.type();
    o["name"] = l.name();
    auto [means, ratios] = Cells(l.cells());
    o["means"] = std::move(means);
    o["ratios"] = std::move(ratios);
    layers.push_back(std::move(o));
  }
  j["layers"] = std::move(layers);
  return j;
}

nlohmann::ordered_json SeriesDocument(const v1::Series& s) {
  const v1::GetSeriesRequest& r = s.request();
  Json j;
  Json series;
  series["kind"] = r.kind();
  series["op"] = r.op();
  series["params"] = r.has_params()
                         ? Json(std::vector<std::int32_t>(r.params().begin(), r.params().end()))
                         : Json(nullptr);
  series["param_names"] = Strings(s.param_names());
  series["case"] = r.has_case_id() ? Json(r.case_id()) : Json(nullptr);
  series["runner"] = r.runner();
  series["model"] = r.model();
  series["user"] = r.user();
  series["label"] = r.label();
  series["tags"] = Json(std::map<std::string, std::string>(r.tags().begin(), r.tags().end()));
  series["limit"] = r.limit();
  j["series"] = std::move(series);
  j["unit"] = s.unit();
  Json detector;
  detector["window"] = r.window();
  detector["min_step"] = r.min_step();
  j["detector"] = std::move(detector);
  Json jobs = Json::array();
  for (const v1::SeriesJob& job : s.jobs()) {
    Json o;
    o["id"] = job.id();
    o["label"] = job.label();
    o["user"] = job.user();
    o["board"] = job.board();
    o["created_ms"] = job.created_ms();
    o["finished_ms"] = job.finished_ms();
    o["case_index"] = job.case_index();
    o["case_id"] = job.case_id();
    o["n"] = job.n();
    o["median"] = job.median();
    o["lo"] = job.lo();
    o["hi"] = job.hi();
    o["unit"] = job.unit();
    o["measured"] = job.measured();
    o["firmware_sha256"] = job.firmware_sha256();
    o["runner_version"] = job.runner_version();
    o["runner_name"] = job.runner_name();
    o["runner_changed"] = job.runner_changed();
    o["model_sha256"] = job.model_sha256();
    o["model_changed"] = job.model_changed();
    o["commit"] = job.commit();
    o["branch"] = job.branch();
    jobs.push_back(std::move(o));
  }
  j["jobs"] = std::move(jobs);
  Json changes = Json::array();
  for (const v1::SeriesChange& c : s.changes()) {
    Json o;
    o["index"] = c.index();
    o["before_job"] = c.before_job();
    o["after_job"] = c.after_job();
    o["before"] = c.before();
    o["after"] = c.after();
    o["ratio"] = c.ratio();
    changes.push_back(std::move(o));
  }
  j["changes"] = std::move(changes);
  return j;
}

nlohmann::ordered_json BoardDocument(const v1::Board& b) {
  Json j;
  j["name"] = b.name();
  j["kind"] = b.kind();
  j["agent"] = b.agent();
  j["state"] = b.state();
  j["health"] = b.health();
  j["emulated"] = b.emulated();
  j["measured"] = b.measured();
  j["tags"] = Json(std::map<std::string, std::string>(b.tags().begin(), b.tags().end()));
  j["current_job"] = b.current_job();
  j["queue_length"] = b.queue_length();
  j["kind_queue_length"] = b.kind_queue_length();
  j["ram_bytes"] = b.ram_bytes();
  const bool held = !b.holder().empty();  // the reservation in force
  j["holder"] = b.holder();
  j["lease_until_ms"] = held ? b.lease_until_ms() : 0;
  j["note"] = held ? b.reservation_note() : std::string();
  j["hold"] = held && b.hold();
  j["health_failures"] = b.health_failures();
  j["awaiting_approval"] = b.awaiting_approval();
  return j;
}

nlohmann::ordered_json JobDocument(const v1::Job& job) {
  Json j;
  AddJob(job, job.emulated(), job.measured(), j);
  return j;
}

nlohmann::ordered_json JobListDocument(const v1::ListJobsReply& reply) {
  Json j;
  j["total"] = reply.total();
  j["offset"] = reply.offset();
  j["limit"] = reply.limit();
  Json jobs = Json::array();
  for (const v1::Job& job : reply.jobs()) jobs.push_back(JobDocument(job));
  j["jobs"] = std::move(jobs);
  return j;
}

nlohmann::ordered_json ResultsDocument(const v1::Results& r) {
  Json j;
  AddJob(r.job(), r.emulated(), r.measured(), j);
  j["runner_name"] = r.runner_name();
  j["provenance"] = ProvenanceJson(r);
  j["param_names"] = Strings(r.param_names());
  Json cases = Json::array();
  for (const v1::CaseStats& c : r.cases()) cases.push_back(CaseJson(r, c));
  j["cases"] = std::move(cases);
  j["events"] = EventsJson(r);
  Json passes = Json::array();
  for (const v1::PassInfo& p : r.passes()) {
    Json o;
    o["index"] = p.index();
    o["events"] = Strings(p.events());
    passes.push_back(std::move(o));
  }
  j["passes"] = std::move(passes);
  j["ops"] = OpsJson(r);
  j["memory"] = MemoryJson(r);
  return j;
}

}  // namespace mculab
