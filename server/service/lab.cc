// Lab: construction and recovery (Start), stopping, committing an operation's effects and saying
// them after the commit, the fail-stop after a failed write, the live feeds' subscriptions, and the
// background thread (deadlines, finalisation, artifact collection).
// The Lab's other parts, one file each: jobs (lab_jobs.cc), dispatch (lab_dispatch.cc), boards
// (lab_boards.cc), agent sessions and their messages (lab_agents.cc), run ends and finalisation
// (lab_runs.cc), counters and passes (lab_counters.cc), uploads (lab_artifacts.cc).
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

Lab::Lab(Store& store, Clock& clock, LabConfig config, Accounts& accounts, ArtifactStore& artifacts)
    : store_(store), clock_(clock), config_(config), artifacts_(artifacts), accounts_(accounts) {}

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
  Effects fx;
  for (BoardUnits& u : *units) boards_.SetUnits(std::move(u));
  for (Board& b : *boards) {
    b.current_job = 0;
    Board& mine = boards_.Add(b);
    if (mine.state != BoardState::kOffline) {
      SetBoardStateLocked(mine, BoardState::kOffline,
                          "server started; waiting for agent " + mine.agent, fx);
    }
  }
  std::size_t requeued = 0;
  std::size_t waiting = 0;
  const std::int64_t now = clock_.NowMs();
  for (std::size_t i = 0; i < active->size(); ++i) {
    const Job& job = (*active)[i];
    ActiveJob& aj =
        jobs_.Add(ActiveJob{job, std::move(cases[i]), kNoDeadline, std::move(events[i])});
    if (!IsOnBoard(job.state)) continue;
    if (runs[i] && !IsFinal(runs[i]->state) && !runs[i]->agent.empty() &&
        boards_.Find(runs[i]->board) != nullptr) {
      // Reconciled when the agent registers (ConnectAgent) or when the grace ends.
      ActiveRun r;
      r.run = *runs[i];
      r.committed.insert(batch_seqs[i].begin(), batch_seqs[i].end());
      r.awaiting_agent = true;
      r.resume_deadline_ms = now + std::int64_t{config_.reconnect_grace_s} * 1000;
      aj.job.progress_done = r.run.progress_done;
      // The job's own timeout counts from its assignment, as before the restart.
      jobs_.SetDeadline(aj, r.run.created_ms + std::int64_t{aj.job.timeout_s} * 1000);
      Board& b = boards_.all().at(r.run.board);
      b.current_job = job.id;
      runs_.Add(std::move(r));
      ++waiting;
      continue;
    }
    if (runs[i]) {
      Run run = *runs[i];
      // A run that ended already keeps its end.
      if (ApplyTransition(run, RunState::kInfraFailed, "the server restarted during the run",
                          clock_.NowMs())
              .ok()) {
        fx.writes.runs.push_back(run);
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
        aj, to, fmt::format("server restarted while {}", JobStateName(job.state)), "server", fx);
  }
  jobs_.SetNextId(*max_job + 1);
  // Past every id stored or reserved by an earlier server (a crash may have lost the row of a run
  // it numbered); this server's block is committed before Start returns.
  fx.writes.reserve_run_ids_to = runs_.Restore(*max_run);
  for (auto& [name, b] : boards_.all()) {
    if (b.health == BoardHealth::kUnknown) QueueHealthCheckLocked(b, fx);
  }
  auto committed = std::make_shared<std::promise<Status>>();
  auto future = committed->get_future();
  CommitLocked(fx, [committed](const WriteOutcome& o) { committed->set_value(o.status); });
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
  Effects fx;
  {
    std::lock_guard l(mu_);
    if (stopping_) return;
    stopping_ = true;
    fx.notify = watchers_.EndAll();
    feeds_.EndAll();
  }
  bg_cv_.notify_all();
  if (background_.joinable()) background_.join();
  Deliver(fx);
  // Commit callbacks call into the Lab (acknowledgements, a failed write): none may be pending
  // once it is gone.
  store_.Flush();
}

// ---------------------------------------------------------------------------------------------
// Effects: committed, then said

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

