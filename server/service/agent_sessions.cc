#include "server/service/agent_sessions.h"

#include <utility>

namespace mculab::server {

AgentSession& AgentSessions::Open(const std::string& agent, std::shared_ptr<AgentChannel> channel,
                                  std::int64_t now_ms,
                                  std::shared_ptr<TokenSubscription> token_watch) {
  const AgentSessionId id = next_id_++;
  AgentSession& s = sessions_[id];
  s.id = id;
  s.agent = agent;
  s.channel = std::move(channel);
  s.last_seen_ms = now_ms;
  s.token_watch = std::move(token_watch);
  current_[agent] = id;
  return s;
}

AgentSession* AgentSessions::Find(AgentSessionId id) {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : &it->second;
}

AgentSession* AgentSessions::Current(const std::string& agent) {
  auto it = current_.find(agent);
  return it == current_.end() ? nullptr : Find(it->second);
}

const AgentSession* AgentSessions::Current(const std::string& agent) const {
  auto it = current_.find(agent);
  if (it == current_.end()) return nullptr;
  auto s = sessions_.find(it->second);
  return s == sessions_.end() ? nullptr : &s->second;
}

void AgentSessions::Close(AgentSessionId id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  if (auto c = current_.find(it->second.agent); c != current_.end() && c->second == id) {
    current_.erase(c);
  }
  sessions_.erase(it);
}

}  // namespace mculab::server
