#include "server/service/store.h"

#include <algorithm>
#include <future>

namespace mculab::server {

std::size_t WriteSet::Rows() const {
  std::size_t rows = artifacts.size() + boards.size() + runs.size() + jobs.size() +
                     transitions.size() + board_transitions.size() + case_results.size() +
                     case_stats.size();
  for (const NewJob& j : new_jobs) rows += 1 + j.cases.size();
  if (batch) rows += batch->samples.size() + 1;
  rows += job_events.size() + run_passes.size() + op_profiles.size() + memory.size() +
          deleted_artifacts.size() + artifact_sharing.size();
  for (const BoardUnits& b : board_units) rows += 1 + b.units.size();
  if (reserve_run_ids_to != 0) ++rows;
  return rows;
}

std::optional<std::vector<JobId>> WriteSet::SeriesJobs() const {
  if (!artifacts.empty() || !deleted_artifacts.empty()) return std::nullopt;
  std::vector<JobId> ids;
  for (const NewJob& j : new_jobs) ids.push_back(j.job.id);
  for (const Job& j : jobs) ids.push_back(j.id);
  for (const JobTransition& t : transitions) ids.push_back(t.job_id);
  for (const Run& r : runs) ids.push_back(r.job_id);
  for (const CaseStats& c : case_stats) ids.push_back(c.job_id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

Status JobStore::WriteAndWait(WriteSet ws) {
  auto done = std::make_shared<std::promise<Status>>();
  auto future = done->get_future();
  Write(std::move(ws), [done](const WriteOutcome& o) { done->set_value(o.status); });
  return future.get();
}

}  // namespace mculab::server
