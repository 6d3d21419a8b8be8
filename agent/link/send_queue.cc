#include "agent/link/send_queue.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "agent/link/run_wire.h"
#include "common/crash_point.h"

namespace mculab::agent {
namespace {
// How long Detach() waits for a write in progress before cancelling the stream.
constexpr std::chrono::seconds kWriteGrace{1};
}  // namespace

SendQueue::SendQueue(Spool& spool, std::size_t max_bytes)
    : spool_(spool), max_bytes_(max_bytes), sender_([this] { Loop(); }) {}

SendQueue::~SendQueue() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  sender_.join();
}

void SendQueue::Send(RunMessage message) {
  const std::uint64_t run = RunIdOf(message);
  Push(ToWire(message), run);
}

void SendQueue::SendDeferred(RunStateRecord state, std::chrono::milliseconds after) {
  const std::uint64_t run = state.run_id;
  v1::AgentMessage message = ToWire(RunMessage(std::move(state)));
  {
    std::lock_guard lock(mu_);
    if (!AcceptsLocked()) return;  // transient
    deferred_[run] = Deferred{std::chrono::steady_clock::now() + after, std::move(message)};
  }
  cv_.notify_all();  // the sender's wait now ends at the state's due time
}

void SendQueue::Send(const v1::AgentMessage& message) { Push(message); }

void SendQueue::Send(v1::AgentMessage&& message) { Push(std::move(message)); }

template <typename Message>
void SendQueue::Push(Message&& message, std::uint64_t run) {
  const std::size_t bytes = message.ByteSizeLong();
  {
    std::lock_guard lock(mu_);
    if (run != 0) deferred_.erase(run);  // the run has moved on: its held-back state is stale
    if (!AcceptsLocked()) return;        // Attach replays the spool
    // Left untouched when it does not fit, so it can still be noted.
    if (!TryQueueLocked(std::forward<Message>(message), bytes)) LeaveOutLocked(message);
  }
  // After unlocking: the sender wakes to a free lock instead of blocking on ours (a run's state
  // change is on the dispatch path).
  cv_.notify_all();
}

template <typename Message>
bool SendQueue::TryQueueLocked(Message&& message, std::size_t bytes) {
  if (behind_ || (!queue_.empty() && stats_.queued_bytes + bytes > max_bytes_)) return false;
  queue_.push_back(Item{std::forward<Message>(message), bytes, false, 0});
  stats_.queued_bytes += bytes;
  stats_.peak_queued_bytes = std::max(stats_.peak_queued_bytes, stats_.queued_bytes);
  return true;
}

void SendQueue::Resend(std::uint64_t run_id) {
  std::lock_guard lock(mu_);
  if (!AcceptsLocked()) return;
  if (behind_) {
    left_[run_id] = 0;
    return;
  }
  queue_.push_back(Item{{}, 0, true, run_id});
  cv_.notify_all();
}

void SendQueue::LeaveOutLocked(const v1::AgentMessage& m) {
  behind_ = true;
  ++stats_.left_in_spool;
  std::uint64_t run = 0, from = kNoBatches;
  switch (m.msg_case()) {
    case v1::AgentMessage::kBatch:
      run = m.batch().run_id();
      from = m.batch().sequence();
      break;
    case v1::AgentMessage::kRunStarted:
      run = m.run_started().run_id();
      break;
    case v1::AgentMessage::kCaseDone:
      run = m.case_done().run_id();
      break;
    case v1::AgentMessage::kRunFinished:
      run = m.run_finished().run_id();
      break;
    default:
      return;  // transient
  }
  auto [it, inserted] = left_.try_emplace(run, from);
  if (!inserted) it->second = std::min(it->second, from);
}

void SendQueue::Attach(MessageStream& stream) {
  // The runs on disk now: a run that starts later sends through the queue only.
  std::vector<std::uint64_t> runs = spool_.Runs();
  std::lock_guard lock(mu_);
  stream_ = &stream;
  ++epoch_;
  full_replay_ = true;
  full_replay_runs_ = std::move(runs);
  broken_ = close_ = closed_ = false;
  cv_.notify_all();
}

