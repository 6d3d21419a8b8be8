#include "server/service/store.h"

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

Status JobStore::WriteAndWait(WriteSet ws) {
  auto done = std::make_shared<std::promise<Status>>();
  auto future = done->get_future();
  Write(std::move(ws), [done](const WriteOutcome& o) { done->set_value(o.status); });
  return future.get();
}

}  // namespace mculab::server
