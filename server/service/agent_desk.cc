// AgentDesk (agent_desk.h): agent sessions and their messages.
#include "server/service/agent_desk.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <set>
#include <type_traits>
#include <variant>

#include "common/crash_point.h"
#include "server/domain/run_verdict.h"
#include "server/service/board_upkeep.h"
#include "server/service/job_desk.h"
#include "server/service/run_ends.h"
#include "server/service/run_measures.h"
#include "server/service/scheduling.h"

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

Result<AgentSessionId> AgentDesk::ConnectAgent(const Caller& caller, const AgentRegistration& reg,
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

  if (reg.boards.size() > st_.config.max_boards_per_agent) {
    return MakeError(
        ErrorCode::kResourceExhausted,
        fmt::format("agent {} registered {} boards; this server accepts at most {} per "
                    "agent (server config max_boards_per_agent)",
                    reg.agent, reg.boards.size(), st_.config.max_boards_per_agent));
  }
  for (const auto& b : reg.boards) {
    if (b.tags.size() > st_.config.max_tags_per_board) {
      return MakeError(
          ErrorCode::kResourceExhausted,
          fmt::format("agent {} registered board {} with {} tags; this server accepts "
                      "at most {} per board (server config max_tags_per_board)",
                      reg.agent, b.name, b.tags.size(), st_.config.max_tags_per_board));
    }
  }

  if (Status s = st_.Serving(); !s.ok()) return s.error();
  std::unique_lock l(st_.mu);
  if (st_.stopping) return MakeError(ErrorCode::kUnavailable, "the server is shutting down");
  // A board belongs to the agent that first registered it (the boards table keeps the owner
  // across restarts), connected or not: another agent cannot take it over.
  for (const auto& b : reg.boards) {
    const Board* known = st_.boards.Find(b.name);
    if (known != nullptr && !known->agent.empty() && known->agent != reg.agent) {
      return MakeError(ErrorCode::kAlreadyExists,
                       fmt::format("board {} belongs to agent {}; agent {} may not register it (an "
                                   "admin can move it: mculab board {} --agent {})",
                                   b.name, known->agent, reg.agent, b.name, reg.agent));
    }
  }
  Effects fx;
  if (AgentSession* old = st_.sessions.Current(reg.agent)) {
    DropSessionLocked(*old, "agent " + reg.agent + " reconnected", fx);
  }
  const AgentSessionId id = st_.sessions.NextId();
  st_.sessions.Open(reg.agent, std::move(channel), st_.clock.NowMs(),
                    st_.accounts.WatchToken(caller.token, [this, id] { OnAgentTokenRevoked(id); }));
  st_.bg_cv.notify_all();  // a new heartbeat deadline

  // Runs restored after a server restart that this agent claims: their boards stay busy.
  const std::set<std::uint64_t> active_runs(reg.active_runs.begin(), reg.active_runs.end());
  std::map<std::string, RunId> resumed;  // board -> run
  for (const RunId run_id : st_.runs.OfAgent(reg.agent, /*awaiting=*/true)) {
    const ActiveRun& r = *st_.runs.Find(run_id);
    if (names.contains(r.run.board) && active_runs.contains(static_cast<std::uint64_t>(run_id))) {
      resumed[r.run.board] = run_id;
    }
  }

  const std::string reason = "agent " + reg.agent + " connected";
  for (const auto& info : reg.boards) {
    bool added = false;
    Board& b = st_.boards.FindOrAdd(info.name, &added);
    b.kind = info.kind;
    b.agent = reg.agent;
    b.tags = info.tags;
    b.emulated = info.emulated;
    b.serial = info.serial;
    b.ram_bytes = info.ram_bytes;
    b.custom_runners = info.custom_runners;
    b.custom_runners_off = info.custom_runners ? "" : info.custom_runners_off;
    if (added) p_.upkeep->AdmitNewBoardLocked(b, fx);
    if (auto r = resumed.find(info.name); r != resumed.end()) {
      b.current_job = st_.runs.Find(r->second)->run.job_id;
      p_.upkeep->SetBoardStateLocked(
          b, BoardState::kBusy,
          fmt::format("{}; job {} (run {}) resumed", reason, b.current_job, r->second), fx);
      continue;
    }
    b.current_job = 0;
    p_.measures->SetBoardUnitsLocked(b.name, info.units, fx);
    if (!info.offline.empty()) {
      st_.sessions.Find(id)->absent_boards[b.name] = info.offline;
      p_.upkeep->SetBoardStateLocked(b, BoardState::kOffline, reason + "; " + info.offline, fx);
      continue;
    }
    p_.upkeep->SetBoardStateLocked(b, BoardUpkeep::FreeState(b), reason, fx);
  }
  for (auto& [name, b] : st_.boards.all()) {
    if (b.agent == reg.agent && !names.contains(name) && b.state != BoardState::kOffline) {
      p_.upkeep->SetBoardStateLocked(b, BoardState::kOffline,
                                     "no longer reported by agent " + reg.agent, fx);
    }
  }
  SendToAgentLocked(reg.agent, AgentRegistered{reg.agent, st_.config.heartbeat_ms}, fx);
  ReconcileRunsLocked(reg.agent, active_runs, fx);
  // Runs the agent still holds that the server has closed (requeued, finished): it may drop them.
  for (RunId run : reg.active_runs) {
    if (st_.runs.Find(run) != nullptr) continue;
    SendToAgentLocked(reg.agent, RunClosed{run}, fx);
  }
  spdlog::info("agent {} connected from {} with {} board(s)", reg.agent,
               caller.peer.empty() ? "?" : caller.peer, reg.boards.size());
  p_.scheduling->ScheduleLocked(fx);
  st_.CommitLocked(fx);
  l.unlock();
  st_.Deliver(fx);
  return id;
}

