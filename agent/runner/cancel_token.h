// CancelToken: asks a running session to stop. Set from the link's reader thread (a Cancel from the
// server) or at shutdown; polled by the session between reads.
// Thread-safety: all members may be called from any thread.
#pragma once

#include <atomic>

namespace mculab::agent {

enum class CancelReason : int {
  kNone = 0,
  kByServer = 1,    // the user cancelled or the server closed the run: outcome CANCELLED
  kShutdown = 2,    // the agent is stopping: an infrastructure failure, the job is requeued
  kAgentFault = 3,  // the agent cannot keep the results (spool write failed): infrastructure
  kBoardGone = 4,   // the board's debug probe disappeared: infrastructure, the job is requeued
};

class CancelToken {
 public:
  // The first reason given wins.
  void Cancel(CancelReason reason) {
    int expected = 0;
    reason_.compare_exchange_strong(expected, static_cast<int>(reason));
  }
  bool cancelled() const { return reason_.load() != 0; }
  CancelReason reason() const { return static_cast<CancelReason>(reason_.load()); }

 private:
  std::atomic<int> reason_{0};
};

}  // namespace mculab::agent
