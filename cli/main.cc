// mculab: the command-line client of a mculab lab (boards, submit, jobs, show, export, cancel,
// compare, gate, trend, ...). Errors are one line on stderr and a non-zero exit code: 1 for a
// failed request or job, 2 for bad usage or input; a gate exits 3 for a regression and 4 when it
// could not compare (cli/gate.h).
#include <CLI/CLI.hpp>
#include <csignal>
#include <filesystem>
#include <iostream>

#include "cli/client_config.h"
#include "cli/commands/commands.h"
#include "common/kernel_set.h"
#include "common/op_catalog.h"

namespace mculab::cli {
namespace {

int Main(int argc, char** argv) {
  CLI::App app{
      "mculab: submit, follow and read ML inference benchmarks on a shared lab of "
      "microcontroller boards"};
  app.set_version_flag("--version", std::string("mculab ") + MCULAB_VERSION);
  app.require_subcommand(1);
  std::string server, token, ca, config_path;
  app.add_option("--server", server, "server address host:port (or MCULAB_SERVER)");
  app.add_option("--token", token, "access token (or MCULAB_TOKEN)");
  app.add_option("--ca", ca, "CA certificate (PEM) to talk TLS to the server");
  app.add_option("--config", config_path,
                 "client config file (default ~/.config/mculab/config.toml)");

  bool json = false;
  auto* boards = app.add_subcommand("boards", "list the lab's boards: state, health, queue");
  boards->add_flag("--json", json, "print JSON");

  SubmitOptions so;
  auto* submit = app.add_subcommand(
      "submit", "submit an operator benchmark, a .tflite model or your own runner");
  submit->add_option("--kind", so.kind, "board kind, e.g. corstone300-qemu, host");
  submit->add_option("--board", so.board, "one board by name");
  submit->add_option("--op", so.op, "operator benchmark: " + OpNames());
  submit->add_option(
      "--cases", so.cases,
      "CSV of the parameter sweep (id column first); with --firmware: case ids (optional)");
  submit->add_option("--firmware", so.firmware,
                     "your runner: an ELF for the board (docs/writing-a-runner.md)");
  submit->add_option("--blob", so.blob,
                     "a file your runner reads (model, inputs); with --firmware");
  submit->add_option("--model", so.model,
                     "a .tflite int8 model, run by the lab's own runner on any board "
                     "(`mculab models inspect FILE` shows its graph)");
  submit->add_option("--input", so.input,
                     "the model's input tensor as raw bytes (default: a seeded pattern); "
                     "repeated for a graph of several inputs, in the graph's order; with --model");
  submit->add_option("--iterations", so.iterations, "measured iterations per case")
      ->check(CLI::Range(1u, 100000u))
      ->capture_default_str();
  submit->add_option("--warmup", so.warmup, "unmeasured iterations before measuring")
      ->check(CLI::Range(0u, 100000u))
      ->capture_default_str();
  submit->add_option("--label", so.label, "a label shown in the history");
  submit->add_option("--timeout", so.timeout_s,
                     "seconds before the job is timed out (0: server default)");
  submit->add_option("--priority", so.priority, "high, normal (default) or low")
      ->check(CLI::IsMember({"high", "normal", "low"}));
  submit->add_option("--events", so.events,
                     "counter events besides cycles, comma separated (see `mculab events`); the "
                     "server splits them into passes");
  submit->add_option("--tag", so.tags,
                     "KEY=VALUE: run only on a board with this tag (repeatable; see `mculab "
                     "boards`), e.g. --tag cpu=cortex-m55");
  submit
      ->add_option("--kernels", so.kernels,
                   "the int8 kernel set: fast (default: the runner's fastest bit-exact set, "
                   "Helium on a Cortex-M55, DSP on a Cortex-M7) or reference (the portable "
                   "reference kernels, to compare); with --op or --model, not --firmware")
      ->check(CLI::Validator(
          [](std::string& v) {
            auto set = ParseKernelSet(v);
            return set.ok() ? std::string() : set.error().message;
          },
          "fast|reference", "kernel set"));
  submit
      ->add_option("--reruns", so.reruns,
                   "run the job again on the same board, up to N times, while a case's timings "
                   "vary more than --max-cv (every run's samples are kept; emulated counts are "
                   "exact and never rerun)")
      ->check(CLI::Range(0, 5));
  submit->add_flag("--wait", so.wait, "follow the job and print its results");
  submit->add_flag("--json", so.json, "print JSON");
  submit->add_option("--commit", so.commit,
                     "the commit the job measures (default: GITHUB_SHA or CI_COMMIT_SHA)");
  submit->add_option("--branch", so.branch,
                     "its branch (default: GITHUB_HEAD_REF, GITHUB_REF_NAME or "
                     "CI_COMMIT_REF_NAME)");
  submit->add_option("--url", so.url,
                     "a link to the change or the CI run (default: the GitHub run or CI_JOB_URL)");
  // The gate's flags, shared by `submit --wait --baseline` and `gate`.
  auto add_gate_flags = [](CLI::App* cmd, GateOptions& g) {
    cmd->add_option("--baseline", g.baseline,
                    "the job to compare with: a job id, label:TEXT (the newest succeeded job "
                    "of the same op and board kind with that label) or branch:NAME (that "
                    "branch's newest)");
    cmd->add_option("--max-regression", g.max_regression,
                    "fail (exit 3) when a case is slower by more than this percentage with its "
                    "whole 95% interval (2 and 2% mean the same)")
        ->capture_default_str();
    cmd->add_option("--max-improvement", g.max_improvement,
                    "also fail (exit 3) when a case is faster by more than this percentage (a "
                    "suspicious speed-up)");
    cmd->add_option("--max-cv", g.max_cv,
                    "a case whose timings vary more than this percentage (cv) in either job is "
                    "unstable: reported, never a regression or improvement, and rerun with "
                    "submit --reruns (default: 10 on a host board, 2 on silicon; emulated "
                    "counts are exact)");
    cmd->add_option("--report", g.reports,
                    "write a report: junit:FILE, markdown:FILE or json:FILE (repeatable)");
    cmd->add_option("--web-url", g.web_url,
                    "the lab's web address for the Markdown report's links (or MCULAB_WEB_URL; "
                    "default http://SERVER-HOST:8080/)");
  };
  add_gate_flags(submit, so.gate);

  v1::ListJobsRequest jr;
  std::string jstate, jkind, jboard, jop, juser, jlabel, jmodel;
  unsigned jlimit = 20;
  uint64_t jbefore = 0, joffset = 0;
  auto* jobs = app.add_subcommand("jobs", "list jobs, newest first");
  jobs->add_option("--state", jstate,
                   "queued, running, succeeded, failed, ... (several separated by commas)");
  jobs->add_option("--kind", jkind, "board kind");
  jobs->add_option("--board", jboard, "board name (the one it ran on or asked for)");
  jobs->add_option("--op", jop, "operator");
  jobs->add_option("--user", juser, "submitter");
  jobs->add_option("--label", jlabel, "only jobs whose label contains this");
  jobs->add_option("--model", jmodel, "only model jobs of this model file name (exact)");
  std::string jbranch, jcommit;
  jobs->add_option("--branch", jbranch, "only jobs of this branch (exact)");
  jobs->add_option("--commit", jcommit, "only jobs of this commit (or a prefix of 7+ digits)");
  jobs->add_option("--limit", jlimit, "how many")
      ->check(CLI::Range(1u, 500u))
      ->capture_default_str();
  jobs->add_option("--before", jbefore, "only jobs with an id below this (paging)");
  jobs->add_option("--offset", joffset, "skip this many jobs (paging)");
  jobs->add_flag("--json", json, "print JSON");

  uint64_t id = 0;
  auto* show = app.add_subcommand("show", "a job's state, provenance and per-case statistics");
  show->add_option("id", id, "job id")->required();
  show->add_flag("--json", json, "print JSON, raw per-iteration values included");
  bool show_ops = false;
  show->add_flag("--ops", show_ops, "the per-operator profile, sorted by share of the total");
  std::string ev_kind, ev_board;
  auto* events =
      app.add_subcommand("events", "the events a kind of board counts, per counter unit");
  events->add_option("--kind", ev_kind, "board kind");
  events->add_option("--board", ev_board, "one board by name");

  bool csv_flag = false;
  std::string out_path, export_format = "csv";
  auto* exp = app.add_subcommand("export", "a job's results as a file: the full table by default");
  exp->add_option("id", id, "job id")->required();
  exp->add_flag("--csv", csv_flag,
                "the full CSV table (the default): parameters, n, min, median, "
                "mean, p90, p99, stddev, cv, overhead, events, checksum; units in column names");
  exp->add_option("--format", export_format,
                  "csv (the full table), ops-csv (the operator-benchmark layout id,<unit> with "
                  "the medians) or json (the document of `show --json`)")
      ->capture_default_str();
  exp->add_option("-o,--output", out_path, "file to write (default: standard output)");

  std::string describe_op;
  auto* ops = app.add_subcommand("ops", "the built-in operator benchmarks (no server needed)");
  auto* ops_describe =
      ops->add_subcommand("describe", "an op's parameters, CSV synonyms, defaults and limits");
  ops_describe->add_option("op", describe_op, "op name: " + OpNames())->required();

  std::string model_path;
  std::vector<std::string> model_input;
  auto* models = app.add_subcommand("models", ".tflite models (no server needed)");
  auto* models_inspect = models->add_subcommand(
      "inspect", "a model's graph: operators, shapes, parameters, MACs per layer, planned arena");
  models_inspect->add_option("file", model_path, ".tflite model")->required();
  models_inspect->add_option(
      "--input", model_input,
      "check input files' sizes against it (repeated: one per graph input, in its order)");
  models_inspect->add_flag("--json", json, "print JSON");
  models->require_subcommand(1);

  auto* cancel = app.add_subcommand("cancel", "cancel a job in any state");
  cancel->add_option("id", id, "job id")->required();

  std::vector<uint64_t> compare_ids;
  auto* compare = app.add_subcommand(
      "compare",
      "jobs compared case by case with the first: medians, ratios with 95% intervals, verdicts "
      "(the web page's compare view)");
  compare->add_option("jobs", compare_ids, "2 to 8 job ids; the first is the baseline")->required();
  compare->add_flag("--json", json, "print the JSON document of GET /api/v1/compare");
  std::string compare_max_cv;
  compare->add_option("--max-cv", compare_max_cv,
                      "a case whose timings vary more than this percentage (cv) is unstable "
                      "(default: 10 on a host board, 2 on silicon; emulated counts are exact)");

  GateOptions go;
  uint64_t gate_job = 0;
  auto* gate = app.add_subcommand(
      "gate",
      "compare a finished job with a baseline and exit 3 if a case regressed beyond the "
      "threshold, 4 if they could not be compared (docs/ci.md)");
  gate->add_option("job", gate_job, "job id")->required();
  add_gate_flags(gate, go);
  gate->get_option("--baseline")->required();
  gate->add_flag("--json", go.json, "print the outcome as JSON (with the comparison)");

  TrendOptions to;
  auto* trend = app.add_subcommand(
      "trend",
      "one case's median over time, job after job, with 95% intervals, runner changes and "
      "change points (the web page's trend view)");
  trend->add_option("--job", to.job, "take the kind, op and case from this job (with --case)");
  trend->add_option("--kind", to.kind, "board kind");
  trend->add_option("--op", to.op, "operator benchmark, or custom for your runner");
  trend->add_option("--params", to.params,
                    "the case's parameters in the op's order, comma separated (see `mculab ops "
                    "describe OP`)");
  trend->add_option("--case", to.case_id, "the case id (custom runners; with --job)")
      ->each([&](const std::string&) { to.has_case = true; });
  trend->add_option("--runner", to.runner,
                    "custom runners: the uploaded runner's file name (required with --op custom; "
                    "--job takes it from the job)");
  trend->add_option("--model", to.model,
                    "model jobs (--op model): the model's file name (a series is one model; "
                    "--job takes it from the job)");
  trend->add_option("--user", to.user, "only this user's jobs");
  trend->add_option("--label", to.label, "only jobs whose label contains this");
  trend->add_option("--tag", to.tags, "KEY=VALUE: only jobs that asked for this tag (repeatable)");
  trend->add_option("--limit", to.limit, "the newest jobs to show")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  trend
      ->add_option("--window", to.window,
                   "change points: jobs either side of a step whose intervals must not overlap")
      ->check(CLI::Range(1u, 50u))
      ->capture_default_str();
  trend
      ->add_option("--min-step", to.min_step, "change points: the least relative step (0.01 is 1%)")
      ->check(CLI::Range(0.0001, 10.0))
      ->capture_default_str();
  trend->add_flag("--json", to.json, "print the JSON document of GET /api/v1/series");
  trend->add_flag("--follow", to.follow,
                  "follow the series instead: each new change point is posted to the lab's "
                  "webhooks ([notify] in the server's config)");
  std::string follow_label, follow_branch, follow_kind;
  uint64_t unfollow_id = 0;
  auto* follow = app.add_subcommand(
      "follow",
      "post a new change point in any series of a label's or branch's jobs to the "
      "lab's webhooks");
  follow->add_option("--label", follow_label, "jobs whose label contains this");
  follow->add_option("--branch", follow_branch, "jobs of this branch (exact)");
  follow->add_option("--kind", follow_kind, "only jobs on this board kind");
  follow->add_flag("--json", json, "print JSON");
  auto* follows = app.add_subcommand("follows", "list your follows (an admin: everyone's)");
  follows->add_flag("--json", json, "print JSON");
  auto* unfollow = app.add_subcommand("unfollow", "stop following (mculab follows lists ids)");
  unfollow->add_option("id", unfollow_id, "follow id")->required();

  std::string board_name, for_duration, note, lease = "30s", maintenance, reason, owner;
  bool approve = false;
  bool hold = false, history = false;
  auto* reserve = app.add_subcommand("reserve", "reserve a board: only your jobs run on it");
  reserve->add_option("board", board_name, "board name")->required();
  reserve->add_option("--for", for_duration, "how long, e.g. 2h, 30m, 1h30m");
  reserve->add_option("--note", note, "why (shown in mculab boards)");
  reserve->add_flag("--hold", hold, "hold the board while this command runs; Ctrl-C releases it");
  reserve->add_option("--lease", lease, "the --hold lease, renewed every third of it")
      ->capture_default_str();
  reserve->add_flag("--json", json, "print JSON");
  auto* release = app.add_subcommand("release", "end your reservation of a board");
  release->add_option("board", board_name, "board name")->required();
  auto* board_cmd = app.add_subcommand(
      "board", "one board: its history, maintenance mode, owning agent, approval");
  board_cmd->add_option("board", board_name, "board name")->required();
  board_cmd->add_option("--maintenance", maintenance, "on or off (admin)");
  board_cmd->add_option("--reason", reason, "why, for the audit trail");
  board_cmd->add_option("--agent", owner,
                        "give the board to this agent (admin; a board belongs to the agent that "
                        "registered it first, others are refused)");
  board_cmd->add_flag(
      "--approve", approve,
      "let a new board take jobs once its health check passes (admin; a lab with "
      "approve_new_boards keeps boards it has never seen in maintenance until then)");
  board_cmd->add_flag("--history", history, "print the board's audit trail (who, what, when)");
  board_cmd->add_flag("--json", json, "print JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; any other flag error is bad usage, status 2 (docs/ci.md), not
    // CLI11's own codes (105 for a value out of range), which a CI script would not expect.
    return app.exit(e) == 0 ? 0 : 2;
  }

  sigset_t hold_signals;
  sigemptyset(&hold_signals);
  if (*reserve) {
    if (hold == !for_duration.empty())
      return std::cerr << "mculab: error: give either --for DURATION or --hold\n", 2;
    if (hold) {
      // Before any gRPC thread exists, so that every thread inherits the mask and CmdHold takes
      // the signals with sigtimedwait.
      sigaddset(&hold_signals, SIGINT);
      sigaddset(&hold_signals, SIGTERM);
      pthread_sigmask(SIG_BLOCK, &hold_signals, nullptr);
    }
  }

  if (*ops) return CmdOps(static_cast<bool>(*ops_describe), describe_op);
  if (*models_inspect) return CmdModelsInspect(model_path, model_input, json);

  try {
    ConfigInputs in;
    if (!server.empty()) in.server_flag = server;
    if (!token.empty()) in.token_flag = token;
    if (!ca.empty()) in.ca_flag = ca;
    in.env = Environment();
    in.config_file =
        config_path.empty() ? DefaultConfigPath(in.env) : std::filesystem::path(config_path);
    if (!config_path.empty() && !std::filesystem::exists(config_path))
      throw UsageError{"config file " + config_path + " does not exist"};
    auto cfg = ResolveClientConfig(in);
    if (!cfg.ok()) throw UsageError{cfg.error().message};
    Client client(*cfg);

    if (*boards) return CmdBoards(client, json);
    if (*submit) return CmdSubmit(client, so);
    if (*jobs) {
      jr.set_state(jstate);
      jr.set_kind(jkind);
      jr.set_board(jboard);
      jr.set_op(jop);
      jr.set_user(juser);
      jr.set_limit(jlimit);
      jr.set_before_id(jbefore);
      jr.set_label(jlabel);
      jr.set_model(jmodel);
      jr.set_branch(jbranch);
      jr.set_commit(jcommit);
      jr.set_offset(joffset);
      return CmdJobs(client, jr, json);
    }
    if (*show) return CmdShow(client, id, json, show_ops);
    if (*events) return CmdEvents(client, ev_kind, ev_board);
    if (*exp) return CmdExport(client, id, out_path, export_format);
    if (*cancel) return CmdCancel(client, id);
    if (*trend) return CmdTrend(client, to);
    if (*follow) return CmdFollow(client, follow_label, follow_branch, follow_kind, json);
    if (*follows) return CmdFollows(client, json);
    if (*unfollow) return CmdUnfollow(client, unfollow_id);
    if (*compare) return CmdCompare(client, compare_ids, json, compare_max_cv);
    if (*gate) return CmdGate(client, gate_job, go);
    if (*reserve) {
      return hold ? CmdHold(client, board_name, lease, note, hold_signals)
                  : CmdReserve(client, board_name, for_duration, note, json);
    }
    if (*release) return CmdRelease(client, board_name);
    if (*board_cmd)
      return CmdBoard(client, board_name, maintenance, reason, owner, approve, history, json);
  } catch (const UsageError& e) {
    std::cerr << "mculab: error: " << e.message << "\n";
    return 2;
  }
  return 2;
}

}  // namespace
}  // namespace mculab::cli

int main(int argc, char** argv) { return mculab::cli::Main(argc, argv); }
