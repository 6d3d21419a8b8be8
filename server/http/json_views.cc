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

Json ProvenanceJson(const Job& job, const Run& run) {
  const Provenance& p = run.provenance;
  Json j;
  j["board"] = run.board;
  j["board_kind"] = job.kind;
  j["board_serial"] = p.board_serial;
  j["agent"] = run.agent;
  j["runner_version"] = p.runner_version;
  j["firmware_sha256"] = p.firmware_sha256;
  j["workload_sha256"] = p.workload_sha256;
  j["toolchain"] = p.toolchain;
  j["clock_hz"] = p.clock_hz;
  j["port"] = p.port;
  j["cpu"] = p.cpu;
  j["emulated"] = p.emulated;
  j["measured"] = MeasuredKind(p.emulated, IsHostRun(p));
  j["timer_unit"] = p.timer_unit;
  j["counters"] = JoinList(p.counters);
  j["note"] = p.note;
  return j;
}

Json CaseJson(const CaseView& c) {
  const CaseStats& s = c.stats;
  Json j;
  j["index"] = c.index;
  j["id"] = c.id;
  j["params"] = c.params;
  j["metric"] = s.metric;
  j["unit"] = s.unit;
  j["n"] = s.n;
  j["min"] = s.min;
  j["median"] = s.median;
  j["mean"] = s.mean;
  j["p90"] = s.p90;
  j["p99"] = s.p99;
  j["stddev"] = s.stddev;
  j["cv"] = s.cv;
  j["max"] = s.max;
  if (c.result) {
    j["checksum"] = c.result->checksum;
    j["checksum_ok"] = c.result->ok;
    j["overhead"] = c.result->overhead;
  } else {  // the agent has not reported the case's checksum yet
    j["checksum"] = nullptr;
    j["checksum_ok"] = nullptr;
    j["overhead"] = nullptr;
  }
  return j;
}

// Per-op rows, flat for the page's table: one per (case, op, metric) of the run's pass
// that counted the metric, with its share of the case's total over the ops of that metric.
Json OpsJson(const JobDetail& d) {
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, double> totals;
  for (const OpProfileRow& o : d.ops) {
    if (o.metric == 0 && o.pass != 0) continue;
    totals[{o.pass, o.case_index, o.metric}] += static_cast<double>(o.sum);
  }
  Json rows = Json::array();
  for (const OpProfileRow& o : d.ops) {
    if (o.metric == 0 && o.pass != 0) continue;  // the timer as pass 0 measured it
    Json r;
    r["case"] = o.case_index;
    r["op_index"] = o.op_index;
    r["type"] = o.type;
    r["name"] = o.name;
    r["metric"] = d.run ? MetricName(d.run->provenance, o.metric) : std::to_string(o.metric);
    r["count"] = o.count;
    r["sum"] = o.sum;
    r["mean"] = o.count > 0 ? static_cast<double>(o.sum) / static_cast<double>(o.count) : 0.0;
    r["min"] = o.min;
    r["max"] = o.max;
    const double total = totals[{o.pass, o.case_index, o.metric}];
    r["share"] = total > 0 ? static_cast<double>(o.sum) / total : 0.0;
    rows.push_back(std::move(r));
  }
  return rows;
}

// Counter events per case, as `mculab show` prints them: one row per case and event with the
// case's id and parameters, the pass that counted it, and its statistics.
Json EventsJson(const JobDetail& d) {
  std::map<std::string, std::uint32_t> pass_of;
  for (const RunPass& p : d.passes) {
    for (const std::string& e : p.events) pass_of.emplace(e, p.pass);
  }
  std::map<std::uint32_t, const CaseView*> cases;
  for (const CaseView& c : d.cases) cases[c.index] = &c;
  Json rows = Json::array();
  for (const CaseStats& s : d.events) {
    Json r;
    r["case"] = s.case_index;
    auto c = cases.find(s.case_index);
    r["id"] = c == cases.end() ? Json(nullptr) : Json(c->second->id);
    r["params"] = c == cases.end() ? Json::array() : Json(c->second->params);
    r["event"] = s.metric;
    auto p = pass_of.find(s.metric);
    r["pass"] = p == pass_of.end() ? Json(nullptr) : Json(p->second);
    r["n"] = s.n;
    r["min"] = Number(s.min);
    r["median"] = Number(s.median);
    r["max"] = Number(s.max);
    r["cv"] = Number(s.cv);
    rows.push_back(std::move(r));
  }
  return rows;
}

// The memory report: {"flash": {"text_bytes": ...}, "ram": {...}, "runner":
// {"arena_used_bytes": ..., "arena_reserved_bytes": ...}} (runner figures: the largest over the
// cases); null when there is none.
Json MemoryJson(const std::vector<MemoryFigure>& memory) {
  if (memory.empty()) return nullptr;
  Json j = Json::object();
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> runner;
  for (const MemoryFigure& m : memory) {
    if (m.source == "elf") {
      const auto dot = m.category.find('.');
      const std::string group = dot == std::string::npos ? "firmware" : m.category.substr(0, dot);
      const std::string name = dot == std::string::npos ? m.category : m.category.substr(dot + 1);
      j[group][name + "_bytes"] = m.used;
    } else {
      auto& [used, reserved] = runner[m.category];
      used = std::max(used, m.used);
      reserved = std::max(reserved, m.reserved);
    }
  }
  for (const auto& [category, v] : runner) {
    j["runner"][category + "_used_bytes"] = v.first;
    j["runner"][category + "_reserved_bytes"] = v.second;
  }
  return j;
}

}  // namespace

