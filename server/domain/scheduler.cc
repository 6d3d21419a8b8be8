#include "server/domain/scheduler.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_set>

namespace mculab::server {

bool Fits(const QueuedJob& job, const BoardSlot& board) {
  if (!job.board.empty()) {
    return board.name == job.board && (job.kind.empty() || board.kind == job.kind);
  }
  return board.kind == job.kind;
}

std::vector<Placement> Schedule(std::span<const QueuedJob> queued,
                                std::span<const BoardSlot> boards) {
  // Free boards in preference order: good before unknown, then by name.
  std::vector<const BoardSlot*> free;
  for (const BoardSlot& b : boards) {
    if (b.state == BoardState::kIdle && IsSchedulable(b.health)) free.push_back(&b);
  }
  std::vector<Placement> out;
  if (free.empty() || queued.empty()) return out;
  std::sort(free.begin(), free.end(), [](const BoardSlot* a, const BoardSlot* b) {
    return std::make_tuple(a->health != BoardHealth::kGood, a->name) <
           std::make_tuple(b->health != BoardHealth::kGood, b->name);
  });

  struct KindQueue {
    std::vector<const BoardSlot*> boards;
    std::size_t next = 0;  // boards before it are taken
  };
  std::map<std::string, KindQueue, std::less<>> by_kind;
  std::map<std::string, const BoardSlot*, std::less<>> by_name;
  for (const BoardSlot* b : free) {
    by_kind[b->kind].boards.push_back(b);
    by_name.emplace(b->name, b);
  }
  std::unordered_set<const BoardSlot*> taken;

  std::vector<const QueuedJob*> jobs;
  jobs.reserve(queued.size());
  for (const QueuedJob& j : queued) jobs.push_back(&j);
  std::sort(jobs.begin(), jobs.end(),
            [](const QueuedJob* a, const QueuedJob* b) { return a->id < b->id; });

  std::size_t left = free.size();
  for (const QueuedJob* job : jobs) {
    if (left == 0) break;
    const BoardSlot* chosen = nullptr;
    if (!job->board.empty()) {
      auto it = by_name.find(job->board);
      if (it != by_name.end() && !taken.contains(it->second) && Fits(*job, *it->second)) {
        chosen = it->second;
      }
    } else {
      auto it = by_kind.find(job->kind);
      if (it != by_kind.end()) {
        KindQueue& q = it->second;
        while (q.next < q.boards.size() && taken.contains(q.boards[q.next])) ++q.next;
        if (q.next < q.boards.size()) chosen = q.boards[q.next];
      }
    }
    if (chosen == nullptr) continue;
    taken.insert(chosen);
    --left;
    out.push_back(Placement{job->id, chosen->name});
  }
  return out;
}

}  // namespace mculab::server