void SendQueue::Detach(const std::function<void()>& cancel) {
  std::unique_lock lock(mu_);
  stream_ = nullptr;
  ++epoch_;
  full_replay_ = behind_ = close_ = false;
  queue_.clear();
  deferred_.clear();
  left_.clear();
  stats_.queued_bytes = 0;
  if (!cv_.wait_for(lock, kWriteGrace, [&] { return !writing_; })) {
    lock.unlock();
    cancel();
    lock.lock();
    cv_.wait(lock, [&] { return !writing_; });
  }
}

void SendQueue::CloseWhenSent() {
  std::lock_guard lock(mu_);
  if (stream_ == nullptr || broken_ || closed_) return;
  close_ = true;
  cv_.notify_all();
}

SendQueueStats SendQueue::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

bool SendQueue::AcceptsLocked() const {
  return stream_ != nullptr && !broken_ && !close_ && !closed_;
}

bool SendQueue::HasWorkLocked() const {
  if (stream_ == nullptr || broken_ || closed_) return false;
  return full_replay_ || !queue_.empty() || behind_ || close_;
}

std::chrono::steady_clock::time_point SendQueue::QueueDueLocked() {
  auto next = std::chrono::steady_clock::time_point::max();
  if (deferred_.empty()) return next;
  const auto now = std::chrono::steady_clock::now();
  for (auto it = deferred_.begin(); it != deferred_.end();) {
    if (it->second.due > now) {
      next = std::min(next, it->second.due);
      ++it;
      continue;
    }
    // Like Push, but a transient message needs no note when it is left out.
    const std::size_t bytes = it->second.message.ByteSizeLong();
    if (AcceptsLocked()) (void)TryQueueLocked(std::move(it->second.message), bytes);
    it = deferred_.erase(it);
  }
  return next;
}

bool SendQueue::ReplayRun(MessageStream& stream, std::uint64_t run_id,
                          std::uint64_t from_sequence) {
  bool ok = true;
  const std::size_t sent = spool_.Replay(
      run_id,
      [&](RunMessage&& m) {
        ok = stream.Write(ToWire(m));
        return ok;
      },
      from_sequence);
  if (sent > 0 && from_sequence == 0) {
    spdlog::info("run {}: resent {} spooled messages", run_id, sent);
  }
  return ok;
}

void SendQueue::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    for (;;) {
      const auto next_due = QueueDueLocked();
      if (stopping_ || HasWorkLocked()) break;
      if (next_due == std::chrono::steady_clock::time_point::max()) {
        cv_.wait(lock);
      } else {
        cv_.wait_until(lock, next_due);
      }
    }
    if (stopping_) return;
    MessageStream& stream = *stream_;
    const std::uint64_t epoch = epoch_;
    writing_ = true;
    bool ok = true;
    if (full_replay_) {
      full_replay_ = false;
      const std::vector<std::uint64_t> runs = std::move(full_replay_runs_);
      full_replay_runs_.clear();
      lock.unlock();
      for (auto run : runs) {
        if (!(ok = ReplayRun(stream, run, 0))) break;
      }
      lock.lock();
    } else if (!queue_.empty()) {
      Item item = std::move(queue_.front());
      queue_.pop_front();
      stats_.queued_bytes -= item.bytes;
      lock.unlock();
      if (item.resend) {
        ok = ReplayRun(stream, item.run_id, 0);
      } else {
        CrashPoint(crash_points::kAgentBeforeSend);
        ok = stream.Write(item.message);
        CrashPoint(crash_points::kAgentAfterSend);
      }
      lock.lock();
      if (ok && !item.resend) ++stats_.written;
    } else if (behind_) {
      // Everything queued before the first left-out message is out: catch up from the spool.
      // Messages sent from now on queue again and follow the replay.
      auto runs = std::move(left_);
      left_.clear();
      behind_ = false;
      ++stats_.catch_up_replays;
      lock.unlock();
      for (const auto& [run, from] : runs) {
        if (!(ok = ReplayRun(stream, run, from))) break;
      }
      lock.lock();
    } else if (close_) {
      close_ = false;
      closed_ = true;
      lock.unlock();
      stream.WritesDone();
      lock.lock();
    }
    writing_ = false;
    if (!ok && epoch == epoch_) {
      // The stream is broken; its reader ends and detaches it, the next stream replays the spool.
      broken_ = true;
      queue_.clear();
      stats_.queued_bytes = 0;
    }
    cv_.notify_all();
  }
}

}  // namespace mculab::agent
