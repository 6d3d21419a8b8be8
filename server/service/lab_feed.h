// LabFeed: one subscriber's stream of every job and board change in the lab (Lab::Subscribe);
// the web page's event stream (GET /api/v1/events) reads one.
//
// The Lab pushes events in the order it decided them, once their store writes are committed (from
// the store's commit callback), so a reader that sees an event can read its effects and a crash
// never leaves an announced change unstored. Push never waits for the
// consumer: the queue is bounded and coalesces (a job's progress event replaces a queued one of
// the same job and state; a board's event replaces a queued one of the same board). When a slow
// consumer lets it fill up anyway, the queued events are dropped and the feed is marked
// overflowed: the consumer should end its stream, and its client refetch what it shows.
//
// The listener runs on the producer's thread (the store's writer), with the feed's lock held,
// whenever the queue turns non-empty, on overflow and at the end. It must only schedule work (e.g.
// post to an executor) and return; it must not call the feed or the Lab. After Close() returns it
// never runs again. Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/domain/board.h"
#include "server/service/job_watch.h"

namespace mculab::server {

// At most this many values per live-samples event: a longer batch is thinned evenly (the job page
// plots a preview while the job runs, then reads the stored values when the case finishes).
inline constexpr std::size_t kLiveSamplesPerEvent = 256;

// Per-iteration timer values of one case (pass 0) that a committed batch brought.
struct LiveSamples {
  JobId job = 0;
  std::uint32_t case_index = 0;
  std::vector<std::uint32_t> iterations;  // ascending
  std::vector<std::int64_t> values;
};

struct LabEvent {
  enum class Kind { kJob, kBoard, kSamples };
  Kind kind = Kind::kJob;
  JobEvent job;                    // kJob
  Board board;                     // kBoard
  std::uint32_t queue_length = 0;  // kBoard: queued jobs that could run on the board
  LiveSamples samples;             // kSamples: only to a feed that follows the job's samples
};

class LabFeed {
 public:
  static constexpr std::size_t kDefaultCapacity = 4096;

  // samples_of: the job whose live values this feed carries (0: none). Samples events are a
  // preview: they never coalesce, and are dropped (not an overflow) while the queue is half
  // full, so a slow consumer loses values before it loses job and board events.
  explicit LabFeed(std::size_t capacity = kDefaultCapacity, JobId samples_of = 0)
      : capacity_(capacity), samples_of_(samples_of) {}

  JobId samples_of() const { return samples_of_; }

  // ---- producer (the Lab) ----
  void Push(const LabEvent& event);
  void End();  // no more events: the Lab is stopping (or the subscriber's token was revoked)
  // Keeps `resource` (the subscriber's token subscription) alive as long as the feed.
  void Hold(std::shared_ptr<void> resource);

  // ---- consumer ----
  void SetListener(std::function<void()> listener);
  // Takes every queued event, oldest first.
  std::vector<LabEvent> TakeAll();
  // Events were dropped because the consumer fell behind (sticky).
  bool overflowed() const;
  // The producer ended the feed (its queue may still hold events).
  bool ended() const;
  // The consumer is gone: queued events are dropped, the listener is never called again.
  void Close();
  bool closed() const;

 private:
  void NotifyLocked();

  const std::size_t capacity_;
  const JobId samples_of_;
  mutable std::mutex mu_;
  std::vector<LabEvent> events_;
  std::map<JobId, std::size_t> last_job_;          // job -> index of its last queued event
  std::map<std::string, std::size_t> last_board_;  // board -> index of its queued event
  bool overflowed_ = false;
  bool ended_ = false;
  bool closed_ = false;
  std::function<void()> listener_;
  std::shared_ptr<void> held_;
};

}  // namespace mculab::server
