// FeedHub: the lab's live feeds (Lab::Subscribe, the web page's event streams) and what they were
// last told of the boards' queue lengths. It turns the feed part of an operation's Effects into
// the events every open feed gets once the operation is committed.
//
// Thread-safety: the Lab calls it under its lock; FollowsSamples() may be read from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "server/domain/board.h"
#include "server/service/effects.h"
#include "server/service/lab_feed.h"

namespace mculab::server {

class FeedHub {
 public:
  // Queued jobs that could run on each board, by board name.
  using QueueLengths = std::map<std::string, std::uint32_t>;

  // What one commit tells the feeds: pushed by the commit callback, after the commit.
  struct Delivery {
    std::vector<std::shared_ptr<LabFeed>> feeds;
    std::vector<LabEvent> events;
    bool empty() const { return feeds.empty(); }
    void Push() const;
  };

  // A new feed. `queue` is the boards' queue lengths now: the subscriber reads the current state
  // after subscribing and is told changes against it from here on.
  void Add(std::shared_ptr<LabFeed> feed, QueueLengths queue);
  // Some feed follows a job's samples (never reset): batches then keep their values for it.
  void NoteSampleFollower() { follows_samples_ = true; }
  bool FollowsSamples() const { return follows_samples_.load(); }
  // No feed was open when last looked (closed feeds are dropped by Take).
  bool empty() const { return feeds_.empty(); }

  // The effects' feed parts as events, and the open feeds to push them to; clears those parts.
  // Job and sample events keep their order; then each board that changed, or whose queue length
  // changed (`queue_lengths` is called only when a board or the queue changed), gets one event
  // with its current row from `boards`.
  Delivery Take(Effects& fx, const std::map<std::string, Board>& boards,
                const std::function<QueueLengths()>& queue_lengths);

  // Ends every feed (the Lab is stopping) and forgets them.
  void EndAll();

 private:
  std::vector<std::weak_ptr<LabFeed>> feeds_;
  QueueLengths published_queue_;  // the queue lengths the feeds were told
  std::atomic<bool> follows_samples_{false};
};

}  // namespace mculab::server
