// Lab (lab.h): the parts put together, the state loaded at Start (recovery), stopping, the live
// feeds' subscriptions, and the background thread (deadlines, finalisation, upload collection).
#include "server/service/lab.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>

namespace mculab::server {

Lab::Lab(Store& store, Clock& clock, LabConfig config, Accounts& accounts, ArtifactStore& artifacts)
    : st_(store, clock, std::move(config), accounts, artifacts), parts_{&jobs_,    &scheduling_,
                                                                        &boards_,  &upkeep_,
                                                                        &agents_,  &runs_,
                                                                        &uploads_, &measures_} {}

Lab::~Lab() { Stop(); }

// ---------------------------------------------------------------------------------------------
// Start and stop

Status Lab::Start() {
  if (Status s = st_.artifacts.Init(); !s.ok()) return s;
  auto boards = st_.store.ListBoards();
  if (!boards.ok()) return boards.error();
  auto active = st_.store.ListActiveJobs();
  if (!active.ok()) return active.error();
  auto max_job = st_.store.MaxJobId();
  if (!max_job.ok()) return max_job.error();
  auto max_run = st_.store.MaxRunId();
  if (!max_run.ok()) return max_run.error();
  auto units = st_.store.ListBoardUnits();
  if (!units.ok()) return units.error();
  std::vector<std::vector<CaseSpec>> cases;
  std::vector<std::vector<std::string>> events;
  std::vector<std::optional<Run>> runs;
  std::vector<std::vector<std::uint64_t>> batch_seqs;  // per run: batch sequences in the store
  for (const Job& job : *active) {
    auto c = st_.store.GetJobCases(job.id);
    if (!c.ok()) return c.error();
    cases.push_back(std::move(*c));
    auto e = st_.store.GetJobEvents(job.id);
    if (!e.ok()) return e.error();
    events.push_back(std::move(e->events));
    std::optional<Run> run;
    std::vector<std::uint64_t> seqs;
    if (IsOnBoard(job.state) && job.last_run_id != 0) {
      auto r = st_.store.GetRun(job.last_run_id);
      if (r.ok()) {
        auto batches = st_.store.ListBatchSequences(r->id);
        if (!batches.ok()) return batches.error();
        seqs = std::move(*batches);
        run = std::move(*r);
      }
    }
    runs.push_back(std::move(run));
    batch_seqs.push_back(std::move(seqs));
  }

  std::unique_lock l(st_.mu);
  if (st_.started) return MakeError(ErrorCode::kFailedPrecondition, "the lab is already started");
  Effects fx;
  for (BoardUnits& u : *units) st_.boards.SetUnits(std::move(u));
  for (Board& b : *boards) {
    b.current_job = 0;
    Board& mine = st_.boards.Add(b);
    if (mine.state != BoardState::kOffline) {
      upkeep_.SetBoardStateLocked(mine, BoardState::kOffline,
                                  "server started; waiting for agent " + mine.agent, fx);
    }
  }
  std::size_t requeued = 0;
  std::size_t waiting = 0;
  const std::int64_t now = st_.clock.NowMs();
  for (std::size_t i = 0; i < active->size(); ++i) {
    const Job& job = (*active)[i];
    ActiveJob& aj =
        st_.jobs.Add(ActiveJob{job, std::move(cases[i]), kNoDeadline, std::move(events[i])});
    if (!IsOnBoard(job.state)) continue;
    if (runs[i] && !IsFinal(runs[i]->state) && !runs[i]->agent.empty() &&
        st_.boards.Find(runs[i]->board) != nullptr) {
      // Reconciled when the agent registers (ConnectAgent) or when the grace ends.
      ActiveRun r;
      r.run = *runs[i];
      r.committed.insert(batch_seqs[i].begin(), batch_seqs[i].end());
      // Batches stored before the restart are not counted in its statistics: read back at its end.
      if (!r.committed.empty()) r.statistics.Abandon();
      r.awaiting_agent = true;
      r.resume_deadline_ms = now + std::int64_t{st_.config.reconnect_grace_s} * 1000;
      aj.job.progress_done = r.run.progress_done;
      // The job's own timeout counts from its assignment, as before the restart.
      st_.jobs.SetDeadline(aj, r.run.created_ms + std::int64_t{aj.job.timeout_s} * 1000);
      Board& b = st_.boards.all().at(r.run.board);
      b.current_job = job.id;
      st_.runs.Add(std::move(r));
      ++waiting;
      continue;
    }
    if (runs[i]) {
      Run run = *runs[i];
      // A run that ended already keeps its end.
      if (ApplyTransition(run, RunState::kInfraFailed, "the server restarted during the run",
                          st_.clock.NowMs())
              .ok()) {
        fx.writes.runs.push_back(run);
      }
    }
    const JobState to = AfterInfraFailure(aj.job, st_.config.max_attempts);
    aj.job.message =
        to == JobState::kQueued
            ? fmt::format("the server restarted while the job was {}; requeued (attempt {} of {})",
                          JobStateName(job.state), aj.job.attempts, st_.config.max_attempts)
            : fmt::format("the server restarted while the job was {}; gave up after {} attempts",
                          JobStateName(job.state), aj.job.attempts);
    ++requeued;
    (void)jobs_.TransitionLocked(
        aj, to, fmt::format("server restarted while {}", JobStateName(job.state)), "server", fx);
  }
  st_.jobs.SetNextId(*max_job + 1);
  // Past every id stored or reserved by an earlier server (a crash may have lost the row of a run
  // it numbered); this server's block is committed before Start returns.
  fx.writes.reserve_run_ids_to = st_.runs.Restore(*max_run);
  for (auto& [name, b] : st_.boards.all()) {
    if (b.health == BoardHealth::kUnknown) upkeep_.QueueHealthCheckLocked(b, fx);
  }
  auto committed = std::make_shared<std::promise<Status>>();
  auto future = committed->get_future();
  st_.CommitLocked(fx, [committed](const WriteOutcome& o) { committed->set_value(o.status); });
  st_.started = true;
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
        waiting, st_.config.reconnect_grace_s);
  }
  next_artifact_collection_ms_ = st_.clock.NowMs() + kArtifactCollectionPeriodMs;
  background_ = std::thread([this] { BackgroundLoop(); });
  st_.accounts.StartRevocationChecks(kRevocationCheckPeriod);
  return {};
}

