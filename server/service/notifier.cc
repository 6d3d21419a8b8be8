#include "server/service/notifier.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace mculab::server {

std::int64_t BackoffMs(std::uint32_t attempt) {
  constexpr std::int64_t kFirst = 1000, kMost = 60'000;
  if (attempt == 0) return 0;
  if (attempt > 7) return kMost;
  return std::min(kMost, kFirst << (attempt - 1));
}

std::string AlertBody(std::string_view text, std::string_view fields_json) {
  nlohmann::ordered_json j;
  j["text"] = std::string(text);
  j["mculab"] = nlohmann::json::parse(fields_json, nullptr, /*allow_exceptions=*/false);
  // Invalid UTF-8 in a label or message is replaced, never a reason to lose the alert.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Notifier::Notifier(NotifyOptions options, PostFunction post, Clock& clock)
    : options_(std::move(options)), post_(std::move(post)), clock_(clock) {
  if (enabled()) thread_ = std::thread([this] { Run(); });
}

Notifier::~Notifier() { Stop(); }

bool Notifier::Post(std::string body) {
  if (!enabled()) return false;
  auto shared = std::make_shared<const std::string>(std::move(body));
  {
    std::lock_guard l(mu_);
    if (stopping_) return false;
    const std::int64_t now = clock_.NowMs();
    for (std::size_t w = 0; w < options_.webhooks.size(); ++w) {
      if (pending_.size() >= options_.max_pending) {
        ++counts_.dropped;
        spdlog::warn("webhook: {} alerts wait already; the oldest is dropped",
                     options_.max_pending);
        pending_.pop_front();
      }
      pending_.push_back(Delivery{w, shared, 0, now});
    }
  }
  cv_.notify_all();
  return true;
}

void Notifier::Stop() {
  {
    std::lock_guard l(mu_);
    if (stopping_) return;
    stopping_ = true;
    if (!pending_.empty()) {
      spdlog::warn("webhook: {} alert deliveries dropped as the server stops", pending_.size());
      counts_.dropped += pending_.size();
      pending_.clear();
    }
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Notifier::Counts Notifier::counts() const {
  std::lock_guard l(mu_);
  return counts_;
}

std::size_t Notifier::pending() const {
  std::lock_guard l(mu_);
  return pending_.size() + (in_flight_ ? 1 : 0);
}

void Notifier::WaitIdle(std::int64_t deadline_ms) {
  std::unique_lock l(mu_);
  while ((!pending_.empty() || in_flight_) && clock_.NowMs() < deadline_ms) {
    clock_.WaitUntil(l, cv_, deadline_ms);
  }
}

void Notifier::Run() {
  std::unique_lock l(mu_);
  while (!stopping_) {
    auto next =
        std::min_element(pending_.begin(), pending_.end(),
                         [](const Delivery& a, const Delivery& b) { return a.due_ms < b.due_ms; });
    if (next == pending_.end()) {
      clock_.WaitUntil(l, cv_, kNoDeadline);
      continue;
    }
    if (next->due_ms > clock_.NowMs()) {
      clock_.WaitUntil(l, cv_, next->due_ms);
      continue;
    }
    Delivery d = std::move(*next);
    pending_.erase(next);
    in_flight_ = true;
    const std::string& url = options_.webhooks[d.webhook];
    l.unlock();
    Status s = post_(url, *d.body, options_.timeout_ms);
    l.lock();
    in_flight_ = false;
    ++d.attempt;
    if (s.ok()) {
      ++counts_.sent;
    } else if (d.attempt >= options_.max_attempts || stopping_) {
      ++counts_.failed;
      spdlog::error("webhook: an alert was not delivered after {} attempt{}: {}", d.attempt,
                    d.attempt == 1 ? "" : "s", s.error().message);
    } else {
      ++counts_.retried;
      d.due_ms = clock_.NowMs() + BackoffMs(d.attempt);
      spdlog::warn("webhook: attempt {} of {} failed ({}); trying again in {} s", d.attempt,
                   options_.max_attempts, s.error().message, BackoffMs(d.attempt) / 1000);
      pending_.push_back(std::move(d));
    }
    cv_.notify_all();  // WaitIdle
  }
}

}  // namespace mculab::server
