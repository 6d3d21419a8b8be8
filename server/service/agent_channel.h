// AgentChannel: how the Lab talks to one connected agent (AgentCommand: AgentRegistered,
// RunAssignment, RunCancel, BatchAck, RunClosed). The rpc layer implements it over the agent's gRPC
// stream; tests use a fake that records messages.
//
// Contract: Send() queues the message and returns at once; it never blocks on the network and never
// calls back into the Lab. The Lab calls it only once the state the message reports is committed:
// from the store's commit callbacks (on the store's writer thread, in commit order, which is the
// order the Lab decided them). After the stream is gone Send() drops messages.
// Thread-safety: Send() may be called from any thread.
#pragma once

#include "server/service/agent_events.h"

namespace mculab::server {

class AgentChannel {
 public:
  virtual ~AgentChannel() = default;
  virtual void Send(const AgentCommand& command) = 0;
  // Ends the stream from the server's side (the agent went silent and was dropped; it reconnects
  // and registers again if it is still alive). Never blocks; later Sends are dropped.
  virtual void Hangup() {}
};

}  // namespace mculab::server
