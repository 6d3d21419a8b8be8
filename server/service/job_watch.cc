#include "server/service/job_watch.h"

#include <algorithm>

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

JobEvent JobEventOf(const Job& job, std::int64_t now_ms) {
  return JobEvent{job.id,
                  job.state,
                  job.message,
                  std::min(job.progress_done, job.ProgressTotal()),
                  job.ProgressTotal(),
                  job.assigned_board,
                  now_ms};
}

void JobWatchers::Add(JobId job, std::shared_ptr<JobWatch> watch) {
  watches_[job].push_back(std::move(watch));
}

void JobWatchers::Collect(const JobEvent& event, Delivery& out) {
  auto it = watches_.find(event.job_id);
  if (it == watches_.end()) return;
  auto& list = it->second;
  for (auto w = list.begin(); w != list.end();) {
    auto watch = w->lock();
    if (!watch || watch->closed()) {
      w = list.erase(w);
      continue;
    }
    out.emplace_back(std::move(watch), event);
    ++w;
  }
  if (list.empty()) watches_.erase(it);
}

std::vector<std::shared_ptr<JobWatch>> JobWatchers::EndAll() {
  std::vector<std::shared_ptr<JobWatch>> ended;
  for (auto& [id, list] : watches_) {
    for (auto& weak : list) {
      if (auto w = weak.lock()) {
        w->End();
        ended.push_back(std::move(w));
      }
    }
  }
  watches_.clear();
  return ended;
}

}  // namespace mculab::server
