// Clock: the agent's one source of time, so that timeouts can be tested without waiting.
// RealClock() is the steady clock and really sleeps; FakeClock only moves when told (SleepFor
// advances it at once), so a "hang until the timeout" in a test costs no wall time.
// Thread-safety: both implementations may be used from several threads.
#pragma once

#include <atomic>
#include <chrono>

namespace mculab::agent {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  virtual void SleepFor(std::chrono::nanoseconds d) = 0;
};

// The process-wide steady clock.
Clock& RealClock();

class FakeClock final : public Clock {
 public:
  TimePoint Now() const override { return TimePoint(std::chrono::nanoseconds(now_ns_.load())); }
  void SleepFor(std::chrono::nanoseconds d) override { Advance(d); }
  void Advance(std::chrono::nanoseconds d) { now_ns_ += d.count(); }

 private:
  std::atomic<std::int64_t> now_ns_{1'000'000'000};
};

// Milliseconds left until `deadline` (never negative).
inline std::chrono::milliseconds Remaining(const Clock& clock, Clock::TimePoint deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock.Now());
  return left.count() > 0 ? left : std::chrono::milliseconds(0);
}

}  // namespace mculab::agent
