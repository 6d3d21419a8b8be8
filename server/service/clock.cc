#include "server/service/clock.h"

#include <chrono>

namespace mculab::server {

std::int64_t SystemClock::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t SystemClock::NowUs() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void SystemClock::WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                            std::int64_t deadline_ms) {
  if (deadline_ms == kNoDeadline) {
    cv.wait(lock);
    return;
  }
  const std::int64_t left = deadline_ms - NowMs();
  if (left <= 0) return;
  cv.wait_for(lock, std::chrono::milliseconds(left));
}

}  // namespace mculab::server