void AgentDesk::ReconcileRunsLocked(const std::string& agent,
                                    const std::set<std::uint64_t>& active_runs, Effects& fx) {
  for (const RunId run_id : st_.runs.OfAgent(agent, /*awaiting=*/true)) {
    ActiveRun& r = *st_.runs.Find(run_id);
    Board* b = st_.boards.Find(r.run.board);
    const bool claimed = active_runs.contains(static_cast<std::uint64_t>(run_id)) && b != nullptr &&
                         b->agent == agent && b->state == BoardState::kBusy &&
                         b->current_job == r.run.job_id;
    if (!claimed) {
      if (b != nullptr && b->current_job == r.run.job_id && b->state != BoardState::kBusy) {
        b->current_job = 0;  // ConnectAgent has set the board's state already
      }
      p_.runs->InfraFailLocked(
          r,
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

void AgentDesk::ExpireAgentsLocked(Effects& fx) {
  const std::int64_t now = st_.clock.NowMs();
  const std::int64_t timeout = st_.config.HeartbeatTimeoutMs();
  std::vector<AgentSessionId> silent;
  for (const auto& [id, s] : st_.sessions.all()) {
    if (now - s.last_seen_ms >= timeout) silent.push_back(id);
  }
  bool changed = false;
  for (AgentSessionId id : silent) {
    AgentSession& s = *st_.sessions.Find(id);
    const std::string agent = s.agent;
    const std::shared_ptr<AgentChannel> channel = s.channel;
    const std::string why = fmt::format("agent {} sent nothing for {} ms (heartbeat timeout)",
                                        agent, now - s.last_seen_ms);
    spdlog::warn("{}; dropping it", why);
    DropSessionLocked(s, why, fx);  // s is gone
    if (channel) channel->Hangup();
    changed = true;
  }
  for (const RunId run_id : st_.runs.ResumeExpired(now)) {
    ActiveRun& r = *st_.runs.Find(run_id);
    const std::string why =
        fmt::format("agent {} did not reconnect within {} s after the server restarted",
                    r.run.agent, st_.config.reconnect_grace_s);
    spdlog::warn("run {} (job {}): {}", run_id, r.run.job_id, why);
    p_.runs->InfraFailLocked(r, why, "server", true, fx);
    changed = true;
  }
  if (changed) p_.scheduling->ScheduleLocked(fx);
}

std::int64_t AgentDesk::NextAgentDeadlineLocked() const {
  std::int64_t next = kNoDeadline;
  const std::int64_t timeout = st_.config.HeartbeatTimeoutMs();
  for (const auto& [id, s] : st_.sessions.all()) next = std::min(next, s.last_seen_ms + timeout);
  return std::min(next, st_.runs.NextResumeDeadline());
}

void AgentDesk::DropSessionLocked(AgentSession& s, const std::string& reason, Effects& fx) {
  const std::string agent = s.agent;
  const AgentSessionId id = s.id;
  for (const RunId run_id : st_.runs.OfAgent(agent)) {
    p_.runs->InfraFailLocked(*st_.runs.Find(run_id), reason, Actor(agent), true, fx);
  }
  for (auto& [name, b] : st_.boards.all()) {
    if (b.agent == agent && b.state != BoardState::kOffline) {
      b.current_job = 0;
      p_.upkeep->SetBoardStateLocked(b, BoardState::kOffline, reason, fx);
    }
  }
  st_.sessions.Close(id);  // s is gone
}

void AgentDesk::DisconnectAgent(AgentSessionId session, const std::string& reason) {
  std::unique_lock l(st_.mu);
  AgentSession* s = st_.sessions.Find(session);
  if (s == nullptr) return;  // replaced by a newer session already
  const std::string agent = s->agent;
  if (st_.stopping) {
    // The server is going down: runs are not the agent's failure. Start() of the next server
    // requeues them; the boards' states are left for it too.
    st_.sessions.Close(session);
    return;
  }
  Effects fx;
  spdlog::warn("agent {} disconnected: {}", agent, reason);
  DropSessionLocked(*s, "agent " + agent + " disconnected: " + reason, fx);
  p_.scheduling->ScheduleLocked(fx);
  st_.CommitLocked(fx);
  l.unlock();
  st_.Deliver(fx);
}

void AgentDesk::OnAgentTokenRevoked(AgentSessionId id) {
  std::unique_lock l(st_.mu);
  AgentSession* s = st_.sessions.Find(id);
  if (s == nullptr || st_.stopping) return;
  const std::shared_ptr<AgentChannel> channel = s->channel;
  const std::string why = "agent " + s->agent + "'s token was revoked";
  spdlog::warn("{}; dropping its session", why);
  Effects fx;
  DropSessionLocked(*s, why, fx);  // s is gone
  if (channel) channel->Hangup();
  p_.scheduling->ScheduleLocked(fx);
  st_.CommitLocked(fx);
  l.unlock();
  st_.Deliver(fx);
}

ActiveRun* AgentDesk::FindRunLocked(RunId id, const std::string& agent) {
  ActiveRun* found = st_.runs.Find(id);
  if (found == nullptr) {
    // A run that ended is normal (late messages after a requeue or a cancel); one that was never
    // assigned is not.
    if (!st_.runs.WasGiven(id)) {
      ++st_.refused_agent_messages;
      spdlog::warn("agent {} reported run {}, which was never assigned; refused", agent, id);
    }
    return nullptr;
  }
  if (found->run.agent != agent) {
    ++st_.refused_agent_messages;
    spdlog::warn("agent {} reported run {}, which belongs to agent {}; refused", agent, id,
                 found->run.agent);
    return nullptr;
  }
  return found;
}

void AgentDesk::OnAgentMessage(AgentSessionId session, AgentEvent event) {
  if (st_.failed) {
    // Stopped: nothing more is stored or acknowledged (the agent keeps it). The background thread
    // hangs the agents up too; this makes sure of it by the next heartbeat at the latest.
    std::lock_guard l(st_.mu);
    st_.ShutDownAfterFailureLocked();
    return;
  }
  std::string agent;
  {
    std::lock_guard l(st_.mu);
    AgentSession* s = st_.sessions.Find(session);
    if (s == nullptr) return;  // a stale stream of a replaced session
    s->last_seen_ms = st_.clock.NowMs();
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

void AgentDesk::OnAgentStopping(AgentSessionId session) {
  std::unique_lock l(st_.mu);
  AgentSession* s = st_.sessions.Find(session);
  if (s == nullptr || s->stopping) return;
  s->stopping = true;
  const std::string agent = s->agent;
  spdlog::info("agent {} is stopping; its boards get no new jobs", agent);
  Effects fx;
  for (auto& [name, b] : st_.boards.all()) {
    // Busy boards go offline when their run ends (CloseRunLocked).
    if (b.agent == agent && (b.state == BoardState::kIdle || b.state == BoardState::kReserved)) {
      p_.upkeep->SetBoardStateLocked(b, BoardState::kOffline, "agent " + agent + " is stopping",
                                     fx);
    }
  }
  st_.CommitLocked(fx);
  l.unlock();
  st_.Deliver(fx);
}

bool AgentDesk::BoardUnavailableLocked(const Board& board) const {
  const AgentSession* s = st_.sessions.Current(board.agent);
  return s != nullptr && (s->stopping || s->absent_boards.contains(board.name));
}

void AgentDesk::OnBoardStatus(AgentSessionId session, const BoardStatusReport& m) {
  std::unique_lock l(st_.mu);
  AgentSession* found = st_.sessions.Find(session);
  if (found == nullptr) return;
  AgentSession& s = *found;
  Board* found_board = st_.boards.Find(m.board);
  if (found_board == nullptr || found_board->agent != s.agent) {
    ++st_.refused_agent_messages;
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
      p_.upkeep->SetBoardStateLocked(board, BoardState::kOffline, m.offline, fx);
    }
  } else if (s.absent_boards.erase(board.name) > 0) {
    spdlog::info("board {} is back", board.name);
    if (board.state == BoardState::kOffline && board.current_job == 0 && !s.stopping) {
      p_.upkeep->SetBoardStateLocked(board, BoardUpkeep::FreeState(board),
                                     "agent " + s.agent + ": the board is back", fx);
      p_.scheduling->ScheduleLocked(fx);
    }
  }
  st_.CommitLocked(fx);
  l.unlock();
  st_.Deliver(fx);
}

void AgentDesk::OnRunState(const std::string& agent, const RunPhaseReport& m) {
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
  std::unique_lock l(st_.mu);
  ActiveRun* r = FindRunLocked(m.run, agent);
  if (r == nullptr || r->job_ended) return;
  ActiveJob* found = st_.jobs.Find(r->run.job_id);
  if (found == nullptr || found->job.last_run_id != r->run.id) return;
  ActiveJob& aj = *found;
  // Only forward: a late "preparing" after "running" changes nothing.
  if (aj.job.state == job_state ||
      (job_state == JobState::kPreparing && aj.job.state == JobState::kRunning)) {
    return;
  }
  if (Status s = ApplyTransition(r->run, run_state, "", st_.clock.NowMs()); !s.ok()) {
    spdlog::warn("agent {}: {}", agent, s.error().message);
    return;
  }
  Effects fx;
  fx.writes.runs.push_back(r->run);
  (void)p_.jobs->TransitionLocked(
      aj, job_state,
      m.message.empty() ? "agent reports " + std::string(RunStateName(run_state)) : m.message,
      Actor(agent), fx);
  st_.CommitLocked(fx);
  l.unlock();
  st_.Deliver(fx);
}

void AgentDesk::OnRunStarted(const std::string& agent, RunStartedReport m) {
  std::lock_guard l(st_.mu);
  ActiveRun* r = FindRunLocked(m.run, agent);
  if (r == nullptr) return;
  Provenance& p = r->run.provenance;
  p = std::move(m.provenance);
  if (p.board_serial.empty()) {
    if (const Board* b = st_.boards.Find(r->run.board)) p.board_serial = b->serial;
  }
  r->run.started = true;
  Effects fx;
  fx.writes.runs.push_back(r->run);
  RunMeasures::AddFirmwareMemory(r->run.id, m, fx);
  st_.CommitLocked(fx);
}

void AgentDesk::OnBatch(const std::string& agent, SampleBatchReport m) {
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
  if (st_.feeds.FollowsSamples() && m.pass == 0)
    live = std::make_shared<std::vector<LiveSamples>>(ThinLive(b));

  st_.store.WaitForRoom();  // backpressure on this agent's stream, with no lock held
  std::unique_lock l(st_.mu);
  ActiveRun* r = FindRunLocked(run, agent);
  if (r == nullptr) {
    // Unknown or closed run (requeued, finished): nothing to store; the agent may drop it once
    // the run's end is committed.
    Effects fx;
    SendToAgentLocked(agent, RunClosed{run}, fx);
    st_.CommitLocked(fx);
    return;
  }
  if (r->committed.contains(sequence)) {
    Effects fx;
    SendToAgentLocked(agent, BatchAck{run, sequence}, fx);
    st_.CommitLocked(fx);
    return;
  }
  if (st_.failed) return;  // stopped (CommitLocked): not stored, not acknowledged
  // Counted in the run's statistics in the order the batches are queued, which is the order they
  // are stored in; a sequence already queued is stored once, and counted once.
  std::vector<RunStatisticsInProgress::EndedPassCase> ended =
      r->statistics.AddBatch(sequence, b.samples);
  // Queued under the lock so the batch is ordered with the run's other writes.
  st_.store.Write(std::move(ws), [this, agent, run, sequence, live](const WriteOutcome& o) {
    OnBatchCommitted(agent, run, sequence, o, live);
  });
  if (ended.empty()) return;
  // The cases this batch ended are summarised without the lock (sorting a case of 100,000
  // iterations takes milliseconds), then added to the run's statistics.
  l.unlock();
  std::vector<RunStatisticsInProgress::PassCaseSummary> summaries;
  for (auto& e : ended) summaries.push_back(RunStatisticsInProgress::Summarise(std::move(e)));
  l.lock();
  if (ActiveRun* still = st_.runs.Find(run)) still->statistics.AddSummaries(std::move(summaries));
}

void AgentDesk::OnBatchCommitted(const std::string& agent, RunId run, std::uint64_t sequence,
                                 const WriteOutcome& outcome,
                                 std::shared_ptr<std::vector<LiveSamples>> live) {
  if (!outcome.status.ok()) {
    // No acknowledgement: the agent keeps the batch and sends it again. Checked before locking:
    // a closed store runs this on the thread that queued the batch, which holds the lock.
    spdlog::error("batch {} of run {} was not stored: {}", sequence, run,
                  outcome.status.error().message);
    st_.FailStop(fmt::format("storing batch {} of run {}", sequence, run), outcome.status);
    return;
  }
  std::unique_lock l(st_.mu);
  {
    // Committed: acknowledged at once (this runs after every earlier write's messages went).
    const AgentSession* s = st_.sessions.Current(agent);
    if (s != nullptr && s->channel) {
      CrashPoint(crash_points::kBeforeSendAck);
      s->channel->Send(BatchAck{run, sequence});
      CrashPoint(crash_points::kAfterSendAck);
    }
  }

  ActiveRun* r = st_.runs.Find(run);
  if (r == nullptr) return;
  if (!r->committed.insert(sequence).second) return;
  // Counted by the store, in the batch's transaction: copied, never counted twice.
  if (outcome.run_progress) r->run.progress_done = *outcome.run_progress;
  Effects fx;
  ActiveJob* aj = st_.jobs.Find(r->run.job_id);
  if (aj != nullptr && aj->job.last_run_id == run) {
    aj->job.progress_done = r->run.progress_done;
    p_.jobs->EmitLocked(aj->job, fx);
    if (live && !outcome.duplicate_batch && !st_.feeds.empty()) {
      for (LiveSamples& s : *live) {
        s.job = aj->job.id;
        fx.feed_samples.push_back(std::move(s));
      }
    }
  }
  p_.runs->MaybeFinalizeLocked(*r);
  st_.CommitLocked(fx);
  l.unlock();
  st_.Deliver(fx);
}

void AgentDesk::OnCaseDone(const std::string& agent, CaseDoneReport m) {
  std::lock_guard l(st_.mu);
  ActiveRun* r = FindRunLocked(m.run, agent);
  if (r == nullptr) return;
  if (!m.checksum_ok && !m.checksum_unverified) {
    r->checksum_failures.push_back(ChecksumFailure(m.case_index, m.checksum, m.expected_checksum));
  }
  Effects fx;
  fx.writes.case_results.push_back(CaseResult{r->run.id, m.case_index, m.checksum,
                                              m.expected_checksum, m.checksum_ok, m.overhead});
  RunMeasures::AddCaseProfiles(r->run.id, m, fx);
  st_.CommitLocked(fx);
}

void AgentDesk::OnRunFinished(const std::string& agent, const RunFinishedReport& m) {
  std::unique_lock l(st_.mu);
  ActiveRun* r = FindRunLocked(m.run, agent);
  if (r == nullptr) {
    Effects fx;
    SendToAgentLocked(agent, RunClosed{m.run}, fx);
    st_.CommitLocked(fx);
    return;
  }
  Effects fx;
  const std::string actor = Actor(agent);
  if (r->job_ended) {
    // The job was cancelled or timed out; the agent confirms the run is over.
    p_.runs->CloseRunLocked(*r, r->end_state, m.message, false, fx);
  } else {
    switch (m.outcome) {
      case RunOutcome::kSucceeded:
        r->finish_received = true;
        r->run.batches_expected = m.batches_sent;
        fx.writes.runs.push_back(r->run);
        p_.runs->MaybeFinalizeLocked(*r);
        break;
      case RunOutcome::kWorkloadFailed: {
        const std::string msg = m.message.empty() ? "the runner reported a failure" : m.message;
        p_.runs->FailJobOfRunLocked(*r, JobState::kFailed, msg, actor, fx);
        p_.runs->CloseRunLocked(*r, RunState::kWorkloadFailed, msg, false, fx);
        break;
      }
      case RunOutcome::kTimedOut: {
        const std::string msg = m.message.empty() ? "the run timed out on the agent" : m.message;
        p_.runs->FailJobOfRunLocked(*r, JobState::kTimedOut, msg, actor, fx);
        p_.runs->CloseRunLocked(*r, RunState::kTimedOut, msg, false, fx);
        break;
      }
      case RunOutcome::kCancelled:
        // Not asked for by the server (e.g. the agent is shutting down): try again elsewhere.
        p_.runs->InfraFailLocked(
            *r,
            "the agent cancelled the run" + (m.message.empty() ? std::string() : ": " + m.message),
            actor, false, fx);
        break;
      case RunOutcome::kInfraFailed:
        p_.runs->InfraFailLocked(*r, m.message.empty() ? "the board failed" : m.message, actor,
                                 false, fx);
        break;
    }
  }
  p_.scheduling->ScheduleLocked(fx);
  st_.CommitLocked(fx);
  l.unlock();
  st_.Deliver(fx);
}

void AgentDesk::SendToAgentLocked(const std::string& agent, AgentCommand command, Effects& fx) {
  const AgentSession* s = st_.sessions.Current(agent);
  if (s != nullptr && s->channel) fx.sends.emplace_back(s->channel, std::move(command));
}

}  // namespace mculab::server
