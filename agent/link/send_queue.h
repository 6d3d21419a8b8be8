// SendQueue: the agent's messages on their way to the server. A queue bounded in bytes, drained by
// one sender thread, which alone writes to the stream: whoever sends (a board worker inside the
// runner's read loop, the heartbeat, the stream's reader) only takes a short lock and never waits
// on the network, however slowly the server reads.
//
//   Send(m)  queues m (a run's message translated to the wire first); when the queue already holds
//   max_bytes, m is left out. A message the
//            server must not lose is spooled before it is sent (the run executor's rule), so a
//            left-out message is only noted (its run, and its sequence for a batch). Once the
//            sender has written everything queued before it, it replays the noted runs from the
//            spool (batches from the first left-out sequence on), then goes on with the queue.
//            Until that replay starts every later message is left out too, so the server gets
//            each run's messages in the order they were spooled. Messages that are not spooled
//            (heartbeats, RunState) are transient: left out, never replayed.
//   SendDeferred(state, after)  holds a run's transient state back for `after`; the sender
//            queues it then, unless a message of the same run was sent meanwhile (it supersedes
//            the state, which is dropped) or the stream went away.
//   Attach   a registered stream: the sender first replays the runs the spool holds at that
//            moment (what the server may have missed while there was no stream), then the queue.
//   Detach   the stream ended: the queue is emptied (the next Attach replays the spool); returns
//            once the sender no longer uses the stream.
//   Without a stream Send() leaves everything out: the spool has what matters.
//
// Thread-safety: every member may be called from any thread. The MessageStream is used on the
// sender thread only, and no lock is held while it is.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "agent.pb.h"
#include "agent/run/run_types.h"
#include "agent/run/spool.h"

namespace mculab::agent {

// One connection's outgoing half (the gRPC stream in AgentLink, a fake in tests).
class MessageStream {
 public:
  virtual ~MessageStream() = default;
  // Blocks while the transport is full; false when the stream is broken.
  virtual bool Write(const v1::AgentMessage& message) = 0;
  // Half-close: no more writes.
  virtual void WritesDone() = 0;
};

struct SendQueueStats {
  std::size_t queued_bytes = 0;
  std::size_t peak_queued_bytes = 0;   // the most the queue ever held
  std::uint64_t written = 0;           // messages written from the queue
  std::uint64_t left_in_spool = 0;     // messages left out of a full queue (spooled ones replayed)
  std::uint64_t catch_up_replays = 0;  // replays of left-out runs
};

class SendQueue final : public RunSink {
 public:
  // `max_bytes`: the queue's bound (serialized sizes); a message larger than the bound is still
  // queued when the queue is empty.
  SendQueue(Spool& spool, std::size_t max_bytes);
  ~SendQueue() override;
  SendQueue(const SendQueue&) = delete;
  SendQueue& operator=(const SendQueue&) = delete;

  // A run's message, translated to the wire here (agent/link/run_wire.h).
  void Send(RunMessage message) override;
  void SendDeferred(RunStateRecord state, std::chrono::milliseconds after) override;
  // The link's own messages (heartbeat, board status).
  void Send(const v1::AgentMessage& message);
  void Send(v1::AgentMessage&& message);
  // Sends the run's spooled messages again after what is queued (an assignment of a run that
  // already ran here).
  void Resend(std::uint64_t run_id);

  // `stream` must outlive the matching Detach().
  void Attach(MessageStream& stream);
  // When the sender is stuck in a write for longer than a moment, `cancel` is called so the write
  // fails (the stream is ending anyway).
  void Detach(const std::function<void()>& cancel);
  // Writes what is queued and left out, then half-closes the stream; later messages are dropped.
  void CloseWhenSent();

  SendQueueStats stats() const;

 private:
  struct Item {
    v1::AgentMessage message;
    std::size_t bytes = 0;
    bool resend = false;  // replay message.run_id from the spool instead of writing a message
    std::uint64_t run_id = 0;
  };
  static constexpr std::uint64_t kNoBatches = ~std::uint64_t{0};

  // A transient message held back by SendDeferred.
  struct Deferred {
    std::chrono::steady_clock::time_point due;
    v1::AgentMessage message;
  };

  // `run`: the run whose deferred state the message supersedes (0: none).
  template <typename Message>
  void Push(Message&& message, std::uint64_t run = 0);
  // Queues `message` unless something is left out already or the bound is reached (a message
  // larger than the bound still goes into an empty queue); false: not queued, `message` untouched.
  template <typename Message>
  bool TryQueueLocked(Message&& message, std::size_t bytes);
  void Loop();
  bool HasWorkLocked() const;
  // A stream is attached and takes messages (not broken, not closing).
  bool AcceptsLocked() const;
  // Queues the deferred states that are due; returns when the next one is (max(): none).
  std::chrono::steady_clock::time_point QueueDueLocked();
  void LeaveOutLocked(const v1::AgentMessage& message);
  bool ReplayRun(MessageStream& stream, std::uint64_t run_id, std::uint64_t from_sequence);

  Spool& spool_;
  const std::size_t max_bytes_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  MessageStream* stream_ = nullptr;  // attached stream
  std::uint64_t epoch_ = 0;          // counts Attach/Detach, so a stale failure is ignored
  bool full_replay_ = false;         // the spool goes first on this stream
  std::vector<std::uint64_t> full_replay_runs_;  // the runs it held at Attach
  bool broken_ = false;                          // a write failed: nothing more on this stream
  bool close_ = false;                           // CloseWhenSent() asked
  bool closed_ = false;                          // WritesDone() was called
  bool writing_ = false;                         // the sender is using stream_
  std::deque<Item> queue_;
  std::map<std::uint64_t, Deferred> deferred_;  // run -> its held-back state
  bool behind_ = false;  // something was left out: everything is, until the catch-up replay
  std::map<std::uint64_t, std::uint64_t> left_;  // run -> first left-out batch sequence
  bool stopping_ = false;
  SendQueueStats stats_;
  std::thread sender_;  // last: starts after everything above exists
};

}  // namespace mculab::agent
