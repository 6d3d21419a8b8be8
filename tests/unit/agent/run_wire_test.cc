// The translation between the run's plain types and agent.proto: every field both ways, and a
// batch in the form the server asked for.
#include "agent/link/run_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "run_records.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;

SampleBatchRecord Batch(bool as_columns) {
  SampleBatchRecord b;
  b.run_id = 4;
  b.sequence = 2;
  b.pass = 1;
  b.as_columns = as_columns;
  b.rows = {{0, 0, 0, 100}, {0, 0, 1, -7}, {1, 3, 0, 1LL << 40}};
  return b;
}

RunMessage RoundTrip(const RunMessage& m) {
  auto back = RunMessageFromWire(ToWire(m));
  EXPECT_TRUE(back.has_value());
  return back ? *back : RunMessage{};
}

TEST(RunWire, AnAssignmentKeepsEveryField) {
  v1::Assignment w;
  w.set_run_id(1);
  w.set_job_id(2);
  w.set_board("an547-0");
  w.set_op("conv2d_s8");
  auto* c = w.add_cases();
  c->set_index(3);
  c->set_id(-4);
  c->add_params(5);
  c->add_params(6);
  w.set_iterations(7);
  w.set_warmup(8);
  w.set_timeout_s(9);
  w.set_pass(10);
  w.add_events("instructions");
  w.set_seed(11);
  auto* p = w.add_passes();
  p->set_index(1);
  p->add_events("loads");
  w.set_profile_ops(true);
  w.set_report_memory(true);
  w.set_firmware_sha256("fw");
  w.set_blob_sha256("blob");
  w.set_sample_columns(true);
  w.set_reference_kernels(true);
  const RunAssignment a = FromWire(w);
  EXPECT_EQ(a.run_id, 1u);
  EXPECT_EQ(a.job_id, 2u);
  EXPECT_EQ(a.board, "an547-0");
  EXPECT_EQ(a.op, "conv2d_s8");
  ASSERT_EQ(a.cases.size(), 1u);
  EXPECT_EQ(a.cases[0].index, 3u);
  EXPECT_EQ(a.cases[0].id, -4);
  EXPECT_THAT(a.cases[0].params, ElementsAre(5, 6));
  EXPECT_EQ(a.iterations, 7u);
  EXPECT_EQ(a.warmup, 8u);
  EXPECT_EQ(a.timeout_s, 9u);
  EXPECT_EQ(a.pass, 10u);
  EXPECT_THAT(a.events, ElementsAre("instructions"));
  EXPECT_EQ(a.seed, 11u);
  ASSERT_EQ(a.passes.size(), 1u);
  EXPECT_EQ(a.passes[0].index, 1u);
  EXPECT_THAT(a.passes[0].events, ElementsAre("loads"));
  EXPECT_TRUE(a.profile_ops);
  EXPECT_TRUE(a.report_memory);
  EXPECT_EQ(a.firmware_sha256, "fw");
  EXPECT_EQ(a.blob_sha256, "blob");
  EXPECT_TRUE(a.sample_columns);
  EXPECT_TRUE(a.reference_kernels);
}

TEST(RunWire, ABatchGoesAsRowsOrAsColumnsWithTheSameSamples) {
  const v1::AgentMessage rows = ToWire(Batch(false));
  ASSERT_TRUE(rows.has_batch());
  EXPECT_EQ(rows.batch().samples_size(), 3);
  EXPECT_EQ(rows.batch().value_size(), 0);
  EXPECT_EQ(rows.batch().samples(2).iteration(), 3u);
  EXPECT_EQ(rows.batch().samples(2).value(), 1LL << 40);

  const v1::AgentMessage columns = ToWire(Batch(true));
  ASSERT_TRUE(columns.has_batch());
  EXPECT_EQ(columns.batch().samples_size(), 0);
  EXPECT_THAT(columns.batch().case_index(), ElementsAre(0, 0, 1));
  EXPECT_THAT(columns.batch().iteration(), ElementsAre(0, 0, 3));
  EXPECT_THAT(columns.batch().metric(), ElementsAre(0, 1, 0));
  EXPECT_THAT(columns.batch().value(), ElementsAre(100, -7, 1LL << 40));
  for (const auto* m : {&rows, &columns}) {
    EXPECT_EQ(m->batch().run_id(), 4u);
    EXPECT_EQ(m->batch().sequence(), 2u);
    EXPECT_EQ(m->batch().pass(), 1u);
  }
  EXPECT_EQ(std::get<SampleBatchRecord>(RoundTrip(Batch(false))), Batch(false));
  EXPECT_EQ(std::get<SampleBatchRecord>(RoundTrip(Batch(true))), Batch(true));
}

TEST(RunWire, EveryRunMessageSurvivesTheWireBothWays) {
  EXPECT_EQ(std::get<RunStartedRecord>(RoundTrip(testing::FullRunStarted())),
            testing::FullRunStarted());
  EXPECT_EQ(std::get<CaseDoneRecord>(RoundTrip(testing::FullCaseDone())), testing::FullCaseDone());

  for (RunOutcome o : {RunOutcome::kSucceeded, RunOutcome::kWorkloadFailed,
                       RunOutcome::kInfraFailed, RunOutcome::kCancelled, RunOutcome::kTimedOut}) {
    const RunFinishedRecord f{1, o, "why", 3};
    EXPECT_EQ(std::get<RunFinishedRecord>(RoundTrip(f)), f);
  }
  EXPECT_EQ(
      ToWire(RunFinishedRecord{1, RunOutcome::kWorkloadFailed, "", 0}).run_finished().outcome(),
      v1::RunFinished::WORKLOAD_FAILED);

  const RunStateRecord st{1, "running", "pass 1 of 2"};
  EXPECT_EQ(std::get<RunStateRecord>(RoundTrip(st)), st);

  v1::AgentMessage heartbeat;
  heartbeat.mutable_heartbeat();
  EXPECT_FALSE(RunMessageFromWire(heartbeat).has_value());
}

}  // namespace
}  // namespace mculab::agent
