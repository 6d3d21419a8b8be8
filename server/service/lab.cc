// Lab: construction, recovery, the client use cases, scheduling and the background thread.
// Agent messages are in lab_agents.cc, results and statistics in lab_results.cc.
#include "server/service/lab.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <limits>

#include "common/crash_point.h"
#include "common/op_catalog.h"
#include "server/domain/admission.h"
#include "server/domain/queue_position.h"
#include "server/domain/scheduler.h"
#include "server/service/model_admission.h"
#include "server/service/profiles.h"

namespace mculab::server {
namespace {

bool IsHexSha256(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

Lab::Lab(Store& store, Clock& clock, LabConfig config, std::filesystem::path home)
    : store_(store),
      clock_(clock),
      config_(config),
      artifacts_(home / "artifacts",
                 ArtifactStore::Limits{config.max_artifact_bytes, config.max_user_artifact_bytes,
                                       config.max_user_artifacts},
                 store, clock),
      accounts_(store, clock) {}

Lab::~Lab() { Stop(); }

// ---------------------------------------------------------------------------------------------
// Start and stop

Status Lab::Start() {
  if (Status s = artifacts_.Init(); !s.ok()) return s;
  auto boards = store_.ListBoards();
  if (!boards.ok()) return boards.error();
  auto active = store_.ListActiveJobs();
  if (!active.ok()) return active.error();
  auto max_job = store_.MaxJobId();
  if (!max_job.ok()) return max_job.error();
  auto max_run = store_.MaxRunId();
  if (!max_run.ok()) return max_run.error();
  auto units = store_.ListBoardUnits();
  if (!units.ok()) return units.error();
  std::vector<std::vector<CaseSpec>> cases;
  std::vector<std::vector<std::string>> events;
  std::vector<std::optional<Run>> runs;
  std::vector<std::vector<std::uint64_t>> batch_seqs;  // per run: batch sequences in the store
  for (const Job& job : *active) {
    auto c = store_.GetJobCases(job.id);
    if (!c.ok()) return c.error();
    cases.push_back(std::move(*c));
    auto e = store_.GetJobEvents(job.id);
    if (!e.ok()) return e.error();
    events.push_back(std::move(e->events));
    std::optional<Run> run;
    std::vector<std::uint64_t> seqs;
    if (IsOnBoard(job.state) && job.last_run_id != 0) {
      auto r = store_.GetRun(job.last_run_id);
      if (r.ok()) {
        auto batches = store_.ListBatchSequences(r->id);
        if (!batches.ok()) return batches.error();
        seqs = std::move(*batches);
        run = std::move(*r);
      }
    }
    runs.push_back(std::move(run));
    batch_seqs.push_back(std::move(seqs));
  }

  std::unique_lock l(mu_);
  if (started_) return MakeError(ErrorCode::kFailedPrecondition, "the lab is already started");
  Tx tx;
  for (BoardUnits& u : *units) board_units_[u.board] = std::move(u);
  for (Board& b : *boards) {
    b.current_job = 0;
    Board& mine = boards_[b.name] = b;
    if (mine.state != BoardState::kOffline) {
      SetBoardStateLocked(mine, BoardState::kOffline,
                          "server started; waiting for agent " + mine.agent, tx);
    }
  }
  std::size_t requeued = 0;
  std::size_t waiting = 0;
  const std::int64_t now = clock_.NowMs();
  for (std::size_t i = 0; i < active->size(); ++i) {
    const Job& job = (*active)[i];
    ActiveJob& aj = jobs_[job.id] =
        ActiveJob{job, std::move(cases[i]), kNoDeadline, std::move(events[i])};
    EnterStateLocked(aj.job);
    if (!IsOnBoard(job.state)) continue;
    if (runs[i] && !IsFinal(runs[i]->state) && !runs[i]->agent.empty() &&
        boards_.contains(runs[i]->board)) {
      // Reconciled when the agent registers (ConnectAgent) or when the grace ends.
      ActiveRun r;
      r.run = *runs[i];
      r.committed.insert(batch_seqs[i].begin(), batch_seqs[i].end());
      r.awaiting_agent = true;
      r.resume_deadline_ms = now + std::int64_t{config_.reconnect_grace_s} * 1000;
      aj.job.progress_done = r.run.progress_done;
      // The job's own timeout counts from its assignment, as before the restart.
      aj.deadline_ms = r.run.created_ms + std::int64_t{aj.job.timeout_s} * 1000;
      deadlines_.insert({aj.deadline_ms, aj.job.id});
      Board& b = boards_.at(r.run.board);
      b.current_job = job.id;
      runs_.emplace(r.run.id, std::move(r));
      ++waiting;
      continue;
    }
    if (runs[i]) {
      Run run = *runs[i];
      // A run that ended already keeps its end.
      if (ApplyTransition(run, RunState::kInfraFailed, "the server restarted during the run",
                          clock_.NowMs())
              .ok()) {
        tx.writes.runs.push_back(run);
      }
    }
    const JobState to = AfterInfraFailure(aj.job, config_.max_attempts);
    aj.job.message =
        to == JobState::kQueued
            ? fmt::format("the server restarted while the job was {}; requeued (attempt {} of {})",
                          JobStateName(job.state), aj.job.attempts, config_.max_attempts)
            : fmt::format("the server restarted while the job was {}; gave up after {} attempts",
                          JobStateName(job.state), aj.job.attempts);
    ++requeued;
    (void)TransitionLocked(
        aj, to, fmt::format("server restarted while {}", JobStateName(job.state)), "server", tx);
  }
  next_job_id_ = *max_job + 1;
  // Past every id stored or reserved by an earlier server (a crash may have lost the row of a run
  // it numbered); this server's block is committed before Start returns.
  next_run_id_ = *max_run + 1;
  reserved_run_ids_ = *max_run + kRunIdBlock;
  tx.writes.reserve_run_ids_to = reserved_run_ids_;
  for (auto& [name, b] : boards_) {
    if (!b.holder.empty()) lease_deadlines_.insert({b.lease_until_ms, name});
    if (b.health == BoardHealth::kUnknown) QueueHealthCheckLocked(b, tx);
  }
  auto committed = std::make_shared<std::promise<Status>>();
  auto future = committed->get_future();
  CommitLocked(tx, [committed](const WriteOutcome& o) { committed->set_value(o.status); });
  started_ = true;
  l.unlock();
  if (Status s = future.get(); !s.ok()) return s;
  spdlog::debug("lab state loaded: {} boards, {} unfinished jobs", boards->size(), active->size());
  if (requeued > 0) {
    spdlog::info("{} job(s) that were on a board when the server stopped are back in the queue",
                 requeued);
  }
  if (waiting > 0) {
    spdlog::info(
        "{} run(s) that were on a board when the server stopped wait up to {} s for their agent",
        waiting, config_.reconnect_grace_s);
  }
  next_artifact_collection_ms_ = clock_.NowMs() + kArtifactCollectionPeriodMs;
  background_ = std::thread([this] { BackgroundLoop(); });
  accounts_.StartRevocationChecks(kRevocationCheckPeriod);
  return {};
}

void Lab::Stop() {
  // No revocation callback may reach the Lab once it stops.
  accounts_.StopRevocationChecks();
  Tx tx;
  {
    std::lock_guard l(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [id, list] : watchers_) {
      for (auto& weak : list) {
        if (auto w = weak.lock()) {
          w->End();
          tx.notify.push_back(w);
        }
      }
    }
    watchers_.clear();
    for (auto& weak : feeds_) {
      if (auto feed = weak.lock()) feed->End();
    }
    feeds_.clear();
  }
  bg_cv_.notify_all();
  if (background_.joinable()) background_.join();
  Deliver(tx);
  // Commit callbacks call into the Lab (acknowledgements, a failed write): none may be pending
  // once it is gone.
  store_.Flush();
}

// ---------------------------------------------------------------------------------------------
// Helpers

Status Lab::TransitionLocked(ActiveJob& aj, JobState to, std::string reason, std::string actor,
                             Tx& tx) {
  const JobId id = aj.job.id;
  const JobState from = aj.job.state;
  auto t = ApplyTransition(aj.job, to, std::move(reason), std::move(actor), clock_.NowMs());
  if (!t.ok()) {
    spdlog::warn("{}", t.error().message);
    return t.error();
  }
  spdlog::debug("job {}: {} -> {} ({})", id, t->from, t->to, t->reason);
  LeaveStateLocked(aj.job, from);
  if (!IsFinal(to)) EnterStateLocked(aj.job);
  tx.writes.jobs.push_back(aj.job);
  tx.writes.transitions.push_back(std::move(*t));
  if ((from == JobState::kQueued) != (to == JobState::kQueued)) tx.queue_changed = true;
  if (!IsOnBoard(to) && aj.deadline_ms != kNoDeadline) {
    deadlines_.erase({aj.deadline_ms, id});
    aj.deadline_ms = kNoDeadline;
  }
  EmitLocked(aj.job, tx);
  if (to == JobState::kSucceeded && aj.job.started_ms != 0) {
    auto& d = recent_durations_[aj.job.kind + "/" + aj.job.op];
    d.push_back(aj.job.finished_ms - aj.job.started_ms);
    if (d.size() > 20) d.pop_front();
  }
  if (IsFinal(to) && IsHealthCheck(aj.job)) HealthCheckEndedLocked(aj, to, tx);
  if (IsFinal(to)) {
    watchers_.erase(id);
    jobs_.erase(id);  // aj is gone
  }
  return {};
}

JobId Lab::CreateJobLocked(Job job, std::vector<CaseSpec> cases, const std::string& actor, Tx& tx) {
  job.id = next_job_id_++;
  job.state = JobState::kQueued;
  job.created_ms = clock_.NowMs();
  tx.writes.new_jobs.push_back({job, cases});
  tx.writes.transitions.push_back(CreationTransition(job, actor));
  tx.queue_changed = true;
  EmitLocked(job, tx);
  ActiveJob aj;
  aj.job = job;
  aj.cases = std::move(cases);
  jobs_.emplace(job.id, std::move(aj));
  EnterStateLocked(job);
  return job.id;
}

void Lab::EnterStateLocked(const Job& job) {
  if (job.state == JobState::kQueued) queue_.insert_or_assign(job.id, QueuedOf(job));
  if (IsOnBoard(job.state)) ++on_boards_[job.user];
}

void Lab::LeaveStateLocked(const Job& job, JobState from) {
  if (from == JobState::kQueued) queue_.erase(job.id);
  if (IsOnBoard(from)) {
    auto it = on_boards_.find(job.user);
    if (it != on_boards_.end() && --it->second == 0) on_boards_.erase(it);
  }
}

void Lab::SetBoardStateLocked(Board& b, BoardState to, const std::string& reason, Tx& tx,
                              const std::string& actor) {
  const std::int64_t now = clock_.NowMs();
  if (b.state != to) {
    tx.writes.board_transitions.push_back(
        BoardTransition{b.name, "state", std::string(BoardStateName(b.state)),
                        std::string(BoardStateName(to)), reason, actor, now});
    b.state = to;
  }
  b.updated_ms = now;
  tx.writes.boards.push_back(b);
  tx.feed_boards.insert(b.name);
}

void Lab::SetBoardHealthLocked(Board& b, BoardHealth to, const std::string& reason, Tx& tx,
                               const std::string& actor) {
  if (b.health == to) return;
  const std::int64_t now = clock_.NowMs();
  tx.writes.board_transitions.push_back(
      BoardTransition{b.name, "health", std::string(BoardHealthName(b.health)),
                      std::string(BoardHealthName(to)), reason, actor, now});
  spdlog::warn("board {}: health {} -> {} ({})", b.name, BoardHealthName(b.health),
               BoardHealthName(to), reason);
  b.health = to;
  b.updated_ms = now;
  tx.writes.boards.push_back(b);
  tx.feed_boards.insert(b.name);
  if (to == BoardHealth::kUnknown) QueueHealthCheckLocked(b, tx);
}

void Lab::EmitLocked(const Job& job, Tx& tx) {
  JobEvent e{job.id,
             job.state,
             job.message,
             std::min(job.progress_done, job.ProgressTotal()),
             job.ProgressTotal(),
             job.assigned_board,
             clock_.NowMs()};
  if (!feeds_.empty()) tx.feed_jobs.push_back(e);
  auto it = watchers_.find(job.id);
  if (it == watchers_.end()) return;
  auto& list = it->second;
  for (auto w = list.begin(); w != list.end();) {
    auto watch = w->lock();
    if (!watch || watch->closed()) {
      w = list.erase(w);
      continue;
    }
    tx.events.emplace_back(std::move(watch), e);
    ++w;
  }
  if (list.empty()) watchers_.erase(it);
}

namespace {

std::string_view SendPoint(const AgentCommand& c, bool before) {
  namespace cp = crash_points;
  if (std::holds_alternative<RunAssignment>(c)) {
    return before ? cp::kBeforeSendAssignment : cp::kAfterSendAssignment;
  }
  if (std::holds_alternative<BatchAck>(c)) return before ? cp::kBeforeSendAck : cp::kAfterSendAck;
  if (std::holds_alternative<RunClosed>(c)) {
    return before ? cp::kBeforeSendRunClosed : cp::kAfterSendRunClosed;
  }
  if (std::holds_alternative<RunCancel>(c)) {
    return before ? cp::kBeforeSendCancel : cp::kAfterSendCancel;
  }
  return {};
}

}  // namespace

void Lab::CommitLocked(Tx& tx, WriteDone done) {
  if (failed_) {
    // Stopped: memory may be ahead of the database, so nothing more is written or said; the
    // database keeps a prefix of what was decided, as after a crash, and a restart resumes there.
    bg_cv_.notify_all();
    tx = Tx{};
    if (done) done(WriteOutcome{Serving()});
    return;
  }
  // What the writes let the Lab say, said by the commit callback (see the class comment).
  struct Said {
    std::vector<std::pair<std::shared_ptr<AgentChannel>, AgentCommand>> sends;
    std::vector<std::pair<std::shared_ptr<JobWatch>, JobEvent>> events;
    std::vector<std::shared_ptr<LabFeed>> feeds;
    std::vector<LabEvent> feed_events;
  };
  if (WriteMark(tx) != tx.scheduled_mark) schedule_stale_ = true;
  auto said = std::make_shared<Said>();
  said->sends = std::move(tx.sends);
  said->events = std::move(tx.events);
  said->feed_events = FeedEventsLocked(tx);
  if (!said->feed_events.empty()) {
    for (const auto& weak : feeds_) {
      if (auto feed = weak.lock()) said->feeds.push_back(std::move(feed));
    }
  }
  tx.sends.clear();
  tx.events.clear();
  const bool says = !said->sends.empty() || !said->events.empty() || !said->feeds.empty();
  if (tx.writes.Rows() == 0 && !says && !done) return;
  store_.Write(std::move(tx.writes), [this, said, done = std::move(done)](const WriteOutcome& o) {
    if (!o.status.ok()) {
      FailStop("a database write", o.status);
    } else {
      for (auto& [channel, message] : said->sends) {
        CrashPoint(SendPoint(message, true));
        channel->Send(message);
        CrashPoint(SendPoint(message, false));
      }
      for (auto& [watch, event] : said->events) watch->Push(event);
      for (auto& [watch, event] : said->events) watch->Notify();
      for (const auto& feed : said->feeds) {
        for (const LabEvent& ev : said->feed_events) feed->Push(ev);
      }
    }
    if (done) done(o);
  });
  tx.writes = WriteSet{};
  tx.scheduled_mark = 0;
}

Status Lab::CommitAndWait(std::unique_lock<std::mutex>& l, Tx& tx) {
  auto committed = std::make_shared<std::promise<Status>>();
  auto future = committed->get_future();
  CommitLocked(tx, [committed](const WriteOutcome& o) { committed->set_value(o.status); });
  l.unlock();
  Deliver(tx);
  if (Status s = future.get(); !s.ok()) {
    return MakeError(ErrorCode::kUnavailable,
                     "the change could not be stored: " + s.error().message);
  }
  return {};
}

void Lab::FailStop(const std::string& what, const Status& status) {
  const std::string why = what + " failed: " + status.error().message;
  {
    std::lock_guard l(failure_mu_);
    if (failure_.empty()) failure_ = why;
  }
  if (!failed_.exchange(true)) {
    spdlog::critical(
        "{}. mculab-server stops accepting work now (every request answers UNAVAILABLE) so that "
        "what it holds in memory cannot drift from the database; fix the cause (e.g. free disk "
        "space) and restart it: the restart resumes from what was committed",
        why);
  } else {
    spdlog::error("{} (already stopped after an earlier failed write)", why);
  }
  bg_cv_.notify_all();
}

Status Lab::Serving() const {
  if (!failed_) return {};
  std::lock_guard l(failure_mu_);
  return MakeError(ErrorCode::kUnavailable,
                   "mculab-server stopped accepting work after " + failure_ +
                       "; an administrator must fix the cause and restart the server");
}

void Lab::ShutDownAfterFailureLocked() {
  if (failure_handled_) return;
  failure_handled_ = true;
  for (auto& [id, session] : sessions_) {
    if (session.channel) session.channel->Hangup();
  }
  for (auto& [id, list] : watchers_) {
    for (auto& weak : list) {
      if (auto w = weak.lock()) w->End();
    }
  }
  watchers_.clear();
  for (auto& weak : feeds_) {
    if (auto feed = weak.lock()) feed->End();
  }
  feeds_.clear();
}

std::map<std::string, std::uint32_t> Lab::QueueLengthsLocked() const {
  // Fits() in one pass: a job naming a board counts for that board, one asking for tags for every
  // board of its kind that has them, any other for every board of its kind.
  std::map<std::string, std::uint32_t> by_kind;
  std::map<std::string, std::uint32_t> out;
  for (const auto& [name, b] : boards_) out[name] = 0;
  for (const auto& [id, q] : queue_) {
    if (q.board.empty() && q.tags.empty()) {
      ++by_kind[q.kind];
      continue;
    }
    if (!q.board.empty()) {
      auto b = boards_.find(q.board);
      if (b != boards_.end() && Fits(q, SlotOf(b->second))) ++out[b->first];
      continue;
    }
    for (const auto& [name, b] : boards_) {
      if (b.kind == q.kind && HasTags(q.tags, b.tags)) ++out[name];
    }
  }
  for (const auto& [name, b] : boards_) {
    auto k = by_kind.find(b.kind);
    if (k != by_kind.end()) out[name] += k->second;
  }
  return out;
}

std::vector<LabEvent> Lab::FeedEventsLocked(Tx& tx) {
  std::erase_if(feeds_, [](const std::weak_ptr<LabFeed>& w) {
    auto f = w.lock();
    return !f || f->closed();
  });
  std::vector<LabEvent> events;
  if (feeds_.empty()) {
    tx.feed_jobs.clear();
    tx.feed_samples.clear();
    tx.feed_boards.clear();
    tx.queue_changed = false;
    return events;
  }
  for (JobEvent& e : tx.feed_jobs) {
    LabEvent ev;
    ev.kind = LabEvent::Kind::kJob;
    ev.job = std::move(e);
    events.push_back(std::move(ev));
  }
  for (LiveSamples& s : tx.feed_samples) {
    LabEvent ev;
    ev.kind = LabEvent::Kind::kSamples;
    ev.samples = std::move(s);
    events.push_back(std::move(ev));
  }
  if (!tx.feed_boards.empty() || tx.queue_changed) {
    const auto queue = QueueLengthsLocked();
    std::set<std::string> changed = tx.feed_boards;
    for (const auto& [name, n] : queue) {
      auto p = published_queue_.find(name);
      if (p == published_queue_.end() || p->second != n) changed.insert(name);
    }
    for (const std::string& name : changed) {
      auto b = boards_.find(name);
      if (b == boards_.end()) continue;
      LabEvent ev;
      ev.kind = LabEvent::Kind::kBoard;
      ev.board = b->second;
      ev.queue_length = queue.contains(name) ? queue.at(name) : 0;
      events.push_back(std::move(ev));
    }
    published_queue_ = queue;
  }
  tx.feed_jobs.clear();
  tx.feed_samples.clear();
  tx.feed_boards.clear();
  tx.queue_changed = false;
  return events;
}

std::shared_ptr<LabFeed> Lab::Subscribe(std::size_t capacity, JobId samples_of) {
  auto feed = std::make_shared<LabFeed>(capacity, samples_of);
  if (samples_of != 0) sample_feeds_ = true;
  std::lock_guard l(mu_);
  if (stopping_) {
    feed->End();
    return feed;
  }
  // The subscriber reads the current state after subscribing; from here on it is told changes
  // against that state.
  published_queue_ = QueueLengthsLocked();
  feeds_.push_back(feed);
  return feed;
}

std::shared_ptr<LabFeed> Lab::Subscribe(const Caller& subscriber, std::size_t capacity,
                                        JobId samples_of) {
  auto feed = Subscribe(capacity, samples_of);
  // A revoked token ends the feed: its event stream closes and the page's reconnect is refused.
  feed->Hold(accounts_.WatchToken(subscriber.token, [weak = std::weak_ptr<LabFeed>(feed)] {
    if (auto f = weak.lock()) f->End();
  }));
  return feed;
}

void Lab::Deliver(Tx& tx) {
  for (auto& w : tx.notify) w->Notify();
  tx.notify.clear();
}

void Lab::SendToAgentLocked(const std::string& agent, AgentCommand command, Tx& tx) {
  auto it = agent_sessions_.find(agent);
  if (it == agent_sessions_.end()) return;
  auto s = sessions_.find(it->second);
  if (s != sessions_.end() && s->second.channel) {
    tx.sends.emplace_back(s->second.channel, std::move(command));
  }
}

// ---------------------------------------------------------------------------------------------
// Scheduling

void Lab::ScheduleLocked(Tx& tx) {
  if (stopping_ || failed_) return;
  const std::int64_t now = clock_.NowMs();
  // Nothing can change the answer of a pass that placed nothing until a job or a board changes
  // (each such change is a write: this Tx's since its last pass, or an earlier Tx's through
  // CommitLocked) or a lease ends.
  if (!schedule_stale_ && WriteMark(tx) == tx.scheduled_mark && now < schedule_recheck_ms_) {
    return;
  }
  schedule_stale_ = false;
  tx.scheduled_mark = WriteMark(tx);
  schedule_recheck_ms_ = kNoDeadline;
  // No board takes work: no pass (a board of unknown health under health checks is idle or
  // reserved, so it counts whenever its health check could run).
  bool any_free = false;
  for (const auto& [name, b] : boards_) {
    if (TakesWork(b.state, b.health, !b.holder.empty())) {
      any_free = true;
      break;
    }
  }
  if (!any_free) return;
  if (queue_.empty()) return;
  std::vector<const QueuedJob*> queued;
  queued.reserve(queue_.size());
  for (const auto& [id, q] : queue_) queued.push_back(&q);
  std::map<std::string, UserShare> shares;
  for (const auto& [user, n] : on_boards_) shares[user].on_boards = n;
  ++schedule_passes_;
  for (const auto& [user, ms] : last_assigned_ms_) shares[user].last_assigned_ms = ms;
  std::vector<UserShare> users;
  for (auto& [user, share] : shares) {
    share.user = user;
    users.push_back(share);
  }
  std::vector<BoardSlot> slots;
  slots.reserve(boards_.size());
  for (const auto& [name, b] : boards_) {
    BoardSlot slot = SlotOf(b);
    if (config_.health_checks && b.health == BoardHealth::kUnknown) {
      // Only its health check runs on a board of unknown health.
      slot.holder = std::string(kHealthCheckHolder);
      slot.lease_until_ms = kNoDeadline;
      if (slot.state == BoardState::kIdle) slot.state = BoardState::kReserved;
    } else if (!b.holder.empty() && b.lease_until_ms > now) {
      schedule_recheck_ms_ = std::min(schedule_recheck_ms_, b.lease_until_ms);
    }
    slots.push_back(std::move(slot));
  }
  bool refused = false;
  const std::vector<Placement> placements =
      Schedule(std::span<const QueuedJob* const>(queued), slots, now, users);
  queued.clear();  // placing a job drops its view
  for (const Placement& p : placements) {
    ActiveJob& aj = jobs_.at(p.job);
    AssignLocked(aj, boards_.at(p.board), tx);
    refused = refused || aj.job.state == JobState::kQueued;
  }
  // What the placements wrote needs no second pass (the boards they took are busy, the jobs
  // assigned); a placement AssignLocked refused (its agent is gone) leaves the schedule stale.
  tx.scheduled_mark = WriteMark(tx);
  if (refused) schedule_stale_ = true;
}

void Lab::AssignLocked(ActiveJob& aj, Board& board, Tx& tx) {
  if (!agent_sessions_.contains(board.agent)) {
    spdlog::error("board {} is idle but its agent {} is not connected", board.name, board.agent);
    return;
  }
  const std::int64_t now = clock_.NowMs();
  Run run;
  run.id = next_run_id_++;
  if (run.id + kRunIdBlock / 2 > reserved_run_ids_) {
    // Committed before (or with) the first run that needs it, long before the block runs out.
    reserved_run_ids_ = std::max(reserved_run_ids_, run.id) + kRunIdBlock;
    tx.writes.reserve_run_ids_to = reserved_run_ids_;
  }
  run.job_id = aj.job.id;
  run.board = board.name;
  run.agent = board.agent;
  run.state = RunState::kAssigned;
  run.created_ms = now;
  aj.job.assigned_board = board.name;
  aj.job.last_run_id = run.id;
  aj.job.progress_done = 0;
  if (Status s = TransitionLocked(aj, JobState::kAssigned, "scheduled on board " + board.name,
                                  "server", tx);
      !s.ok()) {
    return;
  }
  run.attempt = aj.job.attempts;
  last_assigned_ms_[aj.job.user] = now;
  board.current_job = aj.job.id;
  SetBoardStateLocked(board, BoardState::kBusy, fmt::format("job {}", aj.job.id), tx);
  tx.writes.runs.push_back(run);
  ActiveRun active;
  active.run = run;
  runs_.emplace(run.id, std::move(active));

  aj.deadline_ms = now + static_cast<std::int64_t>(aj.job.timeout_s) * 1000;
  deadlines_.insert({aj.deadline_ms, aj.job.id});
  bg_cv_.notify_all();

  RunAssignment a;
  a.run = run.id;
  a.job = aj.job.id;
  a.board = board.name;
  a.op = aj.job.op;
  a.cases = aj.cases;
  a.iterations = aj.job.iterations;
  a.warmup = aj.job.warmup;
  a.timeout_s = aj.job.timeout_s;
  a.pass = 0;
  PlanPassesLocked(aj, board, runs_.at(run.id), a, tx);
  a.firmware_sha256 = aj.job.firmware_artifact;
  a.blob_sha256 = aj.job.blob_artifact;
  SendToAgentLocked(board.agent, std::move(a), tx);
  spdlog::info("job {} -> board {} (run {}, attempt {})", aj.job.id, board.name, run.id,
               run.attempt);
}

std::vector<std::uint32_t> Lab::QueuePositionsLocked(std::span<const JobId> ids) const {
  std::vector<const QueuedJob*> queue;
  queue.reserve(queue_.size());
  for (const auto& [id, q] : queue_) queue.push_back(&q);
  std::vector<BoardSlot> slots;
  slots.reserve(boards_.size());
  for (const auto& [name, b] : boards_) slots.push_back(SlotOf(b));
  return QueuePositions(queue, slots, ids);
}

// ---------------------------------------------------------------------------------------------
// Runs ending

void Lab::CloseRunLocked(ActiveRun& r, RunState state, const std::string& message,
                         bool board_offline, Tx& tx) {
  const RunId id = r.run.id;
  if (Status s = ApplyTransition(r.run, state, message, clock_.NowMs()); !s.ok()) {
    // An active run is never final, so every end is legal; should that break, the run is still
    // closed (its board freed) and the refused move logged.
    spdlog::error("{}", s.error().message);
  }
  tx.writes.runs.push_back(r.run);
  auto b = boards_.find(r.run.board);
  if (b != boards_.end() && b->second.current_job == r.run.job_id) {
    b->second.current_job = 0;
    const bool offline = board_offline || b->second.state == BoardState::kOffline ||
                         BoardUnavailableLocked(b->second);
    SetBoardStateLocked(b->second, offline ? BoardState::kOffline : FreeState(b->second),
                        fmt::format("job {} (run {}) {}", r.run.job_id, id, RunStateName(state)),
                        tx);
  }
  if (!board_offline) {
    SendToAgentLocked(r.run.agent, RunClosed{id}, tx);
  }
  runs_.erase(id);  // r is gone
}

void Lab::FailJobOfRunLocked(ActiveRun& r, JobState to, const std::string& message,
                             const std::string& actor, Tx& tx) {
  auto it = jobs_.find(r.run.job_id);
  if (it == jobs_.end() || r.job_ended || it->second.job.last_run_id != r.run.id ||
      !IsOnBoard(it->second.job.state)) {
    return;
  }
  it->second.job.message = message;
  (void)TransitionLocked(it->second, to, message, actor, tx);
}

void Lab::InfraFailLocked(ActiveRun& r, const std::string& why, const std::string& actor,
                          bool board_offline, Tx& tx) {
  auto b = boards_.find(r.run.board);
  if (b != boards_.end()) {
    SetBoardHealthLocked(b->second, BoardHealth::kUnknown, "infrastructure failure: " + why, tx);
  }
  auto it = jobs_.find(r.run.job_id);
  if (it != jobs_.end() && !r.job_ended && it->second.job.last_run_id == r.run.id &&
      IsOnBoard(it->second.job.state)) {
    ActiveJob& aj = it->second;
    // A health check is about this board: its failure is the check's answer, not a retry.
    const JobState to =
        IsHealthCheck(aj.job) ? JobState::kFailed : AfterInfraFailure(aj.job, config_.max_attempts);
    aj.job.message =
        to == JobState::kQueued
            ? fmt::format("infrastructure failure on board {}: {}; requeued (attempt {} of {})",
                          r.run.board, why, aj.job.attempts, config_.max_attempts)
            : fmt::format("infrastructure failure on board {}: {}; gave up after {} attempts",
                          r.run.board, why, aj.job.attempts);
    (void)TransitionLocked(aj, to, "infrastructure failure: " + why, actor, tx);
  }
  CloseRunLocked(r, r.job_ended ? r.end_state : RunState::kInfraFailed, why, board_offline, tx);
}

void Lab::MaybeFinalizeLocked(ActiveRun& r) {
  if (!r.finish_received || r.finalizing) return;
  const auto expected = r.run.batches_expected;
  const auto have = static_cast<std::uint64_t>(
      std::distance(r.committed.begin(), r.committed.lower_bound(expected)));
  if (have < expected) return;
  r.finalizing = true;
  to_finalize_.push_back(r.run.id);
  bg_cv_.notify_all();
}

// ---------------------------------------------------------------------------------------------
// Client use cases

Status Lab::ValidateSubmit(const SubmitRequest& r) const {
  auto invalid = [](std::string m) { return MakeError(ErrorCode::kInvalidArgument, std::move(m)); };
  if (r.kind.empty() && r.board.empty()) {
    return invalid("give a board kind or a board name to run on");
  }
  for (const auto& [key, value] : r.tags) {
    if (key.empty() || value.empty() || key.find('=') != std::string::npos) {
      return invalid("tag '" + key + "=" + value +
                     "' is not KEY=VALUE with a non-empty key and value (e.g. cpu=cortex-m55)");
    }
  }
  if (r.op == kModelOp) {
    if (Status s = ValidateModelRequest(r); !s.ok()) return s;
  } else if (!r.firmware_artifact.empty() || !r.blob_artifact.empty() || r.op == kCustomOp) {
    if (Status s = ValidateCustomRequest(r); !s.ok()) return s;
  } else {
    if (r.op.empty()) return invalid("op is required (built-in ops: " + OpNames() + ")");
    const OpInfo* op = FindOp(r.op);
    if (op == nullptr) {
      return invalid("unknown op '" + r.op + "' (built-in ops: " + OpNames() + ")");
    }
    if (r.cases.empty()) return invalid("the job has no cases");
    for (std::size_t i = 0; i < r.cases.size(); ++i) {
      if (Status s = ValidateCaseParams(*op, r.cases[i].params); !s.ok()) {
        return invalid(fmt::format("case {} (id {}): {}", i, r.cases[i].id, s.error().message));
      }
    }
  }
  if (r.cases.size() > kMaxCases) {
    return invalid(
        fmt::format("the job has {} cases; at most {} are accepted", r.cases.size(), kMaxCases));
  }
  if (r.iterations < 1 || r.iterations > kMaxIterations) {
    return invalid(
        fmt::format("iterations must be between 1 and {}, got {}", kMaxIterations, r.iterations));
  }
  if (r.warmup > kMaxWarmup) {
    return invalid(fmt::format("warmup must be between 0 and {}, got {}", kMaxWarmup, r.warmup));
  }
  if (r.timeout_s > kMaxTimeoutS) {
    return invalid(fmt::format("timeout must be at most {} s, got {}", kMaxTimeoutS, r.timeout_s));
  }
  if (r.label.size() > 256) return invalid("label is longer than 256 characters");
  if (!r.cases_artifact.empty() && !IsHexSha256(r.cases_artifact)) {
    return invalid("cases_artifact must be a SHA-256 in lowercase hex, got '" + r.cases_artifact +
                   "'");
  }
  return {};
}

Result<SubmitReply> Lab::Submit(const Caller& caller, SubmitRequest request) {
  if (Status s = RequireRole(caller, Role::kMember, "submitting a job"); !s.ok()) return s.error();
  if (Status s = ValidateSubmit(request); !s.ok()) return s.error();
  auto events = NormalizeEvents(request.events);
  if (!events.ok()) return events.error();
  request.events = std::move(*events);
  if (!request.cases_artifact.empty()) {
    auto artifact = store_.GetArtifact(request.cases_artifact);
    if (!artifact.ok()) return artifact.error();
    if (!artifact->has_value()) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "cases artifact " + request.cases_artifact + " was never uploaded");
    }
  }

