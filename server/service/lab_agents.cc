// Lab: the agent side. An agent registers its boards, then reports each run: its state, its
// provenance, its sample batches (acknowledged after commit), each case's checksum and its end.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>
#include <type_traits>
#include <variant>

#include "common/crash_point.h"
#include "server/domain/run_verdict.h"
#include "server/service/lab.h"

namespace mculab::server {
namespace {

std::string Actor(const std::string& agent) { return "agent:" + agent; }

// A batch's timer values per case, in iteration order, each case thinned evenly to at most
// kLiveSamplesPerEvent values (the job id is filled in once the run is known).
std::vector<LiveSamples> ThinLive(const SampleBatch& b) {
  std::map<std::uint32_t, std::vector<std::pair<std::uint32_t, std::int64_t>>> by_case;
  for (const Sample& s : b.samples) {
    if (s.metric == 0) by_case[s.case_index].emplace_back(s.iteration, s.value);
  }
  std::vector<LiveSamples> out;
  for (auto& [index, points] : by_case) {
    std::sort(points.begin(), points.end());
    LiveSamples l;
    l.case_index = index;
    const std::size_t n = points.size();
    const std::size_t keep = std::min(n, kLiveSamplesPerEvent);
    l.iterations.reserve(keep);
    l.values.reserve(keep);
    for (std::size_t k = 0; k < keep; ++k) {
      const auto& [iteration, value] = points[k * n / keep];
      l.iterations.push_back(iteration);
      l.values.push_back(value);
    }
    out.push_back(std::move(l));
  }
  return out;
}

}  // namespace

Result<AgentSessionId> Lab::ConnectAgent(const Caller& caller, const AgentRegistration& reg,
                                         std::shared_ptr<AgentChannel> channel) {
  if (reg.agent.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "Register.agent (the agent's name) is empty");
  }
  if (Status s = RequireAgent(caller, reg.agent); !s.ok()) return s.error();
  std::set<std::string> names;
  for (const auto& b : reg.boards) {
    if (b.name.empty() || b.kind.empty()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "agent " + reg.agent + " registered a board without a name or kind");
    }
    if (!names.insert(b.name).second) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "agent " + reg.agent + " registered board " + b.name + " twice");
    }
  }

  if (reg.boards.size() > config_.max_boards_per_agent) {
    return MakeError(
        ErrorCode::kResourceExhausted,
        fmt::format("agent {} registered {} boards; this server accepts at most {} per "
                    "agent (server config max_boards_per_agent)",
                    reg.agent, reg.boards.size(), config_.max_boards_per_agent));
  }
  for (const auto& b : reg.boards) {
    if (b.tags.size() > config_.max_tags_per_board) {
      return MakeError(ErrorCode::kResourceExhausted,
                       fmt::format("agent {} registered board {} with {} tags; this server accepts "
                                   "at most {} per board (server config max_tags_per_board)",
                                   reg.agent, b.name, b.tags.size(), config_.max_tags_per_board));
    }
  }

  if (Status s = Serving(); !s.ok()) return s.error();
  std::unique_lock l(mu_);
  if (stopping_) return MakeError(ErrorCode::kUnavailable, "the server is shutting down");
  // A board belongs to the agent that first registered it (the boards table keeps the owner
  // across restarts), connected or not: another agent cannot take it over.
  for (const auto& b : reg.boards) {
    const Board* known = boards_.Find(b.name);
    if (known != nullptr && !known->agent.empty() && known->agent != reg.agent) {
      return MakeError(ErrorCode::kAlreadyExists,
                       fmt::format("board {} belongs to agent {}; agent {} may not register it (an "
                                   "admin can move it: mculab board {} --agent {})",
                                   b.name, known->agent, reg.agent, b.name, reg.agent));
    }
  }
  Effects fx;
  if (AgentSession* old = sessions_.Current(reg.agent)) {
    DropSessionLocked(*old, "agent " + reg.agent + " reconnected", fx);
  }
  const AgentSessionId id = sessions_.NextId();
  sessions_.Open(reg.agent, std::move(channel), clock_.NowMs(),
                 accounts_.WatchToken(caller.token, [this, id] { OnAgentTokenRevoked(id); }));
  bg_cv_.notify_all();  // a new heartbeat deadline

  // Runs restored after a server restart that this agent claims: their boards stay busy.
  const std::set<std::uint64_t> active_runs(reg.active_runs.begin(), reg.active_runs.end());
  std::map<std::string, RunId> resumed;  // board -> run
  for (const RunId run_id : runs_.OfAgent(reg.agent, /*awaiting=*/true)) {
    const ActiveRun& r = *runs_.Find(run_id);
    if (names.contains(r.run.board) && active_runs.contains(static_cast<std::uint64_t>(run_id))) {
      resumed[r.run.board] = run_id;
    }
  }

  const std::string reason = "agent " + reg.agent + " connected";
  for (const auto& info : reg.boards) {
    bool added = false;
    Board& b = boards_.FindOrAdd(info.name, &added);
    b.kind = info.kind;
    b.agent = reg.agent;
    b.tags = info.tags;
    b.emulated = info.emulated;
    b.serial = info.serial;
    b.ram_bytes = info.ram_bytes;
    b.custom_runners = info.custom_runners;
    b.custom_runners_off = info.custom_runners ? "" : info.custom_runners_off;
    if (added) AdmitNewBoardLocked(b, fx);
    if (auto r = resumed.find(info.name); r != resumed.end()) {
      b.current_job = runs_.Find(r->second)->run.job_id;
      SetBoardStateLocked(
          b, BoardState::kBusy,
          fmt::format("{}; job {} (run {}) resumed", reason, b.current_job, r->second), fx);
      continue;
    }
    b.current_job = 0;
    SetBoardUnitsLocked(b.name, info.units, fx);
    if (!info.offline.empty()) {
      sessions_.Find(id)->absent_boards[b.name] = info.offline;
      SetBoardStateLocked(b, BoardState::kOffline, reason + "; " + info.offline, fx);
      continue;
    }
    SetBoardStateLocked(b, FreeState(b), reason, fx);
  }
  for (auto& [name, b] : boards_.all()) {
    if (b.agent == reg.agent && !names.contains(name) && b.state != BoardState::kOffline) {
      SetBoardStateLocked(b, BoardState::kOffline, "no longer reported by agent " + reg.agent, fx);
    }
  }
  SendToAgentLocked(reg.agent, AgentRegistered{reg.agent, config_.heartbeat_ms}, fx);
  ReconcileRunsLocked(reg.agent, active_runs, fx);
  // Runs the agent still holds that the server has closed (requeued, finished): it may drop them.
  for (RunId run : reg.active_runs) {
    if (runs_.Find(run) != nullptr) continue;
    SendToAgentLocked(reg.agent, RunClosed{run}, fx);
  }
  spdlog::info("agent {} connected from {} with {} board(s)", reg.agent,
               caller.peer.empty() ? "?" : caller.peer, reg.boards.size());
  ScheduleLocked(fx);
  CommitLocked(fx);
  l.unlock();
  Deliver(fx);
  return id;
}

