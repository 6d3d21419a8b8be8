#include "server/service/run_table.h"

#include <algorithm>

namespace mculab::server {

RunId RunTable::Restore(RunId max_stored) {
  next_id_ = max_stored + 1;
  reserved_ = max_stored + kRunIdBlock;
  return reserved_;
}

RunId RunTable::TakeId(std::optional<RunId>& reserve_to) {
  const RunId id = next_id_++;
  if (id + kRunIdBlock / 2 > reserved_) {
    // Committed before (or with) the first run that needs it, long before the block runs out.
    reserved_ = std::max(reserved_, id) + kRunIdBlock;
    reserve_to = reserved_;
  }
  return id;
}

ActiveRun& RunTable::Add(ActiveRun r) {
  const RunId id = r.run.id;
  return runs_.insert_or_assign(id, std::move(r)).first->second;
}

ActiveRun* RunTable::Find(RunId id) {
  auto it = runs_.find(id);
  return it == runs_.end() ? nullptr : &it->second;
}

const ActiveRun* RunTable::Find(RunId id) const {
  auto it = runs_.find(id);
  return it == runs_.end() ? nullptr : &it->second;
}

void RunTable::Remove(RunId id) { runs_.erase(id); }

std::vector<RunId> RunTable::OfAgent(const std::string& agent, bool awaiting) const {
  std::vector<RunId> out;
  for (const auto& [id, r] : runs_) {
    if (r.run.agent == agent && (!awaiting || r.awaiting_agent)) out.push_back(id);
  }
  return out;
}

std::vector<RunId> RunTable::ResumeExpired(std::int64_t now_ms) const {
  std::vector<RunId> out;
  for (const auto& [id, r] : runs_) {
    if (r.awaiting_agent && r.resume_deadline_ms <= now_ms) out.push_back(id);
  }
  return out;
}

std::int64_t RunTable::NextResumeDeadline() const {
  std::int64_t next = kNoDeadline;
  for (const auto& [id, r] : runs_) {
    if (r.awaiting_agent) next = std::min(next, r.resume_deadline_ms);
  }
  return next;
}

void RunTable::ArmCancelGrace(RunId id, std::int64_t until_ms) { grace_ends_.Add(until_ms, id); }

std::vector<RunId> RunTable::TakeEndedGraces(std::int64_t now_ms) {
  std::vector<RunId> ended;
  for (const auto& [at, id] : grace_ends_.TakeDue(now_ms)) {
    const ActiveRun* r = Find(id);
    if (r != nullptr && r->job_ended) ended.push_back(id);
  }
  return ended;
}

std::int64_t RunTable::NextGraceEnd() const { return grace_ends_.Next(); }

void RunTable::QueueFinalize(ActiveRun& r) {
  if (r.finalizing) return;
  r.finalizing = true;
  to_finalize_.push_back(r.run.id);
}

std::optional<RunId> RunTable::TakeToFinalize() {
  if (to_finalize_.empty()) return std::nullopt;
  const RunId id = to_finalize_.front();
  to_finalize_.pop_front();
  return id;
}

}  // namespace mculab::server
