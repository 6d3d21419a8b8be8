// LabQueries: the read side of the web page (docs/http-api.md): the job history, one job's results
// (the read model `mculab show` reads too), one case's samples, comparisons of jobs, the boards,
// and the figures /metrics exports. It reads the store and the Lab's live state and changes
// nothing. Thread-safety: every method may be called from any thread (the Lab and the store may).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "server/service/board_requests.h"
#include "server/service/caller.h"
#include "server/service/job_results.h"
#include "server/service/kept_trends.h"
#include "server/service/series.h"
#include "server/service/store.h"
#include "server/service/trend.h"

namespace mculab::server {

class Lab;

inline constexpr std::uint32_t kMaxJobsPerPage = 500;
inline constexpr std::size_t kMinComparedJobs = 2;
inline constexpr std::size_t kMaxComparedJobs = 8;

struct SamplesRequest {
  std::uint32_t case_index = 0;
  std::size_t max_points = 2000;
  std::size_t bins = 0;  // 0: no histogram
};

// The timer values of one case (pass 0 of the latest run), downsampled when long.
struct CaseSamples {
  JobId job = 0;
  std::uint32_t case_index = 0;
  std::string metric;
  std::string unit;
  std::uint64_t n = 0;  // values stored (before downsampling)
  Downsampled points;
  std::optional<Histogram> histogram;
};

struct ComparedJob {
  JobId id = 0;
  std::string label;
  std::string op;
  std::string board;
  std::string unit;
  bool emulated = false;
  // How it measured: "emulated", "host" or "silicon" (its JobResults.measured).
  std::string measured;
  // What it measured, as far as a ratio of times may go: "op conv2d_s8", "model <file name>",
  // "runner <file name>" (+ " blob <file name>"), as a series names them (DESIGN.md section 7):
  // a rebuilt runner or a retrained model of the same name is the change a comparison is for.
  std::string workload;
  // The build it ran: the custom runner's or the model's SHA-256 ("" for an operator benchmark).
  std::string sha256;
  std::string kind;  // the board kind
  // The kernel set its runner reported (helium, dsp, reference; "" for a custom runtime): not
  // part of `workload`, so two jobs of the same op or model on different kernel sets compare.
  std::string kernel_set;
};

struct ComparedCase {
  std::int64_t id = 0;
  std::vector<std::int32_t> params;
  // Why this case gets no ratio although each side has it ("" when its ratios stand): the same
  // case id measured different parameters.
  std::string refused;
  std::vector<std::optional<double>> medians;        // per job; nullopt: the job lacks the case
  std::vector<std::optional<RatioInterval>> ratios;  // per job; [0] and missing cases: nullopt
  // Per job, RatioVerdict of its ratio, or "unstable" when the job's or the first job's timings
  // are (Variation); "" where there is no ratio or the comparison carries no verdict
  // (Comparison::no_verdict).
  std::vector<std::string> verdicts;
  // Per job, how far its timings of the case can be trusted; nullopt: the job lacks the case.
  std::vector<std::optional<Variation>> variations;
};

// One layer (operator) of a model job's graph, compared across the jobs: the timer's mean per
// invocation (the op profile's sum / count, pass 0). Layers are matched by case and op index; a
// layer whose type differs in a job has no figure there. The profile keeps totals, not samples, so
// there is no interval: an emulated count is exact (lo = hi = ratio and a verdict), a host or
// silicon figure gets a ratio without an interval or a verdict.
struct ComparedLayer {
  std::int64_t case_id = 0;
  std::uint32_t op_index = 0;
  std::string type;
  std::string name;
  std::vector<std::optional<double>> means;          // per job
  std::vector<std::optional<RatioInterval>> ratios;  // per job; [0]: nullopt
  std::vector<std::string> verdicts;                 // per job; "" when none
};

struct Comparison {
  std::vector<ComparedJob> jobs;  // in the order asked for; the first is the baseline
  std::vector<std::string> param_names;
  std::vector<ComparedCase> cases;
  // Model jobs of one model: each layer's figures (empty otherwise, or when a ratio is refused).
  std::vector<ComparedLayer> layers;
  // Why no ratio stands between these jobs ("" when they measured the same thing): different
  // operators, models or runners, different units, or different kinds of measurement (emulated,
  // host, silicon). Medians are still shown.
  std::string refused;
  // Why the ratios stand but carry no faster/slower verdict ("" when they may): emulated figures
  // in instructions from different board kinds, whose ratio counts instructions, not time.
  std::string no_verdict;
};

// Why a ratio between these jobs is no verdict on speed, or "": every job emulated, its timer in
// instructions, on more than one board kind.
std::string InstructionRatioNote(const std::vector<ComparedJob>& jobs);

// The layers of model jobs compared (ComparedLayer), the first job's, by case id and op index.
// `no_verdict`: the ratios carry no verdict (Comparison::no_verdict).
std::vector<ComparedLayer> CompareLayers(const std::vector<JobResults>& details,
                                         const std::vector<ComparedJob>& jobs, bool no_verdict);

// Why no ratio stands between these jobs, or "": different workloads, units (listed) or kinds of
// measurement (emulated, host, silicon: `measured`), in that order.
std::string RatioRefusal(const std::vector<ComparedJob>& jobs);

// What a job measured, for Comparison: its op, or the model or runner it ran, by file name (a
// runner's and blob's names as uploaded; the SHA-256 when a name is not known: a model job from
// before names were kept, an artifact collected since).
std::string MeasuredWorkload(const Job& job, std::string_view runner_name = {},
                             std::string_view blob_name = {});

// What /metrics exports. Every state is listed, with 0 when nothing is in it.
struct LabFigures {
  std::vector<std::pair<std::string, std::uint64_t>> jobs_by_state;
  std::uint64_t queue_length = 0;
  std::uint64_t samples_stored = 0;
  std::vector<std::pair<std::string, std::uint64_t>> boards_by_state;
  // Agent messages and artifact fetches refused: they named a run the agent does not hold.
  std::uint64_t refused_agent_messages = 0;
};

// The lab's host boards, by name and by kind, to label jobs that have not started yet "host".
struct HostBoards {
  std::set<std::string> names;
  std::set<std::string> kinds;
  // By the board the job ran or runs on, else the board it asked for, else its kind.
  bool Has(const Job& job) const;
};
HostBoards HostBoardsOf(const std::vector<BoardView>& boards);

class LabQueries {
 public:
  LabQueries(Lab& lab, Store& store) : lab_(lab), store_(store) {}

