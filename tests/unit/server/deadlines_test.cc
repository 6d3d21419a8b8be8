// Deadlines without a table: keys come due earliest first, a removed or replaced deadline never
// comes due, and kNoDeadline is never due.
#include "server/service/deadlines.h"

#include <gtest/gtest.h>

#include <string>

namespace mculab::server {
namespace {

using Due = std::vector<std::pair<std::int64_t, std::string>>;

TEST(Deadlines, KeysComeDueEarliestFirstAndOnce) {
  Deadlines<std::string> d;
  EXPECT_EQ(d.Next(), kNoDeadline);
  d.Add(300, "c");
  d.Add(100, "a");
  d.Add(200, "b");
  EXPECT_EQ(d.Next(), 100);
  EXPECT_TRUE(d.TakeDue(99).empty());
  EXPECT_EQ(d.TakeDue(200), (Due{{100, "a"}, {200, "b"}}));
  EXPECT_EQ(d.Next(), 300);
  EXPECT_TRUE(d.TakeDue(200).empty());
  EXPECT_EQ(d.TakeDue(1000), (Due{{300, "c"}}));
  EXPECT_TRUE(d.empty());
}

TEST(Deadlines, AMovedDeadlineComesDueOnlyAtItsNewTime) {
  Deadlines<std::string> d;
  d.Add(100, "lease");
  d.Remove(100, "lease");  // renewed
  d.Add(500, "lease");
  EXPECT_TRUE(d.TakeDue(499).empty());
  EXPECT_EQ(d.TakeDue(500), (Due{{500, "lease"}}));
  d.Remove(42, "never added");  // harmless
  EXPECT_TRUE(d.empty());
}

TEST(Deadlines, NoDeadlineIsNeverDue) {
  Deadlines<int> d;
  d.Add(kNoDeadline, 7);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(d.Next(), kNoDeadline);
  EXPECT_TRUE(d.TakeDue(kNoDeadline).empty());
}

}  // namespace
}  // namespace mculab::server
