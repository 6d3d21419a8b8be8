// The scheduler: a pure function from the queue and the boards to placements (labgrid's
// remote/scheduler.py is the model). It is called whenever something may allow a placement (a job
// submitted, a run finished, a board registered or freed, a reservation ended); nothing polls.
//
// Which boards get work:
// - Only boards whose health is good or unknown; among the boards that fit a job, good ones come
//   before unknown ones, then by name.
// - State idle: yes. State busy or offline: no. State reserved: only with a known holder (a
//   reserved board without one is kept out, as before reservations had holders).
// - A reservation is in force while the board has a holder and now_ms < lease_until_ms. While it
//   is, only the holder's jobs run there; other jobs that need that board wait. Once the lease
//   has ended the board takes anyone's jobs, even before the service has released it (its state
//   may still say reserved).
// - A holder's job that names no board prefers the holder's own reserved boards of its kind to
//   public ones, which it leaves to others.
//
// Which jobs go first, among the jobs that can run on a board that is still free:
// 1. Priority: high, then normal, then low, whatever their age.
// 2. Within a priority, fair share between users: the user with the fewest jobs on boards
//    (assigned, preparing or running: history the caller passes, plus what this call places)
//    goes first; on a tie, the user served least recently (never before any time; a user served
//    by this call after every user this call has not served yet, in the order served: round
//    robin); on a tie, the user whose oldest waiting job is oldest.
// 3. A user's own jobs by age: ascending id, which is submit order.
// A job naming a board gets only that board (if it is of the job's kind; a job with no kind takes
// the named board whatever its kind); otherwise any board of its kind. Either way the board must
// have every tag the job asks for, with the same value. A job that fits no free
// board waits and blocks nobody: the next job in the order above is tried.
//
// Deterministic: the answer does not depend on the order of any input (users listed twice in
// `users` are merged: jobs on boards added, the latest service kept). Cost, over QueueGroups:
// O(B log B) for B boards, plus O(log U) for each job looked at (U users; a pass that places few
// jobs looks at few), plus O(B) for each such job that asks for tags; grouping a plain queue of
// J jobs adds O(J log J). Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/domain/board.h"
#include "server/domain/job.h"

namespace mculab::server {

// JobPriority, JobPriorityName and ParseJobPriority are in job.h (a job carries its priority).

struct QueuedJob {
  // Not an aggregate so that callers' {id, kind, board} keeps compiling under
  // -Wmissing-field-initializers.
  QueuedJob() = default;
  QueuedJob(JobId id, std::string kind, std::string board, std::string user = {},
            JobPriority priority = JobPriority::kNormal)
      : id(id),
        kind(std::move(kind)),
        board(std::move(board)),
        user(std::move(user)),
        priority(priority) {}

  JobId id = 0;
  std::string kind;
  std::string board;  // empty: any board of `kind`
  std::string user;   // the submitter; fair share and reservations go by it
  JobPriority priority = JobPriority::kNormal;
  std::map<std::string, std::string> tags;  // every one must equal the board's tag of that key
  bool custom_runner = false;  // runs an uploaded runner: only on boards that take them
};

struct BoardSlot {
  // Not an aggregate, for the same reason as QueuedJob.
  BoardSlot() = default;
  BoardSlot(std::string name, std::string kind, BoardState state, BoardHealth health,
            std::string holder = {}, std::int64_t lease_until_ms = 0)
      : name(std::move(name)),
        kind(std::move(kind)),
        state(state),
        health(health),
        holder(std::move(holder)),
        lease_until_ms(lease_until_ms) {}

