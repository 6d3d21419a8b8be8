#include "server/service/queries.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "common/stats.h"
#include "common/tflite_model.h"
#include "common/units.h"
#include "server/service/results.h"

namespace mculab::server {
namespace {

constexpr BoardState kAllBoardStates[] = {BoardState::kIdle, BoardState::kReserved,
                                          BoardState::kBusy, BoardState::kOffline};

// The compare page's fixed seed (any constant would do; this spells "mculab").
constexpr std::uint64_t kCompareSeed = 0x6d63756c6162;

Error UnknownJob(JobId id) {
  return MakeError(ErrorCode::kNotFound, fmt::format("job {} does not exist", id));
}

// A case of a job's results with the timer's statistics (metric 0).
struct TimedCase {
  const CaseOutcome* outcome = nullptr;
  const CaseStats* stats = nullptr;
};

std::vector<TimedCase> TimedCases(const JobResults& r) {
  std::vector<TimedCase> out;
  for (const CaseOutcome& c : r.cases) {
    for (const CaseStats& s : c.stats) {
      if (s.metric_index == 0) out.push_back({&c, &s});
    }
  }
  return out;
}

}  // namespace

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

Result<JobPage> LabQueries::ListJobs(const Caller& caller, const JobQuery& query) {
  if (Status s = RequireRole(caller, Role::kViewer, "listing jobs"); !s.ok()) return s.error();
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
  if (!page.ok()) return page;
  std::vector<Job*> jobs;  // the queued ones: why they wait
  for (JobRow& row : page->jobs) jobs.push_back(&row.job);
  lab_.AddQueueWaits(jobs);
  auto boards = lab_.ListBoards(caller);
  if (!boards.ok()) return boards.error();
  const HostBoards host = HostBoardsOf(*boards);
  for (JobRow& row : page->jobs) row.host = host.Has(row.job);
  return page;
}

Result<JobResults> LabQueries::GetJobResults(const Caller& caller, JobId id, bool include_samples) {
  auto r = ReadJobResults(lab_, store_, caller, id, include_samples);
  if (!r.ok() && r.error().code == ErrorCode::kNotFound) return UnknownJob(id);
  return r;
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

std::string MeasuredWorkload(const Job& job) {
  if (job.op == kModelOp) return "model " + job.blob_artifact;
  if (!job.firmware_artifact.empty()) {
    return "runner " + job.firmware_artifact +
           (job.blob_artifact.empty() ? "" : " blob " + job.blob_artifact);
  }
  return "op " + job.op;
}

std::string InstructionRatioNote(const std::vector<ComparedJob>& jobs) {
  std::vector<std::string> kinds;
  for (const ComparedJob& j : jobs) {
    if (!j.emulated || j.unit != kInstructionsUnit) return "";
    if (std::find(kinds.begin(), kinds.end(), j.kind) == kinds.end()) kinds.push_back(j.kind);
  }
  if (kinds.size() < 2) return "";
  return fmt::format(
      "the jobs ran on different emulated board kinds ({}): emulated figures are instruction "
      "counts, so a ratio compares instructions executed, not time, and says nothing about which "
      "board is faster",
      fmt::join(kinds, ", "));
}

Result<Comparison> LabQueries::Compare(const Caller& caller, std::span<const JobId> ids) {
  if (ids.size() < kMinComparedJobs || ids.size() > kMaxComparedJobs) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("compare takes {} to {} jobs, got {}", kMinComparedJobs,
                                 kMaxComparedJobs, ids.size()));
  }
  std::vector<JobResults> details;
  for (JobId id : ids) {
    auto d = GetJobResults(caller, id, false);
    if (!d.ok()) return d.error();
    details.push_back(std::move(*d));
  }
  // Per job, its cases with the timer's statistics, in case order.
  std::vector<std::vector<TimedCase>> timed;
  std::vector<std::map<std::uint32_t, std::vector<double>>> values;
  for (const JobResults& d : details) {
    const Job& j = d.job;
    timed.push_back(TimedCases(d));
    if (timed.back().empty() || !d.run || !d.run->started) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          fmt::format("job {} has no results yet (state {})", j.id, JobStateName(j.state)));
    }
    auto v = store_.GetMetricValues(d.run->id, 0);  // the timer, every pass
    if (!v.ok()) return v.error();
    values.push_back(std::move(*v));
  }

  Comparison out;
  out.param_names = details[0].param_names;
  for (std::size_t k = 0; k < details.size(); ++k) {
    const Job& j = details[k].job;
    out.jobs.push_back(ComparedJob{
        j.id, j.label, j.op, j.assigned_board, timed[k].front().stats->unit, details[k].emulated,
        MeasuredWorkload(j), j.kind, details[k].run->provenance.kernel_set});
  }
  out.no_verdict = InstructionRatioNote(out.jobs);
  for (const ComparedJob& j : out.jobs) {
    if (j.workload == out.jobs[0].workload) continue;
    out.refused = fmt::format(
        "the jobs measured different things (job {}: {}; job {}: {}): a ratio of their times "
        "compares nothing",
        out.jobs[0].id, out.jobs[0].workload, j.id, j.workload);
    break;
  }
  // Case ids in the first job's order, then those only later jobs have.
  std::vector<std::int64_t> case_ids;
  for (const auto& cases : timed) {
    for (const TimedCase& c : cases) {
      if (std::find(case_ids.begin(), case_ids.end(), c.outcome->case_id) == case_ids.end()) {
        case_ids.push_back(c.outcome->case_id);
      }
    }
  }
  for (std::int64_t case_id : case_ids) {
    ComparedCase cc;
    cc.id = case_id;
    std::vector<const TimedCase*> per_job;
    for (const auto& cases : timed) {
      auto it = std::find_if(cases.begin(), cases.end(),
                             [&](const TimedCase& c) { return c.outcome->case_id == case_id; });
      per_job.push_back(it == cases.end() ? nullptr : &*it);
    }
    for (const TimedCase* c : per_job) {
      if (c != nullptr && cc.params.empty()) cc.params = c->outcome->params;
      cc.medians.push_back(c ? std::optional<double>(c->stats->median) : std::nullopt);
    }
    const TimedCase* base = per_job[0];
    for (std::size_t k = 1; k < per_job.size() && base != nullptr && cc.refused.empty(); ++k) {
      if (per_job[k] == nullptr || per_job[k]->outcome->params == base->outcome->params) continue;
      cc.refused = fmt::format(
          "case {} has other parameters in job {} ({}) than in job {} ({}): not the same "
          "measurement",
          case_id, out.jobs[k].id, fmt::join(per_job[k]->outcome->params, ","), out.jobs[0].id,
          fmt::join(base->outcome->params, ","));
    }
    for (std::size_t k = 0; k < per_job.size(); ++k) {
      std::optional<RatioInterval> ratio;
      if (k > 0 && base != nullptr && per_job[k] != nullptr && cc.refused.empty() &&
          out.refused.empty()) {
        const auto& a = values[0][base->outcome->index];
        const auto& b = values[k][per_job[k]->outcome->index];
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
