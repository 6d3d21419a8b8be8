// Dispatcher: what the scheduler decides and what a queued job waits for, read from the job and
// board tables. One scheduling pass (Plan) hands the scheduler (domain/scheduler.h) the queue as
// the JobTable keeps it grouped, the boards' slots as the BoardTable keeps them, and each user's
// share, and returns the placements; the Lab assigns them. It also answers a queued job's position,
// the reservation it waits on, an estimated start (from the recent durations it is told of), and
// the boards' queue lengths.
//
// Not thread-safe: the Lab calls it under its lock.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "server/domain/scheduler.h"
#include "server/service/board_table.h"
#include "server/service/job_table.h"

namespace mculab::server {

class Dispatcher {
 public:
  // health_checks: a board of unknown health takes only its health check.
  Dispatcher(const JobTable& jobs, const BoardTable& boards, bool health_checks)
      : jobs_(jobs), boards_(boards), health_checks_(health_checks) {}

  // One scheduling pass at `now_ms`: where queued jobs go, in the order decided. No pass
  // (nullopt) when nothing is queued or no board takes work. `recheck_ms` is lowered to the
  // earliest end of a lease in force: the answer may change then without any write.
  std::optional<std::vector<Placement>> Plan(std::int64_t now_ms, std::int64_t& recheck_ms) const;
  // A job of `user` was assigned: fair share serves the user least recently served first.
  void Assigned(const std::string& user, std::int64_t now_ms) { last_assigned_ms_[user] = now_ms; }
  // A job succeeded: its duration counts for the estimates of its kind and op (the last 20).
  void Succeeded(const Job& job);

  // Positions of the queued jobs `ids` (0 for one not queued); domain/queue_position.h.
  std::vector<std::uint32_t> QueuePositions(std::span<const JobId> ids) const;
  // Why a queued job waits (empty for any other state), given its queue position.
  QueueWait Wait(const ActiveJob& aj, std::uint32_t position, std::int64_t now_ms) const;
  // Queued jobs that could run on each board, by board name (ListBoards' queue_length).
  std::map<std::string, std::uint32_t> QueueLengths() const;
  // The median duration of recent runs of the job's kind and op, 0 when none is known.
  std::int64_t MedianDuration(const Job& job) const;

 private:
  std::int64_t EstimateStart(const ActiveJob& aj, std::uint32_t position,
                             std::int64_t now_ms) const;

  const JobTable& jobs_;
  const BoardTable& boards_;
  const bool health_checks_;
  std::map<std::string, std::int64_t> last_assigned_ms_;              // user -> last assignment
  std::map<std::string, std::deque<std::int64_t>> recent_durations_;  // "kind/op" -> run ms
};

}  // namespace mculab::server
