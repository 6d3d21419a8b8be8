#include "agent/run/run_executor.h"

#include <spdlog/spdlog.h>

#include <optional>

#include "agent/io/temp_dir.h"
#include "agent/link/artifact_cache.h"
#include "agent/run/model_reference.h"
#include "agent/runner/elf_memory.h"
#include "agent/runner/runner_session.h"
#include "common/crash_point.h"
#include "common/kernel_set.h"
#include "common/op_catalog.h"
#include "common/sha256.h"
#include "common/tflite_model.h"
#include "common/units.h"
#include "common/workload_builder.h"
#include "mculab/ops.h"
#include "mculab/tflite.h"
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
  // A runner's text ends up here: bounded, so the end of a run always fits in a message.
  constexpr std::size_t kMaxMessage = 4096;
  fin.set_message(message.size() > kMaxMessage ? message.substr(0, kMaxMessage) + "..." : message);
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

// One pass as the agent runs it: which events the runner counts (CONFIGURE) and which the board
// backend counts (the QEMU plugin), and the run-wide metric index of each.
struct AgentPass {
  std::uint32_t index = 0;
  std::vector<std::string> runner_events;
  std::vector<std::string> emulated_events;
  std::vector<std::uint32_t> emulated_metrics;  // per emulated event
};

// The run's metric names (RunStarted.counters) and passes from the assignment: an assignment
// without passes is one pass of its events.
struct AgentPlan {
  std::vector<std::string> counters;
  std::vector<AgentPass> passes;
  std::uint32_t Metric(const std::string& event) const {
    for (std::size_t i = 0; i < counters.size(); ++i) {
      if (counters[i] == event) return static_cast<std::uint32_t>(i + 1);
    }
    return 0;
  }
};

bool IsEmulatedEvent(const BoardInfo& info, const std::string& event) {
  for (const CounterUnitInfo& u : info.counter_units) {
    if (!u.external) continue;
    if (std::find(u.events.begin(), u.events.end(), event) != u.events.end()) return true;
  }
  return false;
}

AgentPlan PlanOf(const v1::Assignment& a, const BoardInfo& info) {
  AgentPlan plan;
  auto add_counter = [&](const std::string& e) {
    if (e.empty() || e == "cycles") return;
    if (std::find(plan.counters.begin(), plan.counters.end(), e) == plan.counters.end()) {
      plan.counters.push_back(e);
    }
  };
  std::vector<std::pair<std::uint32_t, std::vector<std::string>>> specs;
  if (a.passes_size() == 0) {
    specs.push_back({0, {a.events().begin(), a.events().end()}});
  } else {
    for (const auto& p : a.passes())
      specs.push_back({p.index(), {p.events().begin(), p.events().end()}});
  }
  for (const auto& [index, events] : specs) {
    for (const auto& e : events) add_counter(e);
  }
  for (const auto& [index, events] : specs) {
    AgentPass p;
    p.index = index;
    for (const auto& e : events) {
      if (e.empty() || e == "cycles") continue;
      if (IsEmulatedEvent(info, e)) {
        p.emulated_events.push_back(e);
        p.emulated_metrics.push_back(plan.Metric(e));
      } else {
        p.runner_events.push_back(e);
      }
    }
    plan.passes.push_back(std::move(p));
  }
  return plan;
}

// Turns session events into spooled, sequenced messages. Runs pass after pass: BeginPass() before
// each session, EndPass() after it. A pass with emulated events holds its samples and case ends
// until EndPass() has merged the board's counts into them (the counts exist once the emulator
// has exited); other passes send as they go.
class RunReporter final : public SessionListener {
 public:
  RunReporter(const v1::Assignment& a, const AgentPlan& plan, std::string workload_sha256,
              std::uint32_t seed, Spool& spool, RunSink& sink, Clock& clock, CancelToken& cancel,
              const ExecutorOptions& options, std::string log_prefix)
      : a_(a),
        plan_(plan),
        workload_sha256_(std::move(workload_sha256)),
        seed_(seed),
        spool_(spool),
        sink_(sink),
        clock_(clock),
        cancel_(cancel),
        options_(options),
        log_prefix_(std::move(log_prefix)),
        next_seq_(spool.NextSequence(a.run_id())) {}

