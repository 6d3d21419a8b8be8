#include "server/service/lab_feed.h"

#include <utility>

namespace mculab::server {

void LabFeed::Push(const LabEvent& event) {
  std::lock_guard l(mu_);
  if (closed_ || ended_ || overflowed_) return;
  const bool was_empty = events_.empty();
  if (event.kind == LabEvent::Kind::kSamples) {
    if (samples_of_ == 0 || event.samples.job != samples_of_) return;
    if (events_.size() >= capacity_ / 2) return;
    events_.push_back(event);
    if (was_empty) NotifyLocked();
    return;
  }
  if (event.kind == LabEvent::Kind::kJob) {
    auto it = last_job_.find(event.job.job_id);
    if (it != last_job_.end() && events_[it->second].job.state == event.job.state) {
      events_[it->second] = event;
      return;
    }
  } else {
    auto it = last_board_.find(event.board.name);
    if (it != last_board_.end()) {
      events_[it->second] = event;
      return;
    }
  }
  if (events_.size() >= capacity_) {
    overflowed_ = true;
    events_.clear();
    last_job_.clear();
    last_board_.clear();
    NotifyLocked();
    return;
  }
  if (event.kind == LabEvent::Kind::kJob) {
    last_job_[event.job.job_id] = events_.size();
  } else {
    last_board_[event.board.name] = events_.size();
  }
  events_.push_back(event);
  if (was_empty) NotifyLocked();
}

void LabFeed::End() {
  std::lock_guard l(mu_);
  if (ended_) return;
  ended_ = true;
  NotifyLocked();
}

void LabFeed::Hold(std::shared_ptr<void> resource) {
  std::lock_guard l(mu_);
  held_ = std::move(resource);
}

void LabFeed::SetListener(std::function<void()> listener) {
  std::lock_guard l(mu_);
  if (!closed_) listener_ = std::move(listener);
}

std::vector<LabEvent> LabFeed::TakeAll() {
  std::lock_guard l(mu_);
  std::vector<LabEvent> out;
  out.swap(events_);
  last_job_.clear();
  last_board_.clear();
  return out;
}

bool LabFeed::overflowed() const {
  std::lock_guard l(mu_);
  return overflowed_;
}

bool LabFeed::ended() const {
  std::lock_guard l(mu_);
  return ended_;
}

void LabFeed::Close() {
  std::lock_guard l(mu_);
  closed_ = true;
  listener_ = nullptr;
  events_.clear();
  last_job_.clear();
  last_board_.clear();
}

bool LabFeed::closed() const {
  std::lock_guard l(mu_);
  return closed_;
}

void LabFeed::NotifyLocked() {
  if (listener_) listener_();
}

}  // namespace mculab::server
