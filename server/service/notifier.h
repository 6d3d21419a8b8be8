// Notifier: the lab's alerts (a change point in a series someone follows, a failed CI gate) as
// JSON POSTs to the webhook URLs of the server's config ([notify] webhooks), from a thread of its
// own: Post() queues and returns at once, so a slow or dead chat service never holds up the lab.
// A failed POST is retried with back-off (1 s, 2 s, 4 s, ... at most a minute apart) up to
// max_attempts times, then logged and dropped; at most max_pending deliveries wait (beyond, the
// oldest is dropped and counted). Alerts waiting when the server stops are not kept.
// The body is what Slack's incoming webhooks and Matrix's hookshot take, {"text": "..."}, with
// the alert's fields beside it for anything that reads JSON (AlertBody).
// Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/result.h"
#include "server/service/clock.h"

namespace mculab::server {

struct NotifyOptions {
  std::vector<std::string> webhooks;
  std::uint32_t timeout_ms = 5000;  // one POST, connect to reply
  std::uint32_t max_attempts = 6;   // per webhook and alert
  std::uint32_t max_pending = 1000;
  std::string ca_file;  // PEM certificates trusted for https:// (empty: the system's)
};

// One POST: (url, body, timeout_ms); an error when it did not get a 2xx reply.
using PostFunction =
    std::function<Status(const std::string& url, const std::string& body, std::uint32_t)>;

// The wait before attempt `attempt` + 1 after `attempt` failed (1-based): 1 s doubling, at most
// 60 s.
std::int64_t BackoffMs(std::uint32_t attempt);

// {"text": text, "mculab": fields}: `fields` a JSON object as text (AlertFields).
std::string AlertBody(std::string_view text, std::string_view fields_json);

class Notifier {
 public:
  Notifier(NotifyOptions options, PostFunction post, Clock& clock);
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  bool enabled() const { return !options_.webhooks.empty(); }
  std::size_t webhook_count() const { return options_.webhooks.size(); }
  // Queues `body` for every webhook; false (nothing queued) when there are none.
  bool Post(std::string body);
  // Ends the thread; deliveries still waiting are dropped (and logged).
  void Stop();

  struct Counts {
    std::uint64_t sent = 0;     // POSTs that got a 2xx
    std::uint64_t retried = 0;  // failed POSTs tried again later
    std::uint64_t failed = 0;   // deliveries given up after max_attempts
    std::uint64_t dropped = 0;  // deliveries dropped: the queue was full, or the server stopped
  };
  Counts counts() const;
  std::size_t pending() const;
  // Returns once nothing is pending or in flight, or at `deadline_ms` (tests).
  void WaitIdle(std::int64_t deadline_ms);

 private:
  struct Delivery {
    std::size_t webhook = 0;
    std::shared_ptr<const std::string> body;
    std::uint32_t attempt = 0;  // attempts made so far
    std::int64_t due_ms = 0;
  };
  void Run();

  const NotifyOptions options_;
  PostFunction post_;
  Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Delivery> pending_;
  bool in_flight_ = false;
  bool stopping_ = false;
  Counts counts_;
  std::thread thread_;
};

}  // namespace mculab::server
