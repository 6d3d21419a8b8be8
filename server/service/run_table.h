// RunTable: the runs on boards (one per assigned job), their ids, the grace periods of runs whose
// job ended while the agent still runs them, and the runs waiting to be finalized. The Lab decides
// what happens to a run (agent_desk.cc, run_ends.cc); the table keeps the ids and deadlines.
//
// Not thread-safe: the Lab calls it under its lock.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/domain/run.h"
#include "server/service/clock.h"
#include "server/service/deadlines.h"
#include "server/service/run_statistics.h"

namespace mculab::server {

// Run ids are reserved in the store this many at a time, ahead of use, so that an id never
// repeats, even after a crash lost the row of a run a server numbered.
inline constexpr RunId kRunIdBlock = 1000;

struct ActiveRun {
  Run run;
  std::set<std::uint64_t> committed;  // batch sequences committed
  bool finish_received = false;       // RunFinished(SUCCEEDED) arrived; waiting for batches
  bool finalizing = false;            // queued for (or in) RunEnds::Finalize
  std::vector<std::string> checksum_failures;
  // Its statistics, counted as its batches are queued for the store (abandoned when batches were
  // stored before this server had the run: the run's end then reads its samples back).
  RunStatisticsInProgress statistics;
  // The job ended (cancelled, timed out) while the agent still runs it: the board stays busy
  // until the agent confirms; end_state is what the run is recorded as.
  bool job_ended = false;
  RunState end_state = RunState::kCancelled;
  std::uint32_t passes = 1;  // the run's passes
  // Restored by Lab::Start: the run waits until this deadline for its agent to register and
  // claim it (Register.active_runs); otherwise it is an infrastructure failure.
  bool awaiting_agent = false;
  std::int64_t resume_deadline_ms = kNoDeadline;
};

class RunTable {
 public:
  // After a restart: ids continue past `max_stored` (the highest id stored or reserved). Returns
  // the new reservation to store.
  RunId Restore(RunId max_stored);
  // A new run id. `reserve_to` is set when the reservation must grow (committed with the run).
  RunId TakeId(std::optional<RunId>& reserve_to);
  // Whether `id` was ever given by this table (a message about a later id is forged).
  bool WasGiven(RunId id) const { return id < next_id_; }

  ActiveRun& Add(ActiveRun r);
  // Null when the run ended (or never was).
  ActiveRun* Find(RunId id);
  const ActiveRun* Find(RunId id) const;
  // The run ended: it is forgotten (`r` is gone).
  void Remove(RunId id);
  // Every active run, by id.
  const std::map<RunId, ActiveRun>& all() const { return runs_; }

  // The runs of `agent`; only those restored and waiting for it to reconnect when `awaiting`.
  std::vector<RunId> OfAgent(const std::string& agent, bool awaiting = false) const;
  // Restored runs whose agent did not come back by `now_ms`.
  std::vector<RunId> ResumeExpired(std::int64_t now_ms) const;
  // The earliest resume deadline, kNoDeadline when none.
  std::int64_t NextResumeDeadline() const;

  // The agent must confirm the end of `id` by `until_ms`, or its board goes offline.
  void ArmCancelGrace(RunId id, std::int64_t until_ms);
  // Grace periods that ended at or before `now_ms`, earliest first, for runs still active and
  // still waiting for their agent's confirmation.
  std::vector<RunId> TakeEndedGraces(std::int64_t now_ms);
  // The earliest end of a grace period, kNoDeadline when none.
  std::int64_t NextGraceEnd() const;

  // Queues the run for finalisation (once: it is marked finalizing).
  void QueueFinalize(ActiveRun& r);
  // The next run to finalize, if any (taken off the queue).
  std::optional<RunId> TakeToFinalize();

 private:
  RunId next_id_ = 1;
  RunId reserved_ = 0;  // ids up to this are reserved in the store
  std::map<RunId, ActiveRun> runs_;
  Deadlines<RunId> grace_ends_;  // runs by the end of their cancel grace period
  std::deque<RunId> to_finalize_;
};

}  // namespace mculab::server
