#include "agent/run/run_reporter.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "agent/boards/region_counts.h"
#include "agent/runner/elf_memory.h"
#include "common/crash_point.h"
#include "common/kernel_set.h"
#include "common/units.h"

namespace mculab::agent {

RunReporter::RunReporter(const RunAssignment& a, const AgentPlan& plan, std::string workload_sha256,
                         std::uint32_t seed, Spool& spool, RunSink& sink, Clock& clock,
                         CancelToken& cancel, BatchLimits limits, std::string log_prefix)
    : a_(a),
      plan_(plan),
      workload_sha256_(std::move(workload_sha256)),
      seed_(seed),
      spool_(spool),
      sink_(sink),
      clock_(clock),
      cancel_(cancel),
      limits_(limits),
      log_prefix_(std::move(log_prefix)),
      next_seq_(spool.NextSequence(a.run_id)) {}

void RunReporter::BeginPass(const AgentPass& pass, const RunProvenance& prov) {
  Flush();
  pass_ = &pass;
  prov_ = prov;
  held_samples_.clear();
  held_cases_.clear();
  runner_metrics_.clear();
  pending_ = CaseDoneRecord();
}

void RunReporter::OnStarted(const Hello& h, const std::vector<std::string>& counters) {
  // Under QEMU -icount the runner's clock ticks count virtual time: reported as executed
  // instructions, the unit every emulated board shares (each board's clock differs).
  clock_hz_ = h.clock_hz;
  to_instructions_ = prov_.icount_shift >= 0 && h.clock_hz > 0 && h.timer_unit == "cycles";
  runner_metrics_.clear();
  for (const auto& c : counters) runner_metrics_.push_back(plan_.Metric(c));
  spdlog::info("{}: pass {}: runner {} {} on {} ({}{}), counters: {}{}", log_prefix_, pass_->index,
               h.port, h.version(), h.cpu, h.timer_unit, h.emulated ? ", emulated" : "",
               counters.empty() ? "timer only" : fmt::format("{}", fmt::join(counters, ",")),
               pass_->emulated_events.empty()
                   ? ""
                   : fmt::format("; emulated: {}", fmt::join(pass_->emulated_events, ",")));
  if (started_sent_) return;
  started_sent_ = true;
  RunStartedRecord rs;
  rs.run_id = a_.run_id;
  // A runtime other than the built-in one (a TFLite runner's kernels, a custom runtime) is part of
  // what ran: "1.2.0 (tflite-helium)"; kernel_set says which kernels it ran.
  rs.runner_version = h.runtime.empty() || h.runtime == "builtin"
                          ? h.version()
                          : h.version() + " (" + h.runtime + ")";
  rs.port = h.port;
  rs.cpu = h.cpu;
  rs.clock_hz = h.clock_hz;
  rs.emulated = h.emulated || prov_.emulated;
  rs.timer_unit = to_instructions_ ? std::string(kInstructionsUnit) : h.timer_unit;
  rs.counters = plan_.counters;
  rs.firmware_sha256 = prov_.firmware_sha256;
  rs.workload_sha256 = workload_sha256_;
  rs.toolchain = prov_.toolchain;
  rs.board_serial = prov_.board_serial;
  rs.note = note_extra_.empty() ? prov_.note : prov_.note + "; " + note_extra_;
  rs.seed = seed_;
  rs.kernel_set = KernelSetRan(h.runtime);
  if (!prov_.firmware_path.empty()) {
    if (auto mem = ReadElfMemory(prov_.firmware_path); mem.ok()) {
      for (const MemoryItem& item : *mem) {
        rs.firmware_memory.push_back(MemoryFigureRecord{-1, "elf", item.category, item.bytes, 0});
      }
    } else {
      spdlog::warn("{}: no memory report from the ELF: {}", log_prefix_, mem.error().message);
    }
  }
  if (!Keep(spool_.PutStarted(rs))) return;
  sink_.Send(std::move(rs));
}

void RunReporter::OnSample(const SampleMsg& sample) {
  ++samples_;
  SampleMsg s = sample;
  s.timer = Timer(s.timer);
  if (!pass_->emulated_events.empty()) {
    held_samples_.push_back(std::move(s));
    return;
  }
  AddSample(s, nullptr);
}

std::uint64_t RunReporter::Timer(std::uint64_t ticks) const {
  return to_instructions_ ? EmulatedInstructions(ticks, clock_hz_, prov_.icount_shift) : ticks;
}

void RunReporter::OnOpSample(const OpSample& op) {
  OpProfileRecord& p = pending_.ops.emplace_back();
  p.op_index = op.op_index;
  p.type = op.type;
  p.name = op.name;
  p.count = op.count;
  p.unclosed = op.unclosed;
  auto add = [&](std::uint32_t metric, const OpMetric& v) {
    p.metrics.push_back(OpMetricRecord{metric, op.count, v.sum, v.min, v.max});
  };
  if (pass_->index == 0) {  // the timer as pass 0 measured it
    add(0, OpMetric{Timer(op.timer.sum), Timer(op.timer.min), Timer(op.timer.max)});
  }
  for (std::size_t k = 0; k < op.counters.size() && k < runner_metrics_.size(); ++k) {
    if (runner_metrics_[k] != 0) add(runner_metrics_[k], op.counters[k]);
  }
}

void RunReporter::OnMemory(const MemoryReport& mem) {
  if (pass_->index != 0) return;  // the same in every pass: reported once
  for (const MemoryEntry& e : mem.entries) {
    pending_.memory.push_back(
        MemoryFigureRecord{static_cast<std::int32_t>(CaseIndex(mem.case_index)), "runner",
                           e.category, e.used, e.reserved});
  }
}

void RunReporter::OnCaseEnd(const CaseResult& r) {
  CrashPoint(crash_points::kAgentMidRun);
  if (!batch_.rows.empty() && clock_.Now() - batch_started_ >= limits_.max_age) Flush();
  CaseDoneRecord cd = std::move(pending_);
  pending_ = CaseDoneRecord();
  cd.run_id = a_.run_id;
  cd.case_index = CaseIndex(r.case_index);
  cd.checksum = r.checksum;
  cd.expected_checksum = r.expected;
  cd.checksum_ok = r.checksum_ok;
  cd.checksum_unverified = !r.verified;
  cd.overhead = static_cast<std::int64_t>(Timer(r.overhead));
  cd.pass = pass_->index;
  for (auto v : r.counter_overhead) cd.counter_overhead.push_back(static_cast<std::int64_t>(v));
  if (!pass_->emulated_events.empty()) {
    held_cases_.push_back({r.case_index, std::move(cd)});
    return;
  }
  SendCaseDone(std::move(cd));
}

Status RunReporter::EndPass(RunnerProcess& runner, bool session_ok) {
  if (pass_->emulated_events.empty()) {
    Flush();
    return {};
  }
  if (!session_ok) return {};  // the run failed anyway; nothing half-merged is sent
  auto counts = runner.EmulatedCounts();
  if (!counts.ok()) return counts.error();
  std::vector<int> column(pass_->emulated_events.size(), -1);
  for (std::size_t e = 0; e < column.size(); ++e) {
    auto it = std::find(counts->columns.begin(), counts->columns.end(), pass_->emulated_events[e]);
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
      extra.push_back({pass_->emulated_metrics[e],
                       static_cast<std::int64_t>((*values)[static_cast<std::size_t>(column[e])])});
    }
    AddSample(s, &extra);
  }
  const auto ops = AggregateOps(*counts);
  for (auto& [workload_case, cd] : held_cases_) {
    for (OpProfileRecord& op : cd.ops) {
      auto it = ops.find({workload_case, op.op_index});
      if (it == ops.end()) continue;
      for (std::size_t e = 0; e < column.size(); ++e) {
        const auto c = static_cast<std::size_t>(column[e]);
        op.metrics.push_back(OpMetricRecord{pass_->emulated_metrics[e], it->second.count,
                                            it->second.sum[c], it->second.min[c],
                                            it->second.max[c]});
      }
    }
    SendCaseDone(std::move(cd));
  }
  held_cases_.clear();
  held_samples_.clear();
  Flush();
  return {};
}