  std::optional<CustomFirmwareFiles> custom;
  // A model job: the blob parsed here, before the lock (model_admission.h).
  std::optional<ModelInspection> model;
  std::optional<Artifact> model_blob;
  if (request.op == kModelOp) {
    if (request.cases.empty()) request.cases.push_back(CaseSpec{0, {}});
    auto blob = store_.GetArtifact(request.blob_artifact);
    if (!blob.ok()) return blob.error();
    if (!blob->has_value()) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "model artifact " + request.blob_artifact +
                           " was never uploaded (mculab submit --model uploads it)");
    }
    model_blob = **blob;
    auto inspected = AdmitModelFile(artifacts_.PathOf(request.blob_artifact), model_blob->name,
                                    model_blob->size);
    if (!inspected.ok()) return inspected.error();
    model = std::move(*inspected);
  } else if (!request.firmware_artifact.empty()) {
    request.op = kCustomOp;
    if (request.cases.empty()) request.cases.push_back(CaseSpec{0, {}});
    auto files = FindCustomFiles(store_, artifacts_, request);
    if (!files.ok()) return files.error();
    custom = std::move(*files);
  }

  std::unique_lock l(mu_);
  if (stopping_) return MakeError(ErrorCode::kUnavailable, "the server is shutting down");
  if (Status s = Serving(); !s.ok()) return s.error();
  {
    std::uint32_t queued = 0;
    for (const auto& [id, aj] : jobs_) {
      if (aj.job.user == caller.user && aj.job.state == JobState::kQueued) ++queued;
    }
    if (queued >= config_.max_queued_jobs_per_user) {
      return MakeError(ErrorCode::kResourceExhausted,
                       fmt::format("{} has {} jobs queued, the most this server queues per user "
                                   "(max_queued_jobs_per_user in the server config); wait for "
                                   "some to start or cancel them",
                                   caller.user, queued));
    }
  }
  // Admission control: only what some registered board (online or not) could run.
  AdmissionRequest admission{request.kind, request.board, request.op, request.tags, request.events};
  auto kind = AdmitToBoards(admission, boards_, board_units_);
  if (!kind.ok()) return kind.error();
  request.kind = admission.kind = *kind;

  if (custom) {
    if (Status s = AdmitCustomLocked(request, *custom); !s.ok()) return s.error();
  }
  if (model) {
    std::vector<const Board*> candidates;
    for (const auto& [name, b] : boards_) {
      if (!request.board.empty() ? name == request.board : b.kind == request.kind) {
        candidates.push_back(&b);
      }
    }
    if (Status s = AdmitModelOnBoards(*model, model_blob->size, model_blob->name, candidates);
        !s.ok()) {
      return s.error();
    }
  }
  if (Status s = AdmitWorkloadMemory(admission, request.cases, boards_); !s.ok()) {
    return s.error();
  }

  Job job;
  job.user = caller.user;
  job.priority = request.priority;
  job.kind = request.kind;
  job.board = request.board;
  job.op = request.op;
  job.label = request.label;
  job.state = JobState::kQueued;
  job.iterations = request.iterations;
  job.warmup = request.warmup;
  job.num_cases = static_cast<std::uint32_t>(request.cases.size());
  job.cases_artifact = request.cases_artifact;
  job.firmware_artifact = request.firmware_artifact;
  job.blob_artifact = request.blob_artifact;
  job.tags = request.tags;
  job.timeout_s = request.timeout_s != 0 ? request.timeout_s : config_.default_timeout_s;

  Tx tx;
  job.id = CreateJobLocked(job, std::move(request.cases), caller.user, tx);
  if (!request.events.empty()) {
    tx.writes.job_events.push_back(JobEvents{job.id, request.events});
    jobs_.at(job.id).events = request.events;
  }
  spdlog::info("job {} submitted by {}: {} on {} ({} case{} x {} iteration{})", job.id, caller.user,
               job.op, job.board.empty() ? job.kind : job.board, job.num_cases,
               job.num_cases == 1 ? "" : "s", job.iterations, job.iterations == 1 ? "" : "s");
  ScheduleLocked(tx);
  SubmitReply reply;
  reply.id = job.id;
  const ActiveJob& aj = jobs_.at(job.id);  // a new job cannot be final yet
  reply.state = aj.job.state;
  const JobId ids[] = {job.id};
  reply.wait = QueueWaitLocked(aj, QueuePositionsLocked(ids)[0]);
  reply.queue_position = reply.wait.position;
  reply.estimated_start_ms = reply.wait.estimated_start_ms;

  auto committed = std::make_shared<std::promise<Status>>();
  auto future = committed->get_future();
  CommitLocked(tx, [committed](const WriteOutcome& o) { committed->set_value(o.status); });
  l.unlock();
  Deliver(tx);
  if (Status s = future.get(); !s.ok()) {
    // Not stored, so it must not run: the Lab has stopped (FailStop) and the job leaves memory.
    spdlog::error("job {} could not be stored: {}", job.id, s.error().message);
    {
      std::lock_guard relock(mu_);
      if (auto it = jobs_.find(job.id); it != jobs_.end()) {
        LeaveStateLocked(it->second.job, it->second.job.state);
        jobs_.erase(it);
      }
    }
    return MakeError(ErrorCode::kUnavailable, "the job could not be stored (" + s.error().message +
                                                  "); it was not accepted and will not run");
  }
  CrashPoint(crash_points::kBeforeReply);
  return reply;
}

