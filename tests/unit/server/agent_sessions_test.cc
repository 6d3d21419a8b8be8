// AgentSessions without a Lab: an agent's current session, a replaced one, closing.
#include "server/service/agent_sessions.h"

#include <gtest/gtest.h>

namespace mculab::server {
namespace {

TEST(AgentSessions, AnOpenedSessionIsItsAgentsCurrentOne) {
  AgentSessions sessions;
  const AgentSessionId expected = sessions.NextId();
  AgentSession& s = sessions.Open("lab-1", nullptr, 42, nullptr);
  EXPECT_EQ(s.id, expected);
  EXPECT_EQ(s.agent, "lab-1");
  EXPECT_EQ(s.last_seen_ms, 42);
  EXPECT_TRUE(sessions.Connected("lab-1"));
  EXPECT_EQ(sessions.Current("lab-1"), &s);
  EXPECT_EQ(sessions.Find(s.id), &s);
  EXPECT_FALSE(sessions.Connected("lab-2"));
  EXPECT_EQ(sessions.Current("lab-2"), nullptr);
}

TEST(AgentSessions, ClosingAReplacedSessionLeavesTheNewerOneCurrent) {
  AgentSessions sessions;
  const AgentSessionId old_id = sessions.Open("lab-1", nullptr, 1, nullptr).id;
  const AgentSessionId new_id = sessions.Open("lab-1", nullptr, 2, nullptr).id;
  EXPECT_NE(old_id, new_id);
  EXPECT_EQ(sessions.Current("lab-1")->id, new_id);
  sessions.Close(old_id);
  EXPECT_EQ(sessions.Find(old_id), nullptr);
  ASSERT_NE(sessions.Current("lab-1"), nullptr);
  EXPECT_EQ(sessions.Current("lab-1")->id, new_id);
  sessions.Close(new_id);
  EXPECT_FALSE(sessions.Connected("lab-1"));
  EXPECT_TRUE(sessions.all().empty());
}

TEST(AgentSessions, ClosingAnUnknownSessionChangesNothing) {
  AgentSessions sessions;
  const AgentSessionId id = sessions.Open("lab-1", nullptr, 1, nullptr).id;
  sessions.Close(id + 100);
  EXPECT_TRUE(sessions.Connected("lab-1"));
  EXPECT_EQ(sessions.all().size(), 1u);
}

}  // namespace
}  // namespace mculab::server
