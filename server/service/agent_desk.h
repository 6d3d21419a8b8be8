// AgentDesk: the agents' side of the Lab, over the LabState (lab_state.h). An agent registers its
// boards, then reports each run: its state, its provenance, its sample batches (acknowledged after
// commit), each case's checksum and its end. Messages to agents go out through AgentChannel, said
// after the writes they report commit.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "server/service/agent_channel.h"
#include "server/service/agent_events.h"
#include "server/service/caller.h"
#include "server/service/lab_feed.h"
#include "server/service/lab_state.h"

namespace mculab::server {

class AgentDesk {
 public:
  AgentDesk(LabState& st, LabParts& parts) : st_(st), p_(parts) {}

  // The first message of an agent's stream; the caller must hold reg.agent's agent token. A board
  // that belongs to another agent (whoever registered it first, or an admin's AssignBoard) is
  // refused, naming its owner; so are more boards or tags than config max_boards_per_agent /
  // max_tags_per_board. The session ends when the agent's token is revoked. Upserts its boards
  // (idle, or busy with a run it resumes after a server restart; a board new to the lab is trusted
  // with no user's job yet: BoardUpkeep::AdmitNewBoardLocked), sends Registered, and replaces an
  // older session of the same agent (whose runs are infrastructure failures). An agent that then
  // sends nothing (not even a heartbeat) for config heartbeat_timeout is dropped like a
  // disconnected one, and its channel is hung up.
  Result<AgentSessionId> ConnectAgent(const Caller& caller, const AgentRegistration& reg,
                                      std::shared_ptr<AgentChannel> channel);
  // Every later message of that stream. A message about a run the agent does not hold (another
  // agent's, or one never assigned) is refused, counted (refused_agent_messages) and never stored.
  void OnAgentMessage(AgentSessionId session, AgentEvent event);
  // The stream ended: the agent's boards go offline and their runs are infrastructure failures
  // (except while the Lab is stopping: then the next Start() deals with them).
  void DisconnectAgent(AgentSessionId session, const std::string& reason);

  // ---- for the Lab's parts, with st.mu held ----
  // Queues a message for the agent's current session, sent after the effects' writes commit.
  void SendToAgentLocked(const std::string& agent, AgentCommand command, Effects& fx);
  // Whether `board`'s agent is stopping or has said the board is gone.
  bool BoardUnavailableLocked(const Board& board) const;
  // Silent agents and restored runs whose agent did not come back (background thread).
  void ExpireAgentsLocked(Effects& fx);
  // The earliest of those deadlines, kNoDeadline when none.
  std::int64_t NextAgentDeadlineLocked() const;

 private:
  void DropSessionLocked(AgentSession& s, const std::string& reason, Effects& fx);
  // In ConnectAgent: the agent's restored runs resume (listed in active_runs) or fail.
  void ReconcileRunsLocked(const std::string& agent, const std::set<std::uint64_t>& active_runs,
                           Effects& fx);
  // The agent's active run `id`; null (and counted as refused, unless the run merely ended) when
  // the agent does not hold it.
  ActiveRun* FindRunLocked(RunId id, const std::string& agent);
  // The token of session `id` was revoked: drop it and hang up its stream.
  void OnAgentTokenRevoked(AgentSessionId id);
  void OnAgentStopping(AgentSessionId session);
  void OnBoardStatus(AgentSessionId session, const BoardStatusReport& m);
  void OnRunState(const std::string& agent, const RunPhaseReport& m);
  void OnRunStarted(const std::string& agent, RunStartedReport m);
  void OnBatch(const std::string& agent, SampleBatchReport m);
  // live: the batch's timer values per case for feeds that follow the job's samples (null when
  // no feed follows any job's).
  void OnBatchCommitted(const std::string& agent, RunId run, std::uint64_t sequence,
                        const WriteOutcome& outcome,
                        std::shared_ptr<std::vector<LiveSamples>> live);
  void OnCaseDone(const std::string& agent, CaseDoneReport m);
  void OnRunFinished(const std::string& agent, const RunFinishedReport& m);

  LabState& st_;
  LabParts& p_;
};

}  // namespace mculab::server