Result<std::vector<BoardView>> Lab::ListBoards(const Caller& caller) {
  if (Status s = RequireRole(caller, Role::kViewer, "listing boards"); !s.ok()) return s.error();
  if (Status s = Serving(); !s.ok()) return s.error();
  std::lock_guard l(mu_);
  std::map<std::string, std::uint32_t> by_kind;
  for (const auto& [id, q] : queue_) ++by_kind[q.kind];
  std::vector<BoardView> out;
  out.reserve(boards_.size());
  for (const auto& [name, b] : boards_) {
    const BoardSlot slot = SlotOf(b);
    BoardView v{b, 0, 0};
    for (const auto& [id, q] : queue_) v.queue_length += Fits(q, slot) ? 1 : 0;
    if (auto k = by_kind.find(b.kind); k != by_kind.end()) v.kind_queue_length = k->second;
    out.push_back(std::move(v));
  }
  return out;
}

Result<Job> Lab::GetJob(const Caller& caller, JobId id) {
  if (Status s = RequireRole(caller, Role::kViewer, "reading a job"); !s.ok()) return s.error();
  if (Status s = Serving(); !s.ok()) return s.error();
  // From the store, never from memory: the reply reports only what is committed (the read waits
  // for the state writes queued before it, so it shows every change decided so far).
  auto job = store_.GetJob(id);
  if (job.ok()) AddQueueWait(*job);
  return job;
}

