// JobTable without a Lab: the queue, the jobs each user has on boards, and deadlines follow each
// job's state.
#include "server/service/job_table.h"

#include <gtest/gtest.h>

namespace mculab::server {
namespace {

ActiveJob NewJob(JobTable& table, const std::string& user) {
  ActiveJob aj;
  aj.job.id = table.TakeId();
  aj.job.user = user;
  aj.job.kind = "qemu-an547";
  aj.job.state = JobState::kQueued;
  return aj;
}

// What TransitionLocked does to the table: the state changes, then the table hears of it.
void Move(JobTable& table, JobId id, JobState to) {
  ActiveJob* aj = table.Find(id);
  ASSERT_NE(aj, nullptr);
  const JobState from = aj->job.state;
  aj->job.state = to;
  table.Moved(*aj, from);
  if (IsFinal(to)) table.Remove(id);
}

TEST(JobTable, IdsFollowTheNextIdSetAfterARestart) {
  JobTable table;
  EXPECT_EQ(table.TakeId(), 1u);
  EXPECT_EQ(table.TakeId(), 2u);
  table.SetNextId(40);
  EXPECT_EQ(table.TakeId(), 40u);
}

TEST(JobTable, AQueuedJobIsInTheQueueUntilItIsAssigned) {
  JobTable table;
  const JobId a = table.Add(NewJob(table, "ana")).job.id;
  const JobId b = table.Add(NewJob(table, "ben")).job.id;
  ASSERT_EQ(table.queue().size(), 2u);
  EXPECT_EQ(table.queue().begin()->first, a);  // id order = submit order
  EXPECT_TRUE(table.on_boards().empty());

  Move(table, a, JobState::kAssigned);
  EXPECT_FALSE(table.queue().contains(a));
  EXPECT_TRUE(table.queue().contains(b));
  EXPECT_EQ(table.on_boards().at("ana"), 1u);

  Move(table, a, JobState::kRunning);  // still on a board: counted once
  EXPECT_EQ(table.on_boards().at("ana"), 1u);

  Move(table, a, JobState::kSucceeded);
  EXPECT_EQ(table.Find(a), nullptr);
  EXPECT_FALSE(table.on_boards().contains("ana"));
  EXPECT_EQ(table.all().size(), 1u);
}

TEST(JobTable, ARequeuedJobReturnsToTheQueue) {
  JobTable table;
  const JobId a = table.Add(NewJob(table, "ana")).job.id;
  Move(table, a, JobState::kAssigned);
  Move(table, a, JobState::kQueued);  // an infrastructure failure requeues it
  EXPECT_TRUE(table.queue().contains(a));
  EXPECT_TRUE(table.on_boards().empty());
}

TEST(JobTable, DeadlinesExpireInOrderAndLeaveWithTheBoardStates) {
  JobTable table;
  const JobId a = table.Add(NewJob(table, "ana")).job.id;
  const JobId b = table.Add(NewJob(table, "ben")).job.id;
  const JobId c = table.Add(NewJob(table, "cy")).job.id;
  for (JobId id : {a, b, c}) Move(table, id, JobState::kRunning);
  table.SetDeadline(*table.Find(a), 300);
  table.SetDeadline(*table.Find(b), 100);
  table.SetDeadline(*table.Find(c), 200);
  EXPECT_EQ(table.NextDeadline(), 100);

  table.SetDeadline(*table.Find(b), 250);  // moved: the old one is gone
  EXPECT_EQ(table.NextDeadline(), 200);

  Move(table, c, JobState::kQueued);  // off the board: no deadline
  EXPECT_EQ(table.Find(c)->deadline_ms, kNoDeadline);
  EXPECT_EQ(table.NextDeadline(), 250);

  EXPECT_TRUE(table.TakeExpired(249).empty());
  EXPECT_EQ(table.TakeExpired(300), (std::vector<JobId>{b, a}));
  EXPECT_EQ(table.Find(a)->deadline_ms, kNoDeadline);
  EXPECT_EQ(table.NextDeadline(), kNoDeadline);
}

TEST(JobTable, RemovingAJobThatWasNeverStoredLeavesNoTrace) {
  JobTable table;
  const JobId a = table.Add(NewJob(table, "ana")).job.id;
  table.Remove(a);
  EXPECT_TRUE(table.all().empty());
  EXPECT_TRUE(table.queue().empty());
  table.Remove(a);  // twice: nothing
}

TEST(JobTable, AddingAJobOnABoardCountsItForItsUser) {
  JobTable table;  // Lab::Start restores jobs in any state
  ActiveJob aj = NewJob(table, "ana");
  aj.job.state = JobState::kPreparing;
  aj.deadline_ms = 5;  // ignored: SetDeadline sets it
  ActiveJob& added = table.Add(std::move(aj));
  EXPECT_EQ(added.deadline_ms, kNoDeadline);
  EXPECT_EQ(table.on_boards().at("ana"), 1u);
  EXPECT_TRUE(table.queue().empty());
  EXPECT_EQ(table.NextDeadline(), kNoDeadline);
}

}  // namespace
}  // namespace mculab::server