void Lab::ReconcileRunsLocked(const std::string& agent, const std::set<std::uint64_t>& active_runs,
                              Effects& fx) {
  for (const RunId run_id : runs_.OfAgent(agent, /*awaiting=*/true)) {
    ActiveRun& r = *runs_.Find(run_id);
    Board* b = boards_.Find(r.run.board);
    const bool claimed = active_runs.contains(static_cast<std::uint64_t>(run_id)) && b != nullptr &&
                         b->agent == agent && b->state == BoardState::kBusy &&
                         b->current_job == r.run.job_id;
    if (!claimed) {
      if (b != nullptr && b->current_job == r.run.job_id && b->state != BoardState::kBusy) {
        b->current_job = 0;  // ConnectAgent has set the board's state already
      }
      InfraFailLocked(r,
                      fmt::format("agent {} reconnected without run {} (lost while the server "
                                  "was down)",
                                  agent, run_id),
                      Actor(agent), false, fx);
      continue;
    }
    r.awaiting_agent = false;
    r.resume_deadline_ms = kNoDeadline;
    spdlog::info("run {} (job {}) on board {} resumed: agent {} reconnected", run_id, r.run.job_id,
                 r.run.board, agent);
    if (r.job_ended) {
      // Cancelled or timed out while the agent was away: tell it now.
      SendToAgentLocked(agent, RunCancel{run_id, "the job ended while the server was down"}, fx);
    }
  }
}

