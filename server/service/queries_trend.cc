// LabQueries::GetTrend: a case's series over time (server/service/trend.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "common/op_catalog.h"
#include "common/tflite_model.h"
#include "server/service/custom_firmware.h"
#include "server/service/lab.h"
#include "server/service/queries.h"

namespace mculab::server {
namespace {

// The trend view's fixed seed, mixed with the job id (any constant would do: "trend").
constexpr std::uint64_t kTrendSeed = 0x7472656e64;

Error Invalid(std::string message) {
  return MakeError(ErrorCode::kInvalidArgument, std::move(message));
}

// Every timer value (metric 0) of one case of a run, over its passes.
Result<std::vector<double>> TimerValues(Store& store, RunId run, std::uint32_t case_index) {
  auto values = store.GetMetricValues(run, 0, case_index);
  if (!values.ok()) return values.error();
  auto it = values->find(case_index);
  return it == values->end() ? std::vector<double>{} : std::move(it->second);
}

}  // namespace

Result<Trend> LabQueries::GetTrend(const Caller& caller, const TrendRequest& request) {
  if (Status s = RequireRole(caller, Role::kViewer, "reading a series"); !s.ok()) {
    return s.error();
  }
  const SeriesQuery& q = request.series;
  if (q.kind.empty()) return Invalid("a series needs a board kind (kind)");
  if (q.op.empty()) return Invalid("a series needs an op (op)");
  if (q.limit < 1 || q.limit > kMaxSeriesJobs) {
    return Invalid(fmt::format("limit must be from 1 to {}, got {}", kMaxSeriesJobs, q.limit));
  }
  if (request.detector.window < 1 || request.detector.window > 50) {
    return Invalid(fmt::format("window must be from 1 to 50, got {}", request.detector.window));
  }
  if (!(request.detector.min_relative_step >= 0 && request.detector.min_relative_step < 10)) {
    return Invalid("min_step must be a fraction from 0 to 10");
  }
  Trend out;
  out.query = q;
  out.detector = request.detector;
  const OpInfo* op = FindOp(q.op);
  if (op != nullptr) {
    for (const OpParam& p : op->params) out.param_names.push_back(p.name);
    if (q.params && q.params->size() != op->params.size()) {
      return Invalid(fmt::format("{} has {} parameters ({}), got {}", q.op, op->params.size(),
                                 fmt::join(out.param_names, ","), q.params->size()));
    }
  }
  if (q.op == kModelOp && q.model.empty()) {
    return Invalid(
        "a series of model jobs needs the model's file name (model): two models are never one "
        "series");
  }
  if (q.op == kCustomOp && q.runner.empty()) {
    return Invalid(
        "a series of custom-runner jobs needs the runner's file name as uploaded (runner): two "
        "runners are never one series");
  }
  if (!q.params && !q.case_id) {
    return Invalid(op != nullptr
                       ? fmt::format("a series of {} needs the case's parameters (params: {})",
                                     q.op, fmt::join(out.param_names, ","))
                       : "a series needs the case's id (case) or parameters (params)");
  }

  auto rows = store_.QuerySeries(q);
  if (!rows.ok()) return rows.error();
  std::vector<TrendPoint> points;
  for (SeriesRow& r : *rows) {
    TrendJob t;
    t.id = r.job.id;
    t.label = r.job.label;
    t.user = r.job.user;
    t.board = r.job.assigned_board;
    t.created_ms = r.job.created_ms;
    t.finished_ms = r.job.finished_ms;
    t.case_index = r.case_index;
    t.case_id = r.case_id;
    t.unit = r.stats.unit;
    t.median = r.stats.median;
    t.lo = t.hi = r.stats.median;
    t.runner_name = r.runner_name;
    t.model_sha256 = r.job.model_sha256;
    t.commit = r.job.commit;
    t.branch = r.job.branch;
    const bool final = r.job.state == JobState::kSucceeded && r.job.last_run_id == r.stats.run_id;
    std::optional<RunFacts> facts;
    if (final) {
      std::lock_guard l(kept_mu_);
      if (auto it = runs_.find(r.stats.run_id); it != runs_.end()) facts = it->second;
    }
    if (!facts) {
      auto run = store_.GetRun(r.stats.run_id);
      if (run.ok()) {
        facts = RunFacts{run->board, run->provenance.emulated, run->provenance.port,
                         run->provenance.firmware_sha256, run->provenance.runner_version};
        if (final) {
          std::lock_guard l(kept_mu_);
          if (runs_.size() >= kKeptRuns) runs_.clear();
          runs_.emplace(r.stats.run_id, *facts);
        }
      } else if (run.error().code != ErrorCode::kNotFound) {
        return run.error();
      }
    }
    if (facts) {
      t.board = facts->board;
      t.emulated = facts->emulated;
      t.port = facts->port;
      t.firmware_sha256 = facts->firmware_sha256;
      t.runner_version = facts->runner_version;
    }
    t.measured = std::string(MeasuredOfRun(t.emulated, t.port, t.unit));
    const PointKey key{t.id, r.stats.run_id, r.case_index};
    std::optional<PointFigures> figures;
    if (final) {
      std::lock_guard l(kept_mu_);
      if (auto it = points_.find(key); it != points_.end()) figures = it->second;
    }
    if (!figures) {
      auto values = TimerValues(store_, r.stats.run_id, r.case_index);
      if (!values.ok()) return values.error();
      figures = PointFigures{values->size(), t.median, t.median};
      const std::uint64_t seed =
          kTrendSeed ^ (static_cast<std::uint64_t>(t.id) * 0x9e3779b97f4a7c15ULL);
      if (auto ci = BootstrapMedian(*values, seed)) {
        figures->lo = ci->lo;
        figures->hi = ci->hi;
      }
      if (final) {
        std::lock_guard l(kept_mu_);
        if (points_.size() >= kKeptPoints) points_.clear();
        points_.emplace(key, *figures);
      }
    }
    t.n = figures->n;
    t.lo = figures->lo;
    t.hi = figures->hi;
    if (!out.jobs.empty()) {
      const TrendJob& prev = out.jobs.back();
      t.model_changed = prev.model_sha256 != t.model_sha256;
      t.runner_changed = prev.firmware_sha256 != t.firmware_sha256 ||
                         prev.runner_version != t.runner_version || t.model_changed;
    }
    points.push_back(TrendPoint{t.median, t.lo, t.hi});
    out.jobs.push_back(std::move(t));
  }
  if (!out.jobs.empty()) out.unit = out.jobs.back().unit;
  for (const ChangePoint& c : FindChangePoints(points, request.detector)) {
    out.changes.push_back(TrendChange{c.index, out.jobs[c.index - 1].id, out.jobs[c.index].id,
                                      c.before, c.after, c.ratio});
  }
  return out;
}

Result<ChangedJobs> LabQueries::ListChangedJobs(const Caller& caller, const JobQuery& filter,
                                                std::uint32_t scan) {
  // Before the kept answers: one computed for a viewer is no answer for an agent's token.
  if (Status s = RequireRole(caller, Role::kViewer, "listing changes"); !s.ok()) return s.error();
  if (scan < 1 || scan > kMaxChangedScan) {
    return Invalid(fmt::format("scan must be from 1 to {}, got {}", kMaxChangedScan, scan));
  }
  // Every field the answer depends on (states, sort, limit and offset are ignored).
  const std::string key = fmt::format(
      "{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}", filter.user, filter.kind, filter.op, filter.board,
      filter.label_contains, filter.created_from ? std::to_string(*filter.created_from) : "-",
      filter.created_to ? std::to_string(*filter.created_to) : "-", scan);
  // Read before computing: the answer then holds at least every state write up to it.
  const std::uint64_t version = store_.StateVersion();
  {
    std::lock_guard l(kept_mu_);
    for (const ChangedAnswer& a : changed_answers_) {
      if (a.key == key && a.version == version) return a.jobs;
    }
  }
  auto computed = ComputeChangedJobs(caller, filter, scan, version);
  if (!computed.ok()) return computed;
  std::lock_guard l(kept_mu_);
  ++changed_computed_;
  std::erase_if(changed_answers_, [&](const ChangedAnswer& a) { return a.key == key; });
  changed_answers_.push_front(ChangedAnswer{key, version, *computed});
  if (changed_answers_.size() > kKeptChangedAnswers) changed_answers_.pop_back();
  return computed;
}

std::uint64_t LabQueries::changed_jobs_computed() const {
  std::lock_guard l(kept_mu_);
  return changed_computed_;
}

Result<ChangedJobs> LabQueries::ComputeChangedJobs(const Caller& caller, const JobQuery& filter,
                                                   std::uint32_t scan, std::uint64_t version) {
  std::lock_guard changes(changes_mu_);
  if (Status s = kept_trends_.Sync(store_, version); !s.ok()) return s.error();
  JobQuery q = filter;
  q.states = {std::string(JobStateName(JobState::kSucceeded))};
  q.sort = JobSortKey::kId;
  q.ascending = false;
  q.limit = scan;
  q.offset = 0;
  auto page = store_.QueryJobs(q);
  if (!page.ok()) return page.error();
  ChangedJobs out;
  out.scanned = page->jobs.size();

  // Each case of each job names a series; a series is computed once.
  struct Wanted {
    std::size_t job;  // index in page->jobs
    std::int64_t case_id;
    std::vector<std::int32_t> params;
  };
  std::vector<std::pair<CaseSeries, std::vector<Wanted>>> series;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < page->jobs.size(); ++i) {
    auto of_job = kept_trends_.SeriesOf(store_, page->jobs[i].job);
    if (!of_job.ok()) return of_job.error();
    for (CaseSeries& s : *of_job) {
      auto it = index.find(s.key);
      if (it == index.end()) {
        if (series.size() >= kMaxChangedSeries) {
          out.truncated = true;
          continue;
        }
        it = index.emplace(s.key, series.size()).first;
        series.emplace_back(s, std::vector<Wanted>{});
      }
      series[it->second].second.push_back(Wanted{i, s.case_id, s.params});
    }
  }
  std::map<std::size_t, std::vector<JobCaseChange>> found;  // by job index
  for (const auto& [s, wanted] : series) {
    const Trend* trend = kept_trends_.FindTrend(s.key);
    if (trend == nullptr) {
      TrendRequest r;
      r.series = s.query;
      auto computed = GetTrend(caller, r);
      if (!computed.ok()) return computed.error();
      ++trends_computed_;
      kept_trends_.KeepTrend(s.key, std::move(*computed));
      trend = kept_trends_.FindTrend(s.key);
    }
    for (const TrendChange& c : trend->changes) {
      for (const Wanted& w : wanted) {
        if (page->jobs[w.job].job.id != c.after_job) continue;
        found[w.job].push_back(JobCaseChange{w.case_id, w.params, s.query, c});
      }
    }
  }
  for (auto& [i, changes] : found) {
    std::sort(changes.begin(), changes.end(),
              [](const JobCaseChange& a, const JobCaseChange& b) { return a.case_id < b.case_id; });
    out.jobs.push_back(ChangedJob{page->jobs[i].job, page->jobs[i].emulated, std::move(changes)});
  }
  return out;
}

std::uint64_t LabQueries::trends_computed() const {
  std::lock_guard changes(changes_mu_);
  return trends_computed_;
}

}  // namespace mculab::server
