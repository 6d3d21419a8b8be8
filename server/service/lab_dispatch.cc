// Lab: dispatch. The scheduling pass (domain/scheduler.h) over the queued jobs and free boards,
// assigning a job to a board, and what a queued job waits for: its position, the reservation it
// waits on, an estimated start, and the boards' queue lengths.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <limits>

#include "common/crash_point.h"
#include "common/op_catalog.h"
#include "common/time_text.h"
#include "server/domain/admission.h"
#include "server/domain/queue_position.h"
#include "server/domain/scheduler.h"
#include "server/service/lab.h"
#include "server/service/model_admission.h"
#include "server/service/profiles.h"

namespace mculab::server {

void Lab::ScheduleLocked(Effects& fx) {
  if (stopping_ || failed_) return;
  const std::int64_t now = clock_.NowMs();
  // Nothing can change the answer of a pass that placed nothing until a job or a board changes
  // (each such change is a write: this Effects's since its last pass, or an earlier Effects's
  // through CommitLocked) or a lease ends.
  if (!schedule_stale_ && WriteMark(fx) == fx.scheduled_mark && now < schedule_recheck_ms_) {
    return;
  }
  schedule_stale_ = false;
  fx.scheduled_mark = WriteMark(fx);
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
    AssignLocked(aj, boards_.at(p.board), fx);
    refused = refused || aj.job.state == JobState::kQueued;
  }
  // What the placements wrote needs no second pass (the boards they took are busy, the jobs
  // assigned); a placement AssignLocked refused (its agent is gone) leaves the schedule stale.
  fx.scheduled_mark = WriteMark(fx);
  if (refused) schedule_stale_ = true;
}

void Lab::AssignLocked(ActiveJob& aj, Board& board, Effects& fx) {
  if (!sessions_.Connected(board.agent)) {
    spdlog::error("board {} is idle but its agent {} is not connected", board.name, board.agent);
    return;
  }
  const std::int64_t now = clock_.NowMs();
  Run run;
  run.id = next_run_id_++;
  if (run.id + kRunIdBlock / 2 > reserved_run_ids_) {
    // Committed before (or with) the first run that needs it, long before the block runs out.
    reserved_run_ids_ = std::max(reserved_run_ids_, run.id) + kRunIdBlock;
    fx.writes.reserve_run_ids_to = reserved_run_ids_;
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
                                  "server", fx);
      !s.ok()) {
    return;
  }
  run.attempt = aj.job.attempts;
  last_assigned_ms_[aj.job.user] = now;
  board.current_job = aj.job.id;
  SetBoardStateLocked(board, BoardState::kBusy, fmt::format("job {}", aj.job.id), fx);
  fx.writes.runs.push_back(run);
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
  PlanPassesLocked(aj, board, runs_.at(run.id), a, fx);
  a.firmware_sha256 = aj.job.firmware_artifact;
  a.blob_sha256 = aj.job.blob_artifact;
  SendToAgentLocked(board.agent, std::move(a), fx);
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

std::int64_t Lab::MedianDurationLocked(const Job& job) const {
  auto d = recent_durations_.find(job.kind + "/" + job.op);
  if (d == recent_durations_.end() || d->second.empty()) return 0;
  std::vector<std::int64_t> v(d->second.begin(), d->second.end());
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::int64_t Lab::EstimateStartLocked(const ActiveJob& aj, std::uint32_t position) const {
  const std::int64_t median = MedianDurationLocked(aj.job);
  if (median == 0) return 0;
  const QueuedJob me = QueuedOf(aj.job);
  std::int64_t boards = 0;
  for (const auto& [name, b] : boards_) {
    if (b.state != BoardState::kOffline && IsSchedulable(b.health) && Fits(me, SlotOf(b))) {
      ++boards;
    }
  }
  if (boards == 0) return 0;
  // Every fitting board is busy (the job is queued): `position` jobs go before it, `boards` at
  // a time, each taking about the median.
  const std::int64_t rounds = (static_cast<std::int64_t>(position) + boards - 1) / boards;
  return clock_.NowMs() + rounds * median;
}

QueueWait Lab::QueueWaitLocked(const ActiveJob& aj, std::uint32_t position) const {
  QueueWait w;
  auto view = queue_.find(aj.job.id);
  if (aj.job.state != JobState::kQueued || view == queue_.end()) return w;
  w.position = position;
  const QueuedJob& me = view->second;
  const std::int64_t now = clock_.NowMs();
  // Waiting on a reservation: every board the job could run on now (online, healthy enough) is
  // reserved by someone else; the lease that ends first is what it waits for.
  const Board* first = nullptr;
  bool usable = false;
  for (const auto& [name, b] : boards_) {
    if (b.state == BoardState::kOffline || !IsSchedulable(b.health)) continue;
    const BoardSlot slot = SlotOf(b);
    if (!Fits(me, slot)) continue;
    if (MayRun(me, slot, now)) {
      usable = true;
      break;
    }
    if (first == nullptr || b.lease_until_ms < first->lease_until_ms) first = &b;
  }
  if (usable || first == nullptr) {
    w.estimated_start_ms = EstimateStartLocked(aj, w.position);
    return w;
  }
  w.board = first->name;
  w.holder = first->holder;
  w.lease_until_ms = first->lease_until_ms;
  w.note = first->reservation_note;
  // It starts when the lease ends, after the jobs ahead of it (the holder's among them).
  const std::int64_t median = MedianDurationLocked(aj.job);
  w.estimated_start_ms =
      std::max(now, first->lease_until_ms) + static_cast<std::int64_t>(w.position - 1) * median;
  return w;
}

void Lab::AddQueueWait(Job& job) { AddQueueWaits({&job}); }

void Lab::AddQueueWaits(const std::vector<Job*>& jobs) {
  std::vector<JobId> queued;
  for (const Job* j : jobs) {
    if (j->state == JobState::kQueued) queued.push_back(j->id);
  }
  if (queued.empty()) return;
  std::lock_guard l(mu_);
  const std::vector<std::uint32_t> positions = QueuePositionsLocked(queued);
  std::size_t i = 0;
  for (Job* j : jobs) {
    if (j->state != JobState::kQueued) continue;
    const std::uint32_t position = positions[i++];
    auto it = jobs_.find(j->id);
    if (position == 0 || it == jobs_.end()) continue;  // no longer queued
    j->wait = QueueWaitLocked(it->second, position);
  }
}

}  // namespace mculab::server