void Lab::ExpireAgentsLocked(Effects& fx) {
  const std::int64_t now = clock_.NowMs();
  const std::int64_t timeout = config_.HeartbeatTimeoutMs();
  std::vector<AgentSessionId> silent;
  for (const auto& [id, s] : sessions_.all()) {
    if (now - s.last_seen_ms >= timeout) silent.push_back(id);
  }
  bool changed = false;
  for (AgentSessionId id : silent) {
    AgentSession& s = *sessions_.Find(id);
    const std::string agent = s.agent;
    const std::shared_ptr<AgentChannel> channel = s.channel;
    const std::string why = fmt::format("agent {} sent nothing for {} ms (heartbeat timeout)",
                                        agent, now - s.last_seen_ms);
    spdlog::warn("{}; dropping it", why);
    DropSessionLocked(s, why, fx);  // s is gone
    if (channel) channel->Hangup();
    changed = true;
  }
  for (const RunId run_id : runs_.ResumeExpired(now)) {
    ActiveRun& r = *runs_.Find(run_id);
    const std::string why =
        fmt::format("agent {} did not reconnect within {} s after the server restarted",
                    r.run.agent, config_.reconnect_grace_s);
    spdlog::warn("run {} (job {}): {}", run_id, r.run.job_id, why);
    InfraFailLocked(r, why, "server", true, fx);
    changed = true;
  }
  if (changed) ScheduleLocked(fx);
}

std::int64_t Lab::NextAgentDeadlineLocked() const {
  std::int64_t next = kNoDeadline;
  const std::int64_t timeout = config_.HeartbeatTimeoutMs();
  for (const auto& [id, s] : sessions_.all()) next = std::min(next, s.last_seen_ms + timeout);
  return std::min(next, runs_.NextResumeDeadline());
}

void Lab::DropSessionLocked(AgentSession& s, const std::string& reason, Effects& fx) {
  const std::string agent = s.agent;
  const AgentSessionId id = s.id;
  for (const RunId run_id : runs_.OfAgent(agent)) {
    InfraFailLocked(*runs_.Find(run_id), reason, Actor(agent), true, fx);
  }
  for (auto& [name, b] : boards_.all()) {
    if (b.agent == agent && b.state != BoardState::kOffline) {
      b.current_job = 0;
      SetBoardStateLocked(b, BoardState::kOffline, reason, fx);
    }
  }
  sessions_.Close(id);  // s is gone
}

void Lab::DisconnectAgent(AgentSessionId session, const std::string& reason) {
  std::unique_lock l(mu_);
  AgentSession* s = sessions_.Find(session);
  if (s == nullptr) return;  // replaced by a newer session already
  const std::string agent = s->agent;
  if (stopping_) {
    // The server is going down: runs are not the agent's failure. Start() of the next server
    // requeues them; the boards' states are left for it too.
    sessions_.Close(session);
    return;
  }
  Effects fx;
  spdlog::warn("agent {} disconnected: {}", agent, reason);
  DropSessionLocked(*s, "agent " + agent + " disconnected: " + reason, fx);
  ScheduleLocked(fx);
  CommitLocked(fx);
  l.unlock();
  Deliver(fx);
}

void Lab::OnAgentTokenRevoked(AgentSessionId id) {
  std::unique_lock l(mu_);
  AgentSession* s = sessions_.Find(id);
  if (s == nullptr || stopping_) return;
  const std::shared_ptr<AgentChannel> channel = s->channel;
  const std::string why = "agent " + s->agent + "'s token was revoked";
  spdlog::warn("{}; dropping its session", why);
  Effects fx;
  DropSessionLocked(*s, why, fx);  // s is gone
  if (channel) channel->Hangup();
  ScheduleLocked(fx);
  CommitLocked(fx);
  l.unlock();
  Deliver(fx);
}

ActiveRun* Lab::FindRunLocked(RunId id, const std::string& agent) {
  ActiveRun* found = runs_.Find(id);
  if (found == nullptr) {
    // A run that ended is normal (late messages after a requeue or a cancel); one that was never
    // assigned is not.
    if (!runs_.WasGiven(id)) {
      ++refused_agent_messages_;
      spdlog::warn("agent {} reported run {}, which was never assigned; refused", agent, id);
    }
    return nullptr;
  }
  if (found->run.agent != agent) {
    ++refused_agent_messages_;
    spdlog::warn("agent {} reported run {}, which belongs to agent {}; refused", agent, id,
                 found->run.agent);
    return nullptr;
  }
  return found;
}

