// The scheduler as a pure function: matching, eligibility, priority, fair share between users,
// reservations and determinism.
#include "server/domain/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace mculab::server {
namespace {

using BS = BoardState;
using BH = BoardHealth;

using JP = JobPriority;

BoardSlot Idle(std::string name, std::string kind, BH health = BH::kGood) {
  return {std::move(name), std::move(kind), BS::kIdle, health};
}

BoardSlot HeldBy(std::string name, std::string kind, std::string holder, std::int64_t until_ms,
                 BS state = BS::kReserved) {
  return {std::move(name), std::move(kind), state, BH::kGood, std::move(holder), until_ms};
}

QueuedJob JobOf(JobId id, std::string user, JP priority = JP::kNormal, std::string board = "",
                std::string kind = "host") {
  return {id, std::move(kind), std::move(board), std::move(user), priority};
}

std::vector<JobId> JobsOf(const std::vector<Placement>& placements) {
  std::vector<JobId> ids;
  for (const Placement& p : placements) ids.push_back(p.job);
  return ids;
}

std::vector<BoardSlot> IdleHosts(int n) {
  std::vector<BoardSlot> boards;
  for (int i = 0; i < n; ++i) boards.push_back(Idle("host-" + std::to_string(i), "host"));
  return boards;
}

constexpr std::int64_t kNow = 1'000'000;

TEST(Scheduler, JobOfAKindGetsAnIdleBoardOfThatKind) {
  std::vector<QueuedJob> jobs = {{1, "host", ""}};
  std::vector<BoardSlot> boards = {Idle("an547-0", "corstone300-qemu"), Idle("host-0", "host")};
  EXPECT_EQ(Schedule(jobs, boards), (std::vector<Placement>{{1, "host-0"}}));
}

TEST(Scheduler, ACustomRunnerJobSkipsBoardsThatRefuseUploadedRunners) {
  QueuedJob custom{1, "host", ""};
  custom.custom_runner = true;
  QueuedJob generic{2, "host", ""};
  BoardSlot locked = Idle("host-0", "host");  // first by name
  locked.refuses_custom_runners = true;
  std::vector<BoardSlot> boards = {locked, Idle("host-1", "host")};
  // The custom runner goes to host-1; the generic job takes the board that refused it.
  EXPECT_EQ(Schedule(std::vector<QueuedJob>{custom, generic}, boards),
            (std::vector<Placement>{{1, "host-1"}, {2, "host-0"}}));
  EXPECT_FALSE(Fits(custom, locked));
  EXPECT_TRUE(Fits(generic, locked));
  // Alone with boards that refuse: it waits.
  EXPECT_EQ(Schedule(std::vector<QueuedJob>{custom}, std::vector<BoardSlot>{locked}),
            std::vector<Placement>{});
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
    if (id % 5 == 0) jobs.back().tags["cpu"] = id % 10 == 0 ? "cortex-m55" : "cortex-m7";
  }
  std::vector<BoardSlot> boards;
  for (int i = 0; i < 30; ++i) {
    BS state = i % 5 == 0 ? BS::kBusy : (i % 11 == 0 ? BS::kOffline : BS::kIdle);
    BH health = i % 4 == 0 ? BH::kUnknown : (i % 13 == 0 ? BH::kBad : BH::kGood);
    boards.push_back({"board-" + std::to_string(i), kinds[i % 3], state, health});
    if (i % 2 == 0) boards.back().tags["cpu"] = i % 4 == 0 ? "cortex-m55" : "cortex-m7";
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

TEST(Scheduler, FitsRequiresEveryJobTagOnTheBoard) {
  BoardSlot m55{"an547-0", "qemu", BS::kIdle, BH::kGood};
  m55.tags = {{"cpu", "cortex-m55"}, {"npu", "ethos-u55-128"}};
  QueuedJob job{1, "qemu", ""};
  EXPECT_TRUE(Fits(job, m55));  // no tags asked: any board of the kind
  job.tags = {{"cpu", "cortex-m55"}};
  EXPECT_TRUE(Fits(job, m55));
  job.tags = {{"cpu", "cortex-m55"}, {"npu", "ethos-u55-128"}};
  EXPECT_TRUE(Fits(job, m55));
  job.tags = {{"cpu", "cortex-m7"}};
  EXPECT_FALSE(Fits(job, m55));  // same key, other value
  job.tags = {{"cpu", "cortex-m55"}, {"fpu", "yes"}};
  EXPECT_FALSE(Fits(job, m55));  // a key the board lacks
  QueuedJob named{2, "", "an547-0"};
  named.tags = {{"cpu", "cortex-m7"}};
  EXPECT_FALSE(Fits(named, m55));  // a named board must have the tags too
}

TEST(Scheduler, TaggedJobSkipsBoardsWithoutTheTagAndLeavesThemToOthers) {
  BoardSlot m7{"a-m7", "qemu", BS::kIdle, BH::kGood};
  m7.tags = {{"cpu", "cortex-m7"}};
  BoardSlot m55{"b-m55", "qemu", BS::kIdle, BH::kGood};
  m55.tags = {{"cpu", "cortex-m55"}};
  QueuedJob wants_m55{1, "qemu", ""};
  wants_m55.tags = {{"cpu", "cortex-m55"}};
  QueuedJob any{2, "qemu", ""};
  std::vector<QueuedJob> jobs = {wants_m55, any};
  std::vector<BoardSlot> boards = {m7, m55};
  EXPECT_EQ(Schedule(jobs, boards), (std::vector<Placement>{{1, "b-m55"}, {2, "a-m7"}}));
  // Mismatch: no board has the tag, the job waits and blocks nobody.
  QueuedJob wants_m4{1, "qemu", ""};
  wants_m4.tags = {{"cpu", "cortex-m4"}};
  jobs = {wants_m4, any};
  EXPECT_EQ(Schedule(jobs, boards), (std::vector<Placement>{{2, "a-m7"}}));
}

// ---- Priority -------------------------------------------------------------------------------

TEST(Scheduler, HighPriorityBeforeNormalWhateverTheAge) {
  std::vector<QueuedJob> jobs = {JobOf(1, "a", JP::kLow), JobOf(2, "a", JP::kNormal),
                                 JobOf(3, "a", JP::kHigh), JobOf(4, "a", JP::kNormal)};
  std::vector<BoardSlot> one = IdleHosts(1);
  EXPECT_EQ(Schedule(jobs, one, kNow, {}), (std::vector<Placement>{{3, "host-0"}}));
  std::vector<BoardSlot> three = IdleHosts(3);
  EXPECT_EQ(JobsOf(Schedule(jobs, three, kNow, {})), (std::vector<JobId>{3, 2, 4}));
  std::vector<BoardSlot> five = IdleHosts(5);
  EXPECT_EQ(JobsOf(Schedule(jobs, five, kNow, {})), (std::vector<JobId>{3, 2, 4, 1}));
}

TEST(Scheduler, PriorityComesBeforeFairShare) {
  // a already has jobs on boards and was served just now; b never was. a's high job still wins.
  std::vector<QueuedJob> jobs = {JobOf(1, "b", JP::kNormal), JobOf(2, "a", JP::kHigh)};
  std::vector<UserShare> users = {{"a", 5, kNow - 1}};
  std::vector<BoardSlot> boards = IdleHosts(1);
  EXPECT_EQ(Schedule(jobs, boards, kNow, users), (std::vector<Placement>{{2, "host-0"}}));
}

TEST(Scheduler, HighPriorityJobThatCannotRunDoesNotBlockLowerOnes) {
  std::vector<QueuedJob> jobs = {JobOf(1, "a", JP::kHigh, "host-0"), JobOf(2, "b", JP::kLow)};
  std::vector<BoardSlot> boards = {{"host-0", "host", BS::kBusy, BH::kGood},
                                   Idle("host-1", "host")};
  EXPECT_EQ(Schedule(jobs, boards, kNow, {}), (std::vector<Placement>{{2, "host-1"}}));
}

TEST(Scheduler, JobsArriveWithNormalPriority) {
  EXPECT_EQ(QueuedJob{}.priority, JP::kNormal);
  EXPECT_EQ(QueuedJob(1, "host", "").priority, JP::kNormal);
}

TEST(Scheduler, PriorityNamesRoundTrip) {
  for (JP p : {JP::kLow, JP::kNormal, JP::kHigh}) {
    EXPECT_EQ(ParseJobPriority(JobPriorityName(p)), p);
  }
  EXPECT_EQ(JobPriorityName(JP::kHigh), "high");
  EXPECT_EQ(ParseJobPriority("urgent"), std::nullopt);
  EXPECT_EQ(ParseJobPriority(""), std::nullopt);
}

// ---- Fair share between users ----------------------------------------------------------------

TEST(Scheduler, UserBsSingleJobRunsBeforeUserAsTwentyQueuedJobs) {
  // a's CI filled the queue first (jobs 1..20) and has a job running on host-0; b then submitted
  // one job. When host-1 frees up, b's job runs next.
  std::vector<QueuedJob> jobs;
  for (JobId id = 1; id <= 20; ++id) jobs.push_back(JobOf(id, "a"));
  jobs.push_back(JobOf(21, "b"));
  std::vector<BoardSlot> boards = {{"host-0", "host", BS::kBusy, BH::kGood},
                                   Idle("host-1", "host")};
  std::vector<UserShare> users = {{"a", 1, kNow - 500}};
  EXPECT_EQ(Schedule(jobs, boards, kNow, users), (std::vector<Placement>{{21, "host-1"}}));

  // The same when a has nothing on a board any more but was served more recently than b.
  std::vector<UserShare> a_finished = {{"a", 0, kNow - 500}, {"b", 0, kNow - 90'000}};
  EXPECT_EQ(Schedule(jobs, boards, kNow, a_finished), (std::vector<Placement>{{21, "host-1"}}));
}

TEST(Scheduler, UsersTakeTurnsWithinAPriority) {
  // No history: a's job is the oldest, so a starts; then b, c, and around again.
  std::vector<QueuedJob> jobs;
  for (JobId id = 1; id <= 5; ++id) jobs.push_back(JobOf(id, "a"));
  for (JobId id = 6; id <= 8; ++id) jobs.push_back(JobOf(id, "b"));
  jobs.push_back(JobOf(9, "c"));
  std::vector<BoardSlot> boards = IdleHosts(6);
  EXPECT_EQ(JobsOf(Schedule(jobs, boards, kNow, {})), (std::vector<JobId>{1, 6, 9, 2, 7, 3}));
}

TEST(Scheduler, UserWithFewerJobsOnBoardsGoesFirst) {
  // b was served more recently, but a holds three boards and b one: b's jobs go first until b has
  // as many on boards as a.
  std::vector<QueuedJob> jobs = {JobOf(1, "a"), JobOf(2, "a"), JobOf(3, "b"), JobOf(4, "b"),
                                 JobOf(5, "b")};
  std::vector<UserShare> users = {{"a", 3, kNow - 60'000}, {"b", 1, kNow - 1'000}};
  std::vector<BoardSlot> boards = IdleHosts(3);
  EXPECT_EQ(JobsOf(Schedule(jobs, boards, kNow, users)), (std::vector<JobId>{3, 4, 1}));
}

TEST(Scheduler, LeastRecentlyServedUserGoesFirstWhenLoadsAreEqual) {
  std::vector<QueuedJob> jobs = {JobOf(1, "a"), JobOf(2, "b"), JobOf(3, "c")};
  std::vector<UserShare> users = {{"a", 0, kNow - 10}, {"b", 0, kNow - 20}};  // c: never served
  std::vector<BoardSlot> boards = IdleHosts(3);
  EXPECT_EQ(JobsOf(Schedule(jobs, boards, kNow, users)), (std::vector<JobId>{3, 2, 1}));
}

TEST(Scheduler, WithoutHistoryTheUserWithTheOldestJobGoesFirst) {
  std::vector<QueuedJob> jobs = {JobOf(7, "a"), JobOf(3, "b"), JobOf(5, "c")};
  std::vector<BoardSlot> boards = IdleHosts(1);
  EXPECT_EQ(Schedule(jobs, boards, kNow, {}), (std::vector<Placement>{{3, "host-0"}}));
}

TEST(Scheduler, AUsersJobThatMustWaitDoesNotCostThemTheirTurn) {
  // a's oldest job waits for the busy host-0; a's next job is still older than b's.
  std::vector<QueuedJob> jobs = {JobOf(1, "a", JP::kNormal, "host-0"), JobOf(2, "a"),
                                 JobOf(3, "b")};
  std::vector<BoardSlot> boards = {{"host-0", "host", BS::kBusy, BH::kGood},
                                   Idle("host-1", "host")};
  EXPECT_EQ(Schedule(jobs, boards, kNow, {}), (std::vector<Placement>{{2, "host-1"}}));
}

TEST(Scheduler, FairShareCountsJobsPlacedAtAHigherPriority) {
  // a's high job takes one board; among normal jobs b then goes first although a's is older.
  std::vector<QueuedJob> jobs = {JobOf(1, "a", JP::kHigh), JobOf(2, "a"), JobOf(3, "b")};
  std::vector<BoardSlot> boards = IdleHosts(2);
  EXPECT_EQ(JobsOf(Schedule(jobs, boards, kNow, {})), (std::vector<JobId>{1, 3}));
}

TEST(Scheduler, UserListedTwiceInTheHistoryIsMerged) {
  // a: 1 + 1 on boards, last served at the later time; b: 1 on board.
  std::vector<QueuedJob> jobs = {JobOf(1, "a"), JobOf(2, "b")};
  std::vector<UserShare> users = {{"a", 1, kNow - 50}, {"b", 1, kNow - 100}, {"a", 1, kNow - 500}};
  std::vector<BoardSlot> boards = IdleHosts(1);
  EXPECT_EQ(Schedule(jobs, boards, kNow, users), (std::vector<Placement>{{2, "host-0"}}));
}

// ---- Reservations ----------------------------------------------------------------------------

TEST(Scheduler, ReservedBoardRunsOnlyItsHoldersJobs) {
  // bob's older jobs (one for any host, one naming the board) wait; alice's job runs.
  std::vector<QueuedJob> jobs = {JobOf(1, "bob"), JobOf(2, "bob", JP::kHigh, "host-0"),
                                 JobOf(3, "alice", JP::kLow)};
  for (BS state : {BS::kReserved, BS::kIdle}) {
    std::vector<BoardSlot> boards = {HeldBy("host-0", "host", "alice", kNow + 1, state)};
    EXPECT_EQ(Schedule(jobs, boards, kNow, {}), (std::vector<Placement>{{3, "host-0"}}))
        << BoardStateName(state);
    std::vector<QueuedJob> bobs(jobs.begin(), jobs.begin() + 2);
    EXPECT_TRUE(Schedule(bobs, boards, kNow, {}).empty()) << BoardStateName(state);
  }
}

TEST(Scheduler, OtherUsersJobsTakeTheUnreservedBoardsOfTheKind) {
  std::vector<QueuedJob> jobs = {JobOf(1, "bob")};
  std::vector<BoardSlot> boards = {HeldBy("host-0", "host", "alice", kNow + 60'000),
                                   Idle("host-1", "host")};
  EXPECT_EQ(Schedule(jobs, boards, kNow, {}), (std::vector<Placement>{{1, "host-1"}}));
}

TEST(Scheduler, HoldersJobPrefersTheirReservedBoardAndLeavesPublicOnesToOthers) {
  std::vector<QueuedJob> jobs = {JobOf(1, "alice"), JobOf(2, "bob")};
  std::vector<BoardSlot> boards = {Idle("host-0", "host"),
                                   HeldBy("host-1", "host", "alice", kNow + 60'000)};
  EXPECT_EQ(Schedule(jobs, boards, kNow, {}),
            (std::vector<Placement>{{1, "host-1"}, {2, "host-0"}}));
  // With their reserved board taken, the holder's next job may use a public one.
  std::vector<QueuedJob> two = {JobOf(1, "alice"), JobOf(3, "alice")};
  EXPECT_EQ(Schedule(two, boards, kNow, {}),
            (std::vector<Placement>{{1, "host-1"}, {3, "host-0"}}));
}

TEST(Scheduler, ExpiredReservationNoLongerRestricts) {
  // The lease ends at kNow: from then on the board takes anyone's jobs, even while its state
  // still says reserved (the service has not released it yet).
  std::vector<QueuedJob> jobs = {JobOf(1, "bob")};
  for (BS state : {BS::kReserved, BS::kIdle}) {
    for (std::int64_t until : {kNow, kNow - 1, std::int64_t{0}}) {
      std::vector<BoardSlot> boards = {HeldBy("host-0", "host", "alice", until, state)};
      EXPECT_EQ(Schedule(jobs, boards, kNow, {}), (std::vector<Placement>{{1, "host-0"}}))
          << BoardStateName(state) << " until " << until;
    }
  }
}

TEST(Scheduler, ReservedBoardThatIsBusyOfflineOrUnhealthyGetsNothingEvenForItsHolder) {
  std::vector<QueuedJob> jobs = {JobOf(1, "alice")};
  for (BS state : {BS::kBusy, BS::kOffline}) {
    std::vector<BoardSlot> boards = {HeldBy("host-0", "host", "alice", kNow + 1, state)};
    EXPECT_TRUE(Schedule(jobs, boards, kNow, {}).empty()) << BoardStateName(state);
  }
  for (BH health : {BH::kBad, BH::kMaintenance}) {
    std::vector<BoardSlot> boards = {{"host-0", "host", BS::kReserved, health, "alice", kNow + 1}};
    EXPECT_TRUE(Schedule(jobs, boards, kNow, {}).empty()) << BoardHealthName(health);
  }
}

TEST(Scheduler, MayRunKeepsOthersOffAReservedBoardUntilTheLeaseEnds) {
  const BoardSlot held = HeldBy("host-0", "host", "alice", kNow + 1);
  EXPECT_TRUE(ReservationInForce(held, kNow));
  EXPECT_FALSE(ReservationInForce(held, kNow + 1));
  EXPECT_TRUE(MayRun(JobOf(1, "alice"), held, kNow));
  EXPECT_FALSE(MayRun(JobOf(1, "bob"), held, kNow));
  EXPECT_TRUE(MayRun(JobOf(1, "bob"), held, kNow + 1));
  EXPECT_FALSE(MayRun(JobOf(1, "alice", JP::kNormal, "", "qemu"), held, kNow));  // wrong kind
  EXPECT_FALSE(ReservationInForce(Idle("host-0", "host"), kNow));
}

// ---- Determinism -----------------------------------------------------------------------------

TEST(Scheduler, SameAnswerForEveryInputOrder) {
  // A lab drawn at random once (fixed seed): a CI user with most of the jobs, four people, three
  // priorities, jobs naming boards, boards of every state and health, reservations in force and
  // ended.
  std::mt19937 rng(20240611);
  auto pick = [&rng](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const char* kinds[] = {"host", "corstone300-qemu", "nucleo-h743"};
  const char* users[] = {"ci", "alice", "bob", "carol", "dave"};
  constexpr int kBoards = 40;
  std::vector<QueuedJob> jobs;
  for (JobId id = 1; id <= 300; ++id) {
    const char* user = pick(10) < 6 ? users[0] : users[1 + pick(4)];
    // The nucleo boards run mostly low-priority (nightly) jobs, so every priority gets boards.
    const int kind = pick(3);
    const int p = pick(100);
    const JP priority = p < 2 ? JP::kHigh : (kind == 2 || p < 25 ? JP::kLow : JP::kNormal);
    std::string board = pick(10) == 0 ? "board-" + std::to_string(pick(kBoards)) : "";
    jobs.push_back({id, kinds[kind], board, user, priority});
  }
  std::vector<BoardSlot> boards;
  for (int i = 0; i < kBoards; ++i) {
    const BS states[] = {BS::kIdle, BS::kIdle, BS::kIdle, BS::kBusy, BS::kOffline, BS::kReserved};
    const BH healths[] = {BH::kGood,    BH::kGood, BH::kGood,
                          BH::kUnknown, BH::kBad,  BH::kMaintenance};
    const BS state = states[pick(6)];
    std::string holder;
    std::int64_t until = 0;
    if (state == BS::kReserved || pick(8) == 0) {  // a reservation, in force or ended
      holder = users[1 + pick(4)];
      until = pick(3) == 0 ? kNow - 1 : kNow + 3'600'000;
    }
    boards.push_back(
        {"board-" + std::to_string(i), kinds[i % 3], state, healths[pick(6)], holder, until});
  }
  std::vector<UserShare> history = {
      {"ci", 4, kNow - 100}, {"alice", 1, kNow - 5'000}, {"bob", 0, kNow - 5'000}, {"ci", 1, 0}};

  const auto expected = Schedule(jobs, boards, kNow, history);
  ASSERT_GE(expected.size(), 15u);
  // The answer uses every rule: more than one user, more than one priority, a reserved board.
  std::set<std::string> served_users;
  std::set<JP> served_priorities;
  bool reserved_board_used = false;
  for (const Placement& p : expected) {
    const QueuedJob& j = jobs[static_cast<std::size_t>(p.job - 1)];
    served_users.insert(j.user);
    served_priorities.insert(j.priority);
    auto b = std::find_if(boards.begin(), boards.end(),
                          [&](const BoardSlot& s) { return s.name == p.board; });
    ASSERT_NE(b, boards.end());
    EXPECT_TRUE(MayRun(j, *b, kNow)) << "job " << p.job << " on " << p.board;
    reserved_board_used |= ReservationInForce(*b, kNow);
  }
  EXPECT_GE(served_users.size(), 3u);
  EXPECT_EQ(served_priorities.size(), 3u);
  EXPECT_TRUE(reserved_board_used);

  for (int round = 0; round < 200; ++round) {
    std::shuffle(jobs.begin(), jobs.end(), rng);
    std::shuffle(boards.begin(), boards.end(), rng);
    std::shuffle(history.begin(), history.end(), rng);
    ASSERT_EQ(Schedule(jobs, boards, kNow, history), expected) << "round " << round;
  }
}

// The groups a caller keeps, changed job by job, give the answer of the same queue passed plain.
TEST(Scheduler, KeptQueueGroupsGiveThePlainQueuesAnswer) {
  std::mt19937 rng(29);
  auto pick = [&rng](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const char* users[] = {"ci", "alice", "bob"};
  const JP priorities[] = {JP::kLow, JP::kNormal, JP::kHigh};
  std::vector<BoardSlot> boards = IdleHosts(6);
  boards.push_back(HeldBy("host-6", "host", "alice", kNow + 1));
  boards.push_back(HeldBy("host-7", "host", "dave", kNow + 1));
  boards.push_back(Idle("host-8", "host", BH::kUnknown));
  const std::vector<UserShare> history = {{"ci", 2, kNow - 10}, {"bob", 0, kNow - 20}};
  std::map<JobId, QueuedJob> queue;  // stable views, as the JobTable keeps them
  QueueGroups groups;
  for (JobId id = 1; id <= 400; ++id) {
    if (!queue.empty() && pick(3) == 0) {  // a job leaves
      auto it = std::next(queue.begin(), pick(static_cast<int>(queue.size())));
      groups.Remove(it->second);
      queue.erase(it);
    }
    std::string board = pick(8) == 0 ? "host-" + std::to_string(pick(9)) : "";
    QueuedJob& j = queue[id] = JobOf(id, users[pick(3)], priorities[pick(3)], board);
    groups.Add(j);
    std::vector<QueuedJob> plain;
    for (const auto& [jid, q] : queue) plain.push_back(q);
    ASSERT_EQ(Schedule(groups, boards, kNow, history), Schedule(plain, boards, kNow, history))
        << "after job " << id;
  }
}

TEST(Scheduler, SameAnswerForEveryPermutationOfASmallQueue) {
  std::vector<QueuedJob> jobs = {JobOf(1, "a"),
                                 JobOf(2, "b", JP::kHigh),
                                 JobOf(3, "a", JP::kNormal, "host-1"),
                                 JobOf(4, "c", JP::kLow),
                                 JobOf(5, "b"),
                                 JobOf(6, "alice"),
                                 JobOf(7, "a", JP::kHigh)};
  std::vector<BoardSlot> boards = {Idle("host-0", "host"), Idle("host-1", "host"),
                                   HeldBy("host-2", "host", "alice", kNow + 1),
                                   Idle("host-3", "host", BH::kUnknown)};
  std::vector<UserShare> history = {{"b", 1, kNow - 10}};
  const auto expected = Schedule(jobs, boards, kNow, history);
  // High: a has nothing on boards, b has one. Normal: alice (never served) takes her reserved
  // board; a was served before b in this call; host-3 is unknown, so it comes last.
  EXPECT_EQ(expected,
            (std::vector<Placement>{{7, "host-0"}, {2, "host-1"}, {6, "host-2"}, {1, "host-3"}}));
  std::sort(jobs.begin(), jobs.end(),
            [](const QueuedJob& x, const QueuedJob& y) { return x.id < y.id; });
  int permutations = 0;
  do {
    ++permutations;
    ASSERT_EQ(Schedule(jobs, boards, kNow, history), expected) << "permutation " << permutations;
  } while (
      std::next_permutation(jobs.begin(), jobs.end(),
                            [](const QueuedJob& x, const QueuedJob& y) { return x.id < y.id; }));
  EXPECT_EQ(permutations, 5040);
}

}  // namespace
}  // namespace mculab::server

namespace mculab::server {
namespace {

// A board of unknown health is held for its health check (holder kHealthCheckHolder): a health
// check may run there, a user's job may not, even one of a user whose name is the one health
// checks show ("lab").
TEST(Scheduler, BoardHeldForItsHealthCheckTakesTheCheckAndNoUsersJobWhateverTheirName) {
  Board board;
  board.name = "host-0";
  board.kind = "host";
  board.state = BoardState::kReserved;
  board.health = BoardHealth::kUnknown;
  board.holder = std::string(kHealthCheckHolder);
  board.lease_until_ms = std::numeric_limits<std::int64_t>::max();
  const BoardSlot slot = SlotOf(board);
  Job check;
  check.id = 1;
  check.user = "lab";
  check.kind = "host";
  check.board = "host-0";
  check.origin = JobOrigin::kHealthCheck;
  Job lab_user = check;
  lab_user.id = 2;
  lab_user.origin = JobOrigin::kUser;
  EXPECT_TRUE(MayRun(QueuedOf(check), slot, 0));
  EXPECT_FALSE(MayRun(QueuedOf(lab_user), slot, 0));
  const std::vector<QueuedJob> queued = {QueuedOf(lab_user), QueuedOf(check)};
  const std::vector<BoardSlot> slots = {slot};
  const auto placed = Schedule(queued, slots, 0, {});
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].job, 1);
}

}  // namespace
}  // namespace mculab::server