Result<std::vector<Job>> Lab::ListJobs(const Caller& caller, const JobFilter& filter) {
  if (Status s = RequireRole(caller, Role::kViewer, "listing jobs"); !s.ok()) return s.error();
  JobFilter f = filter;
  if (!f.state.empty() && !ParseJobState(f.state)) {
    std::vector<std::string> names;
    for (JobState s : kAllJobStates) names.emplace_back(JobStateName(s));
    return MakeError(ErrorCode::kInvalidArgument,
                     "unknown job state '" + f.state + "' (states: " + JoinNames(names) + ")");
  }
  if (f.limit == 0) f.limit = 50;
  f.limit = std::min<std::uint32_t>(f.limit, 1000);
  auto jobs = store_.ListJobs(f);
  if (jobs.ok()) {
    std::vector<Job*> page;
    for (Job& j : *jobs) page.push_back(&j);
    AddQueueWaits(page);
  }
  return jobs;
}

Result<Job> Lab::Cancel(const Caller& caller, JobId id) {
  if (Status s = RequireRole(caller, Role::kMember, "cancelling a job"); !s.ok()) return s.error();
  // Someone else's job needs the admin role, whatever its state.
  auto owned_by_caller = [&](const std::string& owner) -> Status {
    if (owner == caller.user || caller.role == Role::kAdmin) return {};
    return MakeError(
        ErrorCode::kPermissionDenied,
        fmt::format("job {} belongs to {}: only they or an admin can cancel it", id, owner));
  };
  if (Status s = Serving(); !s.ok()) return s.error();
  std::unique_lock l(mu_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    l.unlock();
    auto job = store_.GetJob(id);
    if (!job.ok()) return job.error();
    if (Status s = owned_by_caller(job->user); !s.ok()) return s.error();
    return MakeError(ErrorCode::kFailedPrecondition,
                     fmt::format("job {} already {}", id, JobStateName(job->state)));
  }
  ActiveJob& aj = it->second;
  if (Status s = owned_by_caller(aj.job.user); !s.ok()) return s.error();
  Tx tx;
  const std::string reason = "cancelled by " + caller.user;
  bool freed_board = false;
  if (IsOnBoard(aj.job.state)) {
    auto r = runs_.find(aj.job.last_run_id);
    if (r != runs_.end()) {
      SendToAgentLocked(r->second.run.agent, RunCancel{r->first, reason}, tx);
      r->second.job_ended = true;
      r->second.end_state = RunState::kCancelled;
      if (!r->second.finish_received) ArmCancelGraceLocked(r->first);
    }
  }
  aj.job.message = reason;
  Job out = aj.job;
  if (Status s = TransitionLocked(aj, JobState::kCancelled, reason, caller.user, tx); !s.ok()) {
    return s.error();
  }
  out.state = JobState::kCancelled;
  out.finished_ms = clock_.NowMs();
  // A run whose agent already reported its end (we were only waiting for batches) ends now.
  auto r = runs_.find(out.last_run_id);
  if (r != runs_.end() && r->second.job_ended && r->second.finish_received) {
    CloseRunLocked(r->second, RunState::kCancelled, reason, false, tx);
    freed_board = true;
  }
  if (freed_board) ScheduleLocked(tx);
  auto committed = std::make_shared<std::promise<Status>>();
  auto future = committed->get_future();
  CommitLocked(tx, [committed](const WriteOutcome& o) { committed->set_value(o.status); });
  l.unlock();
  Deliver(tx);
  if (Status s = future.get(); !s.ok()) {
    return MakeError(
        ErrorCode::kUnavailable,
        fmt::format("the cancellation of job {} could not be stored ({})", id, s.error().message));
  }
  spdlog::info("job {} {}", id, reason);
  CrashPoint(crash_points::kBeforeReply);
  return out;
}

