// BoardTable without a Lab: boards by name, lease ends that follow reservations, counter units.
#include "server/service/board_table.h"

#include <gtest/gtest.h>

#include <random>
#include <span>
#include <string>

namespace mculab::server {
namespace {

Board Stored(const std::string& name) {
  Board b;
  b.name = name;
  b.kind = "qemu-an547";
  b.state = BoardState::kIdle;
  b.health = BoardHealth::kGood;
  return b;
}

TEST(BoardTable, AnUnknownBoardIsNamedWithTheBoardsTheLabHas) {
  BoardTable boards;
  EXPECT_EQ(boards.Unknown("x").message, "no board named 'x'; the lab has: none");
  boards.Add(Stored("b"));
  boards.Add(Stored("a"));
  EXPECT_EQ(boards.Find("x"), nullptr);
  const Error e = boards.Unknown("x");
  EXPECT_EQ(e.code, ErrorCode::kNotFound);
  EXPECT_EQ(e.message, "no board named 'x'; the lab has: a, b");
}

TEST(BoardTable, ABoardFirstRegisteredIsAddedOfflineAndKeptAfterwards) {
  BoardTable boards;
  bool added = false;
  Board& b = boards.FindOrAdd("new-1", &added);
  EXPECT_TRUE(added);
  EXPECT_EQ(b.name, "new-1");
  EXPECT_EQ(b.state, BoardState::kOffline);
  EXPECT_EQ(b.health, BoardHealth::kUnknown);  // a new board is trusted with nothing yet
  b.state = BoardState::kIdle;
  EXPECT_EQ(boards.FindOrAdd("new-1", &added).state, BoardState::kIdle);
  EXPECT_FALSE(added);
  EXPECT_EQ(boards.all().size(), 1u);
}

TEST(BoardTable, LeasesEndInOrderAndARenewedOrClearedLeaseDoesNotEnd) {
  BoardTable boards;
  for (const char* n : {"a", "b", "c"}) boards.Add(Stored(n));
  boards.SetLease(*boards.Find("a"), "ana", 300, "", false);
  boards.SetLease(*boards.Find("b"), "ben", 100, "tuning", true);
  boards.SetLease(*boards.Find("c"), "cy", 200, "", false);
  EXPECT_EQ(boards.NextLeaseEnd(), 100);
  EXPECT_EQ(boards.Find("b")->reservation_note, "tuning");
  EXPECT_TRUE(boards.Find("b")->hold);

  boards.RenewLease(*boards.Find("b"), 400);  // a --hold renews
  boards.ClearLease(*boards.Find("c"));       // released
  EXPECT_TRUE(boards.Find("c")->holder.empty());
  EXPECT_EQ(boards.NextLeaseEnd(), 300);

  EXPECT_TRUE(boards.TakeEndedLeases(299).empty());
  EXPECT_EQ(boards.TakeEndedLeases(1000), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(boards.Find("a")->holder, "ana");  // still held until the Lab clears it
  EXPECT_EQ(boards.NextLeaseEnd(), kNoDeadline);
}

TEST(BoardTable, AStoredReservationKeepsItsLeaseEnd) {
  BoardTable boards;  // Lab::Start adds the boards as stored
  Board b = Stored("a");
  b.holder = "ana";
  b.lease_until_ms = 50;
  boards.Add(b);
  EXPECT_EQ(boards.NextLeaseEnd(), 50);
  b.lease_until_ms = 70;  // added again: the old end goes
  boards.Add(b);
  EXPECT_EQ(boards.TakeEndedLeases(60), std::vector<std::string>{});
  EXPECT_EQ(boards.TakeEndedLeases(70), std::vector<std::string>{"a"});
}

TEST(BoardTable, CounterUnitsAreKeptPerBoard) {
  BoardTable boards;
  EXPECT_TRUE(boards.UnitsOf("a").empty());
  EXPECT_EQ(boards.RegisteredUnits("a"), nullptr);
  BoardUnits u;
  u.board = "a";
  u.units.push_back(CounterUnit{});
  u.emulated.push_back(true);
  boards.SetUnits(u);
  EXPECT_EQ(boards.UnitsOf("a").size(), 1u);
  ASSERT_NE(boards.RegisteredUnits("a"), nullptr);
  EXPECT_EQ(boards.RegisteredUnits("a")->emulated, std::vector<bool>{true});
  EXPECT_TRUE(boards.UnitsOf("b").empty());
}

void ExpectSlotsAsRebuilt(const BoardTable& boards, bool health_checks) {
  const std::span<const BoardSlot> slots = boards.Slots(health_checks);
  ASSERT_EQ(slots.size(), boards.all().size());
  auto slot = slots.begin();
  for (const auto& [name, b] : boards.all()) {
    EXPECT_TRUE(*slot == SlotOf(b, health_checks)) << name;
    ++slot;
  }
}

TEST(BoardTable, SlotsHoldABoardOfUnknownHealthForItsHealthCheckWhenChecksAreOn) {
  BoardTable boards;
  boards.Add(Stored("a"));
  Board unknown = Stored("b");
  unknown.health = BoardHealth::kUnknown;
  boards.SetLease(boards.Add(unknown), "ana", 500, "", false);
  std::span<const BoardSlot> slots = boards.Slots(true);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(slots[0].name, "a");
  EXPECT_TRUE(slots[0].holder.empty());
  EXPECT_EQ(slots[1].holder, kHealthCheckHolder);
  EXPECT_EQ(slots[1].state, BoardState::kReserved);
  EXPECT_EQ(slots[1].lease_until_ms, kNoDeadline);
  slots = boards.Slots(false);
  EXPECT_EQ(slots[1].holder, "ana");
  EXPECT_EQ(slots[1].state, BoardState::kIdle);
  EXPECT_EQ(slots[1].lease_until_ms, 500);
}

// Boards changed in place through Board& (as the Lab's parts do), leases set and cleared, boards
// added, health checks switched: after every step the kept slots equal slots built from scratch.
TEST(BoardTable, KeptSlotsEqualARebuildAfterEveryChange) {
  std::mt19937 rng(29);
  auto pick = [&rng](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const BoardState states[] = {BoardState::kIdle, BoardState::kBusy, BoardState::kReserved,
                               BoardState::kOffline};
  const BoardHealth healths[] = {BoardHealth::kGood, BoardHealth::kUnknown, BoardHealth::kBad,
                                 BoardHealth::kMaintenance};
  BoardTable boards;
  for (int i = 0; i < 8; ++i) boards.Add(Stored("board-" + std::to_string(i)));
  bool health_checks = true;
  for (int step = 0; step < 3000; ++step) {
    Board& b = *boards.Find("board-" + std::to_string(pick(static_cast<int>(boards.all().size()))));
    switch (pick(10)) {
      case 0:
        b.state = states[pick(4)];
        break;
      case 1:
        b.health = healths[pick(4)];
        break;
      case 2:
        boards.SetLease(b, pick(2) ? "ana" : "ben", pick(1000), "", false);
        break;
      case 3:
        if (!b.holder.empty()) boards.RenewLease(b, pick(1000));
        break;
      case 4:
        if (!b.holder.empty()) boards.ClearLease(b);
        break;
      case 5:
        if (pick(2)) {
          b.tags["cpu"] = pick(2) ? "cortex-m55" : "cortex-m7";
        } else {
          b.tags.erase("cpu");
        }
        break;
      case 6:
        b.kind = pick(2) ? "qemu-an547" : "host";
        break;
      case 7:
        b.custom_runners = pick(2) == 0;
        b.custom_runners_off = pick(2) ? "set allow_custom_runners" : "";
        break;
      case 8:
        if (pick(20) == 0) boards.FindOrAdd("board-" + std::to_string(boards.all().size()));
        break;
      default:
        if (pick(10) == 0) health_checks = !health_checks;
        break;
    }
    ExpectSlotsAsRebuilt(boards, health_checks);
    if (::testing::Test::HasFailure()) FAIL() << "step " << step;
  }
}

}  // namespace
}  // namespace mculab::server
