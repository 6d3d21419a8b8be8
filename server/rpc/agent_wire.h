// agent.proto's messages <-> the Lab's agent events and commands (service/agent_events.h). Pure
// conversions, without gRPC: the agent link service uses them on every message, and tests and the
// fuzzer drive the Lab through them as an agent's stream would.
#pragma once

#include <string>

#include "agent.pb.h"
#include "server/service/agent_events.h"

namespace mculab::server::rpc {

AgentRegistration RegistrationFromProto(const mculab::v1::Register& m);

// An agent's message after its Register, as the Lab's event. A message the Lab has no use for (a
// second Register, an empty message, a run state other than preparing or running) is logged,
// naming `agent`, and becomes a heartbeat: it still says the agent is alive.
AgentEvent EventFromProto(const mculab::v1::AgentMessage& m, const std::string& agent);

mculab::v1::ServerMessage ToProto(const AgentCommand& command);

}  // namespace mculab::server::rpc