Result<std::shared_ptr<JobWatch>> Lab::Watch(const Caller& caller, JobId id) {
  if (Status s = RequireRole(caller, Role::kViewer, "watching a job"); !s.ok()) return s.error();
  if (Status s = Serving(); !s.ok()) return s.error();
  auto watch = std::make_shared<JobWatch>(id);
  {
    std::lock_guard l(mu_);
    auto it = jobs_.find(id);
    if (it != jobs_.end()) {
      if (stopping_) {
        watch->End();
        return watch;
      }
      // The current state, told once every write queued so far (the state's own) is committed;
      // later changes follow in commit order.
      const Job& j = it->second.job;
      Tx tx;
      tx.events.emplace_back(
          watch, JobEvent{j.id, j.state, j.message, std::min(j.progress_done, j.ProgressTotal()),
                          j.ProgressTotal(), j.assigned_board, clock_.NowMs()});
      watchers_[id].push_back(watch);
      // A revoked token ends the watch (Accounts runs this without locks held).
      watch->Hold(accounts_.WatchToken(caller.token, [weak = std::weak_ptr<JobWatch>(watch)] {
        if (auto w = weak.lock()) w->Fail("the watcher's token was revoked");
      }));
      CommitLocked(tx);
      return watch;
    }
  }
  // Not live: finished (or unknown). Every unfinished job is live, so this is the last event.
  auto job = store_.GetJob(id);
  if (!job.ok()) return job.error();
  watch->Push(JobEvent{job->id, job->state, job->message,
                       std::min(job->progress_done, job->ProgressTotal()), job->ProgressTotal(),
                       job->assigned_board, job->finished_ms});
  watch->End();
  return watch;
}

