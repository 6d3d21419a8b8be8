// JobTable without a Lab: the queue, the jobs each user has on boards, and deadlines follow each
// job's state.
#include "server/service/job_table.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

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

// The grouped queue a pass would build from scratch: every queued job's view, grouped.
void ExpectGroupsAsRebuilt(const JobTable& table) {
  std::vector<QueuedJob> views;
  for (const auto& [id, aj] : table.all()) {
    if (aj.job.state == JobState::kQueued) views.push_back(QueuedOf(aj.job));
  }
  std::vector<const QueuedJob*> pointers;
  for (const QueuedJob& q : views) pointers.push_back(&q);
  EXPECT_TRUE(table.groups() == QueueGroups(pointers));
  // Each grouped view is the queue's view of that job, in the group of its user and priority.
  std::size_t grouped = 0;
  for (const auto& [user, by_priority] : table.groups().by_user()) {
    for (std::size_t p = 0; p < by_priority.size(); ++p) {
      for (const auto& [id, view] : by_priority[p]) {
        ++grouped;
        ASSERT_TRUE(table.queue().contains(id));
        EXPECT_EQ(view, &table.queue().at(id));
        EXPECT_EQ(view->user, user);
        EXPECT_EQ(static_cast<std::size_t>(view->priority), p);
      }
    }
  }
  EXPECT_EQ(grouped, table.queue().size());
  EXPECT_EQ(table.groups().size(), table.queue().size());
}

TEST(JobTable, TheQueueIsGroupedByUserAndPriorityAsJobsEnterAndLeave) {
  JobTable table;
  const JobId a = table.Add(NewJob(table, "ana")).job.id;
  ActiveJob high = NewJob(table, "ana");
  high.job.priority = JobPriority::kHigh;
  const JobId b = table.Add(std::move(high)).job.id;
  const JobId c = table.Add(NewJob(table, "ben")).job.id;
  const auto& ana = table.groups().by_user().at("ana");
  EXPECT_EQ(ana[static_cast<std::size_t>(JobPriority::kNormal)].begin()->first, a);
  EXPECT_EQ(ana[static_cast<std::size_t>(JobPriority::kHigh)].begin()->first, b);
  EXPECT_TRUE(table.groups().contains("ben"));
  ExpectGroupsAsRebuilt(table);

  Move(table, c, JobState::kAssigned);  // ben's only job leaves the queue: ben is forgotten
  EXPECT_FALSE(table.groups().contains("ben"));
  Move(table, c, JobState::kQueued);  // requeued
  EXPECT_TRUE(table.groups().contains("ben"));
  ExpectGroupsAsRebuilt(table);
}

TEST(JobTable, AQueuedJobWhosePriorityChangesMovesToItsNewGroup) {
  JobTable table;
  const JobId a = table.Add(NewJob(table, "ana")).job.id;
  ActiveJob* aj = table.Find(a);
  aj->job.priority = JobPriority::kLow;
  table.Moved(*aj, JobState::kQueued);
  const auto& ana = table.groups().by_user().at("ana");
  EXPECT_TRUE(ana[static_cast<std::size_t>(JobPriority::kNormal)].empty());
  EXPECT_EQ(ana[static_cast<std::size_t>(JobPriority::kLow)].count(a), 1u);
  EXPECT_EQ(table.queue().at(a).priority, JobPriority::kLow);
  ExpectGroupsAsRebuilt(table);
}

// Jobs entering, leaving, coming back, changing priority or user while queued, being removed or
// added again: after every step the kept groups equal the groups rebuilt from scratch.
TEST(JobTable, KeptGroupsEqualARebuildAfterEveryChange) {
  std::mt19937 rng(29);
  auto pick = [&rng](std::size_t n) {
    return static_cast<std::size_t>(std::uniform_int_distribution<std::size_t>(0, n - 1)(rng));
  };
  const char* users[] = {"ana", "ben", "cy", "dee"};
  const JobPriority priorities[] = {JobPriority::kLow, JobPriority::kNormal, JobPriority::kHigh};
  JobTable table;
  std::vector<JobId> ids;  // every job ever added, final or not
  for (int step = 0; step < 3000; ++step) {
    const std::size_t op = pick(10);
    if (ids.empty() || op < 3) {
      ActiveJob aj = NewJob(table, users[pick(4)]);
      aj.job.priority = priorities[pick(3)];
      if (pick(4) == 0) aj.job.state = JobState::kRunning;  // restored on a board
      ids.push_back(table.Add(std::move(aj)).job.id);
    } else {
      const JobId id = ids[pick(ids.size())];
      ActiveJob* aj = table.Find(id);
      if (aj == nullptr) continue;
      const JobState from = aj->job.state;
      if (op == 3) {
        Move(table, id, from == JobState::kQueued ? JobState::kAssigned : JobState::kQueued);
      } else if (op == 4) {
        Move(table, id, JobState::kCancelled);
      } else if (op == 5 && from == JobState::kQueued) {
        aj->job.priority = priorities[pick(3)];  // e.g. an admin raising it
        table.Moved(*aj, JobState::kQueued);
      } else if (op == 6 && from == JobState::kQueued) {
        aj->job.user = users[pick(4)];
        table.Moved(*aj, JobState::kQueued);
      } else if (op == 7) {
        table.Remove(id);  // its creation could not be stored
      } else if (op == 8) {
        ActiveJob again = *aj;  // added again as stored (Lab::Start), perhaps changed
        again.job.priority = priorities[pick(3)];
        table.Add(std::move(again));
      } else {
        Move(table, id, from == JobState::kQueued ? JobState::kRunning : JobState::kSucceeded);
      }
    }
    ExpectGroupsAsRebuilt(table);
    if (::testing::Test::HasFailure()) FAIL() << "step " << step;
  }
  EXPECT_GT(table.queue().size(), 10u);
}

}  // namespace
}  // namespace mculab::server
