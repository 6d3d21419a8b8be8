// The Lab's counter events: what a board can count, passes, and their statistics
// (lab_test_fixture.h).
#include "tests/unit/server/lab_test_fixture.h"

namespace mculab::server::lab_testing {
namespace {

namespace profiles {

// An emulated QEMU board with the plugin's unit (5 events, 3 at once).
v1::Register QemuAgent() {
  v1::Register reg;
  reg.set_agent("lab-q");
  auto* info = reg.add_boards();
  info->set_name("an547-0");
  info->set_kind("corstone300-qemu");
  info->set_emulated(true);
  auto* u = info->add_counter_units();
  u->set_name("qemu-plugin");
  u->set_max_simultaneous(3);
  for (const char* e : {"instructions", "loads", "stores", "branches", "mve_instructions"}) {
    u->add_events(e);
  }
  u->set_emulated(true);
  return reg;
}

// One pass's batch: for each case, `iterations` rows of the timer and of each metric given.
v1::AgentMessage PassBatch(std::uint64_t run, std::uint64_t seq, std::uint32_t pass,
                           std::uint32_t cases, std::uint32_t iterations, std::int64_t cycles,
                           const std::vector<std::uint32_t>& metrics) {
  v1::AgentMessage m;
  auto* b = m.mutable_batch();
  b->set_run_id(run);
  b->set_sequence(seq);
  b->set_pass(pass);
  for (std::uint32_t c = 0; c < cases; ++c) {
    for (std::uint32_t i = 0; i < iterations; ++i) {
      auto* s = b->add_samples();
      s->set_case_index(c);
      s->set_iteration(i);
      s->set_metric(0);
      s->set_value(cycles + c);
      for (std::uint32_t metric : metrics) {
        auto* e = b->add_samples();
        e->set_case_index(c);
        e->set_iteration(i);
        e->set_metric(metric);
        e->set_value(1000 * metric + c);
      }
    }
  }
  return m;
}

}  // namespace profiles

TEST_F(LabTest, AnEventTheBoardCannotCountIsRejectedAtSubmitListingWhatItCounts) {
  auto q = std::make_shared<FakeAgentChannel>();
  ASSERT_TRUE(lab_->agents()
                  .ConnectAgent(testing::AgentCaller(profiles::QemuAgent().agent()),
                                testing::RegistrationOf(profiles::QemuAgent()), q)
                  .ok());
  auto r = FcJob(1, 2, "corstone300-qemu");
  r.events = {"instructions", "npu_active"};
  auto reply = lab_->jobs().Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(reply.error().message.find("'npu_active'"), std::string::npos) << reply.error().message;
  EXPECT_NE(reply.error().message.find("mve_instructions"), std::string::npos);
  // A board without counter units counts cycles only.
  ConnectHostAgent();
  auto h = FcJob();
  h.events = {"loads"};
  EXPECT_FALSE(lab_->jobs().Submit(caller_, h).ok());
  h.events = {"cycles"};  // always allowed
  EXPECT_TRUE(lab_->jobs().Submit(caller_, h).ok());
}

TEST_F(LabTest, FiveEmulatedEventsRunAsTwoPassesOfOneRunAndTheirStatisticsAreStored) {
  auto q = std::make_shared<FakeAgentChannel>();
  auto session = lab_->agents().ConnectAgent(testing::AgentCaller(profiles::QemuAgent().agent()),
                                             testing::RegistrationOf(profiles::QemuAgent()), q);
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(q->Take(FakeAgentChannel::IsRegistered));
  auto r = FcJob(2, 3, "corstone300-qemu");
  r.events = {"mve_instructions", "branches", "Stores", "loads", "instructions"};
  const JobId id = Submit(r);
  const v1::Assignment a = TakeAssignment(*q);
  ASSERT_EQ(a.passes_size(), 2);
  EXPECT_EQ(std::vector<std::string>(a.passes(0).events().begin(), a.passes(0).events().end()),
            (std::vector<std::string>{"instructions", "loads", "stores"}));
  EXPECT_EQ(std::vector<std::string>(a.passes(1).events().begin(), a.passes(1).events().end()),
            (std::vector<std::string>{"branches", "mve_instructions"}));
  EXPECT_EQ(a.events_size(), 5);
  EXPECT_TRUE(a.profile_ops());
  EXPECT_TRUE(a.report_memory());

  const auto run = a.run_id();
  Send(*session, RunStateMsg(run, "running"));
  v1::AgentMessage started;
  auto* s = started.mutable_run_started();
  s->set_run_id(run);
  s->set_runner_version("0.1.0");
  s->set_timer_unit("cycles");
  s->set_emulated(true);
  for (const auto& e : a.events()) s->add_counters(e);
  auto* f = s->add_firmware_memory();
  f->set_case_index(-1);
  f->set_source("elf");
  f->set_category("flash.text");
  f->set_used(12345);
  Send(*session, started);
  Send(*session, profiles::PassBatch(run, 0, 0, 2, 3, 5000, {1, 2, 3}));
  Send(*session, profiles::PassBatch(run, 1, 1, 2, 3, 5000, {4, 5}));
  for (std::uint32_t pass = 0; pass < 2; ++pass) {
    for (std::uint32_t c = 0; c < 2; ++c) {
      v1::AgentMessage m = CaseDoneMsg(run, c);
      m.mutable_case_done()->set_pass(pass);
      auto* op = m.mutable_case_done()->add_ops();
      op->set_op_index(0);
      op->set_type("FULLY_CONNECTED");
      op->set_name("fully_connected_s8");
      op->set_count(3);
      auto* metric = op->add_metrics();
      metric->set_metric(pass == 0 ? 0 : 4);
      metric->set_count(3);
      metric->set_sum(300);
      metric->set_min(100);
      metric->set_max(100);
      auto* mem = m.mutable_case_done()->add_memory();
      mem->set_case_index(static_cast<std::int32_t>(c));
      mem->set_source("runner");
      mem->set_category("arena");
      mem->set_used(64 + c);
      mem->set_reserved(4096);
      Send(*session, m);
    }
  }
  Send(*session, FinishedMsg(run, Outcome::SUCCEEDED, 2));
  EXPECT_EQ(WaitForState(id, JobState::kSucceeded), JobState::kSucceeded);

  auto res = LabQueries(*lab_, *store_).GetJobResults(caller_, id, false);
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->job.message, "");  // passes agree exactly
  EXPECT_EQ(res->events.size(), 5u);
  ASSERT_EQ(res->passes.size(), 2u);
  EXPECT_EQ(res->passes[1].events,
            (std::vector<std::string>{"cycles", "branches", "mve_instructions"}));
  ASSERT_EQ(res->cases.size(), 2u);
  ASSERT_EQ(res->cases[1].stats.size(), 6u);  // cycles + 5 events
  EXPECT_EQ(res->cases[1].stats[0].n, 3u);    // cycles of pass 0 only
  EXPECT_EQ(res->cases[1].stats[5].metric, "mve_instructions");
  EXPECT_EQ(res->cases[1].stats[5].median, 5001);  // 1000 * metric + case
  ASSERT_EQ(res->ops.size(), 4u);
  EXPECT_EQ(res->ops[0].type, "FULLY_CONNECTED");
  ASSERT_EQ(res->memory.size(), 3u);
  EXPECT_EQ(res->memory[0].source, "elf");
  EXPECT_EQ(res->memory[0].used, 12345u);
  EXPECT_EQ(res->memory[2].used, 65u);
}

TEST_F(LabTest, EmulatedPassesThatDisagreeOnCyclesFlagTheJob) {
  auto q = std::make_shared<FakeAgentChannel>();
  auto session = lab_->agents().ConnectAgent(testing::AgentCaller(profiles::QemuAgent().agent()),
                                             testing::RegistrationOf(profiles::QemuAgent()), q);
  ASSERT_TRUE(session.ok());
  auto r = FcJob(1, 2, "corstone300-qemu");
  r.events = {"instructions", "loads", "stores", "branches"};
  const JobId id = Submit(r);
  const v1::Assignment a = TakeAssignment(*q);
  ASSERT_EQ(a.passes_size(), 2);
  const auto run = a.run_id();
  v1::AgentMessage started;
  started.mutable_run_started()->set_run_id(run);
  started.mutable_run_started()->set_timer_unit("cycles");
  started.mutable_run_started()->set_emulated(true);
  for (const auto& e : a.events()) started.mutable_run_started()->add_counters(e);
  Send(*session, started);
  Send(*session, profiles::PassBatch(run, 0, 0, 1, 2, 5000, {1, 2, 3}));
  Send(*session, profiles::PassBatch(run, 1, 1, 1, 2, 5001, {4}));  // one cycle more
  Send(*session, CaseDoneMsg(run, 0));
  Send(*session, FinishedMsg(run, Outcome::SUCCEEDED, 2));
  EXPECT_EQ(WaitForState(id, JobState::kSucceeded), JobState::kSucceeded);
  auto job = lab_->jobs().GetJob(caller_, id);
  ASSERT_TRUE(job.ok());
  EXPECT_NE(job->message.find("passes disagree on cycles"), std::string::npos) << job->message;
}

TEST_F(LabTest, ListEventsShowsTheUnitsOfAKind) {
  auto q = std::make_shared<FakeAgentChannel>();
  ASSERT_TRUE(lab_->agents()
                  .ConnectAgent(testing::AgentCaller(profiles::QemuAgent().agent()),
                                testing::RegistrationOf(profiles::QemuAgent()), q)
                  .ok());
  auto v = lab_->boards().ListEvents(caller_, "corstone300-qemu", "");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->boards, (std::vector<std::string>{"an547-0"}));
  ASSERT_EQ(v->units.units.size(), 1u);
  EXPECT_EQ(v->units.units[0].max_simultaneous, 3u);
  EXPECT_EQ(v->countable.size(), 6u);  // cycles + 5
  EXPECT_FALSE(lab_->boards().ListEvents(caller_, "no-such-kind", "").ok());
}