Result<std::unique_ptr<ArtifactUpload>> Lab::BeginUpload(const Caller& caller, std::string name,
                                                         std::uint64_t declared_size) {
  if (Status s = RequireRole(caller, Role::kMember, "uploading a file"); !s.ok()) return s.error();
  if (Status s = Serving(); !s.ok()) return s.error();
  return artifacts_.Begin(caller, std::move(name), declared_size);
}

Result<std::size_t> Lab::CollectArtifacts() {
  const std::int64_t cutoff = clock_.NowMs() - std::int64_t{config_.artifact_grace_s} * 1000;
  auto old = store_.ListArtifactsBefore(cutoff);  // read without the lock
  if (!old.ok()) return old.error();
  if (old->empty()) return std::size_t{0};
  WriteSet ws;
  {
    std::lock_guard l(mu_);
    std::set<std::string> in_use;
    for (const auto& [id, aj] : jobs_) {  // every unfinished job
      for (const std::string* sha :
           {&aj.job.cases_artifact, &aj.job.firmware_artifact, &aj.job.blob_artifact}) {
        if (!sha->empty()) in_use.insert(*sha);
      }
    }
    for (const Artifact& a : *old) {
      if (!in_use.contains(a.sha256)) ws.deleted_artifacts.push_back(a.sha256);
    }
  }
  if (ws.deleted_artifacts.empty()) return std::size_t{0};
  std::vector<std::string> deleted = ws.deleted_artifacts;
  if (Status s = store_.WriteAndWait(std::move(ws)); !s.ok()) return s.error();
  for (const std::string& sha : deleted) {
    std::error_code ec;
    std::filesystem::remove(artifacts_.PathOf(sha), ec);
  }
  spdlog::info("deleted {} upload(s) older than {} s that no unfinished job uses", deleted.size(),
               config_.artifact_grace_s);
  return deleted.size();
}