void Lab::OnAgentMessage(AgentSessionId session, AgentEvent event) {
  if (failed_) {
    // Stopped: nothing more is stored or acknowledged (the agent keeps it). The background thread
    // hangs the agents up too; this makes sure of it by the next heartbeat at the latest.
    std::lock_guard l(mu_);
    ShutDownAfterFailureLocked();
    return;
  }
  std::string agent;
  {
    std::lock_guard l(mu_);
    AgentSession* s = sessions_.Find(session);
    if (s == nullptr) return;  // a stale stream of a replaced session
    s->last_seen_ms = clock_.NowMs();
    agent = s->agent;
  }
  std::visit(
      [&](auto&& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, AgentHeartbeat>) {
          if (e.stopping) OnAgentStopping(session);
        } else if constexpr (std::is_same_v<T, BoardStatusReport>) {
          OnBoardStatus(session, e);
        } else if constexpr (std::is_same_v<T, RunPhaseReport>) {
          OnRunState(agent, e);
        } else if constexpr (std::is_same_v<T, RunStartedReport>) {
          OnRunStarted(agent, std::move(e));
        } else if constexpr (std::is_same_v<T, SampleBatchReport>) {
          OnBatch(agent, std::move(e));
        } else if constexpr (std::is_same_v<T, CaseDoneReport>) {
          OnCaseDone(agent, std::move(e));
        } else {
          static_assert(std::is_same_v<T, RunFinishedReport>);
          OnRunFinished(agent, e);
        }
      },
      event);
}

void Lab::OnAgentStopping(AgentSessionId session) {
  std::unique_lock l(mu_);
  AgentSession* s = sessions_.Find(session);
  if (s == nullptr || s->stopping) return;
  s->stopping = true;
  const std::string agent = s->agent;
  spdlog::info("agent {} is stopping; its boards get no new jobs", agent);
  Effects fx;
  for (auto& [name, b] : boards_.all()) {
    // Busy boards go offline when their run ends (CloseRunLocked).
    if (b.agent == agent && (b.state == BoardState::kIdle || b.state == BoardState::kReserved)) {
      SetBoardStateLocked(b, BoardState::kOffline, "agent " + agent + " is stopping", fx);
    }
  }
  CommitLocked(fx);
  l.unlock();
  Deliver(fx);
}

bool Lab::BoardUnavailableLocked(const Board& board) const {
  const AgentSession* s = sessions_.Current(board.agent);
  return s != nullptr && (s->stopping || s->absent_boards.contains(board.name));
}

void Lab::OnBoardStatus(AgentSessionId session, const BoardStatusReport& m) {
  std::unique_lock l(mu_);
  AgentSession* found = sessions_.Find(session);
  if (found == nullptr) return;
  AgentSession& s = *found;
  Board* found_board = boards_.Find(m.board);
  if (found_board == nullptr || found_board->agent != s.agent) {
    ++refused_agent_messages_;
    spdlog::warn("agent {} reported the status of board {}, which is not its own; refused", s.agent,
                 m.board);
    return;
  }
  Board& board = *found_board;
  Effects fx;
  if (!m.offline.empty()) {
    s.absent_boards[board.name] = m.offline;
    spdlog::warn("board {} is gone: {}", board.name, m.offline);
    // A busy board goes offline when its run ends (the agent ends it as INFRA_FAILED).
    if (board.state == BoardState::kIdle || board.state == BoardState::kReserved) {
      SetBoardStateLocked(board, BoardState::kOffline, m.offline, fx);
    }
  } else if (s.absent_boards.erase(board.name) > 0) {
    spdlog::info("board {} is back", board.name);
    if (board.state == BoardState::kOffline && board.current_job == 0 && !s.stopping) {
      SetBoardStateLocked(board, FreeState(board), "agent " + s.agent + ": the board is back", fx);
      ScheduleLocked(fx);
    }
  }
  CommitLocked(fx);
  l.unlock();
  Deliver(fx);
}

