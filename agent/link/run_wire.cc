#include "agent/link/run_wire.h"

#include <algorithm>
#include <type_traits>

#include "proto/run_outcome.h"

namespace mculab::agent {
namespace {

template <typename Repeated>
auto ToVector(const Repeated& r) {
  return std::vector<std::remove_cvref_t<decltype(*r.begin())>>(r.begin(), r.end());
}

void ToWire(const MemoryFigureRecord& m, v1::MemoryFigure& out) {
  out.set_case_index(m.case_index);
  out.set_source(m.source);
  out.set_category(m.category);
  out.set_used(m.used);
  out.set_reserved(m.reserved);
}

MemoryFigureRecord FromWire(const v1::MemoryFigure& m) {
  return MemoryFigureRecord{m.case_index(), m.source(), m.category(), m.used(), m.reserved()};
}

void ToWire(const RunStartedRecord& r, v1::RunStarted& out) {
  out.set_run_id(r.run_id);
  out.set_runner_version(r.runner_version);
  out.set_port(r.port);
  out.set_cpu(r.cpu);
  out.set_clock_hz(r.clock_hz);
  out.set_emulated(r.emulated);
  out.set_timer_unit(r.timer_unit);
  for (const auto& c : r.counters) out.add_counters(c);
  out.set_firmware_sha256(r.firmware_sha256);
  out.set_workload_sha256(r.workload_sha256);
  out.set_toolchain(r.toolchain);
  out.set_board_serial(r.board_serial);
  out.set_note(r.note);
  out.set_seed(r.seed);
  for (const auto& m : r.firmware_memory) ToWire(m, *out.add_firmware_memory());
  out.set_kernel_set(r.kernel_set);
}

RunStartedRecord FromWire(const v1::RunStarted& r) {
  RunStartedRecord out;
  out.run_id = r.run_id();
  out.runner_version = r.runner_version();
  out.port = r.port();
  out.cpu = r.cpu();
  out.clock_hz = r.clock_hz();
  out.emulated = r.emulated();
  out.timer_unit = r.timer_unit();
  out.counters = ToVector(r.counters());
  out.firmware_sha256 = r.firmware_sha256();
  out.workload_sha256 = r.workload_sha256();
  out.toolchain = r.toolchain();
  out.board_serial = r.board_serial();
  out.note = r.note();
  out.seed = r.seed();
  for (const auto& m : r.firmware_memory()) out.firmware_memory.push_back(FromWire(m));
  out.kernel_set = r.kernel_set();
  return out;
}

void ToWire(const CaseDoneRecord& c, v1::CaseDone& out) {
  out.set_run_id(c.run_id);
  out.set_case_index(c.case_index);
  out.set_checksum(c.checksum);
  out.set_expected_checksum(c.expected_checksum);
  out.set_checksum_ok(c.checksum_ok);
  out.set_overhead(c.overhead);
  for (auto v : c.counter_overhead) out.add_counter_overhead(v);
  out.set_pass(c.pass);
  for (const OpProfileRecord& op : c.ops) {
    v1::OpProfile& p = *out.add_ops();
    p.set_op_index(op.op_index);
    p.set_type(op.type);
    p.set_name(op.name);
    p.set_count(op.count);
    p.set_unclosed(op.unclosed);
    for (const OpMetricRecord& m : op.metrics) {
      v1::OpMetric& pm = *p.add_metrics();
      pm.set_metric(m.metric);
      pm.set_count(m.count);
      pm.set_sum(m.sum);
      pm.set_min(m.min);
      pm.set_max(m.max);
    }
  }
  for (const auto& m : c.memory) ToWire(m, *out.add_memory());
  out.set_checksum_unverified(c.checksum_unverified);
}

CaseDoneRecord FromWire(const v1::CaseDone& c) {
  CaseDoneRecord out;
  out.run_id = c.run_id();
  out.case_index = c.case_index();
  out.checksum = c.checksum();
  out.expected_checksum = c.expected_checksum();
  out.checksum_ok = c.checksum_ok();
  out.overhead = c.overhead();
  out.counter_overhead = ToVector(c.counter_overhead());
  out.pass = c.pass();
  for (const v1::OpProfile& p : c.ops()) {
    OpProfileRecord& op = out.ops.emplace_back();
    op.op_index = p.op_index();
    op.type = p.type();
    op.name = p.name();
    op.count = p.count();
    op.unclosed = p.unclosed();
    for (const v1::OpMetric& m : p.metrics()) {
      op.metrics.push_back(OpMetricRecord{m.metric(), m.count(), m.sum(), m.min(), m.max()});
    }
  }
  for (const auto& m : c.memory()) out.memory.push_back(FromWire(m));
  out.checksum_unverified = c.checksum_unverified();
  return out;
}

void ToWire(const SampleBatchRecord& b, v1::SampleBatch& out) {
  out.set_run_id(b.run_id);
  out.set_sequence(b.sequence);
  out.set_pass(b.pass);
  const int n = static_cast<int>(b.rows.size());
  if (b.as_columns) {
    out.mutable_case_index()->Reserve(n);
    out.mutable_iteration()->Reserve(n);
    out.mutable_metric()->Reserve(n);
    out.mutable_value()->Reserve(n);
    for (const SampleRow& r : b.rows) {
      out.add_case_index(r.case_index);
      out.add_iteration(r.iteration);
      out.add_metric(r.metric);
      out.add_value(r.value);
    }
    return;
  }
  out.mutable_samples()->Reserve(n);
  for (const SampleRow& r : b.rows) {
    v1::Sample& s = *out.add_samples();  // a server that reads only the row form
    s.set_case_index(r.case_index);
    s.set_iteration(r.iteration);
    s.set_metric(r.metric);
    s.set_value(r.value);
  }
}

SampleBatchRecord FromWire(const v1::SampleBatch& b) {
  SampleBatchRecord out;
  out.run_id = b.run_id();
  out.sequence = b.sequence();
  out.pass = b.pass();
  out.as_columns = b.samples_size() == 0 && b.value_size() > 0;
  for (const v1::Sample& s : b.samples()) {
    out.rows.push_back(SampleRow{s.case_index(), s.iteration(), s.metric(), s.value()});
  }
  const int n =
      std::min({b.case_index_size(), b.iteration_size(), b.metric_size(), b.value_size()});
  for (int i = 0; i < n; ++i) {
    out.rows.push_back(SampleRow{b.case_index(i), b.iteration(i), b.metric(i), b.value(i)});
  }
  return out;
}

}  // namespace

RunAssignment FromWire(const v1::Assignment& a) {
  RunAssignment out;
  out.run_id = a.run_id();
  out.job_id = a.job_id();
  out.board = a.board();
  out.op = a.op();
  for (const v1::OpCase& c : a.cases()) {
    out.cases.push_back(RunCase{c.index(), c.id(), ToVector(c.params())});
  }
  out.iterations = a.iterations();
  out.warmup = a.warmup();
  out.timeout_s = a.timeout_s();
  out.pass = a.pass();
  out.events = ToVector(a.events());
  out.seed = a.seed();
  for (const v1::PassSpec& p : a.passes()) {
    out.passes.push_back(RunPass{p.index(), ToVector(p.events())});
  }
  out.profile_ops = a.profile_ops();
  out.report_memory = a.report_memory();
  out.firmware_sha256 = a.firmware_sha256();
  out.blob_sha256 = a.blob_sha256();
  out.sample_columns = a.sample_columns();
  out.reference_kernels = a.reference_kernels();
  return out;
}

v1::RunFinished::Outcome ToWire(RunOutcome o) { return proto::OutcomeToWire(o); }

RunOutcome FromWire(v1::RunFinished::Outcome o) { return proto::OutcomeFromWire<RunOutcome>(o); }

v1::AgentMessage ToWire(const RunMessage& message) {
  v1::AgentMessage m;
  std::visit(
      [&](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, RunStartedRecord>) {
          ToWire(r, *m.mutable_run_started());
        } else if constexpr (std::is_same_v<T, CaseDoneRecord>) {
          ToWire(r, *m.mutable_case_done());
        } else if constexpr (std::is_same_v<T, SampleBatchRecord>) {
          ToWire(r, *m.mutable_batch());
        } else if constexpr (std::is_same_v<T, RunFinishedRecord>) {
          v1::RunFinished& f = *m.mutable_run_finished();
          f.set_run_id(r.run_id);
          f.set_outcome(ToWire(r.outcome));
          f.set_message(r.message);
          f.set_batches_sent(r.batches_sent);
        } else {
          v1::RunState& s = *m.mutable_run_state();
          s.set_run_id(r.run_id);
          s.set_state(r.state);
          s.set_message(r.message);
        }
      },
      message);
  return m;
}

std::optional<RunMessage> RunMessageFromWire(const v1::AgentMessage& m) {
  switch (m.msg_case()) {
    case v1::AgentMessage::kRunStarted:
      return FromWire(m.run_started());
    case v1::AgentMessage::kCaseDone:
      return FromWire(m.case_done());
    case v1::AgentMessage::kBatch:
      return FromWire(m.batch());
    case v1::AgentMessage::kRunFinished: {
      const v1::RunFinished& f = m.run_finished();
      return RunFinishedRecord{f.run_id(), FromWire(f.outcome()), f.message(), f.batches_sent()};
    }
    case v1::AgentMessage::kRunState:
      return RunStateRecord{m.run_state().run_id(), m.run_state().state(), m.run_state().message()};
    default:
      return std::nullopt;
  }
}

}  // namespace mculab::agent