  void BeginPass(const AgentPass& pass, const RunProvenance& prov) {
    Flush();
    pass_ = &pass;
    prov_ = prov;
    held_samples_.clear();
    held_cases_.clear();
    runner_metrics_.clear();
    pending_ = v1::CaseDone();
  }

  void OnStarted(const Hello& h, const std::vector<std::string>& counters) override {
    // Under QEMU -icount the runner's clock ticks count virtual time: reported as executed
    // instructions, the unit every emulated board shares (each board's clock differs).
    clock_hz_ = h.clock_hz;
    to_instructions_ = prov_.icount_shift >= 0 && h.clock_hz > 0 && h.timer_unit == "cycles";
    runner_metrics_.clear();
    for (const auto& c : counters) runner_metrics_.push_back(plan_.Metric(c));
    spdlog::info("{}: pass {}: runner {} {} on {} ({}{}), counters: {}{}", log_prefix_,
                 pass_->index, h.port, h.version(), h.cpu, h.timer_unit,
                 h.emulated ? ", emulated" : "",
                 counters.empty() ? "timer only" : fmt::format("{}", fmt::join(counters, ",")),
                 pass_->emulated_events.empty()
                     ? ""
                     : fmt::format("; emulated: {}", fmt::join(pass_->emulated_events, ",")));
    if (started_sent_) return;
    started_sent_ = true;
    v1::RunStarted rs;
    rs.set_run_id(a_.run_id());
    // A runtime other than the built-in one (a TFLite runner's kernels, a custom runtime) is part
    // of what ran: "1.2.0 (tflite-helium)"; RunStarted.kernel_set says which kernels it ran.
    rs.set_runner_version(h.runtime.empty() || h.runtime == "builtin"
                              ? h.version()
                              : h.version() + " (" + h.runtime + ")");
    rs.set_port(h.port);
    rs.set_cpu(h.cpu);
    rs.set_clock_hz(h.clock_hz);
    rs.set_emulated(h.emulated || prov_.emulated);
    rs.set_timer_unit(to_instructions_ ? std::string(kInstructionsUnit) : h.timer_unit);
    for (const auto& c : plan_.counters) rs.add_counters(c);
    rs.set_firmware_sha256(prov_.firmware_sha256);
    rs.set_workload_sha256(workload_sha256_);
    rs.set_toolchain(prov_.toolchain);
    rs.set_board_serial(prov_.board_serial);
    rs.set_note(note_extra_.empty() ? prov_.note : prov_.note + "; " + note_extra_);
    rs.set_seed(seed_);
    rs.set_kernel_set(KernelSetRan(h.runtime));
    if (!prov_.firmware_path.empty()) {
      if (auto mem = ReadElfMemory(prov_.firmware_path); mem.ok()) {
        for (const MemoryItem& item : *mem) {
          auto* f = rs.add_firmware_memory();
          f->set_case_index(-1);
          f->set_source("elf");
          f->set_category(item.category);
          f->set_used(item.bytes);
        }
      } else {
        spdlog::warn("{}: no memory report from the ELF: {}", log_prefix_, mem.error().message);
      }
    }
    if (!Keep(spool_.PutStarted(rs))) return;
    v1::AgentMessage m;
    *m.mutable_run_started() = std::move(rs);
    sink_.Send(m);
  }

  void OnSample(const SampleMsg& sample) override {
    ++samples_;
    SampleMsg s = sample;
    s.timer = Timer(s.timer);
    if (!pass_->emulated_events.empty()) {
      held_samples_.push_back(std::move(s));
      return;
    }
    AddSample(s, nullptr);
  }

  // A timer reading in the unit the run reports (RunStarted.timer_unit).
  std::uint64_t Timer(std::uint64_t ticks) const {
    return to_instructions_ ? EmulatedInstructions(ticks, clock_hz_, prov_.icount_shift) : ticks;
  }