void Lab::OnRunState(const std::string& agent, const RunPhaseReport& m) {
  const RunState run_state = m.state;
  JobState job_state;
  if (run_state == RunState::kPreparing) {
    job_state = JobState::kPreparing;
  } else if (run_state == RunState::kRunning) {
    job_state = JobState::kRunning;
  } else {
    spdlog::warn("agent {} reported run {} in state '{}', which is not an agent's to report", agent,
                 m.run, RunStateName(run_state));
    return;
  }
  std::unique_lock l(mu_);
  ActiveRun* r = FindRunLocked(m.run, agent);
  if (r == nullptr || r->job_ended) return;
  ActiveJob* found = jobs_.Find(r->run.job_id);
  if (found == nullptr || found->job.last_run_id != r->run.id) return;
  ActiveJob& aj = *found;
  // Only forward: a late "preparing" after "running" changes nothing.
  if (aj.job.state == job_state ||
      (job_state == JobState::kPreparing && aj.job.state == JobState::kRunning)) {
    return;
  }
  if (Status s = ApplyTransition(r->run, run_state, "", clock_.NowMs()); !s.ok()) {
    spdlog::warn("agent {}: {}", agent, s.error().message);
    return;
  }
  Effects fx;
  fx.writes.runs.push_back(r->run);
  (void)TransitionLocked(
      aj, job_state,
      m.message.empty() ? "agent reports " + std::string(RunStateName(run_state)) : m.message,
      Actor(agent), fx);
  CommitLocked(fx);
  l.unlock();
  Deliver(fx);
}

void Lab::OnRunStarted(const std::string& agent, RunStartedReport m) {
  std::lock_guard l(mu_);
  ActiveRun* r = FindRunLocked(m.run, agent);
  if (r == nullptr) return;
  Provenance& p = r->run.provenance;
  p = std::move(m.provenance);
  if (p.board_serial.empty()) {
    if (const Board* b = boards_.Find(r->run.board)) p.board_serial = b->serial;
  }
  r->run.started = true;
  Effects fx;
  fx.writes.runs.push_back(r->run);
  AddFirmwareMemory(r->run.id, m, fx);
  CommitLocked(fx);
}

void Lab::OnBatch(const std::string& agent, SampleBatchReport m) {
  const RunId run = m.run;
  const std::uint64_t sequence = m.sequence;
  WriteSet ws;
  ws.batch.emplace();
  SampleBatch& b = *ws.batch;
  b.run_id = run;
  b.sequence = sequence;
  b.samples = std::move(m.samples);
  for (const Sample& s : b.samples) {
    if (s.metric == 0 && s.pass == 0) ++b.iterations;  // progress: pass 0's iterations
  }
  std::shared_ptr<std::vector<LiveSamples>> live;
  if (feeds_.FollowsSamples() && m.pass == 0)
    live = std::make_shared<std::vector<LiveSamples>>(ThinLive(b));

  store_.WaitForRoom();  // backpressure on this agent's stream, with no lock held
  std::lock_guard l(mu_);
  ActiveRun* r = FindRunLocked(run, agent);
  if (r == nullptr) {
    // Unknown or closed run (requeued, finished): nothing to store; the agent may drop it once
    // the run's end is committed.
    Effects fx;
    SendToAgentLocked(agent, RunClosed{run}, fx);
    CommitLocked(fx);
    return;
  }
  if (r->committed.contains(sequence)) {
    Effects fx;
    SendToAgentLocked(agent, BatchAck{run, sequence}, fx);
    CommitLocked(fx);
    return;
  }
  if (failed_) return;  // stopped (CommitLocked): not stored, not acknowledged
  // Queued under the lock so the batch is ordered with the run's other writes.
  store_.Write(std::move(ws), [this, agent, run, sequence, live](const WriteOutcome& o) {
    OnBatchCommitted(agent, run, sequence, o, live);
  });
}

