#include "agent/link/run_executor.h"

#include <spdlog/spdlog.h>

#include "agent/io/temp_dir.h"
#include "agent/link/artifact_cache.h"
#include "agent/runner/runner_session.h"
#include "common/op_catalog.h"
#include "common/sha256.h"
#include "common/workload_builder.h"
#include "mculab/ops.h"
#include "mculab/workload.h"

namespace mculab::agent {
namespace {

v1::RunFinished::Outcome ToProto(RunOutcome o) {
  switch (o) {
    case RunOutcome::kSucceeded:
      return v1::RunFinished::SUCCEEDED;
    case RunOutcome::kWorkloadFailed:
      return v1::RunFinished::WORKLOAD_FAILED;
    case RunOutcome::kInfraFailed:
      return v1::RunFinished::INFRA_FAILED;
    case RunOutcome::kCancelled:
      return v1::RunFinished::CANCELLED;
    case RunOutcome::kTimedOut:
      return v1::RunFinished::TIMED_OUT;
  }
  return v1::RunFinished::INFRA_FAILED;
}

v1::RunFinished Finish(std::uint64_t run_id, v1::RunFinished::Outcome outcome,
                       const std::string& message, std::uint64_t batches, Spool& spool,
                       RunSink& sink) {
  v1::RunFinished fin;
  fin.set_run_id(run_id);
  fin.set_outcome(outcome);
  fin.set_message(message);
  fin.set_batches_sent(static_cast<std::uint32_t>(batches));
  if (auto s = spool.PutFinished(fin); !s) {
    spdlog::error("run {}: cannot spool RunFinished: {}", run_id, s.error().message);
  }
  v1::AgentMessage m;
  *m.mutable_run_finished() = fin;
  sink.Send(m);
  return fin;
}

void SendState(RunSink& sink, std::uint64_t run_id, const char* state, const std::string& msg) {
  v1::AgentMessage m;
  auto* s = m.mutable_run_state();
  s->set_run_id(run_id);
  s->set_state(state);
  s->set_message(msg);
  sink.Send(m);
}

// Turns session events into spooled, sequenced messages.
class RunReporter final : public SessionListener {
 public:
  RunReporter(const v1::Assignment& a, const RunProvenance& prov, std::string workload_sha256,
              std::uint32_t seed, Spool& spool, RunSink& sink, Clock& clock, CancelToken& cancel,
              const ExecutorOptions& options, std::string log_prefix)
      : a_(a),
        prov_(prov),
        workload_sha256_(std::move(workload_sha256)),
        seed_(seed),
        spool_(spool),
        sink_(sink),
        clock_(clock),
        cancel_(cancel),
        options_(options),
        log_prefix_(std::move(log_prefix)),
        next_seq_(spool.NextSequence(a.run_id())) {}

  void OnStarted(const Hello& h, const std::vector<std::string>& counters) override {
    v1::RunStarted rs;
    rs.set_run_id(a_.run_id());
    rs.set_runner_version(h.version());
    rs.set_port(h.port);
    rs.set_cpu(h.cpu);
    rs.set_clock_hz(h.clock_hz);
    rs.set_emulated(h.emulated);
    rs.set_timer_unit(h.timer_unit);
    for (const auto& c : counters) rs.add_counters(c);
    rs.set_firmware_sha256(prov_.firmware_sha256);
    rs.set_workload_sha256(workload_sha256_);
    rs.set_toolchain(prov_.toolchain);
    rs.set_board_serial(prov_.board_serial);
    rs.set_note(prov_.note);
    rs.set_seed(seed_);
    Keep(spool_.PutStarted(rs));
    v1::AgentMessage m;
    *m.mutable_run_started() = std::move(rs);
    sink_.Send(m);
    spdlog::info("{}: runner {} {} on {} ({}{}), counters: {}", log_prefix_, h.port, h.version(),
                 h.cpu, h.timer_unit, h.emulated ? ", emulated" : "",
                 counters.empty() ? "timer only" : fmt::format("{}", fmt::join(counters, ",")));
  }

