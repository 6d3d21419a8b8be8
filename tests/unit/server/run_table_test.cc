// RunTable without a Lab: run ids and their reservation, an agent's runs, resume deadlines, cancel
// grace periods and the finalize queue.
#include "server/service/run_table.h"

#include <gtest/gtest.h>

namespace mculab::server {
namespace {

ActiveRun RunOf(RunId id, const std::string& agent) {
  ActiveRun r;
  r.run.id = id;
  r.run.agent = agent;
  return r;
}

TEST(RunTable, IdsGrowTheirReservationAheadOfUseAndContinueAfterARestart) {
  RunTable runs;
  std::optional<RunId> reserve_to;
  EXPECT_EQ(runs.TakeId(reserve_to), 1u);
  ASSERT_TRUE(reserve_to.has_value());  // nothing was reserved yet
  EXPECT_EQ(*reserve_to, 1 + kRunIdBlock);
  reserve_to.reset();
  EXPECT_EQ(runs.TakeId(reserve_to), 2u);
  EXPECT_FALSE(reserve_to.has_value());
  EXPECT_TRUE(runs.WasGiven(2));
  EXPECT_FALSE(runs.WasGiven(3));

  RunTable restarted;  // the store had ids (or a reservation) up to 2,500
  EXPECT_EQ(restarted.Restore(2500), 2500 + kRunIdBlock);
  EXPECT_EQ(restarted.TakeId(reserve_to), 2501u);
  // Half a block before the reservation runs out, it grows.
  RunId id = 0;
  reserve_to.reset();
  while (!reserve_to) id = restarted.TakeId(reserve_to);
  EXPECT_EQ(id + kRunIdBlock / 2, 2500 + kRunIdBlock + 1);
  EXPECT_EQ(*reserve_to, 2500 + 2 * kRunIdBlock);
}

TEST(RunTable, AnAgentsRunsAndTheRestoredOnesItMustClaim) {
  RunTable runs;
  runs.Add(RunOf(1, "lab-1"));
  ActiveRun restored = RunOf(2, "lab-1");
  restored.awaiting_agent = true;
  restored.resume_deadline_ms = 500;
  runs.Add(std::move(restored));
  runs.Add(RunOf(3, "lab-2"));
  EXPECT_EQ(runs.OfAgent("lab-1"), (std::vector<RunId>{1, 2}));
  EXPECT_EQ(runs.OfAgent("lab-1", /*awaiting=*/true), std::vector<RunId>{2});
  EXPECT_EQ(runs.NextResumeDeadline(), 500);
  EXPECT_TRUE(runs.ResumeExpired(499).empty());
  EXPECT_EQ(runs.ResumeExpired(500), std::vector<RunId>{2});
  runs.Find(2)->awaiting_agent = false;  // claimed
  EXPECT_EQ(runs.NextResumeDeadline(), kNoDeadline);
  runs.Remove(1);
  EXPECT_EQ(runs.Find(1), nullptr);
  EXPECT_EQ(runs.all().size(), 2u);
}

TEST(RunTable, AGracePeriodEndsOnlyForARunStillWaitingForItsAgent) {
  RunTable runs;
  for (RunId id : {1, 2, 3}) {
    ActiveRun r = RunOf(id, "lab-1");
    r.job_ended = true;
    runs.Add(std::move(r));
  }
  runs.ArmCancelGrace(1, 300);
  runs.ArmCancelGrace(2, 100);
  runs.ArmCancelGrace(3, 200);
  EXPECT_EQ(runs.NextGraceEnd(), 100);
  runs.Remove(3);  // the agent confirmed: the run closed
  EXPECT_TRUE(runs.TakeEndedGraces(99).empty());
  EXPECT_EQ(runs.TakeEndedGraces(1000), (std::vector<RunId>{2, 1}));
  EXPECT_EQ(runs.NextGraceEnd(), kNoDeadline);
}

TEST(RunTable, ARunIsQueuedForFinalisationOnce) {
  RunTable runs;
  ActiveRun& a = runs.Add(RunOf(7, "lab-1"));
  ActiveRun& b = runs.Add(RunOf(8, "lab-1"));
  runs.QueueFinalize(a);
  runs.QueueFinalize(b);
  runs.QueueFinalize(a);  // already queued
  EXPECT_TRUE(a.finalizing);
  EXPECT_EQ(runs.TakeToFinalize(), std::optional<RunId>(7));
  EXPECT_EQ(runs.TakeToFinalize(), std::optional<RunId>(8));
  EXPECT_EQ(runs.TakeToFinalize(), std::nullopt);
}

}  // namespace
}  // namespace mculab::server
