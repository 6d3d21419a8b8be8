// Dispatcher without a Lab: a pass over a job table and a board table, queue positions, the
// reservation a queued job waits on, estimates from recent durations, and queue lengths.
#include "server/service/dispatcher.h"

#include <gtest/gtest.h>

namespace mculab::server {
namespace {

class DispatcherTest : public ::testing::Test {
 protected:
  JobId Queue(const std::string& user, const std::string& board = "",
              std::map<std::string, std::string> tags = {}, bool custom_runner = false) {
    ActiveJob aj;
    aj.job.tags = std::move(tags);
    if (custom_runner) aj.job.firmware_artifact = "ab12";
    aj.job.id = jobs_.TakeId();
    aj.job.user = user;
    aj.job.kind = "host";
    aj.job.op = "fully_connected_s8";
    aj.job.board = board;
    aj.job.state = JobState::kQueued;
    return jobs_.Add(std::move(aj)).job.id;
  }
  Board& AddBoard(const std::string& name, BoardState state = BoardState::kIdle) {
    Board b;
    b.name = name;
    b.kind = "host";
    b.state = state;
    b.health = BoardHealth::kGood;
    return boards_.Add(b);
  }

  JobTable jobs_;
  BoardTable boards_;
  Dispatcher dispatch_{jobs_, boards_, /*health_checks=*/true};
  std::int64_t recheck_ = kNoDeadline;
};

TEST_F(DispatcherTest, NoPassWhenNothingIsQueuedOrNoBoardTakesWork) {
  AddBoard("host-0", BoardState::kBusy);
  EXPECT_FALSE(dispatch_.Plan(0, recheck_).has_value());  // empty queue
  Queue("ana");
  EXPECT_FALSE(dispatch_.Plan(0, recheck_).has_value());  // the one board is busy
  AddBoard("host-1");
  auto placed = dispatch_.Plan(0, recheck_);
  ASSERT_TRUE(placed.has_value());
  ASSERT_EQ(placed->size(), 1u);
  EXPECT_EQ((*placed)[0].board, "host-1");
}

TEST_F(DispatcherTest, TheUserServedLeastRecentlyGoesFirst) {
  AddBoard("host-0");
  const JobId ana = Queue("ana");
  const JobId ben = Queue("ben");
  auto placed = dispatch_.Plan(100, recheck_);
  ASSERT_EQ(placed->size(), 1u);
  EXPECT_EQ((*placed)[0].job, ana);  // the older job, neither was served
  dispatch_.Assigned("ana", 50);
  placed = dispatch_.Plan(100, recheck_);
  ASSERT_EQ(placed->size(), 1u);
  EXPECT_EQ((*placed)[0].job, ben);
}

TEST_F(DispatcherTest, ABoardOfUnknownHealthTakesNoUsersJob) {
  Board& b = AddBoard("host-0");
  b.health = BoardHealth::kUnknown;
  Queue("ana");
  auto placed = dispatch_.Plan(0, recheck_);
  EXPECT_TRUE(!placed.has_value() || placed->empty());
}

TEST_F(DispatcherTest, ABoardChangedInPlaceBetweenPassesIsSeenByTheNextPass) {
  Board& b = AddBoard("host-0");
  b.health = BoardHealth::kBad;
  b.tags["cpu"] = "cortex-m55";
  const JobId ana = Queue("ana");
  auto placed = dispatch_.Plan(0, recheck_);
  EXPECT_TRUE(!placed.has_value() || placed->empty());
  b.health = BoardHealth::kGood;  // as BoardUpkeep changes it, through the Board&
  placed = dispatch_.Plan(0, recheck_);
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(*placed, (std::vector<Placement>{{ana, "host-0"}}));
  const JobId ben = Queue("ben", "", {{"cpu", "cortex-m55"}});
  dispatch_.Assigned("ana", 50);  // ben, never served, goes first
  placed = dispatch_.Plan(100, recheck_);
  EXPECT_EQ(*placed, (std::vector<Placement>{{ben, "host-0"}}));
  b.tags["cpu"] = "cortex-m7";  // as a registration changes it
  placed = dispatch_.Plan(100, recheck_);
  EXPECT_EQ(*placed, (std::vector<Placement>{{ana, "host-0"}}));
}

TEST_F(DispatcherTest, AJobWaitsOnTheReservationThatEndsFirstAndIsEstimatedFromIt) {
  boards_.SetLease(AddBoard("host-0"), "carol", 90'000, "tuning", false);
  boards_.SetLease(AddBoard("host-1"), "dave", 60'000, "", false);
  const JobId a = Queue("ana");
  const JobId b = Queue("ana");
  auto placed = dispatch_.Plan(1'000, recheck_);
  ASSERT_TRUE(placed.has_value());
  EXPECT_TRUE(placed->empty());
  EXPECT_EQ(recheck_, 60'000);  // a lease ending may place the jobs without any write

  Job done;
  done.kind = "host";
  done.op = "fully_connected_s8";
  for (std::int64_t ms : {300, 100, 200}) {
    done.started_ms = 1;
    done.finished_ms = 1 + ms;
    dispatch_.Succeeded(done);
  }
  EXPECT_EQ(dispatch_.MedianDuration(done), 200);

  const JobId ids[] = {a, b};
  const std::vector<std::uint32_t> positions = dispatch_.QueuePositions(ids);
  ASSERT_EQ(positions, (std::vector<std::uint32_t>{1, 2}));
  const QueueWait w = dispatch_.Wait(*jobs_.Find(b), positions[1], 1'000);
  EXPECT_EQ(w.position, 2u);
  EXPECT_EQ(w.board, "host-1");
  EXPECT_EQ(w.holder, "dave");
  EXPECT_EQ(w.lease_until_ms, 60'000);
  EXPECT_EQ(w.estimated_start_ms, 60'000 + 200);  // the lease end, then the job ahead
}

TEST_F(DispatcherTest, AJobNotQueuedWaitsOnNothing) {
  AddBoard("host-0");
  const JobId a = Queue("ana");
  ActiveJob& aj = *jobs_.Find(a);
  aj.job.state = JobState::kRunning;
  jobs_.Moved(aj, JobState::kQueued);
  const QueueWait w = dispatch_.Wait(aj, 0, 0);
  EXPECT_EQ(w.position, 0u);
  EXPECT_TRUE(w.board.empty());
}

TEST_F(DispatcherTest, QueueLengthsCountEachJobForTheBoardsItFits) {
  AddBoard("host-0");
  AddBoard("host-1");
  Queue("ana");
  Queue("ana", "host-1");
  Queue("ben", "host-9");  // no such board: counts nowhere
  const auto lengths = dispatch_.QueueLengths();
  EXPECT_EQ(lengths.at("host-0"), 1u);
  EXPECT_EQ(lengths.at("host-1"), 2u);
  EXPECT_EQ(lengths.size(), 2u);
}

TEST_F(DispatcherTest, QueueLengthsAreFitsForEveryJobAndBoard) {
  AddBoard("host-0");
  Board& refuses = AddBoard("host-1");  // its agent does not run uploaded runners
  refuses.custom_runners_off = "allow_custom_runners is off";
  AddBoard("host-2").tags = {{"cpu", "m55"}};
  Queue("ana");
  Queue("ana", "", {}, /*custom_runner=*/true);  // brings its own runner
  Queue("ben", "host-1", {}, true);
  Queue("ben", "", {{"cpu", "m55"}});
  Queue("cy", "", {{"cpu", "m55"}}, true);
  const auto lengths = dispatch_.QueueLengths();
  for (const auto& [name, b] : boards_.all()) {
    std::uint32_t fits = 0;
    for (const auto& [id, q] : jobs_.queue()) fits += Fits(q, SlotOf(b)) ? 1 : 0;
    EXPECT_EQ(lengths.at(name), fits) << name;
  }
  EXPECT_EQ(lengths.at("host-0"), 2u);
  EXPECT_EQ(lengths.at("host-1"), 1u);  // the plain job only: it refuses the custom runners
  EXPECT_EQ(lengths.at("host-2"), 4u);
}

}  // namespace
}  // namespace mculab::server