  void OnSample(const SampleMsg& s) override {
    if (batch_.samples_size() == 0) batch_started_ = clock_.Now();
    const std::uint32_t case_index = CaseIndex(s.case_index);
    auto add = [&](std::uint32_t metric, std::int64_t value) {
      auto* row = batch_.add_samples();
      row->set_case_index(case_index);
      row->set_iteration(s.iteration);
      row->set_metric(metric);
      row->set_value(value);
    };
    add(0, static_cast<std::int64_t>(s.timer));
    for (std::size_t i = 0; i < s.counters.size(); ++i) {
      add(static_cast<std::uint32_t>(i + 1), s.counters[i]);
    }
    ++samples_;
    if (static_cast<std::size_t>(batch_.samples_size()) >= options_.max_batch_samples ||
        clock_.Now() - batch_started_ >= options_.max_batch_age) {
      Flush();
    }
  }

  void OnCaseEnd(const CaseResult& r) override {
    if (batch_.samples_size() > 0 && clock_.Now() - batch_started_ >= options_.max_batch_age) {
      Flush();
    }
    v1::CaseDone cd;
    cd.set_run_id(a_.run_id());
    cd.set_case_index(CaseIndex(r.case_index));
    cd.set_checksum(r.checksum);
    cd.set_expected_checksum(r.expected);
    cd.set_checksum_ok(r.checksum_ok);
    cd.set_checksum_unverified(!r.verified);
    cd.set_overhead(static_cast<std::int64_t>(r.overhead));
    for (auto v : r.counter_overhead) cd.add_counter_overhead(static_cast<std::int64_t>(v));
    Keep(spool_.PutCaseDone(cd));
    v1::AgentMessage m;
    *m.mutable_case_done() = std::move(cd);
    sink_.Send(m);
  }

  void OnLog(const LogMsg& log) override {
    spdlog::log(log.level >= 3   ? spdlog::level::err
                : log.level == 2 ? spdlog::level::warn
                : log.level == 1 ? spdlog::level::info
                                 : spdlog::level::debug,
                "{}: runner says: {}", log_prefix_, log.text);
  }
  void OnError(const ErrorMsg& e) override {
    spdlog::log(e.code == MCULAB_ERR_ABORTED ? spdlog::level::info : spdlog::level::warn,
                "{}: runner error {} (case {}): {}", log_prefix_, e.code_name(),
                e.case_index == MCULAB_NO_CASE ? std::string("-") : std::to_string(e.case_index),
                e.text);
  }
  void OnDone(const Done&) override {}

  void Flush() {
    if (batch_.samples_size() == 0) return;
    batch_.set_run_id(a_.run_id());
    batch_.set_sequence(next_seq_++);
    batch_.set_pass(a_.pass());
    Keep(spool_.PutBatch(batch_));
    v1::AgentMessage m;
    *m.mutable_batch() = std::move(batch_);
    sink_.Send(m);
    batch_.Clear();
  }

  std::uint64_t batches() const { return next_seq_; }
  std::uint64_t samples() const { return samples_; }
  const std::string& spool_error() const { return spool_error_; }

 private:
  std::uint32_t CaseIndex(std::uint16_t workload_index) const {
    return workload_index < a_.cases_size() ? a_.cases(workload_index).index() : workload_index;
  }
  // A result that cannot be spooled could be lost: stop the run rather than pretend.
  void Keep(const Status& s) {
    if (s || !spool_error_.empty()) return;
    spool_error_ = s.error().message;
    spdlog::error("{}: cannot spool results, stopping the run: {}", log_prefix_, spool_error_);
    cancel_.Cancel(CancelReason::kAgentFault);
  }

