#include "server/domain/scheduler.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
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

namespace {

// The reservation a board's slot shows: its own, or, held for its health check, that one.
struct SlotHold {
  BoardState state;
  std::string_view holder;
  std::int64_t lease_until_ms;
};

SlotHold HoldOf(const Board& board, bool health_checks) {
  if (health_checks && board.health == BoardHealth::kUnknown) {
    return {board.state == BoardState::kIdle ? BoardState::kReserved : board.state,
            kHealthCheckHolder, std::numeric_limits<std::int64_t>::max()};
  }
  return {board.state, board.holder, board.lease_until_ms};
}

bool RefusesCustomRunners(const Board& board) {
  return !board.custom_runners && !board.custom_runners_off.empty();
}

}  // namespace

BoardSlot SlotOf(const Board& board) { return SlotOf(board, false); }

BoardSlot SlotOf(const Board& board, bool health_checks) {
  const SlotHold hold = HoldOf(board, health_checks);
  BoardSlot s{board.name,         board.kind, hold.state, board.health, std::string(hold.holder),
              hold.lease_until_ms};
  s.tags = board.tags;
  s.refuses_custom_runners = RefusesCustomRunners(board);
  return s;
}

bool IsSlotOf(const BoardSlot& slot, const Board& board, bool health_checks) {
  const SlotHold hold = HoldOf(board, health_checks);
  return slot.state == hold.state && slot.health == board.health &&
         slot.lease_until_ms == hold.lease_until_ms &&
         slot.refuses_custom_runners == RefusesCustomRunners(board) && slot.name == board.name &&
         slot.kind == board.kind && slot.holder == hold.holder && slot.tags == board.tags;
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

// One user's waiting jobs of one priority, ascending id, from `next` to `end`; the jobs before
// `next` are placed or can not be placed by this call.
struct UserQueue {
  using Jobs = std::map<JobId, const QueuedJob*>;
  std::string_view user;
  Jobs::const_iterator next;
  Jobs::const_iterator end;
};

}  // namespace

QueueGroups::QueueGroups(std::span<const QueuedJob* const> queued) {
  for (const QueuedJob* j : queued) Add(*j);
}

void QueueGroups::Add(const QueuedJob& job) {
  auto u = by_user_.find(job.user);
  if (u == by_user_.end()) u = by_user_.emplace(job.user, ByPriority{}).first;
  auto [it, added] =
      u->second[static_cast<std::size_t>(job.priority)].insert_or_assign(job.id, &job);
  if (added) ++size_;
}

void QueueGroups::Remove(const QueuedJob& job) {
  auto u = by_user_.find(job.user);
  if (u == by_user_.end()) return;
  if (u->second[static_cast<std::size_t>(job.priority)].erase(job.id) == 0) return;
  --size_;
  if (std::all_of(u->second.begin(), u->second.end(),
                  [](const auto& jobs) { return jobs.empty(); })) {
    by_user_.erase(u);
  }
}

bool QueueGroups::operator==(const QueueGroups& other) const {
  auto same_ids = [](const auto& a, const auto& b) { return a.first == b.first; };
  auto same_user = [&](const auto& a, const auto& b) {
    if (a.first != b.first) return false;
    for (std::size_t p = 0; p < kPriorities; ++p) {
      if (!std::equal(a.second[p].begin(), a.second[p].end(), b.second[p].begin(),
                      b.second[p].end(), same_ids)) {
        return false;
      }
    }
    return true;
  };
  return size_ == other.size_ &&
         std::equal(by_user_.begin(), by_user_.end(), other.by_user_.begin(), other.by_user_.end(),
                    same_user);
}

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
  if (queued.empty() || boards.empty()) return {};
  return Schedule(QueueGroups(queued), boards, now_ms, users);
}

std::vector<Placement> Schedule(const QueueGroups& queued, std::span<const BoardSlot> boards,
                                std::int64_t now_ms, std::span<const UserShare> users) {
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

  free.TakeUnwantedReservations(queued);

  // Users are ranked below by `turn`, an ordered set whose key (standing, oldest job id, user) is
  // unique.
  static_assert(static_cast<int>(JobPriority::kLow) == 0 &&
                JobPriority::kLow < JobPriority::kNormal &&
                JobPriority::kNormal < JobPriority::kHigh);
  std::vector<UserQueue> queues;
  queues.reserve(queued.by_user().size());  // `turn` points into it: never reallocated
  for (std::size_t priority = QueueGroups::kPriorities; priority-- > 0;) {  // high first
    // The next user to serve is the first of `turn`: (standing, oldest waiting job id, user).
    using Turn = std::tuple<std::tuple<std::uint32_t, bool, std::int64_t>, JobId, std::string_view,
                            UserQueue*>;
    std::set<Turn> turn;
    auto enqueue = [&](UserQueue& q) {
      // A job no board free at the start of the call would take is passed over anyway (boards
      // are only ever taken during a call), and passing it over changes no one's turn: it is
      // left out, as if it were not queued. Checked here, when the job would be next, so a pass
      // that places few jobs looks at few of them.
      while (q.next != q.end && !free.FitsAtStart(*q.next->second)) ++q.next;
      if (q.next != q.end) turn.emplace(standing[q.user].Key(), q.next->first, q.user, &q);
    };
    queues.clear();
    for (const auto& [user, by_priority] : queued.by_user()) {
      const UserQueue::Jobs& jobs = by_priority[priority];
      if (!jobs.empty()) queues.push_back(UserQueue{user, jobs.begin(), jobs.end()});
    }
    for (UserQueue& q : queues) enqueue(q);
    while (!turn.empty() && !free.empty()) {
      UserQueue& q = *std::get<UserQueue*>(*turn.begin());
      turn.erase(turn.begin());
      const QueuedJob& job = *(q.next++)->second;
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
