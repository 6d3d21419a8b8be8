// The run's smaller parts alone: the plan of passes, the workload's preparation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/run/run_plan.h"
#include "agent/run/workload_preparation.h"
#include "mculab/workload.h"
#include "test_workloads.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

BoardInfo WithEmulatedUnit() {
  BoardInfo info = testing::Info("b", "fake");
  CounterUnitInfo plugin;
  plugin.name = "qemu-plugin";
  plugin.external = true;
  plugin.events = {"emu_a", "emu_b"};
  info.counter_units.push_back(plugin);
  return info;
}

TEST(RunPlan, AnAssignmentWithoutPassesIsOnePassOfItsEventsAndTheTimerIsNoCounter) {
  RunAssignment a;
  a.events = {"cycles", "instructions", "", "emu_a"};
  const AgentPlan plan = PlanOf(a, WithEmulatedUnit());
  EXPECT_THAT(plan.counters, ElementsAre("instructions", "emu_a"));
  ASSERT_EQ(plan.passes.size(), 1u);
  EXPECT_THAT(plan.passes[0].runner_events, ElementsAre("instructions"));
  EXPECT_THAT(plan.passes[0].emulated_events, ElementsAre("emu_a"));
  EXPECT_THAT(plan.passes[0].emulated_metrics, ElementsAre(2));
  EXPECT_EQ(plan.Metric("cycles"), 0u);
}

TEST(RunPlan, ThePassesShareOneMetricNumberingInPassOrder) {
  RunAssignment a;
  a.passes = {{0, {"loads", "emu_b"}}, {1, {"stores", "loads", "emu_a"}}};
  const AgentPlan plan = PlanOf(a, WithEmulatedUnit());
  EXPECT_THAT(plan.counters, ElementsAre("loads", "emu_b", "stores", "emu_a"));
  ASSERT_EQ(plan.passes.size(), 2u);
  EXPECT_EQ(plan.passes[1].index, 1u);
  EXPECT_THAT(plan.passes[1].runner_events, ElementsAre("stores", "loads"));
  EXPECT_THAT(plan.passes[1].emulated_metrics, ElementsAre(4));
  EXPECT_THAT(plan.passes[0].emulated_metrics, ElementsAre(2));
}

RunAssignment Conv(std::uint32_t iterations) {
  RunAssignment a;
  a.op = "conv2d_s8";
  a.iterations = iterations;
  std::uint32_t index = 0;
  for (const auto& c : testing::ConvCases()) a.cases.push_back(RunCase{index++, c.id, c.params});
  return a;
}

TEST(WorkloadPreparation, AnOperatorSweepIsTheCatalogsWorkloadWithTheDefaultSeed) {
  auto w = PrepareWorkload(Conv(3), testing::Info("b", "fake"), {});
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->seed, kDefaultSeed);
  EXPECT_EQ(w->op_id, MCULAB_OP_CONV2D_S8);
  EXPECT_EQ(w->cases.size(), testing::ConvCases().size());
  auto expected = BuildWorkload(MCULAB_OP_CONV2D_S8, testing::ConvCases(), kDefaultSeed);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(w->bytes, *expected);
  EXPECT_EQ(w->sha256.size(), 64u);
  EXPECT_TRUE(w->firmware.empty());
  EXPECT_FALSE(w->custom_runner);
}

TEST(WorkloadPreparation, TheJobsMistakesAreWorkloadFailures) {
  auto zero = PrepareWorkload(Conv(0), testing::Info("b", "fake"), {});
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.error().message, HasSubstr("iterations must be at least 1"));
  EXPECT_FALSE(IsInfrastructureError(zero.error()));

  auto a = Conv(1);
  a.op = "softmax_s16";
  auto unknown = PrepareWorkload(a, testing::Info("b", "fake"), {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("unknown op \"softmax_s16\""));
  EXPECT_FALSE(IsInfrastructureError(unknown.error()));

  a = Conv(1);
  a.cases.clear();
  EXPECT_THAT(PrepareWorkload(a, testing::Info("b", "fake"), {}).error().message,
              HasSubstr("no cases"));
}

TEST(WorkloadPreparation, WithoutACacheOrAModelRunnerTheAgentSaysWhatItLacks) {
  RunAssignment custom = Conv(1);
  custom.op = "custom";
  custom.firmware_sha256 = std::string(64, 'a');
  custom.cases.clear();
  BoardInfo info = testing::Info("b", "fake");
  info.custom_runners = true;
  auto c = PrepareWorkload(custom, info, {});
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, HasSubstr("no artifact cache"));

  RunAssignment model = Conv(1);
  model.op = "model";
  model.blob_sha256 = std::string(64, 'b');
  auto m = PrepareWorkload(model, info, {});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.error().message, HasSubstr("has no model runner"));
}

TEST(WorkloadPreparation, ReferenceKernelsSetTheHeadersFlag) {
  auto a = Conv(1);
  a.reference_kernels = true;
  EXPECT_EQ(WorkloadFlagsOf(a), MCULAB_WORKLOAD_REFERENCE_KERNELS);
  auto w = PrepareWorkload(a, testing::Info("b", "fake"), {});
  ASSERT_TRUE(w.ok());
  auto plain = PrepareWorkload(Conv(1), testing::Info("b", "fake"), {});
  ASSERT_TRUE(plain.ok());
  EXPECT_NE(w->sha256, plain->sha256);
  EXPECT_EQ(w->bytes.size(), plain->bytes.size());
}

}  // namespace
}  // namespace mculab::agent