// What a kind's boards measure: a host board (tag timing=host) is "host", never "silicon".
TEST_F(LabTest, ListEventsSaysWhetherTheBoardsAreHostEmulatedOrSilicon) {
  auto q = std::make_shared<FakeAgentChannel>();
  ConnectTagged(q, "lab-2",
                {{"host-1", "native", {{"timing", "host"}}}, {"h743-0", "stm32h7", {}}});
  auto host = lab_->boards().ListEvents(caller_, "native", "");
  ASSERT_TRUE(host.ok()) << host.error().message;
  EXPECT_EQ(host->measured, "host");
  auto silicon = lab_->boards().ListEvents(caller_, "stm32h7", "");
  ASSERT_TRUE(silicon.ok()) << silicon.error().message;
  EXPECT_EQ(silicon->measured, "silicon");
}

TEST_F(LabTest, BoardUnitsAndJobEventsSurviveARestart) {
  auto q = std::make_shared<FakeAgentChannel>();
  ASSERT_TRUE(lab_->agents()
                  .ConnectAgent(testing::AgentCaller(profiles::QemuAgent().agent()),
                                testing::RegistrationOf(profiles::QemuAgent()), q)
                  .ok());
  RestartLab();
  // The agent has not reconnected: its board's units are known from the store.
  auto r = FcJob(1, 2, "corstone300-qemu");
  r.events = {"npu_active"};
  EXPECT_FALSE(lab_->jobs().Submit(caller_, r).ok());
  r.events = {"branches"};
  const JobId id = Submit(r);
  auto q2 = std::make_shared<FakeAgentChannel>();
  ASSERT_TRUE(lab_->agents()
                  .ConnectAgent(testing::AgentCaller(profiles::QemuAgent().agent()),
                                testing::RegistrationOf(profiles::QemuAgent()), q2)
                  .ok());
  const v1::Assignment a = TakeAssignment(*q2);
  EXPECT_EQ(a.passes_size(), 1);
  ASSERT_EQ(a.events_size(), 1);
  EXPECT_EQ(a.events(0), "branches");
  (void)id;
}

}  // namespace
}  // namespace mculab::server::lab_testing