Result<std::vector<JobTransition>> Lab::JobHistory(const Caller& caller, JobId id) {
  if (Status s = RequireRole(caller, Role::kViewer, "reading a job's history"); !s.ok()) {
    return s.error();
  }
  auto t = store_.GetTransitions(id);
  if (!t.ok()) return t.error();
  if (t->empty()) return MakeError(ErrorCode::kNotFound, fmt::format("no job {}", id));
  return t;
}

// ---------------------------------------------------------------------------------------------
// Timeouts and finalization

void Lab::ExpireDeadlinesLocked(Tx& tx) {
  const std::int64_t now = clock_.NowMs();
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    const JobId id = deadlines_.begin()->second;
    deadlines_.erase(deadlines_.begin());
    auto it = jobs_.find(id);
    if (it == jobs_.end() || !IsOnBoard(it->second.job.state)) continue;
    ActiveJob& aj = it->second;
    aj.deadline_ms = kNoDeadline;
    const std::string why =
        fmt::format("timed out after {} s on board {}", aj.job.timeout_s, aj.job.assigned_board);
    auto r = runs_.find(aj.job.last_run_id);
    bool close_run = false;
    if (r != runs_.end()) {
      SendToAgentLocked(r->second.run.agent, RunCancel{r->first, why}, tx);
      r->second.job_ended = true;
      r->second.end_state = RunState::kTimedOut;
      close_run = r->second.finish_received;
      if (!close_run) ArmCancelGraceLocked(r->first);
    }
    aj.job.message = why;
    const RunId run = aj.job.last_run_id;
    spdlog::warn("job {} {}", id, why);
    (void)TransitionLocked(aj, JobState::kTimedOut, why, "server", tx);
    if (close_run) {
      CloseRunLocked(runs_.at(run), RunState::kTimedOut, why, false, tx);
      ScheduleLocked(tx);
    }
  }
}