  void OnOpSample(const OpSample& op) override {
    auto* p = pending_.add_ops();
    p->set_op_index(op.op_index);
    p->set_type(op.type);
    p->set_name(op.name);
    p->set_count(op.count);
    p->set_unclosed(op.unclosed);
    auto add = [&](std::uint32_t metric, const OpMetric& v) {
      auto* m = p->add_metrics();
      m->set_metric(metric);
      m->set_count(op.count);
      m->set_sum(v.sum);
      m->set_min(v.min);
      m->set_max(v.max);
    };
    if (pass_->index == 0) {  // the timer as pass 0 measured it
      add(0, OpMetric{Timer(op.timer.sum), Timer(op.timer.min), Timer(op.timer.max)});
    }
    for (std::size_t k = 0; k < op.counters.size() && k < runner_metrics_.size(); ++k) {
      if (runner_metrics_[k] != 0) add(runner_metrics_[k], op.counters[k]);
    }
  }

  void OnMemory(const MemoryReport& mem) override {
    if (pass_->index != 0) return;  // the same in every pass: reported once
    for (const MemoryEntry& e : mem.entries) {
      auto* f = pending_.add_memory();
      f->set_case_index(static_cast<std::int32_t>(CaseIndex(mem.case_index)));
      f->set_source("runner");
      f->set_category(e.category);
      f->set_used(e.used);
      f->set_reserved(e.reserved);
    }
  }

  void OnCaseEnd(const CaseResult& r) override {
    CrashPoint(crash_points::kAgentMidRun);
    if (rows_ > 0 && clock_.Now() - batch_started_ >= options_.max_batch_age) Flush();
    v1::CaseDone cd = std::move(pending_);
    pending_ = v1::CaseDone();
    cd.set_run_id(a_.run_id());
    cd.set_case_index(CaseIndex(r.case_index));
    cd.set_checksum(r.checksum);
    cd.set_expected_checksum(r.expected);
    cd.set_checksum_ok(r.checksum_ok);
    cd.set_checksum_unverified(!r.verified);
    cd.set_overhead(static_cast<std::int64_t>(Timer(r.overhead)));
    cd.set_pass(pass_->index);
    for (auto v : r.counter_overhead) cd.add_counter_overhead(static_cast<std::int64_t>(v));
    if (!pass_->emulated_events.empty()) {
      held_cases_.push_back({r.case_index, std::move(cd)});
      return;
    }
    SendCaseDone(std::move(cd));
  }

