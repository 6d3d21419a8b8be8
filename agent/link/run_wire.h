// The run's plain types (agent/run/run_types.h) to and from agent.proto's messages: the one place
// the agent translates between them. AgentLink and SendQueue call it at their edge; nothing below
// the link sees a proto message.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>

#include "agent.pb.h"
#include "agent/run/run_types.h"

namespace mculab::agent {

RunAssignment FromWire(const v1::Assignment& a);

// The message the server reads for `m`: a batch in the form it asked for (SampleBatchRecord's
// as_columns: the packed columns, else one Sample per row).
v1::AgentMessage ToWire(const RunMessage& m);

v1::RunFinished::Outcome ToWire(RunOutcome o);
RunOutcome FromWire(v1::RunFinished::Outcome o);

// The run message an AgentMessage holds (RunStarted, CaseDone, SampleBatch, RunFinished,
// RunState); nullopt for the others (Register, Heartbeat, BoardStatus).
std::optional<RunMessage> RunMessageFromWire(const v1::AgentMessage& m);

}  // namespace mculab::agent
