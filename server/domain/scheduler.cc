#include "server/domain/scheduler.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace mculab::server {

std::string_view JobPriorityName(JobPriority priority) {
  switch (priority) {
    case JobPriority::kLow:
      return "low";
    case JobPriority::kNormal:
      return "normal";
    case JobPriority::kHigh:
      return "high";
  }
  return "normal";
}

std::optional<JobPriority> ParseJobPriority(std::string_view name) {
  for (JobPriority p : {JobPriority::kLow, JobPriority::kNormal, JobPriority::kHigh}) {
    if (JobPriorityName(p) == name) return p;
  }
  return std::nullopt;
}

QueuedJob QueuedOf(const Job& job) {
  // A health check competes (and holds boards) as kHealthCheckHolder, whatever user it shows.
  QueuedJob q{job.id, job.kind, job.board,
              job.origin == JobOrigin::kHealthCheck ? std::string(kHealthCheckHolder) : job.user,
              job.priority};
  q.tags = job.tags;
  q.custom_runner = !job.firmware_artifact.empty();
  return q;
}

BoardSlot SlotOf(const Board& board) {
  BoardSlot s{board.name,   board.kind,   board.state,
              board.health, board.holder, board.lease_until_ms};
  s.tags = board.tags;
  s.refuses_custom_runners = !board.custom_runners && !board.custom_runners_off.empty();
  return s;
}

bool HasTags(const std::map<std::string, std::string>& want,
             const std::map<std::string, std::string>& have) {
  for (const auto& [key, value] : want) {
    auto it = have.find(key);
    if (it == have.end() || it->second != value) return false;
  }
  return true;
}

bool TakesRunner(const QueuedJob& job, const BoardSlot& board) {
  return !job.custom_runner || !board.refuses_custom_runners;
}

bool Fits(const QueuedJob& job, const BoardSlot& board) {
  if (!HasTags(job.tags, board.tags) || !TakesRunner(job, board)) return false;
  if (!job.board.empty()) {
    return board.name == job.board && (job.kind.empty() || board.kind == job.kind);
  }
  return board.kind == job.kind;
}

bool ReservationInForce(const BoardSlot& board, std::int64_t now_ms) {
  return !board.holder.empty() && now_ms < board.lease_until_ms;
}

bool MayRun(const QueuedJob& job, const BoardSlot& board, std::int64_t now_ms) {
  return Fits(job, board) && (!ReservationInForce(board, now_ms) || board.holder == job.user);
}

bool TakesWork(BoardState state, BoardHealth health, bool has_holder) {
  if (!IsSchedulable(health)) return false;
  switch (state) {
    case BoardState::kIdle:
      return true;
    case BoardState::kReserved:
      return has_holder;
    case BoardState::kBusy:
    case BoardState::kOffline:
      return false;
  }
  return false;
}

namespace {

bool TakesWork(const BoardSlot& b) { return TakesWork(b.state, b.health, !b.holder.empty()); }

// Free boards of one kind open to one set of users (everyone, or one holder), in preference
// order; boards before `next` are taken.
struct BoardQueue {
  std::vector<const BoardSlot*> boards;
  std::size_t next = 0;
};

class FreeBoards {
 public:
  FreeBoards(std::span<const BoardSlot> boards, std::int64_t now_ms) : now_ms_(now_ms) {
    std::vector<const BoardSlot*> free;
    for (const BoardSlot& b : boards) {
      if (TakesWork(b)) free.push_back(&b);
    }
    // Good before unknown, then by name; the other fields only make duplicate names (which the
    // caller should not send) come out the same whatever the input order.
    std::sort(free.begin(), free.end(), [](const BoardSlot* a, const BoardSlot* b) {
      return std::tie(a->health, a->name, a->kind, a->state, a->holder, a->lease_until_ms,
                      a->tags) <
             std::tie(b->health, b->name, b->kind, b->state, b->holder, b->lease_until_ms, b->tags);
    });
    static_assert(BoardHealth::kGood < BoardHealth::kUnknown);
    for (const BoardSlot* b : free) {
      KindBoards& k = kinds_[b->kind];
      BoardQueue& q = ReservationInForce(*b, now_ms_) ? k.by_holder[b->holder] : k.everyone;
      q.boards.push_back(b);
      by_name_.emplace(b->name, b);
    }
    left_ = free.size();
  }

  bool empty() const { return left_ == 0; }

  // The board `job` would get, or nullptr; does not take it.
  const BoardSlot* Find(const QueuedJob& job) {
    if (!job.board.empty()) {
      auto it = by_name_.find(job.board);
      if (it == by_name_.end() || taken_.contains(it->second)) return nullptr;
      return MayRun(job, *it->second, now_ms_) ? it->second : nullptr;
    }
    auto k = kinds_.find(job.kind);
    if (k == kinds_.end()) return nullptr;
    // The user's own reserved boards first, then public ones.
    if (!job.user.empty() && !k->second.by_holder.empty()) {
      auto h = k->second.by_holder.find(job.user);
      if (h != k->second.by_holder.end()) {
        if (const BoardSlot* b = FirstFree(job, h->second)) return b;
      }
    }
    return FirstFree(job, k->second.everyone);
  }

  void Take(const BoardSlot* b) {
    taken_.insert(b);
    --left_;
  }