  // After the pass's session: merges the board's emulated counts into the held samples and case
  // ends and sends them. An error (counts missing or not matching the samples) fails the run.
  Status EndPass(RunnerProcess& runner, bool session_ok) {
    if (pass_->emulated_events.empty()) {
      Flush();
      return {};
    }
    if (!session_ok) return {};  // the run failed anyway; nothing half-merged is sent
    auto counts = runner.EmulatedCounts();
    if (!counts.ok()) return counts.error();
    std::vector<int> column(pass_->emulated_events.size(), -1);
    for (std::size_t e = 0; e < column.size(); ++e) {
      auto it =
          std::find(counts->columns.begin(), counts->columns.end(), pass_->emulated_events[e]);
      if (it == counts->columns.end()) {
        return MakeError(ErrorCode::kDataLoss,
                         "the emulator's counts have no column for " + pass_->emulated_events[e]);
      }
      column[e] = static_cast<int>(it - counts->columns.begin());
    }
    for (const SampleMsg& s : held_samples_) {
      const auto* values = counts->Iteration(s.case_index, s.iteration);
      if (values == nullptr) {
        return MakeError(ErrorCode::kDataLoss,
                         fmt::format("the emulator counted no region for case {} iteration {}",
                                     s.case_index, s.iteration));
      }
      std::vector<std::pair<std::uint32_t, std::int64_t>> extra;
      for (std::size_t e = 0; e < column.size(); ++e) {
        extra.push_back(
            {pass_->emulated_metrics[e],
             static_cast<std::int64_t>((*values)[static_cast<std::size_t>(column[e])])});
      }
      AddSample(s, &extra);
    }
    const auto ops = AggregateOps(*counts);
    for (auto& [workload_case, cd] : held_cases_) {
      for (auto& op : *cd.mutable_ops()) {
        auto it = ops.find({workload_case, op.op_index()});
        if (it == ops.end()) continue;
        for (std::size_t e = 0; e < column.size(); ++e) {
          const auto c = static_cast<std::size_t>(column[e]);
          auto* m = op.add_metrics();
          m->set_metric(pass_->emulated_metrics[e]);
          m->set_count(it->second.count);
          m->set_sum(it->second.sum[c]);
          m->set_min(it->second.min[c]);
          m->set_max(it->second.max[c]);
        }
      }
      SendCaseDone(std::move(cd));
    }
    held_cases_.clear();
    held_samples_.clear();
    Flush();
    return {};
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
    if (rows_ == 0) return;
    rows_ = 0;
    if (!oversized_.empty()) {  // the run is failing: nothing after the refused message
      batch_.Clear();
      return;
    }
    v1::SampleBatch& b = *batch_.mutable_batch();
    b.set_run_id(a_.run_id());
    b.set_sequence(next_seq_);
    b.set_pass(pass_ != nullptr ? pass_->index : a_.pass());
    if (!Keep(spool_.PutBatch(batch_))) {
      batch_.Clear();
      return;
    }
    ++next_seq_;
    sink_.Send(std::move(batch_));  // spooled and sent as built: the samples are never copied
    batch_.Clear();
  }

  std::uint64_t batches() const { return next_seq_; }
  std::uint64_t samples() const { return samples_; }
  const std::string& spool_error() const { return spool_error_; }
  const std::string& oversized() const { return oversized_; }

 private:
  void AddSample(const SampleMsg& s,
                 const std::vector<std::pair<std::uint32_t, std::int64_t>>* extra) {
    if (rows_ == 0) batch_started_ = clock_.Now();
    const std::uint32_t case_index = CaseIndex(s.case_index);
    v1::SampleBatch& b = *batch_.mutable_batch();
    auto add = [&](std::uint32_t metric, std::int64_t value) {
      ++rows_;
      if (a_.sample_columns()) {
        b.add_case_index(case_index);
        b.add_iteration(s.iteration);
        b.add_metric(metric);
        b.add_value(value);
        return;
      }
      auto* row = b.add_samples();  // a server that reads only the row form
      row->set_case_index(case_index);
      row->set_iteration(s.iteration);
      row->set_metric(metric);
      row->set_value(value);
    };
    add(0, static_cast<std::int64_t>(s.timer));
    for (std::size_t i = 0; i < s.counters.size(); ++i) {
      const std::uint32_t metric = i < runner_metrics_.size() && runner_metrics_[i] != 0
                                       ? runner_metrics_[i]
                                       : static_cast<std::uint32_t>(i + 1);
      add(metric, static_cast<std::int64_t>(s.counters[i]));
    }
    if (extra != nullptr) {
      for (const auto& [metric, value] : *extra) add(metric, value);
    }
    if (rows_ >= options_.max_batch_samples ||
        clock_.Now() - batch_started_ >= options_.max_batch_age) {
      Flush();
    }
  }

  void SendCaseDone(v1::CaseDone cd) {
    if (!oversized_.empty()) return;
    if (!Keep(spool_.PutCaseDone(cd))) return;
    v1::AgentMessage m;
    *m.mutable_case_done() = std::move(cd);
    sink_.Send(m);
  }

