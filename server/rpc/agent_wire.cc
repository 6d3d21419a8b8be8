#include "server/rpc/agent_wire.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <type_traits>

#include "proto/run_outcome.h"

namespace mculab::server::rpc {

namespace v1 = mculab::v1;

namespace {

template <typename Figures>
std::vector<MemoryFigure> MemoryFromProto(RunId run, const Figures& figures) {
  std::vector<MemoryFigure> out;
  out.reserve(static_cast<std::size_t>(figures.size()));
  for (const auto& f : figures) {
    out.push_back(
        MemoryFigure{run, f.case_index(), f.source(), f.category(), f.used(), f.reserved()});
  }
  return out;
}

BoardUnits UnitsFromProto(const v1::BoardInfo& b) {
  BoardUnits out;
  out.board = b.name();
  for (const auto& u : b.counter_units()) {
    CounterUnit unit;
    unit.name = u.name();
    unit.max_simultaneous = u.max_simultaneous();
    unit.events.assign(u.events().begin(), u.events().end());
    out.units.push_back(std::move(unit));
    out.emulated.push_back(u.emulated());
  }
  return out;
}

RunStartedReport RunStartedFromProto(const v1::RunStarted& m) {
  RunStartedReport out;
  out.run = static_cast<RunId>(m.run_id());
  Provenance& p = out.provenance;
  p.runner_version = m.runner_version();
  p.port = m.port();
  p.cpu = m.cpu();
  p.clock_hz = m.clock_hz();
  p.emulated = m.emulated();
  p.timer_unit = m.timer_unit();
  p.counters.assign(m.counters().begin(), m.counters().end());
  p.firmware_sha256 = m.firmware_sha256();
  p.workload_sha256 = m.workload_sha256();
  p.toolchain = m.toolchain();
  p.board_serial = m.board_serial();
  p.note = m.note();
  p.seed = m.seed();
  p.kernel_set = m.kernel_set();
  out.firmware_memory = MemoryFromProto(out.run, m.firmware_memory());
  return out;
}

SampleBatchReport BatchFromProto(const v1::SampleBatch& m) {
  SampleBatchReport out;
  out.run = static_cast<RunId>(m.run_id());
  out.sequence = m.sequence();
  out.pass = m.pass();
  const int columns = m.value_size();
  out.samples.reserve(static_cast<std::size_t>(m.samples_size() + columns));
  for (const auto& s : m.samples()) {
    out.samples.push_back(Sample{m.pass(), s.case_index(), s.iteration(), s.metric(), s.value()});
  }
  // The column form. Every agent sends columns of one length; should one be short, the rows it
  // cannot describe are left out (logged), never read past its end.
  const int rows = std::min({m.case_index_size(), m.iteration_size(), m.metric_size(), columns});
  if (rows != std::max({m.case_index_size(), m.iteration_size(), m.metric_size(), columns})) {
    spdlog::error("batch {} of run {}: sample columns of different lengths; {} rows kept",
                  m.sequence(), m.run_id(), rows);
  }
  for (int i = 0; i < rows; ++i) {
    out.samples.push_back(
        Sample{m.pass(), m.case_index(i), m.iteration(i), m.metric(i), m.value(i)});
  }
  return out;
}

CaseDoneReport CaseDoneFromProto(const v1::CaseDone& m) {
  CaseDoneReport out;
  out.run = static_cast<RunId>(m.run_id());
  out.case_index = m.case_index();
  out.pass = m.pass();
  out.checksum = m.checksum();
  out.expected_checksum = m.expected_checksum();
  out.checksum_ok = m.checksum_ok();
  out.checksum_unverified = m.checksum_unverified();
  out.overhead = m.overhead();
  for (const auto& op : m.ops()) {
    for (const auto& metric : op.metrics()) {
      OpProfileRow r;
      r.run_id = out.run;
      r.pass = m.pass();
      r.case_index = m.case_index();
      r.op_index = op.op_index();
      r.metric = metric.metric();
      r.type = op.type();
      r.name = op.name();
      r.count = metric.count();
      r.sum = metric.sum();
      r.min = metric.min();
      r.max = metric.max();
      r.unclosed = op.unclosed();
      out.ops.push_back(std::move(r));
    }
  }
  out.memory = MemoryFromProto(out.run, m.memory());
  return out;
}

RunOutcome OutcomeFromProto(v1::RunFinished::Outcome o) {
  return proto::OutcomeFromWire<RunOutcome>(o);
}

}  // namespace

AgentRegistration RegistrationFromProto(const v1::Register& m) {
  AgentRegistration out;
  out.agent = m.agent();
  out.version = m.version();
  out.boards.reserve(static_cast<std::size_t>(m.boards_size()));
  for (const auto& b : m.boards()) {
    RegisteredBoard r;
    r.name = b.name();
    r.kind = b.kind();
    r.tags = std::map<std::string, std::string>(b.tags().begin(), b.tags().end());
    r.emulated = b.emulated();
    r.serial = b.serial();
    r.ram_bytes = b.ram_bytes();
    r.units = UnitsFromProto(b);
    r.offline = b.offline();
    r.custom_runners = b.custom_runners();
    r.custom_runners_off = b.custom_runners_off();
    out.boards.push_back(std::move(r));
  }
  out.active_runs.assign(m.active_runs().begin(), m.active_runs().end());
  return out;
}

AgentEvent EventFromProto(const v1::AgentMessage& m, const std::string& agent) {
  using M = v1::AgentMessage;
  switch (m.msg_case()) {
    case M::kHeartbeat:
      return AgentHeartbeat{m.heartbeat().stopping()};
    case M::kBoardStatus:
      return BoardStatusReport{m.board_status().board(), m.board_status().offline()};
    case M::kRunState: {
      const v1::RunState& s = m.run_state();
      if (s.state() == "preparing" || s.state() == "running") {
        return RunPhaseReport{static_cast<RunId>(s.run_id()),
                              s.state() == "preparing" ? RunState::kPreparing : RunState::kRunning,
                              s.message()};
      }
      spdlog::warn("agent {} reported run {} in unknown state '{}'", agent, s.run_id(), s.state());
      return AgentHeartbeat{};
    }
    case M::kRunStarted:
      return RunStartedFromProto(m.run_started());
    case M::kBatch:
      return BatchFromProto(m.batch());
    case M::kCaseDone:
      return CaseDoneFromProto(m.case_done());
    case M::kRunFinished: {
      const v1::RunFinished& f = m.run_finished();
      return RunFinishedReport{static_cast<RunId>(f.run_id()), OutcomeFromProto(f.outcome()),
                               f.message(), f.batches_sent()};
    }
    case M::kRegister:
      spdlog::warn("agent {} sent Register twice on one stream; ignored", agent);
      return AgentHeartbeat{};
    case M::MSG_NOT_SET:
      break;
  }
  spdlog::warn("agent {} sent an empty message", agent);
  return AgentHeartbeat{};
}

v1::ServerMessage ToProto(const AgentCommand& command) {
  v1::ServerMessage out;
  std::visit(
      [&](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, AgentRegistered>) {
          out.mutable_registered()->set_agent(c.agent);
          out.mutable_registered()->set_heartbeat_ms(c.heartbeat_ms);
        } else if constexpr (std::is_same_v<T, RunAssignment>) {
          v1::Assignment* a = out.mutable_assign();
          a->set_run_id(static_cast<std::uint64_t>(c.run));
          a->set_job_id(static_cast<std::uint64_t>(c.job));
          a->set_board(c.board);
          a->set_op(c.op);
          for (std::size_t i = 0; i < c.cases.size(); ++i) {
            v1::OpCase* oc = a->add_cases();
            oc->set_index(static_cast<std::uint32_t>(i));
            oc->set_id(c.cases[i].id);
            for (std::int32_t p : c.cases[i].params) oc->add_params(p);
          }
          a->set_iterations(c.iterations);
          a->set_warmup(c.warmup);
          a->set_timeout_s(c.timeout_s);
          a->set_pass(c.pass);
          for (const std::string& e : c.events) a->add_events(e);
          a->set_seed(c.seed);
          for (const PassAssignment& p : c.passes) {
            v1::PassSpec* ps = a->add_passes();
            ps->set_index(p.index);
            for (const std::string& e : p.events) ps->add_events(e);
          }
          a->set_profile_ops(c.profile_ops);
          a->set_report_memory(c.report_memory);
          a->set_firmware_sha256(c.firmware_sha256);
          a->set_blob_sha256(c.blob_sha256);
          a->set_reference_kernels(c.reference_kernels);
          a->set_sample_columns(true);  // BatchFromProto reads both forms
        } else if constexpr (std::is_same_v<T, RunCancel>) {
          out.mutable_cancel()->set_run_id(static_cast<std::uint64_t>(c.run));
          out.mutable_cancel()->set_reason(c.reason);
        } else if constexpr (std::is_same_v<T, BatchAck>) {
          out.mutable_ack()->set_run_id(static_cast<std::uint64_t>(c.run));
          out.mutable_ack()->set_sequence(c.sequence);
        } else {
          static_assert(std::is_same_v<T, RunClosed>);
          out.mutable_run_closed()->set_run_id(static_cast<std::uint64_t>(c.run));
        }
      },
      command);
  return out;
}

}  // namespace mculab::server::rpc
