#include "server/domain/scheduler.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

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

// A hash of a name from its length and its first and last eight bytes: kinds, board and user
// names differ there, and a lookup compares the key anyway, so this only has to spread them. A
// hasher of our own also makes the standard library hash every lookup: with
// std::hash<string_view> (not "fast" to it) a map of up to 20 entries is searched by comparing
// the key with each entry in turn, and the holders of a kind's reserved boards or the users of a
// priority are about that many.
struct NameHash {
  std::size_t operator()(std::string_view s) const noexcept {
    std::uint64_t head = 0, tail = 0;
    const std::size_t n = s.size();
    if (n >= 8) {
      std::memcpy(&head, s.data(), 8);
      std::memcpy(&tail, s.data() + n - 8, 8);
    } else if (n > 0) {
      std::memcpy(&head, s.data(), n);
    }
    std::uint64_t h = (head ^ (n * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
    h = (h ^ (h >> 33) ^ tail) * 0xc4ceb9fe1a85ec53ULL;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};
template <typename V>
using NameMap = std::unordered_map<std::string_view, V, NameHash>;

// Free boards of one kind open to one set of users (everyone, or one holder), in preference
// order; boards before `next` are taken.
struct BoardQueue {
  std::vector<const BoardSlot*> boards;
  std::size_t next = 0;
};

class FreeBoards {
 public:
  FreeBoards(std::span<const BoardSlot> boards, std::int64_t now_ms)
      : now_ms_(now_ms), first_(boards.data()), taken_(boards.size(), false) {
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
      if (it == by_name_.end() || Taken(it->second)) return nullptr;
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

  // Whether `job` would get a board if none were taken yet: Find at the start of the call.
  bool FitsAtStart(const QueuedJob& job) const {
    if (!job.board.empty()) {
      auto it = by_name_.find(job.board);
      return it != by_name_.end() && MayRun(job, *it->second, now_ms_);
    }
    auto k = kinds_.find(job.kind);
    if (k == kinds_.end()) return false;
    if (!job.user.empty() && !k->second.by_holder.empty()) {
      auto h = k->second.by_holder.find(job.user);
      if (h != k->second.by_holder.end() && AnyFits(job, h->second)) return true;
    }
    return AnyFits(job, k->second.everyone);
  }

  void Take(const BoardSlot* b) {
    taken_[static_cast<std::size_t>(b - first_)] = true;
    --left_;
  }

  // Boards reserved for a holder with no job waiting can take nothing in this call (a job naming
  // one is another user's): they are taken at once, so that a call whose other boards are all
  // taken ends there instead of trying every waiting job on them (a board of unknown health is
  // reserved for its health check, which is often not in the queue).
  template <typename Users>
  void TakeUnwantedReservations(const Users& waiting) {
    for (auto& [kind, k] : kinds_) {
      for (auto& [holder, q] : k.by_holder) {
        if (waiting.contains(holder)) continue;
        for (const BoardSlot* b : q.boards) {
          if (!Taken(b)) Take(b);
        }
      }
    }
  }

 private:
  // The free boards of one kind: open to everyone, and reserved, by holder.
  struct KindBoards {
    BoardQueue everyone;
    NameMap<BoardQueue> by_holder;
  };

  bool Taken(const BoardSlot* b) const { return taken_[static_cast<std::size_t>(b - first_)]; }

  // Whether a board of `q`, taken or not, has the job's tags and takes its runner.
  static bool AnyFits(const QueuedJob& job, const BoardQueue& q) {
    return std::any_of(q.boards.begin(), q.boards.end(), [&](const BoardSlot* b) {
      return (job.tags.empty() || HasTags(job.tags, b->tags)) && TakesRunner(job, *b);
    });
  }

  // The first free board of `q` that has the job's tags. A job with tags may skip boards without
  // them (they stay free for others): O(B) per such job.
  const BoardSlot* FirstFree(const QueuedJob& job, BoardQueue& q) {
    while (q.next < q.boards.size() && Taken(q.boards[q.next])) ++q.next;
    for (std::size_t i = q.next; i < q.boards.size(); ++i) {
      const BoardSlot* b = q.boards[i];
      if (!Taken(b) && (job.tags.empty() || HasTags(job.tags, b->tags)) && TakesRunner(job, *b)) {
        return b;
      }
    }
    return nullptr;
  }

  std::int64_t now_ms_;
  // Hash maps: only looked up, never iterated, so their order cannot reach the answer. Views into
  // the caller's boards.
  NameMap<KindBoards> kinds_;
  NameMap<const BoardSlot*> by_name_;
  const BoardSlot* first_;   // the caller's boards: a board's index is its offset from here
  std::vector<bool> taken_;  // by that index
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

  NameMap<Standing> standing;  // only looked up, never iterated
  for (const UserShare& u : users) {
    Standing& s = standing[u.user];
    s.on_boards += u.on_boards;
    s.last_served = std::max(s.last_served, u.last_assigned_ms);
  }
  std::int64_t served = 0;  // placements so far: the round-robin order of this call

  // user -> priority -> jobs (one hash lookup per job). Users are ranked below by `turn`, an
  // ordered set whose key (standing, oldest job id, user) is unique, so the hash map's order
  // cannot reach the answer.
  constexpr std::size_t kPriorities = static_cast<std::size_t>(JobPriority::kHigh) + 1;
  static_assert(static_cast<int>(JobPriority::kLow) == 0 &&
                JobPriority::kLow < JobPriority::kNormal &&
                JobPriority::kNormal < JobPriority::kHigh);
  NameMap<std::array<UserQueue, kPriorities>> by_user;
  for (const QueuedJob* j : queued) {
    UserQueue& q = by_user[j->user][static_cast<std::size_t>(j->priority)];
    q.user = j->user;
    q.jobs.push_back(j);
  }
  free.TakeUnwantedReservations(by_user);

  for (std::size_t priority = kPriorities; priority-- > 0;) {  // high first
    // The next user to serve is the first of `turn`: (standing, oldest waiting job id, user).
    using Turn = std::tuple<std::tuple<std::uint32_t, bool, std::int64_t>, JobId, std::string_view,
                            UserQueue*>;
    std::set<Turn> turn;
    auto enqueue = [&](UserQueue& q) {
      // A job no board free at the start of the call would take is passed over anyway (boards
      // are only ever taken during a call), and passing it over changes no one's turn: it is
      // left out, as if it were not queued. Checked here, when the job would be next, so a pass
      // that places few jobs looks at few of them.
      while (q.next < q.jobs.size() && !free.FitsAtStart(*q.jobs[q.next])) ++q.next;
      if (q.next < q.jobs.size()) {
        turn.emplace(standing[q.user].Key(), q.jobs[q.next]->id, q.user, &q);
      }
    };
    for (auto& [user, queues] : by_user) {
      UserQueue& q = queues[priority];
      if (q.jobs.empty()) continue;
      // Usually sorted already: the Lab keeps its queue in id order.
      auto by_id = [](const QueuedJob* a, const QueuedJob* b) { return a->id < b->id; };
      if (!std::is_sorted(q.jobs.begin(), q.jobs.end(), by_id)) {
        std::sort(q.jobs.begin(), q.jobs.end(), by_id);
      }
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