  std::uint32_t CaseIndex(std::uint16_t workload_index) const {
    return workload_index < a_.cases_size() ? a_.cases(workload_index).index() : workload_index;
  }
  // A result that cannot be spooled could be lost: stop the run rather than pretend. A message too
  // large to send is the job's fault: it is neither spooled nor sent (it would wedge the spool),
  // the run stops and fails as a workload failure. Returns whether to send the message.
  bool Keep(const Status& s) {
    if (s) return true;
    if (s.error().code == ErrorCode::kResourceExhausted) {
      if (oversized_.empty()) {
        oversized_ = s.error().message;
        spdlog::warn("{}: {}: stopping the run", log_prefix_, oversized_);
        cancel_.Cancel(CancelReason::kAgentFault);
      }
      return false;
    }
    if (!spool_error_.empty()) return true;
    spool_error_ = s.error().message;
    spdlog::error("{}: cannot spool results, stopping the run: {}", log_prefix_, spool_error_);
    cancel_.Cancel(CancelReason::kAgentFault);
    return true;
  }

  const v1::Assignment& a_;
  const AgentPlan& plan_;
  RunProvenance prov_;
  std::uint32_t clock_hz_ = 0;    // the runner's clock (Hello)
  bool to_instructions_ = false;  // the timer's ticks are reported as instructions (Timer)
  const std::string workload_sha256_;
  const std::uint32_t seed_;
  Spool& spool_;
  RunSink& sink_;
  Clock& clock_;
  CancelToken& cancel_;
  const ExecutorOptions& options_;
  const std::string log_prefix_;
  const AgentPass* pass_ = nullptr;
  bool started_sent_ = false;
  std::vector<std::uint32_t> runner_metrics_;  // per runner counter of this pass
  std::vector<SampleMsg> held_samples_;
  std::vector<std::pair<std::uint16_t, v1::CaseDone>> held_cases_;  // (workload case, message)
  v1::CaseDone pending_;    // the open case's ops and memory
  v1::AgentMessage batch_;  // the open batch, in the message it is spooled and sent in
  std::size_t rows_ = 0;    // its sample rows
  Clock::TimePoint batch_started_{};
  std::uint64_t next_seq_;
  std::uint64_t samples_ = 0;
  std::string spool_error_;
  std::string oversized_;  // why a message was too large to send: the job's failure

  std::string note_extra_;

 public:
  // Appended to the provenance note (a model job's input: given or seeded).
  void set_note_extra(std::string s) { note_extra_ = std::move(s); }
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

// A model job (op "model"): the blob (model, or model + input) from the cache, wrapped in a
// custom workload for the board's own TFLite runner; `reference` gets the output checksum of the
// same interpreter on this host.
Result<std::vector<std::uint8_t>> PrepareModel(const v1::Assignment& a, Board& board,
                                               const ExecutorOptions& options, std::uint32_t seed,
                                               std::vector<WorkloadCase>& cases,
                                               std::filesystem::path& firmware,
                                               std::uint32_t& reference) {
  if (board.Info().model_runner.empty()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "board " + board.Info().name +
                         " has no model runner: set model_runner (mculab-tflite-runner-<port>) "
                         "for it in the agent's configuration");
  }
  if (a.blob_sha256().empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "a model job without its model");
  }
  if (options.artifacts == nullptr) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "this agent has no artifact cache, so it cannot fetch models");
  }
  auto path = options.artifacts->Get(a.blob_sha256());
  if (!path) {
    return MakeError(path.error().code,
                     "cannot get the model " + a.blob_sha256() + ": " + path.error().message);
  }
  auto bytes = ReadFile(*path);
  if (!bytes) return MakeError(ErrorCode::kInternal, bytes.error().message);
  std::vector<std::uint8_t> blob(bytes->begin(), bytes->end());
  if (options.model_reference == nullptr) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "this agent cannot check a model's output (no mculab-model-reference)");
  }
  auto expected = options.model_reference->Checksum(blob, seed);
  if (!expected) {
    // What the model made its reference run do fails the job; the agent's own trouble is infra.
    return MakeError(expected.error().code == ErrorCode::kInternal ? ErrorCode::kInternal
                                                                   : ErrorCode::kInvalidArgument,
                     expected.error().message);
  }
  reference = *expected;
  firmware = board.Info().model_runner;
  const std::int64_t ids[1] = {a.cases_size() > 0 ? a.cases(0).id() : 0};
  cases.push_back(WorkloadCase{ids[0], {}});
  std::vector<std::uint8_t> out(mculab_workload_custom_blob_offset(1) + blob.size());
  const std::size_t written =
      mculab_workload_write_custom(out.data(), out.size(), seed, ids, 1, blob.data(), blob.size());
  if (written == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "cannot build the model's workload (" +
                                                      std::to_string(blob.size()) + "-byte blob)");
  }
  out.resize(written);
  return out;
}

