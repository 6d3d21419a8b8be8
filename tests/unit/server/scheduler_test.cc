// The scheduler as a pure function: matching, order, eligibility and determinism.
#include "server/domain/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace mculab::server {
namespace {

using BS = BoardState;
using BH = BoardHealth;

BoardSlot Idle(std::string name, std::string kind, BH health = BH::kGood) {
  return {std::move(name), std::move(kind), BS::kIdle, health};
}

TEST(Scheduler, JobOfAKindGetsAnIdleBoardOfThatKind) {
  std::vector<QueuedJob> jobs = {{1, "host", ""}};
  std::vector<BoardSlot> boards = {Idle("an547-0", "corstone300-qemu"), Idle("host-0", "host")};
  EXPECT_EQ(Schedule(jobs, boards), (std::vector<Placement>{{1, "host-0"}}));
}

TEST(Scheduler, JobNamingABoardGetsOnlyThatBoard) {
  std::vector<QueuedJob> jobs = {{1, "host", "host-1"}};
  std::vector<BoardSlot> boards = {Idle("host-0", "host"), Idle("host-1", "host")};
  EXPECT_EQ(Schedule(jobs, boards), (std::vector<Placement>{{1, "host-1"}}));
}

TEST(Scheduler, JobNamingABoardOfAnotherKindGetsNothing) {
  std::vector<QueuedJob> jobs = {{1, "corstone300-qemu", "host-0"}};
  std::vector<BoardSlot> boards = {Idle("host-0", "host")};
  EXPECT_TRUE(Schedule(jobs, boards).empty());
}

TEST(Scheduler, JobNamingABoardWithoutAKindTakesIt) {
  std::vector<QueuedJob> jobs = {{1, "", "host-0"}};
  std::vector<BoardSlot> boards = {Idle("host-0", "host")};
  EXPECT_EQ(Schedule(jobs, boards), (std::vector<Placement>{{1, "host-0"}}));
}

TEST(Scheduler, FirstComeFirstServed) {
  std::vector<QueuedJob> jobs = {{9, "host", ""}, {3, "host", ""}, {5, "host", ""}};
  std::vector<BoardSlot> boards = {Idle("host-0", "host"), Idle("host-1", "host")};
  EXPECT_EQ(Schedule(jobs, boards), (std::vector<Placement>{{3, "host-0"}, {5, "host-1"}}));
}

TEST(Scheduler, OlderJobForABoardWinsOverANewerJobForItsKind) {
  std::vector<QueuedJob> jobs = {{2, "host", ""}, {1, "host", "host-0"}};
  std::vector<BoardSlot> boards = {Idle("host-0", "host")};
  EXPECT_EQ(Schedule(jobs, boards), (std::vector<Placement>{{1, "host-0"}}));
}

TEST(Scheduler, WaitingJobDoesNotBlockLaterJobsForOtherBoards) {
  std::vector<QueuedJob> jobs = {{1, "corstone300-qemu", ""}, {2, "host", ""}};
  std::vector<BoardSlot> boards = {{"an547-0", "corstone300-qemu", BS::kBusy, BH::kGood},
                                   Idle("host-0", "host")};
  EXPECT_EQ(Schedule(jobs, boards), (std::vector<Placement>{{2, "host-0"}}));
}

TEST(Scheduler, BusyReservedAndOfflineBoardsAreSkipped) {
  std::vector<QueuedJob> jobs = {{1, "host", ""}};
  for (BS state : {BS::kBusy, BS::kReserved, BS::kOffline}) {
    std::vector<BoardSlot> boards = {{"host-0", "host", state, BH::kGood}};
    EXPECT_TRUE(Schedule(jobs, boards).empty()) << BoardStateName(state);
  }
}

TEST(Scheduler, BadAndMaintenanceBoardsAreSkippedUnknownOnesAreUsed) {
  std::vector<QueuedJob> jobs = {{1, "host", ""}};
  for (BH health : {BH::kBad, BH::kMaintenance}) {
    std::vector<BoardSlot> boards = {Idle("host-0", "host", health)};
    EXPECT_TRUE(Schedule(jobs, boards).empty()) << BoardHealthName(health);
  }
  std::vector<BoardSlot> unknown = {Idle("host-0", "host", BH::kUnknown)};
  EXPECT_EQ(Schedule(jobs, unknown), (std::vector<Placement>{{1, "host-0"}}));
}

TEST(Scheduler, GoodBoardsArePreferredOverUnknownOnes) {
  std::vector<QueuedJob> jobs = {{1, "host", ""}};
  std::vector<BoardSlot> boards = {Idle("host-0", "host", BH::kUnknown), Idle("host-1", "host")};
  EXPECT_EQ(Schedule(jobs, boards), (std::vector<Placement>{{1, "host-1"}}));
}

TEST(Scheduler, EachBoardIsGivenOnce) {
  std::vector<QueuedJob> jobs = {{1, "host", "host-0"}, {2, "host", "host-0"}, {3, "host", ""}};
  std::vector<BoardSlot> boards = {Idle("host-0", "host")};
  EXPECT_EQ(Schedule(jobs, boards), (std::vector<Placement>{{1, "host-0"}}));
}

TEST(Scheduler, NothingQueuedOrNothingFreeGivesNothing) {
  std::vector<BoardSlot> boards = {Idle("host-0", "host")};
  EXPECT_TRUE(Schedule({}, boards).empty());
  std::vector<QueuedJob> jobs = {{1, "host", ""}};
  EXPECT_TRUE(Schedule(jobs, {}).empty());
}

TEST(Scheduler, AnswerDoesNotDependOnInputOrder) {
  std::mt19937 rng(1234);
  std::vector<QueuedJob> jobs;
  const char* kinds[] = {"host", "corstone300-qemu", "nucleo-h743"};
  for (JobId id = 1; id <= 200; ++id) {
    std::string board = id % 7 == 0 ? "board-" + std::to_string(id % 30) : "";
    jobs.push_back({id, kinds[id % 3], board});
  }
  std::vector<BoardSlot> boards;
  for (int i = 0; i < 30; ++i) {
    BS state = i % 5 == 0 ? BS::kBusy : (i % 11 == 0 ? BS::kOffline : BS::kIdle);
    BH health = i % 4 == 0 ? BH::kUnknown : (i % 13 == 0 ? BH::kBad : BH::kGood);
    boards.push_back({"board-" + std::to_string(i), kinds[i % 3], state, health});
  }
  const auto expected = Schedule(jobs, boards);
  ASSERT_FALSE(expected.empty());
  for (int round = 0; round < 50; ++round) {
    std::shuffle(jobs.begin(), jobs.end(), rng);
    std::shuffle(boards.begin(), boards.end(), rng);
    EXPECT_EQ(Schedule(jobs, boards), expected) << "round " << round;
  }
}

TEST(Scheduler, FitsIgnoresStateForAdmissionAndQueueLength) {
  const BoardSlot offline{"host-0", "host", BS::kOffline, BH::kBad};
  EXPECT_TRUE(Fits({1, "host", ""}, offline));
  EXPECT_TRUE(Fits({1, "", "host-0"}, offline));
  EXPECT_FALSE(Fits({1, "qemu", ""}, offline));
  EXPECT_FALSE(Fits({1, "host", "host-1"}, offline));
}

}  // namespace
}  // namespace mculab::server
