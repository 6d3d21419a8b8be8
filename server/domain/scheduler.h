// The scheduler: a pure function from the queue and the boards to placements (labgrid's
// remote/scheduler.py is the model). It is called whenever something may allow a placement (a job
// submitted, a run finished, a board registered or freed); nothing polls.
//
// Rules (issue 2; priority, fair share and reservations come with issue 3):
// - Jobs are taken first come first served: in ascending id, which is submit order.
// - A job naming a board gets that board (if it is of the job's kind); otherwise any board of the
//   job's kind.
// - Only idle boards whose health is good or unknown get work; among the boards that fit, good
//   ones come before unknown ones, then by name.
// - A job that fits no free board waits and does not block later jobs that need other boards.
// - Deterministic: the answer does not depend on the order of either input.
// Thread-safety: pure function.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "server/domain/board.h"
#include "server/domain/job.h"

namespace mculab::server {

struct QueuedJob {
  JobId id = 0;
  std::string kind;
  std::string board;  // empty: any board of `kind`
};

struct BoardSlot {
  std::string name;
  std::string kind;
  BoardState state = BoardState::kOffline;
  BoardHealth health = BoardHealth::kGood;
};

struct Placement {
  JobId job = 0;
  std::string board;
  bool operator==(const Placement&) const = default;
};

// Placements in job order.
std::vector<Placement> Schedule(std::span<const QueuedJob> queued,
                                std::span<const BoardSlot> boards);

// Whether a job could ever run on a board, whatever the board's state (admission control and the
// per-board queue length use it).
bool Fits(const QueuedJob& job, const BoardSlot& board);

}  // namespace mculab::server