void Lab::OnBatchCommitted(const std::string& agent, RunId run, std::uint64_t sequence,
                           const WriteOutcome& outcome,
                           std::shared_ptr<std::vector<LiveSamples>> live) {
  if (!outcome.status.ok()) {
    // No acknowledgement: the agent keeps the batch and sends it again. Checked before locking:
    // a closed store runs this on the thread that queued the batch, which holds the lock.
    spdlog::error("batch {} of run {} was not stored: {}", sequence, run,
                  outcome.status.error().message);
    FailStop(fmt::format("storing batch {} of run {}", sequence, run), outcome.status);
    return;
  }
  std::unique_lock l(mu_);
  {
    // Committed: acknowledged at once (this runs after every earlier write's messages went).
    const AgentSession* s = sessions_.Current(agent);
    if (s != nullptr && s->channel) {
      CrashPoint(crash_points::kBeforeSendAck);
      s->channel->Send(BatchAck{run, sequence});
      CrashPoint(crash_points::kAfterSendAck);
    }
  }

  ActiveRun* r = runs_.Find(run);
  if (r == nullptr) return;
  if (!r->committed.insert(sequence).second) return;
  // Counted by the store, in the batch's transaction: copied, never counted twice.
  if (outcome.run_progress) r->run.progress_done = *outcome.run_progress;
  Effects fx;
  ActiveJob* aj = jobs_.Find(r->run.job_id);
  if (aj != nullptr && aj->job.last_run_id == run) {
    aj->job.progress_done = r->run.progress_done;
    EmitLocked(aj->job, fx);
    if (live && !outcome.duplicate_batch && !feeds_.empty()) {
      for (LiveSamples& s : *live) {
        s.job = aj->job.id;
        fx.feed_samples.push_back(std::move(s));
      }
    }
  }
  MaybeFinalizeLocked(*r);
  CommitLocked(fx);
  l.unlock();
  Deliver(fx);
}

void Lab::OnCaseDone(const std::string& agent, CaseDoneReport m) {
  std::lock_guard l(mu_);
  ActiveRun* r = FindRunLocked(m.run, agent);
  if (r == nullptr) return;
  if (!m.checksum_ok && !m.checksum_unverified) {
    r->checksum_failures.push_back(ChecksumFailure(m.case_index, m.checksum, m.expected_checksum));
  }
  Effects fx;
  fx.writes.case_results.push_back(CaseResult{r->run.id, m.case_index, m.checksum,
                                              m.expected_checksum, m.checksum_ok, m.overhead});
  AddCaseProfiles(r->run.id, m, fx);
  CommitLocked(fx);
}

void Lab::OnRunFinished(const std::string& agent, const RunFinishedReport& m) {
  std::unique_lock l(mu_);
  ActiveRun* r = FindRunLocked(m.run, agent);
  if (r == nullptr) {
    Effects fx;
    SendToAgentLocked(agent, RunClosed{m.run}, fx);
    CommitLocked(fx);
    return;
  }
  Effects fx;
  const std::string actor = Actor(agent);
  if (r->job_ended) {
    // The job was cancelled or timed out; the agent confirms the run is over.
    CloseRunLocked(*r, r->end_state, m.message, false, fx);
  } else {
    switch (m.outcome) {
      case RunOutcome::kSucceeded:
        r->finish_received = true;
        r->run.batches_expected = m.batches_sent;
        fx.writes.runs.push_back(r->run);
        MaybeFinalizeLocked(*r);
        break;
      case RunOutcome::kWorkloadFailed: {
        const std::string msg = m.message.empty() ? "the runner reported a failure" : m.message;
        FailJobOfRunLocked(*r, JobState::kFailed, msg, actor, fx);
        CloseRunLocked(*r, RunState::kWorkloadFailed, msg, false, fx);
        break;
      }
      case RunOutcome::kTimedOut: {
        const std::string msg = m.message.empty() ? "the run timed out on the agent" : m.message;
        FailJobOfRunLocked(*r, JobState::kTimedOut, msg, actor, fx);
        CloseRunLocked(*r, RunState::kTimedOut, msg, false, fx);
        break;
      }
      case RunOutcome::kCancelled:
        // Not asked for by the server (e.g. the agent is shutting down): try again elsewhere.
        InfraFailLocked(
            *r,
            "the agent cancelled the run" + (m.message.empty() ? std::string() : ": " + m.message),
            actor, false, fx);
        break;
      case RunOutcome::kInfraFailed:
        InfraFailLocked(*r, m.message.empty() ? "the board failed" : m.message, actor, false, fx);
        break;
    }
  }
  ScheduleLocked(fx);
  CommitLocked(fx);
  l.unlock();
  Deliver(fx);
}

void Lab::SendToAgentLocked(const std::string& agent, AgentCommand command, Effects& fx) {
  const AgentSession* s = sessions_.Current(agent);
  if (s != nullptr && s->channel) fx.sends.emplace_back(s->channel, std::move(command));
}

}  // namespace mculab::server