// Provenance of a model job's input: the file's bytes given with the model, or the pattern.
std::string ModelInputNote(const v1::Assignment& a, const ExecutorOptions& options,
                           std::uint32_t seed) {
  auto path = options.artifacts->Get(a.blob_sha256());
  auto bytes = path ? ReadFile(*path) : Result<std::string>(path.error());
  if (!bytes) return {};
  mculab_tfl_blob blob;
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes->data());
  if (mculab_tfl_unpack(data, bytes->size(), &blob) != 0) return {};
  if (blob.input == nullptr) {
    return fmt::format("model {} bytes, input seeded (xorshift32 from seed {})", blob.model_len,
                       seed);
  }
  return fmt::format("model {} bytes, input given ({} bytes, SHA-256 {})", blob.model_len,
                     blob.input_len,
                     Sha256Hex(std::span<const std::uint8_t>(blob.input, blob.input_len)));
}

}  // namespace

v1::RunFinished FinishUnstartedRun(std::uint64_t run_id, v1::RunFinished::Outcome outcome,
                                   const std::string& message, Spool& spool, RunSink& sink) {
  if (auto s = spool.BeginRun(run_id); !s) {
    spdlog::error("run {}: {}", run_id, s.error().message);
  }
  return Finish(run_id, outcome, message, spool.NextSequence(run_id), spool, sink);
}