  const v1::Assignment& a_;
  const RunProvenance prov_;
  const std::string workload_sha256_;
  const std::uint32_t seed_;
  Spool& spool_;
  RunSink& sink_;
  Clock& clock_;
  CancelToken& cancel_;
  const ExecutorOptions& options_;
  const std::string log_prefix_;
  v1::SampleBatch batch_;
  Clock::TimePoint batch_started_{};
  std::uint64_t next_seq_;
  std::uint64_t samples_ = 0;
  std::string spool_error_;
};

// A custom-runner assignment: the runner from the cache into `firmware`, the blob wrapped in a
// custom workload. kUnavailable/kInternal errors are the agent's or the server's (infrastructure);
// the others are the job's.
Result<std::vector<std::uint8_t>> PrepareCustom(const v1::Assignment& a, Board& board,
                                                const ExecutorOptions& options, std::uint32_t seed,
                                                std::vector<WorkloadCase>& cases,
                                                std::filesystem::path& firmware) {
  if (a.firmware_sha256().empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "op \"custom\" without a custom runner");
  }
  if (!board.Info().custom_runners) {
    return MakeError(ErrorCode::kFailedPrecondition, board.Info().custom_runners_off);
  }
  if (options.artifacts == nullptr) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "this agent has no artifact cache, so it cannot run custom runners");
  }
  auto fw = options.artifacts->Get(a.firmware_sha256());
  if (!fw) {
    return MakeError(fw.error().code, "cannot get the custom runner " + a.firmware_sha256() + ": " +
                                          fw.error().message);
  }
  firmware = *fw;
  std::vector<std::uint8_t> blob;
  if (!a.blob_sha256().empty()) {
    auto path = options.artifacts->Get(a.blob_sha256());
    if (!path) {
      return MakeError(path.error().code,
                       "cannot get the blob " + a.blob_sha256() + ": " + path.error().message);
    }
    auto bytes = ReadFile(*path);
    if (!bytes) return MakeError(ErrorCode::kInternal, bytes.error().message);
    blob.assign(bytes->begin(), bytes->end());
  }
  std::vector<std::int64_t> ids;
  for (const auto& c : a.cases()) {
    if (c.params_size() != 0) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "case " + std::to_string(c.id()) +
                           " has parameters; a custom runner's cases are ids only");
    }
    ids.push_back(c.id());
  }
  if (ids.empty()) ids.push_back(0);
  if (ids.size() > MCULAB_MAX_CASES) {
    return MakeError(ErrorCode::kInvalidArgument, "the job has " + std::to_string(ids.size()) +
                                                      " cases; a workload holds " +
                                                      std::to_string(MCULAB_MAX_CASES));
  }
  for (std::int64_t id : ids) cases.push_back(WorkloadCase{id, {}});
  const std::size_t n =
      mculab_workload_custom_blob_offset(static_cast<std::uint16_t>(ids.size())) + blob.size();
  std::vector<std::uint8_t> out(n);
  const std::size_t written = mculab_workload_write_custom(out.data(), out.size(), seed, ids.data(),
                                                           static_cast<std::uint16_t>(ids.size()),
                                                           blob.data(), blob.size());
  if (written == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "cannot build the custom workload (" +
                                                      std::to_string(blob.size()) + "-byte blob)");
  }
  out.resize(written);
  return out;
}

}  // namespace

v1::RunFinished FinishUnstartedRun(std::uint64_t run_id, v1::RunFinished::Outcome outcome,
                                   const std::string& message, Spool& spool, RunSink& sink) {
  if (auto s = spool.BeginRun(run_id); !s) {
    spdlog::error("run {}: {}", run_id, s.error().message);
  }
  return Finish(run_id, outcome, message, spool.NextSequence(run_id), spool, sink);
}

