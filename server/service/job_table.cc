#include "server/service/job_table.h"

namespace mculab::server {

ActiveJob& JobTable::Add(ActiveJob aj) {
  aj.deadline_ms = kNoDeadline;
  const JobId id = aj.job.id;
  auto [it, inserted] = jobs_.insert_or_assign(id, std::move(aj));
  Enter(it->second.job);
  return it->second;
}

ActiveJob* JobTable::Find(JobId id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

const ActiveJob* JobTable::Find(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

void JobTable::Moved(ActiveJob& aj, JobState from) {
  const JobState to = aj.job.state;
  Leave(aj.job, from);
  if (!IsOnBoard(to)) SetDeadline(aj, kNoDeadline);
  if (!IsFinal(to)) Enter(aj.job);
}

void JobTable::Remove(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  SetDeadline(it->second, kNoDeadline);
  const Job& job = it->second.job;
  if (!IsFinal(job.state)) Leave(job, job.state);
  jobs_.erase(it);
}

void JobTable::SetDeadline(ActiveJob& aj, std::int64_t deadline_ms) {
  deadlines_.Remove(aj.deadline_ms, aj.job.id);
  aj.deadline_ms = deadline_ms;
  deadlines_.Add(deadline_ms, aj.job.id);
}

std::int64_t JobTable::NextDeadline() const { return deadlines_.Next(); }

std::vector<JobId> JobTable::TakeExpired(std::int64_t now_ms) {
  std::vector<JobId> expired;
  for (const auto& [at, id] : deadlines_.TakeDue(now_ms)) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;
    it->second.deadline_ms = kNoDeadline;
    if (IsOnBoard(it->second.job.state)) expired.push_back(id);
  }
  return expired;
}

void JobTable::Enter(const Job& job) {
  if (job.state == JobState::kQueued) {
    auto [it, added] = queue_.try_emplace(job.id);
    if (!added) groups_.Remove(it->second);  // the view it had, grouped by its old fields
    it->second = QueuedOf(job);
    groups_.Add(it->second);
  }
  if (IsOnBoard(job.state)) ++on_boards_[job.user];
}

void JobTable::Leave(const Job& job, JobState from) {
  if (from == JobState::kQueued) {
    if (auto it = queue_.find(job.id); it != queue_.end()) {
      groups_.Remove(it->second);
      queue_.erase(it);
    }
  }
  if (IsOnBoard(from)) {
    auto it = on_boards_.find(job.user);
    if (it != on_boards_.end() && --it->second == 0) on_boards_.erase(it);
  }
}

}  // namespace mculab::server