void Lab::BackgroundLoop() {
  std::unique_lock l(mu_);
  while (!stopping_) {
    if (failed_) {
      // Stopped after a failed write: no more timeouts, finalizing or scheduling.
      ShutDownAfterFailureLocked();
      bg_cv_.wait(l);
      continue;
    }
    if (!to_finalize_.empty()) {
      const RunId run = to_finalize_.front();
      to_finalize_.pop_front();
      l.unlock();
      Finalize(run);
      l.lock();
      continue;
    }
    if (clock_.NowMs() >= next_artifact_collection_ms_) {
      next_artifact_collection_ms_ = clock_.NowMs() + kArtifactCollectionPeriodMs;
      l.unlock();
      if (auto n = CollectArtifacts(); !n.ok()) {
        spdlog::error("collecting unused artifacts: {}", n.error().message);
      }
      l.lock();
      continue;
    }
    Tx tx;
    ExpireDeadlinesLocked(tx);
    ExpireLeasesLocked(tx);
    ExpireCancelGraceLocked(tx);
    ExpireAgentsLocked(tx);
    CommitLocked(tx);
    if (!tx.notify.empty()) {
      l.unlock();
      Deliver(tx);
      l.lock();
      continue;
    }
    std::int64_t next = std::min(deadlines_.empty() ? kNoDeadline : deadlines_.begin()->first,
                                 NextAgentDeadlineLocked());
    if (!lease_deadlines_.empty()) next = std::min(next, lease_deadlines_.begin()->first);
    if (!cancel_deadlines_.empty()) next = std::min(next, cancel_deadlines_.begin()->first);
    next = std::min(next, next_artifact_collection_ms_);
    clock_.WaitUntil(l, bg_cv_, next);
  }
}

}  // namespace mculab::server
