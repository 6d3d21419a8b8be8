// agent.proto's messages <-> the Lab's agent events and commands (server/rpc/agent_wire.h): what
// each field becomes, and what a message the Lab has no use for turns into.
#include "server/rpc/agent_wire.h"

#include <gtest/gtest.h>

#include <variant>

namespace mculab::server::rpc {
namespace {

namespace v1 = mculab::v1;

TEST(AgentWire, RegistrationKeepsBoardsTagsUnitsAndActiveRuns) {
  v1::Register m;
  m.set_agent("lab-1");
  m.set_version("1.2");
  m.add_active_runs(7);
  v1::BoardInfo* b = m.add_boards();
  b->set_name("an547-0");
  b->set_kind("corstone300-qemu");
  (*b->mutable_tags())["cpu"] = "cortex-m55";
  b->set_emulated(true);
  b->set_serial("SN1");
  b->set_ram_bytes(4096);
  b->set_offline("probe unplugged");
  b->set_custom_runners_off("set allow_custom_runners");
  v1::CounterUnit* u = b->add_counter_units();
  u->set_name("qemu-plugin");
  u->set_max_simultaneous(4);
  u->add_events("instructions");
  u->add_events("loads");
  u->set_emulated(true);

  const AgentRegistration r = RegistrationFromProto(m);
  EXPECT_EQ(r.agent, "lab-1");
  EXPECT_EQ(r.version, "1.2");
  EXPECT_EQ(r.active_runs, std::vector<RunId>{7});
  ASSERT_EQ(r.boards.size(), 1u);
  const RegisteredBoard& board = r.boards[0];
  EXPECT_EQ(board.name, "an547-0");
  EXPECT_EQ(board.kind, "corstone300-qemu");
  EXPECT_EQ(board.tags.at("cpu"), "cortex-m55");
  EXPECT_TRUE(board.emulated);
  EXPECT_EQ(board.serial, "SN1");
  EXPECT_EQ(board.ram_bytes, 4096u);
  EXPECT_EQ(board.offline, "probe unplugged");
  EXPECT_FALSE(board.custom_runners);
  EXPECT_EQ(board.custom_runners_off, "set allow_custom_runners");
  ASSERT_EQ(board.units.units.size(), 1u);
  EXPECT_EQ(board.units.units[0].name, "qemu-plugin");
  EXPECT_EQ(board.units.units[0].max_simultaneous, 4u);
  EXPECT_EQ(board.units.units[0].events, (std::vector<std::string>{"instructions", "loads"}));
  EXPECT_EQ(board.units.emulated, std::vector<bool>{true});
}

TEST(AgentWire, BatchSamplesCarryTheBatchsPass) {
  v1::AgentMessage m;
  v1::SampleBatch* b = m.mutable_batch();
  b->set_run_id(3);
  b->set_sequence(9);
  b->set_pass(1);
  v1::Sample* s = b->add_samples();
  s->set_case_index(2);
  s->set_iteration(5);
  s->set_metric(1);
  s->set_value(-40);
  const AgentEvent e = EventFromProto(m, "lab-1");
  const auto* batch = std::get_if<SampleBatchReport>(&e);
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->run, 3);
  EXPECT_EQ(batch->sequence, 9u);
  EXPECT_EQ(batch->pass, 1u);
  ASSERT_EQ(batch->samples.size(), 1u);
  const Sample& got = batch->samples[0];
  EXPECT_EQ(got.pass, 1u);
  EXPECT_EQ(got.case_index, 2u);
  EXPECT_EQ(got.iteration, 5u);
  EXPECT_EQ(got.metric, 1u);
  EXPECT_EQ(got.value, -40);
}

TEST(AgentWire, BatchColumnsBecomeRowsAfterTheRowMessages) {
  v1::AgentMessage m;
  v1::SampleBatch* b = m.mutable_batch();
  b->set_run_id(3);
  b->set_sequence(9);
  b->set_pass(2);
  v1::Sample* s = b->add_samples();
  s->set_case_index(7);
  s->set_value(1);
  for (std::uint32_t i = 0; i < 3; ++i) {
    b->add_case_index(i);
    b->add_iteration(10 + i);
    b->add_metric(i % 2);
    b->add_value(-100 - static_cast<std::int64_t>(i));
  }
  const AgentEvent e = EventFromProto(m, "lab-1");
  const auto* batch = std::get_if<SampleBatchReport>(&e);
  ASSERT_NE(batch, nullptr);
  ASSERT_EQ(batch->samples.size(), 4u);
  EXPECT_EQ(batch->samples[0].case_index, 7u);
  for (std::uint32_t i = 0; i < 3; ++i) {
    const Sample& got = batch->samples[i + 1];
    EXPECT_EQ(got.pass, 2u);
    EXPECT_EQ(got.case_index, i);
    EXPECT_EQ(got.iteration, 10 + i);
    EXPECT_EQ(got.metric, i % 2);
    EXPECT_EQ(got.value, -100 - static_cast<std::int64_t>(i));
  }
}

TEST(AgentWire, BatchColumnsOfDifferentLengthsKeepOnlyTheRowsTheyAllDescribe) {
  v1::AgentMessage m;
  v1::SampleBatch* b = m.mutable_batch();
  for (int i = 0; i < 3; ++i) {
    b->add_case_index(1);
    b->add_iteration(static_cast<std::uint32_t>(i));
    b->add_value(i);
  }
  b->add_metric(0);
  b->add_metric(0);
  const AgentEvent e = EventFromProto(m, "lab-1");
  const auto* got = std::get_if<SampleBatchReport>(&e);
  ASSERT_NE(got, nullptr);
  ASSERT_EQ(got->samples.size(), 2u);
  EXPECT_EQ(got->samples[1].iteration, 1u);
}

TEST(AgentWire, AssignmentsSayTheServerReadsSampleColumns) {
  RunAssignment a;
  a.run = 5;
  EXPECT_TRUE(ToProto(AgentCommand{a}).assign().sample_columns());
}

TEST(AgentWire, CaseDoneOpProfilesBecomeOneRowPerOpAndMetric) {
  v1::AgentMessage m;
  v1::CaseDone* c = m.mutable_case_done();
  c->set_run_id(4);
  c->set_case_index(1);
  c->set_pass(2);
  c->set_checksum(0xabcd);
  c->set_expected_checksum(0xabce);
  c->set_overhead(12);
  v1::OpProfile* op = c->add_ops();
  op->set_op_index(0);
  op->set_type("CONV_2D");
  op->set_name("conv");
  op->set_unclosed(true);
  for (std::uint32_t metric : {0u, 1u}) {
    v1::OpMetric* om = op->add_metrics();
    om->set_metric(metric);
    om->set_count(3);
    om->set_sum(30 + metric);
    om->set_min(9);
    om->set_max(11);
  }
  v1::MemoryFigure* f = c->add_memory();
  f->set_case_index(1);
  f->set_source("runner");
  f->set_category("arena");
  f->set_used(100);
  f->set_reserved(128);

  const AgentEvent e = EventFromProto(m, "lab-1");
  const auto* done = std::get_if<CaseDoneReport>(&e);
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->run, 4);
  EXPECT_FALSE(done->checksum_ok);
  EXPECT_EQ(done->checksum, 0xabcdu);
  EXPECT_EQ(done->expected_checksum, 0xabceu);
  EXPECT_EQ(done->overhead, 12);
  ASSERT_EQ(done->ops.size(), 2u);
  for (std::uint32_t i = 0; i < 2; ++i) {
    const OpProfileRow& r = done->ops[i];
    EXPECT_EQ(r.run_id, 4);
    EXPECT_EQ(r.pass, 2u);
    EXPECT_EQ(r.case_index, 1u);
    EXPECT_EQ(r.metric, i);
    EXPECT_EQ(r.type, "CONV_2D");
    EXPECT_EQ(r.sum, 30u + i);
    EXPECT_TRUE(r.unclosed);
  }
  ASSERT_EQ(done->memory.size(), 1u);
  EXPECT_EQ(done->memory[0].run_id, 4);
  EXPECT_EQ(done->memory[0].category, "arena");
  EXPECT_EQ(done->memory[0].reserved, 128u);
}