  // The history (`mculab jobs`, GET /api/v1/jobs), each row labelled host or not, queued jobs
  // with why they wait. Viewer. kInvalidArgument for an unknown state or a limit outside
  // 1..kMaxJobsPerPage.
  Result<JobPage> ListJobs(const Caller& caller, const JobQuery& query);
  // The job's results (ReadJobResults, job_results.h). kNotFound for an unknown job.
  Result<JobResults> GetJobResults(const Caller& caller, JobId id, bool include_samples);
  // kNotFound for an unknown job, kInvalidArgument for a case index the job does not have. A case
  // that has not run yet gives n = 0 and no points.
  Result<CaseSamples> GetCaseSamples(const Caller& caller, JobId id, const SamplesRequest& request);
  // Per case (matched by case id): each job's median and, for every job after the first, the
  // ratio of its median to the first job's with a bootstrap 95% interval over every raw sample
  // (kBootstrapResamples resamples, a fixed seed per case and job position). kNotFound for an
  // unknown job; kInvalidArgument for a job without results, or fewer than 2 or more than 8 jobs.
  // Each side of a case is judged (JudgeVariation) against `max_cv_pct` (a percentage, 0: the
  // default of each job's kind of measurement); kInvalidArgument outside 0..1000.
  Result<Comparison> Compare(const Caller& caller, std::span<const JobId> ids,
                             double max_cv_pct = 0);
  Result<std::vector<BoardView>> ListBoards(const Caller& caller);
  // A case's series over time (queries_trend.cc): each job's median with a bootstrap 95% interval
  // over every timer value of the case (kBootstrapResamples resamples, a fixed seed per job), and
  // the change points. kInvalidArgument for a query without a kind, an op or the case (its
  // parameters or its id), parameters the op does not have, or a limit outside 1..kMaxSeriesJobs.
  Result<Trend> GetTrend(const Caller& caller, const TrendRequest& request);
  // The jobs at a change point (queries_trend.cc): of the newest `scan` (1..kMaxChangedScan)
  // succeeded jobs matching `filter` (its states, sort, limit and offset are ignored), those that
  // start a new level in the series (default detector, its newest 200 jobs) of one of their
  // cases. At most kMaxChangedSeries series are computed, the newest jobs' first. The answer is
  // kept and given again while the store's state version (Store::StateVersion) stays the same.
  Result<ChangedJobs> ListChangedJobs(const Caller& caller, const JobQuery& filter,
                                      std::uint32_t scan);
  Result<LabFigures> Figures(const Caller& caller);

  // Diagnostics: how many ListChangedJobs answers were computed rather than given again, and how
  // many series' trends they computed (the others were kept: KeptTrends).
  std::uint64_t changed_jobs_computed() const;
  std::uint64_t trends_computed() const;

 private:
  // A succeeded job's case as a trend point: its timer values' count and bootstrap interval,
  // which never change once the job has succeeded (its run is closed and its samples stored).
  struct PointKey {
    JobId job = 0;
    RunId run = 0;
    std::uint32_t case_index = 0;
    auto operator<=>(const PointKey&) const = default;
  };
  struct PointFigures {
    std::uint64_t n = 0;
    double lo = 0, hi = 0;
  };
  // A succeeded job's run as a trend point shows it (fixed once the run has ended).
  struct RunFacts {
    std::string board;
    bool emulated = false;
    std::string port, firmware_sha256, runner_version;
  };
  // ListChangedJobs' latest answers: the request's key and the state version they were read at.
  struct ChangedAnswer {
    std::string key;
    std::uint64_t version = 0;
    ChangedJobs jobs;
  };
  static constexpr std::size_t kKeptChangedAnswers = 8;
  static constexpr std::size_t kKeptPoints = 100'000;  // ≈ 6 MB
  static constexpr std::size_t kKeptRuns = 25'000;     // ≈ 5 MB

  // At the store's state `version` (read before): the kept trends are synced to it first.
  Result<ChangedJobs> ComputeChangedJobs(const Caller& caller, const JobQuery& filter,
                                         std::uint32_t scan, std::uint64_t version);

  Lab& lab_;
  Store& store_;
  mutable std::mutex kept_mu_;  // the kept answers and points below; never held over a read
  std::deque<ChangedAnswer> changed_answers_;  // newest first
  std::uint64_t changed_computed_ = 0;
  std::map<PointKey, PointFigures> points_;
  std::map<RunId, RunFacts> runs_;
  // One ComputeChangedJobs at a time; it may call GetTrend (which takes kept_mu_), never the
  // other way round.
  mutable std::mutex changes_mu_;
  KeptTrends kept_trends_;
  std::uint64_t trends_computed_ = 0;
};

}  // namespace mculab::server
