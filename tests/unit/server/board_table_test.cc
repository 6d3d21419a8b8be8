// BoardTable without a Lab: boards by name, lease ends that follow reservations, counter units.
#include "server/service/board_table.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace mculab::server