TEST(AgentWire, RunStatesOtherThanPreparingOrRunningAreOnlyASignOfLife) {
  v1::AgentMessage m;
  m.mutable_run_state()->set_run_id(5);
  m.mutable_run_state()->set_state("running");
  AgentEvent e = EventFromProto(m, "lab-1");
  ASSERT_TRUE(std::holds_alternative<RunPhaseReport>(e));
  EXPECT_EQ(std::get<RunPhaseReport>(e).state, RunState::kRunning);

  m.mutable_run_state()->set_state("succeeded");
  e = EventFromProto(m, "lab-1");
  ASSERT_TRUE(std::holds_alternative<AgentHeartbeat>(e));
  EXPECT_FALSE(std::get<AgentHeartbeat>(e).stopping);
}

TEST(AgentWire, ASecondRegisterOrAnEmptyMessageIsOnlyASignOfLife) {
  v1::AgentMessage m;
  EXPECT_TRUE(std::holds_alternative<AgentHeartbeat>(EventFromProto(m, "lab-1")));
  m.mutable_register_()->set_agent("lab-1");
  EXPECT_TRUE(std::holds_alternative<AgentHeartbeat>(EventFromProto(m, "lab-1")));
  v1::AgentMessage stopping;
  stopping.mutable_heartbeat()->set_stopping(true);
  const AgentEvent e = EventFromProto(stopping, "lab-1");
  ASSERT_TRUE(std::holds_alternative<AgentHeartbeat>(e));
  EXPECT_TRUE(std::get<AgentHeartbeat>(e).stopping);
}

