#include "common/lists.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mculab {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(SplitList, CutsAtEveryComma) {
  EXPECT_THAT(SplitList("instructions,loads,stores"),
              ElementsAre("instructions", "loads", "stores"));
  EXPECT_THAT(SplitList("one"), ElementsAre("one"));
}

TEST(SplitList, TrimsSpacesAndTabsAroundEachItem) {
  EXPECT_THAT(SplitList(" a ,\tb\t, c d "), ElementsAre("a", "b", "c d"));
}

TEST(SplitList, DropsEmptyItems) {
  EXPECT_THAT(SplitList("a,,b,"), ElementsAre("a", "b"));
  EXPECT_THAT(SplitList(",a"), ElementsAre("a"));
  EXPECT_THAT(SplitList("a, ,b"), ElementsAre("a", "b"));
}

TEST(SplitList, EmptyOrBlankTextIsAnEmptyList) {
  EXPECT_THAT(SplitList(""), IsEmpty());
  EXPECT_THAT(SplitList(" "), IsEmpty());
  EXPECT_THAT(SplitList(",,"), IsEmpty());
}

TEST(SplitList, ReadsWhatJoinListWrote) {
  const std::vector<std::string> names = {"cycles", "instructions", "ethosu.npu_active"};
  EXPECT_EQ(JoinList(names), "cycles,instructions,ethosu.npu_active");
  EXPECT_EQ(SplitList(JoinList(names)), names);
  EXPECT_EQ(JoinList(std::vector<std::string>{}), "");
}

TEST(ParseIntList, ReadsSignedIntegers) {
  EXPECT_THAT(*ParseIntList("1,16, -3 ,2147483647"), ElementsAre(1, 16, -3, 2147483647));
  EXPECT_THAT(*ParseIntList(""), IsEmpty());
}

TEST(ParseIntList, RejectsAnItemThatIsNotAnInteger) {
  EXPECT_FALSE(ParseIntList("1,x"));
  EXPECT_FALSE(ParseIntList("1,2.5"));
  EXPECT_FALSE(ParseIntList("1,3x"));
  EXPECT_FALSE(ParseIntList("+3"));
  EXPECT_FALSE(ParseIntList("2147483648"));  // beyond int32
  EXPECT_FALSE(ParseIntList("1 2"));
}

TEST(ParseIntList, ReadsWhatJoinListWrote) {
  const std::vector<std::int32_t> params = {1, 16, 32, 32, -1};
  EXPECT_EQ(JoinList(params), "1,16,32,32,-1");
  EXPECT_EQ(*ParseIntList(JoinList(params)), params);
}

}  // namespace
}  // namespace mculab