 private:
  // The free boards of one kind: open to everyone, and reserved, by holder.
  struct KindBoards {
    BoardQueue everyone;
    std::unordered_map<std::string_view, BoardQueue> by_holder;
  };

  // The first free board of `q` that has the job's tags. A job with tags may skip boards without
  // them (they stay free for others): O(B) per such job.
  const BoardSlot* FirstFree(const QueuedJob& job, BoardQueue& q) {
    while (q.next < q.boards.size() && taken_.contains(q.boards[q.next])) ++q.next;
    for (std::size_t i = q.next; i < q.boards.size(); ++i) {
      const BoardSlot* b = q.boards[i];
      if (!taken_.contains(b) && (job.tags.empty() || HasTags(job.tags, b->tags)) &&
          TakesRunner(job, *b)) {
        return b;
      }
    }
    return nullptr;
  }

  std::int64_t now_ms_;
  // Hash maps: only looked up, never iterated, so their order cannot reach the answer. Views into
  // the caller's boards.
  std::unordered_map<std::string_view, KindBoards> kinds_;
  std::unordered_map<std::string_view, const BoardSlot*> by_name_;
  std::unordered_set<const BoardSlot*> taken_;
  std::size_t left_ = 0;
};

// A user's standing for fair share, across priorities.
struct Standing {
  std::uint32_t on_boards = 0;
  bool served_by_this_call = false;
  // Not served by this call: last_assigned_ms (0: never). Served: the order of service.
  std::int64_t last_served = 0;
  auto Key() const { return std::make_tuple(on_boards, served_by_this_call, last_served); }
};

// One user's waiting jobs of one priority, ascending id; jobs before `next` are placed or can not
// be placed by this call.
struct UserQueue {
  std::string_view user;
  std::vector<const QueuedJob*> jobs;
  std::size_t next = 0;
};

}  // namespace

std::vector<Placement> Schedule(std::span<const QueuedJob> queued,
                                std::span<const BoardSlot> boards, std::int64_t now_ms,
                                std::span<const UserShare> users) {
  std::vector<const QueuedJob*> views;
  views.reserve(queued.size());
  for (const QueuedJob& j : queued) views.push_back(&j);
  return Schedule(std::span<const QueuedJob* const>(views), boards, now_ms, users);
}

std::vector<Placement> Schedule(std::span<const QueuedJob* const> queued,
                                std::span<const BoardSlot> boards, std::int64_t now_ms,
                                std::span<const UserShare> users) {
  std::vector<Placement> out;
  if (queued.empty() || boards.empty()) return out;
  FreeBoards free(boards, now_ms);
  if (free.empty()) return out;

  std::map<std::string_view, Standing> standing;
  for (const UserShare& u : users) {
    Standing& s = standing[u.user];
    s.on_boards += u.on_boards;
    s.last_served = std::max(s.last_served, u.last_assigned_ms);
  }
  std::int64_t served = 0;  // placements so far: the round-robin order of this call

  // priority -> user -> jobs. Users are ranked below by `turn`, an ordered set whose key (standing,
  // oldest job id, user) is unique, so the hash map's order cannot reach the answer.
  std::map<JobPriority, std::unordered_map<std::string_view, UserQueue>, std::greater<>>
      by_priority;
  for (const QueuedJob* j : queued) {
    // A job no board that is free now would take is passed over below anyway (boards are only
    // ever taken during a call), and passing it over changes no one's turn: leave it out.
    if (!free.Find(*j)) continue;
    UserQueue& q = by_priority[j->priority][j->user];
    q.user = j->user;
    q.jobs.push_back(j);
  }

  for (auto& [priority, queues] : by_priority) {
    // The next user to serve is the first of `turn`: (standing, oldest waiting job id, user).
    using Turn = std::tuple<std::tuple<std::uint32_t, bool, std::int64_t>, JobId, std::string_view,
                            UserQueue*>;
    std::set<Turn> turn;
    auto enqueue = [&](UserQueue& q) {
      if (q.next < q.jobs.size()) {
        turn.emplace(standing[q.user].Key(), q.jobs[q.next]->id, q.user, &q);
      }
    };
    for (auto& [user, q] : queues) {
      std::sort(q.jobs.begin(), q.jobs.end(),
                [](const QueuedJob* a, const QueuedJob* b) { return a->id < b->id; });
      enqueue(q);
    }
    while (!turn.empty() && !free.empty()) {
      UserQueue& q = *std::get<UserQueue*>(*turn.begin());
      turn.erase(turn.begin());
      const QueuedJob& job = *q.jobs[q.next++];
      // Boards are only ever taken during a call, so a job that fits no free board now will not
      // fit one later in this call: it is passed over for good, and its user is ranked again by
      // their next waiting job.
      if (const BoardSlot* b = free.Find(job)) {
        free.Take(b);
        out.push_back(Placement{job.id, b->name});
        Standing& s = standing[q.user];
        ++s.on_boards;
        s.served_by_this_call = true;
        s.last_served = ++served;
      }
      enqueue(q);
    }
    if (free.empty()) break;
  }
  return out;
}

std::vector<Placement> Schedule(std::span<const QueuedJob> queued,
                                std::span<const BoardSlot> boards) {
  return Schedule(queued, boards, 0, {});
}

}  // namespace mculab::server
