#include "server/service/queries.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "common/op_catalog.h"
#include "common/stats.h"
#include "server/service/profiles.h"
#include "server/service/results.h"
#include "server/service/run_statistics.h"

namespace mculab::server {
namespace {

constexpr BoardState kAllBoardStates[] = {BoardState::kIdle, BoardState::kReserved,
                                          BoardState::kBusy, BoardState::kOffline};

// The compare page's fixed seed (any constant would do; this spells "mculab").
constexpr std::uint64_t kCompareSeed = 0x6d63756c6162;

Error UnknownJob(JobId id) {
  return MakeError(ErrorCode::kNotFound, fmt::format("job {} does not exist", id));
}

std::vector<std::string> ParamNames(const std::string& op) {
  std::vector<std::string> names;
  if (const OpInfo* info = FindOp(op)) {
    for (const OpParam& p : info->params) names.push_back(p.name);
  }
  return names;
}

// Every timer value (metric 0, all passes) of a run, by case index.
Result<std::map<std::uint32_t, std::vector<double>>> TimerValuesByCase(Store& store, RunId run) {
  std::map<std::uint32_t, std::vector<double>> out;
  Status s = store.ScanSamples(run, [&](std::span<const Sample> chunk) {
    for (const Sample& x : chunk) {
      if (x.metric == 0) out[x.case_index].push_back(static_cast<double>(x.value));
    }
  });
  if (!s.ok()) return s.error();
  return out;
}

}  // namespace

Result<JobPage> LabQueries::ListJobs(const Caller&, const JobQuery& query) {
  if (query.limit < 1 || query.limit > kMaxJobsPerPage) {
    return MakeError(ErrorCode::kInvalidArgument, fmt::format("limit must be from 1 to {}, got {}",
                                                              kMaxJobsPerPage, query.limit));
  }
  for (const std::string& s : query.states) {
    if (!ParseJobState(s)) {
      return MakeError(ErrorCode::kInvalidArgument, fmt::format("unknown job state \"{}\"", s));
    }
  }
  JobQuery q = query;
  std::sort(q.states.begin(), q.states.end());
  q.states.erase(std::unique(q.states.begin(), q.states.end()), q.states.end());
  auto page = store_.QueryJobs(q);
  if (page.ok()) {
    std::vector<Job*> jobs;  // the queued ones: why they wait
    for (JobRow& row : page->jobs) jobs.push_back(&row.job);
    lab_.AddQueueWaits(jobs);
  }
  return page;
}

Result<JobDetail> LabQueries::GetJobDetail(const Caller& caller, JobId id) {
  auto job = lab_.GetJob(caller, id);
  if (!job.ok()) {
    return job.error().code == ErrorCode::kNotFound ? UnknownJob(id) : job.error();
  }
  JobDetail d;
  d.job.job = std::move(*job);
  const Job& j = d.job.job;
  d.param_names = ParamNames(j.op);

  std::optional<Run> run;
  if (j.last_run_id != 0) {
    auto r = store_.GetRun(j.last_run_id);
    if (r.ok()) {
      run = std::move(*r);
    } else if (r.error().code != ErrorCode::kNotFound) {
      return r.error();
    }
  }
  if (run && run->started) {
    d.job.emulated = run->provenance.emulated;
    d.run = run;
  } else {
    auto boards = lab_.ListBoards(caller);
    if (!boards.ok()) return boards.error();
    d.job.emulated = std::any_of(boards->begin(), boards->end(), [&](const BoardView& b) {
      return b.board.kind == j.kind && b.board.emulated;
    });
  }

  auto cases = store_.GetJobCases(id);
  if (!cases.ok()) return cases.error();
  auto stored = store_.GetCaseStats(id);
  if (!stored.ok()) return stored.error();
  std::map<std::uint32_t, CaseStats> stats;
  for (CaseStats& s : *stored) {
    if (s.metric_index == 0) {
      stats[s.case_index] = std::move(s);
    } else {
      d.events.push_back(std::move(s));
    }
  }
  std::sort(d.events.begin(), d.events.end(), [](const CaseStats& a, const CaseStats& b) {
    return std::tie(a.case_index, a.metric_index) < std::tie(b.case_index, b.metric_index);
  });
  std::map<std::uint32_t, CaseResult> results;
  if (run) {
    auto r = store_.GetCaseResults(run->id);
    if (!r.ok()) return r.error();
    for (CaseResult& c : *r) results[c.case_index] = c;
  }
  // Cases without stored statistics (the run has not succeeded): computed from the raw samples
  // of the cases whose every iteration is stored.
  if (d.run && stats.size() < cases->size()) {
    auto computed = ComputeRunStatistics(store_, id, d.run->id, d.run->provenance, 1, 0);
    if (!computed.ok()) return computed.error();
    for (CaseStats& s : computed->stats) {
      if (s.metric_index == 0 && s.n >= j.iterations && !stats.contains(s.case_index)) {
        stats[s.case_index] = std::move(s);
      }
    }
  }
  for (std::size_t i = 0; i < cases->size(); ++i) {
    const auto index = static_cast<std::uint32_t>(i);
    auto s = stats.find(index);
    if (s == stats.end()) continue;
    CaseView c;
    c.index = index;
    c.id = (*cases)[i].id;
    c.params = (*cases)[i].params;
    c.stats = std::move(s->second);
    if (auto r = results.find(index); r != results.end()) c.result = r->second;
    d.cases.push_back(std::move(c));
  }
  if (d.run) {
    auto ops = store_.GetOpProfiles(d.run->id);
    if (!ops.ok()) return ops.error();
    d.ops = std::move(*ops);
    auto memory = store_.GetMemory(d.run->id);
    if (!memory.ok()) return memory.error();
    d.memory = std::move(*memory);
    auto passes = store_.GetRunPasses(d.run->id);
    if (!passes.ok()) return passes.error();
    d.passes = std::move(*passes);
  }
  return d;
}

Result<CaseSamples> LabQueries::GetCaseSamples(const Caller& caller, JobId id,
                                               const SamplesRequest& request) {
  auto job = lab_.GetJob(caller, id);
  if (!job.ok()) {
    return job.error().code == ErrorCode::kNotFound ? UnknownJob(id) : job.error();
  }
  if (request.case_index >= job->num_cases) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("case {} is out of range: job {} has {} case{}", request.case_index, id,
                    job->num_cases, job->num_cases == 1 ? "" : "s"));
  }
  CaseSamples out;
  out.job = id;
  out.case_index = request.case_index;
  std::vector<SeriesPoint> series;
  if (job->last_run_id != 0) {
    auto run = store_.GetRun(job->last_run_id);
    if (!run.ok() && run.error().code != ErrorCode::kNotFound) return run.error();
    if (run.ok()) {
      if (run->started) {
        out.metric = MetricName(run->provenance, 0);
        out.unit = run->provenance.timer_unit;
      }
      auto s = store_.GetCaseSeries(run->id, 0, request.case_index, 0);
      if (!s.ok()) return s.error();
      series = std::move(*s);
    }
  }
  out.n = series.size();
  out.points = DownsampleMinMax(series, request.max_points);
  if (request.bins > 0) {
    std::vector<double> values;
    values.reserve(series.size());
    for (const auto& p : series) values.push_back(static_cast<double>(p.value));
    out.histogram = MakeHistogram(values, request.bins);
  }
  return out;
}

