// Clock: the Lab's only source of time (milliseconds since the Unix epoch), and its way to sleep
// until a deadline, so tests drive time with a fake clock and never sleep.
// Thread-safety: implementations are safe to use from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>

namespace mculab::server {

inline constexpr std::int64_t kNoDeadline = std::numeric_limits<std::int64_t>::max();

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::int64_t NowMs() const = 0;
  // Microseconds since the Unix epoch, for records that time sub-millisecond steps (a job's
  // transitions). A clock without a finer source gives NowMs() * 1000.
  virtual std::int64_t NowUs() const { return NowMs() * 1000; }
  // Like cv.wait(lock), but also returns once NowMs() >= deadline_ms (kNoDeadline: never). May
  // return early; callers re-check their condition in a loop.
  virtual void WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                         std::int64_t deadline_ms) = 0;
};

// Wall-clock time; sleeps with the steady clock so a time change cannot stretch a wait.
class SystemClock final : public Clock {
 public:
  std::int64_t NowMs() const override;
  std::int64_t NowUs() const override;
  void WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                 std::int64_t deadline_ms) override;
};

}  // namespace mculab::server
