#include "server/service/feed_hub.h"

#include <set>
#include <utility>

namespace mculab::server {
namespace {

void ClearFeedParts(Effects& fx) {
  fx.feed_jobs.clear();
  fx.feed_samples.clear();
  fx.feed_boards.clear();
  fx.queue_changed = false;
}

}  // namespace

void FeedHub::Delivery::Push() const {
  for (const auto& feed : feeds) {
    for (const LabEvent& ev : events) feed->Push(ev);
  }
}

void FeedHub::Add(std::shared_ptr<LabFeed> feed, QueueLengths queue) {
  published_queue_ = std::move(queue);
  feeds_.push_back(std::move(feed));
}

FeedHub::Delivery FeedHub::Take(Effects& fx, const std::map<std::string, Board>& boards,
                                const std::function<QueueLengths()>& queue_lengths) {
  std::erase_if(feeds_, [](const std::weak_ptr<LabFeed>& w) {
    auto f = w.lock();
    return !f || f->closed();
  });
  Delivery out;
  if (feeds_.empty()) {
    ClearFeedParts(fx);
    return out;
  }
  for (JobEvent& e : fx.feed_jobs) {
    LabEvent ev;
    ev.kind = LabEvent::Kind::kJob;
    ev.job = std::move(e);
    out.events.push_back(std::move(ev));
  }
  for (LiveSamples& s : fx.feed_samples) {
    LabEvent ev;
    ev.kind = LabEvent::Kind::kSamples;
    ev.samples = std::move(s);
    out.events.push_back(std::move(ev));
  }
  if (!fx.feed_boards.empty() || fx.queue_changed) {
    QueueLengths queue = queue_lengths();
    std::set<std::string> changed = fx.feed_boards;
    for (const auto& [name, n] : queue) {
      auto p = published_queue_.find(name);
      if (p == published_queue_.end() || p->second != n) changed.insert(name);
    }
    for (const std::string& name : changed) {
      auto b = boards.find(name);
      if (b == boards.end()) continue;
      LabEvent ev;
      ev.kind = LabEvent::Kind::kBoard;
      ev.board = b->second;
      auto q = queue.find(name);
      ev.queue_length = q != queue.end() ? q->second : 0;
      out.events.push_back(std::move(ev));
    }
    published_queue_ = std::move(queue);
  }
  ClearFeedParts(fx);
  if (!out.events.empty()) {
    for (const auto& weak : feeds_) {
      if (auto feed = weak.lock()) out.feeds.push_back(std::move(feed));
    }
  }
  return out;
}

void FeedHub::EndAll() {
  for (auto& weak : feeds_) {
    if (auto feed = weak.lock()) feed->End();
  }
  feeds_.clear();
}

}  // namespace mculab::server