void Lab::CommitLocked(Effects& fx, WriteDone done) {
  if (failed_) {
    // Stopped: memory may be ahead of the database, so nothing more is written or said; the
    // database keeps a prefix of what was decided, as after a crash, and a restart resumes there.
    bg_cv_.notify_all();
    fx = Effects{};
    if (done) done(WriteOutcome{Serving()});
    return;
  }
  // What the writes let the Lab say, said by the commit callback (see the class comment).
  struct Said {
    std::vector<std::pair<std::shared_ptr<AgentChannel>, AgentCommand>> sends;
    std::vector<std::pair<std::shared_ptr<JobWatch>, JobEvent>> events;
    FeedHub::Delivery feeds;
  };
  if (WriteMark(fx) != fx.scheduled_mark) schedule_stale_ = true;
  auto said = std::make_shared<Said>();
  said->sends = std::move(fx.sends);
  said->events = std::move(fx.events);
  said->feeds = feeds_.Take(fx, boards_.all(), [this] { return dispatch_.QueueLengths(); });
  fx.sends.clear();
  fx.events.clear();
  const bool says = !said->sends.empty() || !said->events.empty() || !said->feeds.empty();
  if (fx.writes.Rows() == 0 && !says && !done) return;
  store_.Write(std::move(fx.writes), [this, said, done = std::move(done)](const WriteOutcome& o) {
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
      said->feeds.Push();
    }
    if (done) done(o);
  });
  fx.writes = WriteSet{};
  fx.scheduled_mark = 0;
}

Status Lab::WaitForCommit(std::unique_lock<std::mutex>& l, Effects& fx) {
  auto committed = std::make_shared<std::promise<Status>>();
  auto future = committed->get_future();
  CommitLocked(fx, [committed](const WriteOutcome& o) { committed->set_value(o.status); });
  l.unlock();
  Deliver(fx);
  return future.get();
}

Status Lab::CommitAndWait(std::unique_lock<std::mutex>& l, Effects& fx) {
  if (Status s = WaitForCommit(l, fx); !s.ok()) {
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
  for (auto& [id, session] : sessions_.all()) {
    if (session.channel) session.channel->Hangup();
  }
  watchers_.EndAll();
  feeds_.EndAll();
}

std::shared_ptr<LabFeed> Lab::Subscribe(std::size_t capacity, JobId samples_of) {
  auto feed = std::make_shared<LabFeed>(capacity, samples_of);
  if (samples_of != 0) feeds_.NoteSampleFollower();
  std::lock_guard l(mu_);
  if (stopping_) {
    feed->End();
    return feed;
  }
  // The subscriber reads the current state after subscribing; from here on it is told changes
  // against that state.
  feeds_.Add(feed, dispatch_.QueueLengths());
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

void Lab::Deliver(Effects& fx) {
  for (auto& w : fx.notify) w->Notify();
  fx.notify.clear();
}

// ---------------------------------------------------------------------------------------------
// The background thread

void Lab::BackgroundLoop() {
  std::unique_lock l(mu_);
  while (!stopping_) {
    if (failed_) {
      // Stopped after a failed write: no more timeouts, finalizing or scheduling.
      ShutDownAfterFailureLocked();
      bg_cv_.wait(l);
      continue;
    }
    if (const std::optional<RunId> run = runs_.TakeToFinalize()) {
      l.unlock();
      Finalize(*run);
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
    Effects fx;
    ExpireDeadlinesLocked(fx);
    ExpireLeasesLocked(fx);
    ExpireCancelGraceLocked(fx);
    ExpireAgentsLocked(fx);
    CommitLocked(fx);
    if (!fx.notify.empty()) {
      l.unlock();
      Deliver(fx);
      l.lock();
      continue;
    }
    std::int64_t next = std::min(jobs_.NextDeadline(), NextAgentDeadlineLocked());
    next = std::min(next, boards_.NextLeaseEnd());
    next = std::min(next, runs_.NextGraceEnd());
    next = std::min(next, next_artifact_collection_ms_);
    clock_.WaitUntil(l, bg_cv_, next);
  }
}

}  // namespace mculab::server
