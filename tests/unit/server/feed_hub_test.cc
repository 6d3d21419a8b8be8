// FeedHub without a Lab: which events an operation's effects become, and for which feeds.
#include "server/service/feed_hub.h"

#include <gtest/gtest.h>

#include <memory>

namespace mculab::server {
namespace {

Board MakeBoard(const std::string& name) {
  Board b;
  b.name = name;
  b.kind = "qemu-an547";
  return b;
}

JobEvent JobEventOf(JobId id) {
  JobEvent e;
  e.job_id = id;
  return e;
}

class FeedHubTest : public ::testing::Test {
 protected:
  FeedHub::QueueLengths Lengths() {
    ++length_calls_;
    return lengths_;
  }
  FeedHub::Delivery Take(Effects& fx) {
    return hub_.Take(fx, boards_, [this] { return Lengths(); });
  }

  FeedHub hub_;
  std::map<std::string, Board> boards_{{"a", MakeBoard("a")}, {"b", MakeBoard("b")}};
  FeedHub::QueueLengths lengths_{{"a", 0}, {"b", 0}};
  int length_calls_ = 0;
};

TEST_F(FeedHubTest, WithoutFeedsNothingIsSaidAndTheEffectsFeedPartsAreCleared) {
  Effects fx;
  fx.feed_jobs.push_back(JobEventOf(1));
  fx.feed_boards.insert("a");
  fx.queue_changed = true;
  FeedHub::Delivery d = Take(fx);
  EXPECT_TRUE(d.empty());
  EXPECT_TRUE(d.events.empty());
  EXPECT_TRUE(fx.feed_jobs.empty());
  EXPECT_TRUE(fx.feed_boards.empty());
  EXPECT_FALSE(fx.queue_changed);
  EXPECT_EQ(length_calls_, 0);
}

TEST_F(FeedHubTest, JobEventsKeepTheirOrderAndEveryOpenFeedGetsThem) {
  auto one = std::make_shared<LabFeed>();
  auto two = std::make_shared<LabFeed>();
  hub_.Add(one, lengths_);
  hub_.Add(two, lengths_);
  Effects fx;
  fx.feed_jobs.push_back(JobEventOf(7));
  fx.feed_jobs.push_back(JobEventOf(8));
  FeedHub::Delivery d = Take(fx);
  ASSERT_EQ(d.feeds.size(), 2u);
  ASSERT_EQ(d.events.size(), 2u);
  EXPECT_EQ(d.events[0].job.job_id, 7);
  EXPECT_EQ(d.events[1].job.job_id, 8);
  EXPECT_EQ(length_calls_, 0) << "no board and no queue change: queue lengths are not computed";
  d.Push();
  EXPECT_EQ(one->TakeAll().size(), 2u);
  EXPECT_EQ(two->TakeAll().size(), 2u);
}

TEST_F(FeedHubTest, AQueueChangeTellsOnlyTheBoardsWhoseLengthChanged) {
  auto feed = std::make_shared<LabFeed>();
  hub_.Add(feed, lengths_);
  lengths_["b"] = 3;
  Effects fx;
  fx.queue_changed = true;
  FeedHub::Delivery d = Take(fx);
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_EQ(d.events[0].kind, LabEvent::Kind::kBoard);
  EXPECT_EQ(d.events[0].board.name, "b");
  EXPECT_EQ(d.events[0].queue_length, 3u);
  // Told once: the same lengths again say nothing.
  Effects again;
  again.queue_changed = true;
  EXPECT_TRUE(Take(again).events.empty());
}

TEST_F(FeedHubTest, AChangedBoardIsToldEvenWhenItsQueueLengthIsTheSame) {
  auto feed = std::make_shared<LabFeed>();
  hub_.Add(feed, lengths_);
  Effects fx;
  fx.feed_boards.insert("a");
  FeedHub::Delivery d = Take(fx);
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_EQ(d.events[0].board.name, "a");
}

TEST_F(FeedHubTest, ClosedAndDroppedFeedsAreForgotten) {
  auto open = std::make_shared<LabFeed>();
  auto closed = std::make_shared<LabFeed>();
  hub_.Add(open, lengths_);
  hub_.Add(closed, lengths_);
  hub_.Add(std::make_shared<LabFeed>(), lengths_);  // nobody holds it
  closed->Close();
  Effects fx;
  fx.feed_jobs.push_back(JobEventOf(1));
  FeedHub::Delivery d = Take(fx);
  ASSERT_EQ(d.feeds.size(), 1u);
  EXPECT_EQ(d.feeds[0], open);
}

TEST_F(FeedHubTest, EndAllEndsEveryFeed) {
  auto feed = std::make_shared<LabFeed>();
  hub_.Add(feed, lengths_);
  hub_.EndAll();
  EXPECT_TRUE(feed->ended());
  EXPECT_TRUE(hub_.empty());
}

}  // namespace
}  // namespace mculab::server
