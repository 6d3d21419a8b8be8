// JobTable: every job not in a final state, and the indexes that follow each job's state: the
// scheduler's view of the queue (by id, and grouped by user and priority), the jobs each user has
// on boards, and the deadlines of jobs on boards. The Lab changes a job's state (TransitionLocked)
// and tells the table (Moved), so the indexes are kept in one place.
//
// Not thread-safe: the Lab calls it under its lock.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "server/domain/job.h"
#include "server/domain/scheduler.h"
#include "server/service/clock.h"
#include "server/service/deadlines.h"

namespace mculab::server {

struct ActiveJob {
  Job job;
  std::vector<CaseSpec> cases;
  std::int64_t deadline_ms = kNoDeadline;  // while on a board (JobTable::SetDeadline)
  std::vector<std::string> events;         // asked for at submit
  std::int64_t health_median = 0;          // a health check's measured value, once finalized
};

class JobTable {
 public:
  JobTable() = default;
  // groups() points into queue(): a copy would point into the original.
  JobTable(const JobTable&) = delete;
  JobTable& operator=(const JobTable&) = delete;

  // Job ids: the next one to give, after every stored id (Lab::Start).
  JobId TakeId() { return next_id_++; }
  void SetNextId(JobId next) { next_id_ = next; }

  // Adds a job not in a final state, indexed by its current state; its deadline_ms is ignored
  // (SetDeadline).
  ActiveJob& Add(ActiveJob aj);
  // Null when the job is final (or unknown).
  ActiveJob* Find(JobId id);
  const ActiveJob* Find(JobId id) const;
  // The job's state changed from `from` to its current one: the indexes follow. A job that left
  // the board states loses its deadline. A final job stays in all() until Remove. A queued job
  // whose scheduling fields (priority, user, kind, tags, ...) changed is Moved from kQueued: its
  // view is built again.
  void Moved(ActiveJob& aj, JobState from);
  // Forgets a job (`aj` is gone): a final one after Moved, or a new one whose creation could
  // not be stored.
  void Remove(JobId id);

  // The job's deadline while on a board (kNoDeadline: none).
  void SetDeadline(ActiveJob& aj, std::int64_t deadline_ms);
  // The earliest deadline, kNoDeadline when none.
  std::int64_t NextDeadline() const;
  // Jobs on a board whose deadline is at or before `now_ms`, earliest first; their deadlines are
  // cleared.
  std::vector<JobId> TakeExpired(std::int64_t now_ms);

  // Every job not in a final state, in id (= submit) order.
  const std::map<JobId, ActiveJob>& all() const { return jobs_; }
  // The scheduler's view of every queued job, in id order: built when the job enters the queue,
  // dropped when it leaves, so a scheduling pass copies none of them.
  const std::map<JobId, QueuedJob>& queue() const { return queue_; }
  // The same views grouped by user and priority, as the scheduler serves them: kept as jobs enter
  // and leave the queue, so a scheduling pass groups none of them.
  const QueueGroups& groups() const { return groups_; }
  // user -> jobs assigned, preparing or running.
  const std::map<std::string, std::uint32_t>& on_boards() const { return on_boards_; }

 private:
  void Enter(const Job& job);
  void Leave(const Job& job, JobState from);

  JobId next_id_ = 1;
  std::map<JobId, ActiveJob> jobs_;
  std::map<JobId, QueuedJob> queue_;
  QueueGroups groups_;  // views into queue_
  std::map<std::string, std::uint32_t> on_boards_;
  Deadlines<JobId> deadlines_;
};

}  // namespace mculab::server
