#include "server/service/job_watch.h"

namespace mculab::server {

void JobWatch::Push(const JobEvent& event) {
  {
    std::lock_guard l(mu_);
    if (closed_ || producer_done_) return;
    if (!events_.empty() && events_.back().state == event.state) {
      events_.back() = event;
    } else {
      events_.push_back(event);
    }
    if (IsFinal(event.state)) producer_done_ = true;
  }
  cv_.notify_all();
}

void JobWatch::End() {
  {
    std::lock_guard l(mu_);
    producer_done_ = true;
  }
  cv_.notify_all();
}

void JobWatch::Notify() {
  std::function<void()> listener;
  {
    std::lock_guard l(mu_);
    if (closed_) return;
    listener = listener_;
  }
  if (listener) listener();
}

void JobWatch::Fail(std::string why) {
  {
    std::lock_guard l(mu_);
    if (closed_) return;
    failure_ = std::move(why);
    producer_done_ = true;
    events_.clear();
  }
  cv_.notify_all();
  Notify();
}

void JobWatch::Hold(std::shared_ptr<void> resource) {
  std::lock_guard l(mu_);
  held_ = std::move(resource);
}

std::string JobWatch::failure() const {
  std::lock_guard l(mu_);
  return failure_;
}

std::optional<JobEvent> JobWatch::TryNext() {
  std::lock_guard l(mu_);
  if (closed_ || events_.empty()) return std::nullopt;
  JobEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

std::optional<JobEvent> JobWatch::Next(std::chrono::milliseconds timeout) {
  std::unique_lock l(mu_);
  cv_.wait_for(l, timeout, [&] { return closed_ || !events_.empty() || producer_done_; });
  if (closed_ || events_.empty()) return std::nullopt;
  JobEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

bool JobWatch::Ended() const {
  std::lock_guard l(mu_);
  return closed_ || (producer_done_ && events_.empty());
}

void JobWatch::SetListener(std::function<void()> listener) {
  std::lock_guard l(mu_);
  listener_ = std::move(listener);
}

void JobWatch::Close() {
  {
    std::lock_guard l(mu_);
    closed_ = true;
    events_.clear();
    listener_ = nullptr;
  }
  cv_.notify_all();
}

bool JobWatch::closed() const {
  std::lock_guard l(mu_);
  return closed_;
}

}  // namespace mculab::server
