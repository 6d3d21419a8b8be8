// AgentSessions: the agents connected to the lab, one session per open stream, and which session
// is each agent's current one (a reconnecting agent replaces its older session).
//
// Not thread-safe: the Lab calls it under its lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "server/service/accounts.h"
#include "server/service/agent_channel.h"

namespace mculab::server {

using AgentSessionId = std::uint64_t;

struct AgentSession {
  AgentSessionId id = 0;
  std::string agent;
  std::shared_ptr<AgentChannel> channel;
  std::int64_t last_seen_ms = 0;
  bool stopping = false;                           // Heartbeat.stopping: its boards get no new work
  std::shared_ptr<TokenSubscription> token_watch;  // ends the session when revoked
  // Boards the agent says are gone (probe unplugged), with why: offline until BoardStatus brings
  // them back; a busy one goes offline when its run ends.
  std::map<std::string, std::string> absent_boards;
};

class AgentSessions {
 public:
  // The id the next Open gives (for a token watch set up before the session exists).
  AgentSessionId NextId() const { return next_id_; }
  // A new session, now `agent`'s current one (close its older one first).
  AgentSession& Open(const std::string& agent, std::shared_ptr<AgentChannel> channel,
                     std::int64_t now_ms, std::shared_ptr<TokenSubscription> token_watch);
  // Null when the session ended (or was replaced and closed).
  AgentSession* Find(AgentSessionId id);
  // The agent's current session; null when the agent is not connected.
  AgentSession* Current(const std::string& agent);
  const AgentSession* Current(const std::string& agent) const;
  bool Connected(const std::string& agent) const { return current_.contains(agent); }
  // Forgets the session, and the agent's current session when it is this one.
  void Close(AgentSessionId id);
  // Every open session, by id.
  std::map<AgentSessionId, AgentSession>& all() { return sessions_; }
  const std::map<AgentSessionId, AgentSession>& all() const { return sessions_; }

 private:
  AgentSessionId next_id_ = 1;
  std::map<AgentSessionId, AgentSession> sessions_;
  std::map<std::string, AgentSessionId> current_;  // agent name -> its current session
};

}  // namespace mculab::server