  std::string name;
  std::string kind;
  BoardState state = BoardState::kOffline;
  BoardHealth health = BoardHealth::kGood;
  std::string holder;               // the reservation's holder (a user), empty when none
  std::int64_t lease_until_ms = 0;  // the reservation is in force while now_ms < lease_until_ms
  std::map<std::string, std::string> tags;  // the board's tags (cpu=cortex-m55, ...)
  // Its agent said it does not run uploaded runners (allow_custom_runners off): no custom-runner
  // job goes there. False when the agent did not say.
  bool refuses_custom_runners = false;
  bool operator==(const BoardSlot&) const = default;
};

// The scheduler's view of a job and of a board (every field the scheduler reads, tags included).
// The scheduling identity of health-check jobs: the holder the Lab gives a board of unknown
// health so that only its health check runs there. Not a valid user name, so no user's job can
// ever match it.
inline constexpr std::string_view kHealthCheckHolder = "(health check)";

QueuedJob QueuedOf(const Job& job);
BoardSlot SlotOf(const Board& board);
// The slot with health checks on or off. On, a board of unknown health is held for its health
// check: holder kHealthCheckHolder with no lease end, idle counted as reserved, whatever
// reservation the board has; off (or any other health), SlotOf(board).
BoardSlot SlotOf(const Board& board, bool health_checks);
// Whether `slot` equals SlotOf(board, health_checks), without building that slot.
bool IsSlotOf(const BoardSlot& slot, const Board& board, bool health_checks);

// What the scheduler knows of a user's recent service (from the job table).
struct UserShare {
  std::string user;
  std::uint32_t on_boards = 0;        // the user's jobs assigned, preparing or running
  std::int64_t last_assigned_ms = 0;  // when one of their jobs was last assigned; 0: never
};

struct Placement {
  JobId job = 0;
  std::string board;
  bool operator==(const Placement&) const = default;
};

// The queue as the scheduler serves it: each user's waiting jobs at each priority, in id order.
// A caller that keeps one as jobs enter and leave its queue (the JobTable does) spares each pass
// the grouping; the overloads of Schedule that take a plain queue build one per call. It holds
// views: each job must stay valid, with the same id, user and priority, while it is in the
// groups. Job ids are unique. Thread-safety: none (a plain value).
class QueueGroups {
 public:
  static constexpr std::size_t kPriorities = static_cast<std::size_t>(JobPriority::kHigh) + 1;
  // One user's waiting jobs, indexed by JobPriority, each by id.
  using ByPriority = std::array<std::map<JobId, const QueuedJob*>, kPriorities>;

  QueueGroups() = default;
  explicit QueueGroups(std::span<const QueuedJob* const> queued);

  // Adds `job` to its user's group of its priority (a job of the same id there is replaced).
  void Add(const QueuedJob& job);
  // Removes the job of `job`'s id from the group of `job`'s user and priority; nothing when it is
  // not there. A user left with no job is forgotten.
  void Remove(const QueuedJob& job);

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // Whether `user` has a waiting job.
  bool contains(std::string_view user) const { return by_user_.find(user) != by_user_.end(); }
  // By user name.
  const std::map<std::string, ByPriority, std::less<>>& by_user() const { return by_user_; }

  // The same users with the same job ids at the same priorities (views are not compared).
  bool operator==(const QueueGroups& other) const;

 private:
  std::map<std::string, ByPriority, std::less<>> by_user_;
  std::size_t size_ = 0;
};

// Placements in the order they were decided (priority, then fair share, then age).
std::vector<Placement> Schedule(const QueueGroups& queued, std::span<const BoardSlot> boards,
                                std::int64_t now_ms, std::span<const UserShare> users);
// The same over a plain queue (grouped for this call).
std::vector<Placement> Schedule(std::span<const QueuedJob> queued,
                                std::span<const BoardSlot> boards, std::int64_t now_ms,
                                std::span<const UserShare> users);
// The same over views the caller keeps. The pointers must stay valid during the call.
std::vector<Placement> Schedule(std::span<const QueuedJob* const> queued,
                                std::span<const BoardSlot> boards, std::int64_t now_ms,
                                std::span<const UserShare> users);

// The original call, for callers that pass neither time nor history: Schedule(queued, boards,
// 0, {}). A board with a holder counts as reserved until lease_until_ms > 0 says otherwise, so
// pass the time whenever boards carry holders.
std::vector<Placement> Schedule(std::span<const QueuedJob> queued,
                                std::span<const BoardSlot> boards);

// Whether a board has every tag in `want` with the same value (an empty `want` always matches).
bool HasTags(const std::map<std::string, std::string>& want,
             const std::map<std::string, std::string>& have);

// Whether the board may run the job's runner: any board for the generic runner; for an uploaded
// runner, one whose agent did not refuse them.
bool TakesRunner(const QueuedJob& job, const BoardSlot& board);

// Whether a job could ever run on a board, whatever the board's state, health or reservation
// (admission control and the per-board queue length use it): kind or name, tags, and a board
// that takes custom runners for a job that brings one.
bool Fits(const QueuedJob& job, const BoardSlot& board);

// Whether a board in this state and health takes work now from someone (its reservation, if
// any, decides from whom): a pass with no such board places nothing.
bool TakesWork(BoardState state, BoardHealth health, bool has_holder);

// Whether the board's reservation keeps other users' jobs off it at now_ms.
bool ReservationInForce(const BoardSlot& board, std::int64_t now_ms);

// Fits, and the board's reservation (if in force) is the job's user's: the job may run there once
// the board is free (queue positions and per-board queues of reserved boards use it).
bool MayRun(const QueuedJob& job, const BoardSlot& board, std::int64_t now_ms);

}  // namespace mculab::server