std::uint32_t WorkloadFlagsOf(const v1::Assignment& a) {
  return a.reference_kernels() ? MCULAB_WORKLOAD_REFERENCE_KERNELS : 0u;
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

  const bool model = a.op() == kModelOp;
  const bool custom = !model && (!a.firmware_sha256().empty() || a.op() == "custom");
  const std::uint32_t seed = a.seed() != 0 ? a.seed() : kDefaultSeed;
  if (a.iterations() == 0) return workload_failed("iterations must be at least 1");
  std::vector<WorkloadCase> cases;
  std::uint16_t op_id = MCULAB_OP_CUSTOM;
  Result<std::vector<std::uint8_t>> workload = std::vector<std::uint8_t>{};
  std::filesystem::path firmware;  // a custom runner from the artifact cache
  std::optional<std::uint32_t> model_checksum;
  std::string model_note;
  if (model) {
    std::uint32_t reference = 0;
    auto prepared = PrepareModel(a, board, options, seed, cases, firmware, reference);
    if (!prepared) {
      if (prepared.error().code == ErrorCode::kUnavailable ||
          prepared.error().code == ErrorCode::kInternal) {
        spdlog::warn("{}: {}", prefix, prepared.error().message);
        return Finish(run_id, v1::RunFinished::INFRA_FAILED, prepared.error().message,
                      spool.NextSequence(run_id), spool, sink);
      }
      return workload_failed(prepared.error().message);
    }
    model_checksum = reference;
    workload = std::move(*prepared);
    model_note = ModelInputNote(a, options, seed);
  } else if (custom) {
    auto prepared = PrepareCustom(a, board, options, seed, cases, firmware);
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
  if (workload && !custom) SetWorkloadFlags(*workload, WorkloadFlagsOf(a));
  if (!workload) return workload_failed("cannot build the workload: " + workload.error().message);
  const std::string workload_sha = Sha256Hex(std::span<const std::uint8_t>(*workload));
  const auto workload_built = clock.Now();
  std::optional<Clock::TimePoint> runner_started;  // the first pass's (dispatch latency)

  const AgentPlan plan = PlanOf(a, board.Info());
  RunReporter reporter(a, plan, workload_sha, seed, spool, sink, clock, cancel, options, prefix);
  reporter.set_note_extra(model_note);
  SessionResult result;
  auto outcome = v1::RunFinished::SUCCEEDED;
  std::string message;
  const auto whole =
      a.timeout_s() != 0 ? std::chrono::seconds(a.timeout_s()) : board.Info().default_timeout;
  for (const AgentPass& pass : plan.passes) {
    RunSpec spec;
    spec.run_id = run_id;
    spec.workload = *workload;
    spec.timeout = whole;
    spec.emulated_events = pass.emulated_events;
    spec.firmware = firmware;
    spec.own_runner = model;
    if (cancel.cancelled()) {
      return Finish(run_id,
                    cancel.reason() == CancelReason::kByServer ? v1::RunFinished::CANCELLED
                                                               : v1::RunFinished::INFRA_FAILED,
                    "stopped before the runner started", reporter.batches(), spool, sink);
    }
    auto runner = board.Start(spec);
    if (!runner) {
      spdlog::warn("{}: the board failed to start the runner: {}", prefix, runner.error().message);
      return Finish(run_id, v1::RunFinished::INFRA_FAILED,
                    "board " + board.Info().name + ": " + runner.error().message,
                    reporter.batches(), spool, sink);
    }
    if (!runner_started) runner_started = clock.Now();
    SendState(sink, run_id, "running",
              plan.passes.size() > 1
                  ? fmt::format("pass {} of {}", pass.index + 1, plan.passes.size())
                  : std::string());

    SessionConfig sc;
    sc.op = op_id;
    sc.cases = cases;
    sc.seed = seed;
    sc.iterations = a.iterations();
    sc.warmup = a.warmup();
    sc.workload_len = static_cast<std::uint32_t>(spec.workload.size());
    sc.events = pass.runner_events;
    sc.profile_ops = a.profile_ops();
    sc.report_memory = a.report_memory();
    sc.custom_runner = !spec.firmware.empty() && !model;
    sc.model_checksum = model_checksum;
    sc.hello_timeout = options.hello_timeout;
    sc.run_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(spec.timeout) -
                     std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now() - started);
    sc.abort_grace = options.abort_grace;
    sc.log_prefix = prefix;
    reporter.BeginPass(pass, (*runner)->provenance());
    result = RunSession(**runner, clock, sc, reporter, cancel);
    outcome = ToProto(result.outcome);
    message = result.message;
    if (Status merged = reporter.EndPass(**runner, result.outcome == RunOutcome::kSucceeded);
        !merged.ok()) {
      outcome = v1::RunFinished::INFRA_FAILED;
      message = merged.error().message;
    }
    runner->reset();  // the runner is gone and its temp files removed before RunFinished
    if (outcome != v1::RunFinished::SUCCEEDED) {
      if (plan.passes.size() > 1) message = fmt::format("pass {}: {}", pass.index, message);
      break;
    }
  }
  reporter.Flush();

  if (!reporter.oversized().empty()) {
    outcome = v1::RunFinished::WORKLOAD_FAILED;
    message = reporter.oversized();
  } else if (!reporter.spool_error().empty()) {
    outcome = v1::RunFinished::INFRA_FAILED;
    message = "the agent cannot spool results: " + reporter.spool_error();
  }
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now() - started);
  auto us = [&, from = options.received_at.value_or(started)](Clock::TimePoint t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t - from).count();
  };
  spdlog::info(
      "{}: {} in {} ms (after the assignment arrived: run began at {} us, workload built at {} us, "
      "runner started at {} us; runner HELLO at {} ms, DONE at {} ms, gone at {} ms): {} samples "
      "in "
      "{} batches{}{}",
      prefix, v1::RunFinished::Outcome_Name(outcome), ms.count(), us(started), us(workload_built),
      runner_started ? us(*runner_started) : -1, result.stats.to_hello.count(),
      result.stats.to_done.count(), result.stats.to_exit.count(), reporter.samples(),
      reporter.batches(), message.empty() ? "" : ": ", message);
  return Finish(run_id, outcome, message, reporter.batches(), spool, sink);
}

}  // namespace mculab::agent
