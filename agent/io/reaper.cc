#include "agent/io/reaper.h"

namespace mculab::agent {

Reaper::Reaper() : thread_([this] { Loop(); }) {}

Reaper::~Reaper() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Reaper::Give(std::unique_ptr<Subprocess> process, std::unique_ptr<RunDir> dir) {
  if (process) process->Kill();
  {
    std::lock_guard lock(mu_);
    queue_.push_back({std::move(process), std::move(dir)});
  }
  cv_.notify_all();
}

void Reaper::Drain() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && in_progress_ == 0; });
}

void Reaper::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping with nothing left
    Work w = std::move(queue_.front());
    queue_.pop_front();
    ++in_progress_;
    lock.unlock();
    w.process.reset();  // waits for the exit and reaps
    w.dir.reset();      // then the folder goes
    lock.lock();
    --in_progress_;
    cv_.notify_all();
  }
}

}  // namespace mculab::agent