bool IsHostBoard(const Board& board) {
  const auto it = board.tags.find("timing");
  return it != board.tags.end() && it->second == kMeasuredHost;
}

bool IsHostRun(const Provenance& p) {
  return !p.emulated && (p.port == "host" || p.timer_unit == "ns");
}

std::string_view MeasuredKind(bool emulated, bool host) {
  return emulated ? kMeasuredEmulated : host ? kMeasuredHost : kMeasuredSilicon;
}

bool HostBoards::Has(const Job& job) const {
  if (!job.assigned_board.empty()) return names.contains(job.assigned_board);
  if (!job.board.empty()) return names.contains(job.board);
  return kinds.contains(job.kind);
}

HostBoards HostBoardsOf(const std::vector<BoardView>& boards) {
  HostBoards out;
  for (const BoardView& b : boards) {
    if (!IsHostBoard(b.board)) continue;
    out.names.insert(b.board.name);
    out.kinds.insert(b.board.kind);
  }
  return out;
}

Json JobJson(const JobRow& row, const HostBoards& host) {
  const Job& job = row.job;
  Json j;
  j["id"] = job.id;
  j["user"] = job.user;
  j["kind"] = job.kind;
  j["board"] = job.board;
  j["assigned_board"] = job.assigned_board;
  j["op"] = job.op;
  j["label"] = job.label;
  j["state"] = std::string(JobStateName(job.state));
  j["created_ms"] = job.created_ms;
  j["started_ms"] = job.started_ms;
  j["finished_ms"] = job.finished_ms;
  j["num_cases"] = job.num_cases;
  j["iterations"] = job.iterations;
  j["warmup"] = job.warmup;
  j["emulated"] = row.emulated;
  j["measured"] = MeasuredKind(row.emulated, host.Has(job));
  j["message"] = job.message;
  j["progress_done"] = std::min(job.progress_done, job.ProgressTotal());
  j["progress_total"] = job.ProgressTotal();
  j["priority"] = std::string(JobPriorityName(job.priority));
  if (job.wait.position > 0) {
    Json w;
    w["position"] = job.wait.position;
    w["estimated_start_ms"] = job.wait.estimated_start_ms;
    if (!job.wait.board.empty()) {
      w["board"] = job.wait.board;
      w["holder"] = job.wait.holder;
      w["lease_until_ms"] = job.wait.lease_until_ms;
      w["note"] = job.wait.note;
    }
    j["wait"] = std::move(w);
  }
  return j;
}

Json JobPageJson(const JobPage& page, std::uint64_t offset, std::uint32_t limit,
                 const HostBoards& host) {
  Json j;
  j["total"] = page.total;
  j["offset"] = offset;
  j["limit"] = limit;
  Json jobs = Json::array();
  for (const auto& row : page.jobs) jobs.push_back(JobJson(row, host));
  j["jobs"] = std::move(jobs);
  return j;
}

Json JobDetailJson(const JobDetail& d, const HostBoards& host) {
  Json j;
  j["job"] = JobJson(d.job, host);
  // Once the run started, its runner's HELLO says how it measures.
  if (d.run)
    j["job"]["measured"] = MeasuredKind(d.run->provenance.emulated, IsHostRun(d.run->provenance));
  j["provenance"] = d.run ? ProvenanceJson(d.job.job, *d.run) : Json(nullptr);
  j["param_names"] = d.param_names;
  Json cases = Json::array();
  // A custom runner's checksums have no reference in the lab: say "not verified", never "ok".
  const bool custom = !d.job.job.firmware_artifact.empty();
  for (const CaseView& c : d.cases) {
    Json cj = CaseJson(c);
    cj["checksum_verified"] = !custom;
    if (custom) cj["checksum_ok"] = nullptr;
    cases.push_back(std::move(cj));
  }
  j["cases"] = std::move(cases);
  j["ops"] = OpsJson(d);
  j["memory"] = MemoryJson(d.memory);
  j["events"] = EventsJson(d);
  return j;
}

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
    jobs.push_back(std::move(o));
  }
  j["jobs"] = std::move(jobs);
  std::string refused;
  if (units.size() > 1) {
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
  j["param_names"] = c.param_names;
  Json cases = Json::array();
  for (const ComparedCase& cc : c.cases) {
    Json o;
    o["id"] = cc.id;
    o["params"] = cc.params;
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

Json BoardJson(const Board& b, std::uint32_t queue_length) {
  Json j;
  j["name"] = b.name;
  j["kind"] = b.kind;
  j["agent"] = b.agent;
  j["state"] = std::string(BoardStateName(b.state));
  j["health"] = std::string(BoardHealthName(b.health));
  j["emulated"] = b.emulated;
  j["measured"] = MeasuredKind(b.emulated, IsHostBoard(b));
  Json tags = Json::object();
  for (const auto& [k, v] : b.tags) tags[k] = v;
  j["tags"] = std::move(tags);
  j["current_job"] = b.current_job;
  j["queue_length"] = queue_length;
  j["holder"] = b.holder;  // the reservation in force, empty when none
  j["lease_until_ms"] = b.holder.empty() ? 0 : b.lease_until_ms;
  j["note"] = b.holder.empty() ? std::string() : b.reservation_note;
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