void Lab::Stop() {
  // No revocation callback may reach the Lab once it stops.
  st_.accounts.StopRevocationChecks();
  Effects fx;
  {
    std::lock_guard l(st_.mu);
    if (st_.stopping) return;
    st_.stopping = true;
    fx.notify = st_.watchers.EndAll();
    st_.feeds.EndAll();
  }
  st_.bg_cv.notify_all();
  if (background_.joinable()) background_.join();
  st_.Deliver(fx);
  // Commit callbacks call into the Lab (acknowledgements, a failed write): none may be pending
  // once it is gone.
  st_.store.Flush();
}

std::shared_ptr<LabFeed> Lab::Subscribe(std::size_t capacity, JobId samples_of) {
  auto feed = std::make_shared<LabFeed>(capacity, samples_of);
  if (samples_of != 0) st_.feeds.NoteSampleFollower();
  std::lock_guard l(st_.mu);
  if (st_.stopping) {
    feed->End();
    return feed;
  }
  // The subscriber reads the current state after subscribing; from here on it is told changes
  // against that state.
  st_.feeds.Add(feed, st_.dispatch.QueueLengths());
  return feed;
}

std::shared_ptr<LabFeed> Lab::Subscribe(const Caller& subscriber, std::size_t capacity,
                                        JobId samples_of) {
  auto feed = Subscribe(capacity, samples_of);
  // A revoked token ends the feed: its event stream closes and the page's reconnect is refused.
  feed->Hold(st_.accounts.WatchToken(subscriber.token, [weak = std::weak_ptr<LabFeed>(feed)] {
    if (auto f = weak.lock()) f->End();
  }));
  return feed;
}

void Lab::BackgroundLoop() {
  std::unique_lock l(st_.mu);
  while (!st_.stopping) {
    if (st_.failed) {
      // Stopped after a failed write: no more timeouts, finalizing or scheduling.
      st_.ShutDownAfterFailureLocked();
      st_.bg_cv.wait(l);
      continue;
    }
    if (const std::optional<RunId> run = st_.runs.TakeToFinalize()) {
      l.unlock();
      runs_.Finalize(*run);
      l.lock();
      continue;
    }
    if (st_.clock.NowMs() >= next_artifact_collection_ms_) {
      next_artifact_collection_ms_ = st_.clock.NowMs() + kArtifactCollectionPeriodMs;
      l.unlock();
      if (auto n = uploads_.CollectArtifacts(); !n.ok()) {
        spdlog::error("collecting unused artifacts: {}", n.error().message);
      }
      l.lock();
      continue;
    }
    Effects fx;
    jobs_.ExpireDeadlinesLocked(fx);
    upkeep_.ExpireLeasesLocked(fx);
    runs_.ExpireCancelGraceLocked(fx);
    agents_.ExpireAgentsLocked(fx);
    st_.CommitLocked(fx);
    if (!fx.notify.empty()) {
      l.unlock();
      st_.Deliver(fx);
      l.lock();
      continue;
    }
    std::int64_t next = std::min(st_.jobs.NextDeadline(), agents_.NextAgentDeadlineLocked());
    next = std::min(next, st_.boards.NextLeaseEnd());
    next = std::min(next, st_.runs.NextGraceEnd());
    next = std::min(next, next_artifact_collection_ms_);
    st_.clock.WaitUntil(l, st_.bg_cv, next);
  }
}

}  // namespace mculab::server