Result<Comparison> LabQueries::Compare(const Caller& caller, std::span<const JobId> ids) {
  if (ids.size() < kMinComparedJobs || ids.size() > kMaxComparedJobs) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("compare takes {} to {} jobs, got {}", kMinComparedJobs,
                                 kMaxComparedJobs, ids.size()));
  }
  std::vector<JobDetail> details;
  for (JobId id : ids) {
    auto d = GetJobDetail(caller, id);
    if (!d.ok()) return d.error();
    details.push_back(std::move(*d));
  }
  std::vector<std::map<std::uint32_t, std::vector<double>>> values;
  for (const JobDetail& d : details) {
    const Job& j = d.job.job;
    if (d.cases.empty() || !d.run) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("job {} has no results yet (state {})", j.id, JobStateName(j.state)));
    }
    auto v = TimerValuesByCase(store_, d.run->id);
    if (!v.ok()) return v.error();
    values.push_back(std::move(*v));
  }

  Comparison out;
  out.param_names = details[0].param_names;
  for (const JobDetail& d : details) {
    out.jobs.push_back(ComparedJob{d.job.job.id, d.job.job.label, d.job.job.op,
                                   d.job.job.assigned_board, d.cases.front().stats.unit,
                                   d.job.emulated});
  }
  // Case ids in the first job's order, then those only later jobs have.
  std::vector<std::int64_t> case_ids;
  for (const JobDetail& d : details) {
    for (const CaseView& c : d.cases) {
      if (std::find(case_ids.begin(), case_ids.end(), c.id) == case_ids.end()) {
        case_ids.push_back(c.id);
      }
    }
  }
  for (std::int64_t case_id : case_ids) {
    ComparedCase cc;
    cc.id = case_id;
    std::vector<const CaseView*> per_job;
    for (const JobDetail& d : details) {
      auto it = std::find_if(d.cases.begin(), d.cases.end(),
                             [&](const CaseView& c) { return c.id == case_id; });
      per_job.push_back(it == d.cases.end() ? nullptr : &*it);
    }
    for (const CaseView* c : per_job) {
      if (c != nullptr && cc.params.empty()) cc.params = c->params;
      cc.medians.push_back(c ? std::optional<double>(c->stats.median) : std::nullopt);
    }
    const CaseView* base = per_job[0];
    for (std::size_t k = 0; k < per_job.size(); ++k) {
      std::optional<RatioInterval> ratio;
      if (k > 0 && base != nullptr && per_job[k] != nullptr) {
        const auto& a = values[0][base->index];
        const auto& b = values[k][per_job[k]->index];
        const std::uint64_t seed = kCompareSeed ^
                                   (static_cast<std::uint64_t>(case_id) * 0x9e3779b97f4a7c15ULL) ^
                                   (static_cast<std::uint64_t>(k) << 56);
        ratio = BootstrapMedianRatio(a, b, seed);
      }
      cc.ratios.push_back(ratio);
    }
    out.cases.push_back(std::move(cc));
  }
  return out;
}