v1::RunFinished ExecuteRun(const v1::Assignment& a, Board& board, Spool& spool, RunSink& sink,
                           Clock& clock, CancelToken& cancel, const ExecutorOptions& options) {
  const std::uint64_t run_id = a.run_id();
  const std::string prefix = "run " + std::to_string(run_id) + " on " + board.Info().name;
  const auto started = clock.Now();
  if (auto s = spool.BeginRun(run_id); !s) {
    v1::RunFinished fin;
    fin.set_run_id(run_id);
    fin.set_outcome(v1::RunFinished::INFRA_FAILED);
    fin.set_message("the agent cannot spool results: " + s.error().message);
    v1::AgentMessage m;
    *m.mutable_run_finished() = fin;
    sink.Send(m);
    return fin;
  }
  auto workload_failed = [&](const std::string& msg) {
    spdlog::warn("{}: workload failed: {}", prefix, msg);
    return Finish(run_id, v1::RunFinished::WORKLOAD_FAILED, msg, spool.NextSequence(run_id), spool,
                  sink);
  };
  SendState(sink, run_id, "preparing", "building the workload");

  const bool custom = !a.firmware_sha256().empty() || a.op() == "custom";
  const std::uint32_t seed = a.seed() != 0 ? a.seed() : kDefaultSeed;
  if (a.iterations() == 0) return workload_failed("iterations must be at least 1");
  std::vector<WorkloadCase> cases;
  std::uint16_t op_id = MCULAB_OP_CUSTOM;
  Result<std::vector<std::uint8_t>> workload = std::vector<std::uint8_t>{};
  RunSpec spec;
  if (custom) {
    auto prepared = PrepareCustom(a, board, options, seed, cases, spec.firmware);
    if (!prepared) {
      const bool infra = prepared.error().code == ErrorCode::kUnavailable ||
                         prepared.error().code == ErrorCode::kInternal;
      if (infra) {
        spdlog::warn("{}: {}", prefix, prepared.error().message);
        return Finish(run_id, v1::RunFinished::INFRA_FAILED, prepared.error().message,
                      spool.NextSequence(run_id), spool, sink);
      }
      return workload_failed(prepared.error().message);
    }
    workload = std::move(*prepared);
  } else {
    const OpInfo* op = FindOp(a.op());
    if (op == nullptr) {
      return workload_failed("unknown op \"" + a.op() + "\" (known: " + OpNames() + ")");
    }
    if (a.cases_size() == 0) return workload_failed("the job has no cases");
    for (const auto& c : a.cases()) {
      WorkloadCase wc;
      wc.id = c.id();
      wc.params.assign(c.params().begin(), c.params().end());
      if (auto s = ValidateCaseParams(*op, wc.params); !s) {
        return workload_failed("case " + std::to_string(c.id()) + ": " + s.error().message);
      }
      cases.push_back(std::move(wc));
    }
    op_id = op->id;
    workload = BuildWorkload(op->id, cases, seed);
  }
  if (!workload) return workload_failed("cannot build the workload: " + workload.error().message);
  const std::string workload_sha = Sha256Hex(std::span<const std::uint8_t>(*workload));

  spec.run_id = run_id;
  spec.workload = *workload;
  spec.timeout =
      a.timeout_s() != 0 ? std::chrono::seconds(a.timeout_s()) : board.Info().default_timeout;
  if (cancel.cancelled()) {
    return Finish(run_id,
                  cancel.reason() == CancelReason::kByServer ? v1::RunFinished::CANCELLED
                                                             : v1::RunFinished::INFRA_FAILED,
                  "stopped before the runner started", 0, spool, sink);
  }
  auto runner = board.Start(spec);
  if (!runner) {
    spdlog::warn("{}: the board failed to start the runner: {}", prefix, runner.error().message);
    return Finish(run_id, v1::RunFinished::INFRA_FAILED,
                  "board " + board.Info().name + ": " + runner.error().message,
                  spool.NextSequence(run_id), spool, sink);
  }
  SendState(sink, run_id, "running", "");

  SessionConfig sc;
  sc.op = op_id;
  sc.cases = std::move(cases);
  sc.seed = seed;
  sc.iterations = a.iterations();
  sc.warmup = a.warmup();
  sc.workload_len = static_cast<std::uint32_t>(spec.workload.size());
  sc.events.assign(a.events().begin(), a.events().end());
  sc.hello_timeout = options.hello_timeout;
  sc.run_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(spec.timeout) -
                   std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now() - started);
  sc.abort_grace = options.abort_grace;
  sc.log_prefix = prefix;
  RunReporter reporter(a, (*runner)->provenance(), workload_sha, seed, spool, sink, clock, cancel,
                       options, prefix);
  SessionResult result = RunSession(**runner, clock, sc, reporter, cancel);
  reporter.Flush();
  runner->reset();  // the runner is gone and its temp files removed before RunFinished

  auto outcome = ToProto(result.outcome);
  std::string message = result.message;
  if (!reporter.spool_error().empty()) {
    outcome = v1::RunFinished::INFRA_FAILED;
    message = "the agent cannot spool results: " + reporter.spool_error();
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now() - started);
  spdlog::info(
      "{}: {} in {} ms (runner HELLO at {} ms, DONE at {} ms, gone at {} ms): {} samples in {} "
      "batches{}{}",
      prefix, v1::RunFinished::Outcome_Name(outcome), ms.count(), result.stats.to_hello.count(),
      result.stats.to_done.count(), result.stats.to_exit.count(), reporter.samples(),
      reporter.batches(), message.empty() ? "" : ": ", message);
  return Finish(run_id, outcome, message, reporter.batches(), spool, sink);
}

}  // namespace mculab::agent
