// JobWatch: one subscriber's stream of a job's events (JobDesk::Watch). The first event is the
// job's state when the watch began; the stream ends after an event with a final state.
//
// The Lab pushes an event once the change it reports is committed (from the store's commit
// callback, on its writer thread, with no lock held) and then calls Notify(), which runs the
// consumer's listener: where a gRPC reactor starts a write. The listener must not block. A
// consumer either sets a listener and calls TryNext() when told, or blocks in Next(timeout).
// Progress events coalesce: a new event with the same state replaces a queued one that has not
// been taken, so a slow reader costs no memory.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/domain/job.h"

namespace mculab::server {

struct JobEvent {
  JobId job_id = 0;
  JobState state = JobState::kQueued;
  std::string message;
  std::uint64_t progress_done = 0;
  std::uint64_t progress_total = 0;
  std::string board;
  std::int64_t time_ms = 0;
};

// The event that tells `job`'s current state and progress at `now_ms`.
JobEvent JobEventOf(const Job& job, std::int64_t now_ms);

class JobWatch {
 public:
  explicit JobWatch(JobId job_id) : job_id_(job_id) {}
  JobId job_id() const { return job_id_; }

  // Producer side.
  void Push(const JobEvent& event);  // an event with a final state is the last one
  void End();                        // no more events (the Lab is stopping)
  void Notify();                     // runs the listener; call without locks held
  // Ends the watch at once with an error (the watcher's token was revoked): queued events are
  // dropped, Ended() turns true and failure() says why. Runs the listener; call without locks.
  void Fail(std::string why);
  // Keeps `resource` (the watcher's token subscription) alive as long as the watch.
  void Hold(std::shared_ptr<void> resource);

  // Consumer side.
  std::optional<JobEvent> TryNext();
  // Waits up to `timeout` for an event; nullopt on timeout or at the end (see Ended()).
  std::optional<JobEvent> Next(std::chrono::milliseconds timeout);
  // True once the last event has been taken (or the watch was closed).
  bool Ended() const;
  void SetListener(std::function<void()> listener);
  // The consumer is gone: queued events are dropped and the listener is never called again
  // (a Notify() already running may still finish).
  void Close();
  bool closed() const;
  // Why Fail() ended the watch; empty otherwise.
  std::string failure() const;

 private:
  const JobId job_id_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<JobEvent> events_;
  bool producer_done_ = false;
  bool closed_ = false;
  std::function<void()> listener_;
  std::string failure_;
  std::shared_ptr<void> held_;
};

// The watches of the Lab's live jobs (JobDesk::Watch): which watch hears which job's events. Not
// thread-safe: the Lab calls it under its lock.
class JobWatchers {
 public:
  using Delivery = std::vector<std::pair<std::shared_ptr<JobWatch>, JobEvent>>;

  void Add(JobId job, std::shared_ptr<JobWatch> watch);
  // `event` for every open watch of its job, into `out` (pushed after the commit); closed or
  // dropped watches are forgotten.
  void Collect(const JobEvent& event, Delivery& out);
  // The job reached a final state: its watches hear nothing more from here.
  void Forget(JobId job) { watches_.erase(job); }
  // Ends every watch and forgets them; returns the ones still held (to notify without locks).
  std::vector<std::shared_ptr<JobWatch>> EndAll();

 private:
  std::map<JobId, std::vector<std::weak_ptr<JobWatch>>> watches_;
};

}  // namespace mculab::server
