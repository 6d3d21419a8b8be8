// ConnectionSlots without sockets: a flood of connections that never authenticate cannot keep an
// authenticated client out, per-address caps hold, keep-alive connections give way to newcomers,
// and nothing mid-request or proven is ever evicted.
#include "server/service/connection_slots.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mculab::server {
namespace {

using Slot = ConnectionSlots::Slot;
const ConnectionSlots::TimePoint kT0{};

// Admits one connection from each of `addresses` in turn until `n` are open; their ids.
std::vector<ConnectionSlots::Id> Flood(ConnectionSlots& slots, std::size_t n, int addresses) {
  std::vector<ConnectionSlots::Id> ids;
  for (std::size_t i = 0; ids.size() < n; ++i) {
    auto a = slots.Admit("10.0.0." + std::to_string(i % addresses), kT0);
    if (a.id) ids.push_back(*a.id);
  }
  return ids;
}

TEST(ConnectionSlots, AnAddressGetsNoMoreThanItsShare) {
  ConnectionSlots slots({.max_connections = 10, .max_per_address = 3, .reserved = 2});
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(slots.Admit("10.0.0.1", kT0).id);
  const auto refused = slots.Admit("10.0.0.1", kT0);
  EXPECT_FALSE(refused.id);
  EXPECT_NE(refused.refusal.find("10.0.0.1"), std::string::npos);
  EXPECT_TRUE(slots.Admit("10.0.0.2", kT0).id);
}

TEST(ConnectionSlots, AnUnauthenticatedFloodFillsTheGeneralSlotsAndOnlyChurnsTheReserve) {
  ConnectionSlots slots({.max_connections = 8, .max_per_address = 8, .reserved = 2});
  const auto flood = Flood(slots, 8, 4);
  EXPECT_EQ(slots.open(), 8u);
  // More flood: each newcomer takes the reserve slot of the oldest unproven reserved one.
  auto more = slots.Admit("10.0.0.9", kT0);
  ASSERT_TRUE(more.id);
  EXPECT_EQ(more.slot, Slot::kReserved);
  ASSERT_EQ(more.evict.size(), 1u);
  EXPECT_EQ(more.evict[0], flood[6]);
  // The authenticated client gets in the same way and keeps its slot once proven.
  auto admin = slots.Admit("192.168.1.1", kT0);
  ASSERT_TRUE(admin.id);
  EXPECT_EQ(admin.slot, Slot::kReserved);
  EXPECT_TRUE(slots.MayServe(*admin.id, /*authenticated=*/true));
  auto next = slots.Admit("10.0.0.9", kT0);
  ASSERT_TRUE(next.id);
  ASSERT_EQ(next.evict.size(), 1u);
  EXPECT_NE(next.evict[0], *admin.id);
  EXPECT_EQ(slots.open(), 8u);
}

TEST(ConnectionSlots, AReservedSlotServesOnlyAuthenticatedRequests) {
  ConnectionSlots slots({.max_connections = 2, .max_per_address = 2, .reserved = 1});
  auto general = slots.Admit("10.0.0.1", kT0);
  auto reserved = slots.Admit("10.0.0.2", kT0);
  ASSERT_TRUE(general.id && reserved.id);
  EXPECT_EQ(general.slot, Slot::kGeneral);
  EXPECT_EQ(reserved.slot, Slot::kReserved);
  EXPECT_TRUE(slots.MayServe(*general.id, false));
  EXPECT_FALSE(slots.MayServe(*reserved.id, false));
  EXPECT_TRUE(slots.MayServe(*reserved.id, true));
}

TEST(ConnectionSlots, AKeepAliveConnectionGivesWayBeforeTheReserveIsUsed) {
  ConnectionSlots slots({.max_connections = 3, .max_per_address = 3, .reserved = 1});
  const auto a = *slots.Admit("10.0.0.1", kT0).id;
  const auto b = *slots.Admit("10.0.0.1", kT0).id;
  slots.Busy(a);
  slots.Idle(a);
  auto c = slots.Admit("10.0.0.2", kT0);
  ASSERT_TRUE(c.id);
  EXPECT_EQ(c.slot, Slot::kGeneral);
  EXPECT_EQ(c.evict, std::vector<ConnectionSlots::Id>{a});
  slots.Release(a);  // the evicted connection's own release changes nothing
  EXPECT_EQ(slots.open(), 2u);
  (void)b;
}

TEST(ConnectionSlots, NothingMidRequestOrProvenIsEvicted) {
  ConnectionSlots slots({.max_connections = 2, .max_per_address = 2, .reserved = 1});
  const auto a = *slots.Admit("10.0.0.1", kT0).id;  // general, mid-request
  const auto b = *slots.Admit("10.0.0.2", kT0).id;  // reserved
  ASSERT_TRUE(slots.MayServe(b, true));
  slots.Busy(b);
  auto refused = slots.Admit("10.0.0.3", kT0);
  EXPECT_FALSE(refused.id);
  EXPECT_FALSE(refused.refusal.empty());
  slots.Idle(b);  // proven, between requests
  EXPECT_FALSE(slots.Admit("10.0.0.3", kT0).id);
  slots.Release(a);
  EXPECT_TRUE(slots.Admit("10.0.0.3", kT0).id);
}

TEST(ConnectionSlots, ReleasingFreesTheSlotAndTheAddressShare) {
  ConnectionSlots slots({.max_connections = 2, .max_per_address = 1, .reserved = 0});
  const auto a = *slots.Admit("10.0.0.1", kT0).id;
  EXPECT_FALSE(slots.Admit("10.0.0.1", kT0).id);
  slots.Release(a);
  EXPECT_TRUE(slots.Admit("10.0.0.1", kT0).id);
  EXPECT_EQ(slots.open(), 1u);
}

TEST(ConnectionSlots, UnprovenConnectionsPastTheirDeadlineAreNamed) {
  ConnectionSlots slots({.max_connections = 4, .max_per_address = 4, .reserved = 1});
  const auto t1 = kT0 + std::chrono::seconds(1);
  const auto old = *slots.Admit("10.0.0.1", kT0).id;
  const auto proven = *slots.Admit("10.0.0.1", kT0).id;
  slots.Prove(proven);
  const auto young = *slots.Admit("10.0.0.1", t1).id;
  EXPECT_EQ(slots.UnprovenSince(t1), std::vector<ConnectionSlots::Id>{old});
  (void)young;
}

}  // namespace
}  // namespace mculab::server
