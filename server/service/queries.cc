#include "server/service/queries.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "common/stats.h"
#include "common/tflite_model.h"
#include "common/units.h"
#include "server/service/lab.h"
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
  lab_.jobs().AddQueueWaits(jobs);
  auto boards = lab_.boards().ListBoards(caller);
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
  auto job = lab_.jobs().GetJob(caller, id);
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

std::string MeasuredWorkload(const Job& job, std::string_view runner_name,
                             std::string_view blob_name) {
  if (job.op == kModelOp) {
    return "model " + (!job.model_name.empty() ? job.model_name : job.blob_artifact);
  }
  if (!job.firmware_artifact.empty()) {
    const std::string runner(!runner_name.empty() ? runner_name : job.firmware_artifact);
    const std::string blob(!blob_name.empty() ? blob_name : job.blob_artifact);
    return "runner " + runner + (job.blob_artifact.empty() ? "" : " blob " + blob);
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

std::vector<ComparedLayer> CompareLayers(const std::vector<JobResults>& details,
                                         const std::vector<ComparedJob>& jobs, bool no_verdict) {
  // Per job: (case id, op index) -> the timer's row of pass 0.
  std::vector<std::map<std::pair<std::int64_t, std::uint32_t>, const OpProfileRow*>> rows;
  for (const JobResults& d : details) {
    std::map<std::uint32_t, std::int64_t> case_ids;
    for (const CaseOutcome& c : d.cases) case_ids[c.index] = c.case_id;
    auto& m = rows.emplace_back();
    for (const OpProfileRow& r : d.ops) {
      if (r.metric != 0 || r.pass != 0 || r.count == 0) continue;
      auto id = case_ids.find(r.case_index);
      if (id != case_ids.end()) m[{id->second, r.op_index}] = &r;
    }
  }
  const bool exact = std::all_of(jobs.begin(), jobs.end(), [](const ComparedJob& j) {
    return j.measured == kMeasuredEmulated;
  });
  std::vector<ComparedLayer> out;
  for (const auto& [key, base] : rows[0]) {
    ComparedLayer l;
    l.case_id = key.first;
    l.op_index = key.second;
    l.type = base->type;
    l.name = base->name;
    const double base_mean = static_cast<double>(base->sum) / static_cast<double>(base->count);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      auto it = rows[k].find(key);
      const OpProfileRow* r = it == rows[k].end() ? nullptr : it->second;
      if (r == nullptr || r->type != base->type) {
        l.means.push_back(std::nullopt);
        l.ratios.push_back(std::nullopt);
        l.verdicts.emplace_back();
        continue;
      }
      const double mean = static_cast<double>(r->sum) / static_cast<double>(r->count);
      l.means.push_back(mean);
      if (k == 0 || base_mean == 0) {
        l.ratios.push_back(std::nullopt);
        l.verdicts.emplace_back();
        continue;
      }
      RatioInterval ri;
      ri.ratio = mean / base_mean;
      ri.lo = ri.hi = exact ? ri.ratio : std::numeric_limits<double>::quiet_NaN();
      ri.significant = exact && ri.ratio != 1.0;
      l.ratios.push_back(ri);
      l.verdicts.push_back(exact && !no_verdict ? std::string(RatioVerdict(ri)) : std::string());
    }
    out.push_back(std::move(l));
  }
  return out;
}

std::string RatioRefusal(const std::vector<ComparedJob>& jobs) {
  if (jobs.empty()) return "";
  for (const ComparedJob& j : jobs) {
    if (j.workload == jobs[0].workload) continue;
    return fmt::format(
        "the jobs measured different things (job {}: {}; job {}: {}): a ratio of their times "
        "compares nothing",
        jobs[0].id, jobs[0].workload, j.id, j.workload);
  }
  std::set<std::string> units;
  std::set<std::string> kinds;
  for (const ComparedJob& j : jobs) {
    units.insert(j.unit);
    kinds.insert(j.measured);
  }
  if (units.size() > 1) {
    return fmt::format(
        "the jobs are measured in different units ({}): a ratio of their medians means nothing",
        fmt::join(units, ","));
  }
  if (kinds.size() > 1) {
    return fmt::format(
        "the jobs are of different kinds ({}): emulated, host and silicon figures measure "
        "different things, so a ratio between them means nothing",
        fmt::join(kinds, ","));
  }
  return "";
}

Result<Comparison> LabQueries::Compare(const Caller& caller, std::span<const JobId> ids,
                                       double max_cv_pct) {
  if (Status s = RequireRole(caller, Role::kViewer, "comparing jobs"); !s.ok()) return s.error();
  if (!std::isfinite(max_cv_pct) || max_cv_pct < 0 || max_cv_pct > 1000) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("max_cv must be a percentage from 0 to 1000 (0: the default of "
                                 "each kind of measurement), got {}",
                                 max_cv_pct));
  }
  const double max_cv = max_cv_pct / 100;
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
  // An uploaded artifact's file name, "" when it is no longer stored.
  auto name_of = [&](const std::string& sha) -> std::string {
    if (sha.empty()) return "";
    auto a = store_.GetArtifact(sha);
    return a.ok() && *a ? (*a)->name : std::string();
  };
  for (std::size_t k = 0; k < details.size(); ++k) {
    const Job& j = details[k].job;
    ComparedJob c;
    c.id = j.id;
    c.label = j.label;
    c.op = j.op;
    c.board = j.assigned_board;
    c.unit = timed[k].front().stats->unit;
    c.emulated = details[k].emulated;
    c.measured = details[k].measured;
    c.workload = j.op == kModelOp
                     ? MeasuredWorkload(j)
                     : MeasuredWorkload(j, name_of(j.firmware_artifact), name_of(j.blob_artifact));
    c.sha256 = j.op == kModelOp ? (!j.model_sha256.empty() ? j.model_sha256 : j.blob_artifact)
                                : j.firmware_artifact;
    c.kind = j.kind;
    c.kernel_set = details[k].run->provenance.kernel_set;
    out.jobs.push_back(std::move(c));
  }
  out.no_verdict = InstructionRatioNote(out.jobs);
  out.refused = RatioRefusal(out.jobs);
  if (!out.refused.empty()) out.no_verdict.clear();
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
    for (std::size_t k = 0; k < per_job.size(); ++k) {
      const TimedCase* c = per_job[k];
      if (c != nullptr && cc.params.empty()) cc.params = c->outcome->params;
      cc.medians.push_back(c ? std::optional<double>(c->stats->median) : std::nullopt);
      if (c == nullptr) {
        cc.variations.push_back(std::nullopt);
        continue;
      }
      // The timer of pass 0 in iteration order: the values the case's statistics come from.
      auto series = store_.GetCaseSeries(details[k].run->id, 0, c->outcome->index, 0);
      if (!series.ok()) return series.error();
      cc.variations.push_back(JudgeVariation(*series, out.jobs[k].measured, max_cv));
    }
    auto unstable = [&](std::size_t k) {
      return cc.variations[k] && cc.variations[k]->stability == "unstable";
    };
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
      std::string verdict;
      if (ratio && out.no_verdict.empty()) {
        verdict = unstable(0) || unstable(k) ? "unstable" : std::string(RatioVerdict(*ratio));
      }
      cc.verdicts.push_back(std::move(verdict));
      cc.ratios.push_back(ratio);
    }
    out.cases.push_back(std::move(cc));
  }
  if (out.refused.empty() && std::all_of(details.begin(), details.end(), [](const JobResults& d) {
        return d.job.op == kModelOp;
      })) {
    out.layers = CompareLayers(details, out.jobs, !out.no_verdict.empty());
  }
  return out;
}

Result<std::vector<BoardView>> LabQueries::ListBoards(const Caller& caller) {
  return lab_.boards().ListBoards(caller);
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
  auto boards = lab_.boards().ListBoards(caller);
  if (!boards.ok()) return boards.error();
  for (BoardState s : kAllBoardStates) {
    const auto n = std::count_if(boards->begin(), boards->end(),
                                 [&](const BoardView& b) { return b.board.state == s; });
    f.boards_by_state.emplace_back(std::string(BoardStateName(s)), static_cast<std::uint64_t>(n));
  }
  return f;
}

}  // namespace mculab::server