void RunReporter::OnLog(const LogMsg& log) {
  spdlog::log(log.level >= 3   ? spdlog::level::err
              : log.level == 2 ? spdlog::level::warn
              : log.level == 1 ? spdlog::level::info
                               : spdlog::level::debug,
              "{}: runner says: {}", log_prefix_, log.text);
}

void RunReporter::OnError(const ErrorMsg& e) {
  spdlog::log(e.code == MCULAB_ERR_ABORTED ? spdlog::level::info : spdlog::level::warn,
              "{}: runner error {} (case {}): {}", log_prefix_, e.code_name(),
              e.case_index == MCULAB_NO_CASE ? std::string("-") : std::to_string(e.case_index),
              e.text);
}

void RunReporter::Flush() {
  if (batch_.rows.empty()) return;
  SampleBatchRecord b = std::move(batch_);
  batch_ = SampleBatchRecord();
  if (!oversized_.empty()) return;  // the run is failing: nothing after the refused message
  b.run_id = a_.run_id;
  b.sequence = next_seq_;
  b.pass = pass_ != nullptr ? pass_->index : a_.pass;
  b.as_columns = a_.sample_columns;
  if (!Keep(spool_.PutBatch(b))) return;
  ++next_seq_;
  sink_.Send(std::move(b));
}

void RunReporter::AddSample(const SampleMsg& s,
                            const std::vector<std::pair<std::uint32_t, std::int64_t>>* extra) {
  if (batch_.rows.empty()) {
    batch_started_ = clock_.Now();
    batch_.rows.reserve(limits_.max_samples);
  }
  const std::uint32_t case_index = CaseIndex(s.case_index);
  auto add = [&](std::uint32_t metric, std::int64_t value) {
    batch_.rows.push_back(SampleRow{case_index, s.iteration, metric, value});
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
  if (batch_.rows.size() >= limits_.max_samples ||
      clock_.Now() - batch_started_ >= limits_.max_age) {
    Flush();
  }
}

void RunReporter::SendCaseDone(CaseDoneRecord cd) {
  if (!oversized_.empty()) return;
  if (!Keep(spool_.PutCaseDone(cd))) return;
  sink_.Send(std::move(cd));
}

std::uint32_t RunReporter::CaseIndex(std::uint16_t workload_index) const {
  return workload_index < a_.cases.size() ? a_.cases[workload_index].index : workload_index;
}

// A result that cannot be spooled could be lost: stop the run rather than pretend. A message too
// large to send is the job's fault: it is neither spooled nor sent (it would wedge the spool), the
// run stops and fails as a workload failure. Returns whether to send the message.
bool RunReporter::Keep(const Status& s) {
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

}  // namespace mculab::agent
