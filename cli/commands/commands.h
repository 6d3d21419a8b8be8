// The CLI's commands: one function per command, grouped by what they act on (jobs.cc: submit,
// jobs, show, export, cancel; boards.cc: boards, events, reserve, release, board; trend.cc;
// catalog.cc: ops and models, which need no server). main.cc wires them to CLI11. A command
// prints its result on stdout and returns the exit code; bad usage throws UsageError (exit 2), a
// failed request exits 1 through Client::Fail.
#pragma once

#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/commands/client.h"
#include "cli/gate.h"
#include "common/result.h"

namespace mculab::cli {

// The gate's flags (`mculab gate`, `mculab submit --wait --baseline`).
struct GateOptions {
  std::string baseline;              // JOB | label:TEXT | branch:NAME; empty: no gate
  std::string max_regression = "0";  // percent
  std::string max_improvement;       // percent; empty: improvements never fail
  std::vector<std::string> reports;  // junit:FILE, markdown:FILE, json:FILE
  std::string web_url;               // for the Markdown report's links
  std::string max_cv;                // percent; empty: each kind of measurement's default
  bool json = false;
};
struct PreparedGate {
  BaselineSpec baseline;
  GateThresholds thresholds;
  double max_cv_pct = 0;  // 0: the server's default per kind of measurement
  std::vector<ReportSpec> reports;
};
// The flags checked before anything is submitted; the error names the flag.
Result<PreparedGate> PrepareGate(const GateOptions& o);

struct SubmitOptions {
  std::string kind, board, op, cases, label, priority, events, firmware, blob, model;
  std::string kernels;  // --kernels fast|reference; empty: not given (the server's default, fast)
  std::vector<std::string> input;  // --input, repeated in the graph's input order
  std::vector<std::string> tags;   // --tag KEY=VALUE, repeatable
  // The code the job measures (defaults from the CI's variables: CodeRefsFromCi, cli/gate.h).
  std::string commit, branch, url;
  unsigned iterations = 20, warmup = 2, timeout_s = 0;
  // --reruns N: run again on the same board while a case is unstable (above gate.max_cv).
  unsigned reruns = 0;
  bool wait = false, json = false;
  GateOptions gate;  // gate.baseline set: compare the finished job with it (needs --wait)
};

int CmdSubmit(Client& c, const SubmitOptions& o);
int CmdJobs(Client& c, const v1::ListJobsRequest& req, bool json);
int CmdShow(Client& c, uint64_t id, bool json, bool ops);
int CmdExport(Client& c, uint64_t id, const std::string& out_path, const std::string& format);
int CmdCancel(Client& c, uint64_t id);

// `mculab compare A B [C ...]`: the first job is the baseline.
// `max_cv`: the percentage above which a case is unstable ("" or 0: each kind's default).
int CmdCompare(Client& c, const std::vector<uint64_t>& ids, bool json, const std::string& max_cv);
// `mculab gate JOB --baseline ...`: 0 when no case regressed beyond the threshold,
// kExitRegressed when one did, kExitNotCompared when the jobs could not be compared.
int CmdGate(Client& c, uint64_t id, const GateOptions& o);
// The gate of a job that succeeded (CmdGate and submit --wait --baseline).
int RunGate(Client& c, const v1::Job& job, const PreparedGate& gate, const GateOptions& o);
// A gated job that did not succeed: the reports say so; exit 1.
int GateFailedJob(Client& c, const v1::Job& job, const PreparedGate& gate, const GateOptions& o);

int CmdBoards(Client& c, bool json);
int CmdEvents(Client& c, const std::string& kind, const std::string& board);
int CmdReserve(Client& c, const std::string& board, const std::string& duration,
               const std::string& note, bool json);
int CmdRelease(Client& c, const std::string& board);
// `mculab reserve BOARD --hold`: a short lease renewed every third of it while this runs;
// released on SIGINT/SIGTERM (blocked by the caller before any thread started, taken here with
// sigtimedwait). A killed process stops renewing and the lease runs out by itself.
int CmdHold(Client& c, const std::string& board, const std::string& lease, const std::string& note,
            const sigset_t& signals);
int CmdBoard(Client& c, const std::string& board, const std::string& maintenance,
             const std::string& reason, const std::string& agent, bool approve, bool history,
             bool json);

// `mculab trend`: which case (flags, or a job and one of its case ids), the series, printed.
struct TrendOptions {
  std::string kind, op, params, runner, user, label, model;
  std::vector<std::string> tags;
  int64_t case_id = 0;
  bool has_case = false;
  uint64_t job = 0;
  unsigned limit = 200, window = 3;
  double min_step = 0.01;
  bool json = false;
  bool follow = false;  // follow the series instead of printing it (alerts)
};

int CmdTrend(Client& c, const TrendOptions& o);
// Alerts (server/service/alerts.h): `mculab follow --label X | --branch B [--kind K]`,
// `mculab follows`, `mculab unfollow ID`.
int CmdFollow(Client& c, const std::string& label, const std::string& branch,
              const std::string& kind, bool json);
int CmdFollows(Client& c, bool json);
int CmdUnfollow(Client& c, uint64_t id);

// `mculab ops [describe OP]` and `mculab models inspect FILE`: no server needed.
int CmdOps(bool describe, const std::string& op);
int CmdModelsInspect(const std::string& path, const std::vector<std::string>& inputs, bool json);

}  // namespace mculab::cli
