#include "server/service/dispatcher.h"

#include <algorithm>

#include "server/domain/queue_position.h"

namespace mculab::server {

std::optional<std::vector<Placement>> Dispatcher::Plan(std::int64_t now_ms,
                                                       std::int64_t& recheck_ms) const {
  if (jobs_.queue().empty()) return std::nullopt;
  // No board takes work: no pass (a board of unknown health under health checks is idle or
  // reserved, so it counts whenever its health check could run).
  bool any_free = false;
  for (const auto& [name, b] : boards_.all()) {
    if (TakesWork(b.state, b.health, !b.holder.empty())) {
      any_free = true;
      break;
    }
  }
  if (!any_free) return std::nullopt;
  std::map<std::string, UserShare> shares;
  for (const auto& [user, n] : jobs_.on_boards()) shares[user].on_boards = n;
  for (const auto& [user, ms] : last_assigned_ms_) shares[user].last_assigned_ms = ms;
  std::vector<UserShare> users;
  users.reserve(shares.size());
  for (auto& [user, share] : shares) {
    share.user = user;
    users.push_back(share);
  }
  // A board of unknown health shows the holder of its health check and no lease end, so only
  // users' reservations in force lower the recheck.
  const std::span<const BoardSlot> slots = boards_.Slots(health_checks_);
  for (const BoardSlot& slot : slots) {
    if (!slot.holder.empty() && slot.lease_until_ms > now_ms) {
      recheck_ms = std::min(recheck_ms, slot.lease_until_ms);
    }
  }
  return Schedule(jobs_.groups(), slots, now_ms, users);
}

void Dispatcher::Succeeded(const Job& job) {
  if (job.started_ms == 0) return;
  auto& d = recent_durations_[job.kind + "/" + job.op];
  d.push_back(job.finished_ms - job.started_ms);
  if (d.size() > 20) d.pop_front();
}

std::vector<std::uint32_t> Dispatcher::QueuePositions(std::span<const JobId> ids) const {
  std::vector<const QueuedJob*> queue;
  queue.reserve(jobs_.queue().size());
  for (const auto& [id, q] : jobs_.queue()) queue.push_back(&q);
  std::vector<BoardSlot> slots;
  slots.reserve(boards_.all().size());
  for (const auto& [name, b] : boards_.all()) slots.push_back(SlotOf(b));
  return mculab::server::QueuePositions(queue, slots, ids);
}

std::map<std::string, std::uint32_t> Dispatcher::QueueLengths() const {
  // Fits() for every (job, board) pair, in one pass over the queue: a job with neither a board
  // nor tags fits every board of its kind that takes its runner, so those are counted by (kind,
  // custom runner); a job naming a board is checked against that board, one asking for tags
  // against every board.
  struct Plain {
    std::uint32_t builtin = 0;  // jobs with the lab's runner
    std::uint32_t custom = 0;   // jobs bringing their own
  };
  std::map<std::string, Plain> by_kind;
  std::map<std::string, std::uint32_t> out;
  // Each board's slot once: a queue of thousands of tagged jobs checks every board for each.
  std::vector<std::pair<std::uint32_t*, BoardSlot>> slots;
  slots.reserve(boards_.all().size());
  for (const auto& [name, b] : boards_.all()) slots.emplace_back(&(out[name] = 0), SlotOf(b));
  for (const auto& [id, q] : jobs_.queue()) {
    if (q.board.empty() && q.tags.empty()) {
      Plain& p = by_kind[q.kind];
      ++(q.custom_runner ? p.custom : p.builtin);
      continue;
    }
    if (!q.board.empty()) {
      const Board* b = boards_.Find(q.board);
      if (b != nullptr && Fits(q, SlotOf(*b))) ++out[b->name];
      continue;
    }
    for (auto& [length, slot] : slots) {
      if (slot.kind == q.kind && Fits(q, slot)) ++*length;
    }
  }
  QueuedJob custom;
  custom.custom_runner = true;
  for (auto& [length, slot] : slots) {
    auto k = by_kind.find(slot.kind);
    if (k == by_kind.end()) continue;
    const bool takes_custom = TakesRunner(custom, slot);
    *length += k->second.builtin + (takes_custom ? k->second.custom : 0);
  }
  return out;
}

std::int64_t Dispatcher::MedianDuration(const Job& job) const {
  auto d = recent_durations_.find(job.kind + "/" + job.op);
  if (d == recent_durations_.end() || d->second.empty()) return 0;
  std::vector<std::int64_t> v(d->second.begin(), d->second.end());
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::int64_t Dispatcher::EstimateStart(const ActiveJob& aj, std::uint32_t position,
                                       std::int64_t now_ms) const {
  const std::int64_t median = MedianDuration(aj.job);
  if (median == 0) return 0;
  const QueuedJob me = QueuedOf(aj.job);
  std::int64_t boards = 0;
  for (const auto& [name, b] : boards_.all()) {
    if (b.state != BoardState::kOffline && IsSchedulable(b.health) && Fits(me, SlotOf(b))) {
      ++boards;
    }
  }
  if (boards == 0) return 0;
  // Every fitting board is busy (the job is queued): `position` jobs go before it, `boards` at
  // a time, each taking about the median.
  const std::int64_t rounds = (static_cast<std::int64_t>(position) + boards - 1) / boards;
  return now_ms + rounds * median;
}

QueueWait Dispatcher::Wait(const ActiveJob& aj, std::uint32_t position, std::int64_t now_ms) const {
  QueueWait w;
  auto view = jobs_.queue().find(aj.job.id);
  if (aj.job.state != JobState::kQueued || view == jobs_.queue().end()) return w;
  w.position = position;
  const QueuedJob& me = view->second;
  // Waiting on a reservation: every board the job could run on now (online, healthy enough) is
  // reserved by someone else; the lease that ends first is what it waits for.
  const Board* first = nullptr;
  bool usable = false;
  for (const auto& [name, b] : boards_.all()) {
    if (b.state == BoardState::kOffline || !IsSchedulable(b.health)) continue;
    const BoardSlot slot = SlotOf(b);
    if (!Fits(me, slot)) continue;
    if (MayRun(me, slot, now_ms)) {
      usable = true;
      break;
    }
    if (first == nullptr || b.lease_until_ms < first->lease_until_ms) first = &b;
  }
  if (usable || first == nullptr) {
    w.estimated_start_ms = EstimateStart(aj, w.position, now_ms);
    return w;
  }
  w.board = first->name;
  w.holder = first->holder;
  w.lease_until_ms = first->lease_until_ms;
  w.note = first->reservation_note;
  // It starts when the lease ends, after the jobs ahead of it (the holder's among them).
  const std::int64_t median = MedianDuration(aj.job);
  w.estimated_start_ms =
      std::max(now_ms, first->lease_until_ms) + static_cast<std::int64_t>(w.position - 1) * median;
  return w;
}

}  // namespace mculab::server