TEST(AgentWire, AnOutcomeThisServerDoesNotKnowIsAnInfrastructureFailure) {
  v1::AgentMessage m;
  m.mutable_run_finished()->set_run_id(6);
  m.mutable_run_finished()->set_outcome(static_cast<v1::RunFinished::Outcome>(42));
  m.mutable_run_finished()->set_batches_sent(3);
  const AgentEvent e = EventFromProto(m, "lab-1");
  const auto* f = std::get_if<RunFinishedReport>(&e);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->outcome, RunOutcome::kInfraFailed);
  EXPECT_EQ(f->batches_sent, 3u);
  m.mutable_run_finished()->set_outcome(v1::RunFinished::WORKLOAD_FAILED);
  EXPECT_EQ(std::get<RunFinishedReport>(EventFromProto(m, "lab-1")).outcome,
            RunOutcome::kWorkloadFailed);
}

TEST(AgentWire, AssignmentNumbersCasesByPositionAndKeepsThePasses) {
  RunAssignment a;
  a.run = 11;
  a.job = 10;
  a.board = "host-0";
  a.op = "conv2d_s8";
  a.cases = {CaseSpec{100, {1, 2}}, CaseSpec{200, {3}}};
  a.iterations = 50;
  a.warmup = 5;
  a.timeout_s = 60;
  a.events = {"instructions"};
  a.passes = {PassAssignment{0, {}}, PassAssignment{1, {"instructions"}}};
  a.profile_ops = true;
  a.firmware_sha256 = "f";
  const v1::ServerMessage m = ToProto(a);
  ASSERT_TRUE(m.has_assign());
  const v1::Assignment& got = m.assign();
  EXPECT_EQ(got.run_id(), 11u);
  EXPECT_EQ(got.job_id(), 10u);
  EXPECT_EQ(got.board(), "host-0");
  ASSERT_EQ(got.cases_size(), 2);
  EXPECT_EQ(got.cases(1).index(), 1u);
  EXPECT_EQ(got.cases(1).id(), 200);
  EXPECT_EQ(got.cases(0).params_size(), 2);
  EXPECT_EQ(got.iterations(), 50u);
  EXPECT_EQ(got.warmup(), 5u);
  EXPECT_EQ(got.timeout_s(), 60u);
  ASSERT_EQ(got.events_size(), 1);
  ASSERT_EQ(got.passes_size(), 2);
  EXPECT_EQ(got.passes(1).index(), 1u);
  EXPECT_EQ(got.passes(1).events(0), "instructions");
  EXPECT_TRUE(got.profile_ops());
  EXPECT_FALSE(got.report_memory());
  EXPECT_EQ(got.firmware_sha256(), "f");
}

TEST(AgentWire, EachCommandBecomesItsMessage) {
  EXPECT_EQ(ToProto(AgentRegistered{"lab-1", 500}).registered().heartbeat_ms(), 500u);
  const v1::ServerMessage cancel = ToProto(RunCancel{3, "cancelled by ada"});
  EXPECT_EQ(cancel.cancel().run_id(), 3u);
  EXPECT_EQ(cancel.cancel().reason(), "cancelled by ada");
  const v1::ServerMessage ack = ToProto(BatchAck{3, 8});
  EXPECT_EQ(ack.ack().run_id(), 3u);
  EXPECT_EQ(ack.ack().sequence(), 8u);
  EXPECT_EQ(ToProto(RunClosed{4}).run_closed().run_id(), 4u);
}

}  // namespace
}  // namespace mculab::server::rpc
