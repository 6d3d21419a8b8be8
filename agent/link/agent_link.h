// AgentLink: the agent's one bidirectional gRPC stream to mculab-server (proto/agent.proto).
//
// Per connection: Register (agent, version, boards, active_runs) -> wait for Registered -> replay
// the spool (for every run not yet closed by the server: RunStarted, CaseDone, unacknowledged
// batches, RunFinished; a run left unfinished by an earlier agent process is finished first as
// INFRA_FAILED) -> heartbeat every heartbeat_ms -> serve the server's messages:
//   Assignment -> the board's worker queue (one worker thread per board; the reader never waits
//                 for a board)      Cancel -> the run's CancelToken
//   BatchAck   -> delete the spooled batch         RunClosed -> drop the run's spool
// When the stream breaks: reconnect with exponential backoff and jitter (capped); runs keep going,
// their messages are spooled and replayed after the next Registered.
//
// Only the SendQueue's sender thread writes to a registered stream: the board workers, the
// heartbeat and the reader hand it messages and never wait on the network. After each Registered
// it replays the spool, then sends what the runs send (a message may go twice; the server ignores
// repeats); what does not fit its memory bound stays in the spool and is sent later.
//
// The first successful registration logs the one line "mculab-agent ready: ..." that tests and the
// quickstart wait for.
//
// Thread-safety: Run() on one thread; Stop() from any other (e.g. a signal-handling thread).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/boards/board.h"
#include "agent/io/clock.h"
#include "agent/link/send_queue.h"
#include "agent/run/artifact_cache.h"
#include "agent/run/run_executor.h"
#include "agent/run/spool.h"

namespace mculab::agent {

struct LinkOptions {
  std::string server = "127.0.0.1:7420";
  std::string agent_name;
  std::string version;
  std::chrono::milliseconds heartbeat{2'000};  // unless Registered says otherwise
  std::chrono::milliseconds backoff_initial{200};
  std::chrono::milliseconds backoff_max{2'000};
  std::string token;  // sent as "authorization: Bearer <token>" when set
  std::string
      ca_pem;  // the CA certificate(s) to check the server's TLS certificate; empty: plaintext
  ExecutorOptions executor;
  // The send queue's bound; beyond it, messages wait in the spool (agent/link/send_queue.h).
  std::size_t send_queue_bytes = 8u << 20;
  // The cache of fetched artifacts (custom runners, blobs); empty dir: no custom-runner jobs.
  // Fetched with AgentLink.FetchArtifact over the same channel and token.
  ArtifactCacheOptions artifacts;
};

class AgentLink {
 public:
  AgentLink(LinkOptions options, std::vector<Board*> boards, Spool& spool, Clock& clock);
  ~AgentLink();
  AgentLink(const AgentLink&) = delete;
  AgentLink& operator=(const AgentLink&) = delete;

  // Connects, serves and reconnects until Stop().
  void Run();
  // Stops the boards' runs (reported as INFRA_FAILED: the server requeues them), waits for them to
  // end and their last messages to be offered to the server, then closes the stream. Blocks until
  // the workers are done; Run() returns soon after.
  void Stop();

  // How many times the agent has registered (tests wait on reconnects with it).
  std::uint64_t registrations() const;
  // The send queue's figures (tests check its bound with them).
  SendQueueStats send_stats() const;

  // A board went away (`offline` says why, e.g. its debug probe was unplugged) or came back
  // (`offline` empty). Going away: the server hears it (BoardStatus, and Register while it lasts),
  // the board's running job ends as INFRA_FAILED (the server requeues it) and assignments that
  // still reach it are refused the same way. Any thread.
  void SetBoardOffline(const std::string& board, const std::string& offline);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mculab::agent