Result<std::vector<BoardView>> LabQueries::ListBoards(const Caller& caller) {
  return lab_.ListBoards(caller);
}

Result<LabFigures> LabQueries::Figures(const Caller& caller) {
  LabFigures f;
  auto counts = store_.CountJobsByState();
  if (!counts.ok()) return counts.error();
  for (JobState s : kAllJobStates) {
    const std::string name(JobStateName(s));
    std::uint64_t n = 0;
    for (const auto& [state, count] : *counts) {
      if (state == name) n = count;
    }
    f.jobs_by_state.emplace_back(name, n);
    if (s == JobState::kQueued) f.queue_length = n;
  }
  auto samples = store_.SamplesStored();
  if (!samples.ok()) return samples.error();
  f.samples_stored = *samples;
  f.refused_agent_messages = lab_.refused_agent_messages();
  auto boards = lab_.ListBoards(caller);
  if (!boards.ok()) return boards.error();
  for (BoardState s : kAllBoardStates) {
    const auto n = std::count_if(boards->begin(), boards->end(),
                                 [&](const BoardView& b) { return b.board.state == s; });
    f.boards_by_state.emplace_back(std::string(BoardStateName(s)), static_cast<std::uint64_t>(n));
  }
  return f;
}

}  // namespace mculab::server
