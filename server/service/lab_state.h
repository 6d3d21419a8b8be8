// LabState: what the Lab's parts share (lab.h): the one mutex, the live tables under it, and the
// effects of an operation committed, then said. Each part (job_desk.h, scheduling.h, board_desk.h,
// board_upkeep.h, agent_desk.h, run_ends.h, upload_desk.h, run_measures.h) holds a LabState& and
// the LabParts it calls; a *Locked function of any part needs `mu` held.
//
// Effects (effects.h): under the lock a part only decides and adds to one operation's Effects;
// CommitLocked queues the writes and, once they commit, says what they changed (agent messages,
// watch and feed events) on the store's writer thread, in commit order, so in decision order.
// Nothing is said before the state it reports is committed; a failed commit says nothing and
// stops the Lab (FailStop): memory would no longer match the database, so every use case answers
// kUnavailable (Serving) until the server is restarted.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "common/result.h"
#include "server/domain/pass_planner.h"
#include "server/service/accounts.h"
#include "server/service/agent_sessions.h"
#include "server/service/artifacts.h"
#include "server/service/board_table.h"
#include "server/service/clock.h"
#include "server/service/config.h"
#include "server/service/dispatcher.h"
#include "server/service/effects.h"
#include "server/service/feed_hub.h"
#include "server/service/job_table.h"
#include "server/service/job_watch.h"
#include "server/service/run_finalizer.h"
#include "server/service/run_table.h"
#include "server/service/store.h"

namespace mculab::server {

struct LabState {
  LabState(Store& store, Clock& clock, LabConfig config, Accounts& accounts,
           ArtifactStore& artifacts)
      : store(store),
        clock(clock),
        config(std::move(config)),
        artifacts(artifacts),
        accounts(accounts) {}
  LabState(const LabState&) = delete;
  LabState& operator=(const LabState&) = delete;

  // Queues the effects' writes; once they commit, says what they changed and then runs `done`. A
  // failed commit says nothing, stops the Lab (FailStop) and runs `done` with the failure.
  void CommitLocked(Effects& fx, WriteDone done = nullptr);
  // CommitLocked, unlock, then wait for the commit: its status (a failure is the write's).
  Status WaitForCommit(std::unique_lock<std::mutex>& l, Effects& fx);
  // The same for a reply that reports the change: kUnavailable when the commit failed.
  Status CommitAndWait(std::unique_lock<std::mutex>& l, Effects& fx);
  // Wakes the watches the effects notify (outside the lock).
  static void Deliver(Effects& fx);
  // A write failed: log it and stop accepting work. Never takes mu (a closed store runs write
  // callbacks on the writing thread, which holds it).
  void FailStop(const std::string& what, const Status& status);
  // kUnavailable (naming the failed write) once FailStop ran; ok otherwise.
  Status Serving() const;
  // After FailStop: hang up agents, end watches and feeds (once).
  void ShutDownAfterFailureLocked();

  Store& store;
  Clock& clock;
  const LabConfig config;
  ArtifactStore& artifacts;
  Accounts& accounts;

  std::mutex mu;
  std::condition_variable bg_cv;  // deadlines changed, a run to finalize, stopping
  bool started = false;
  bool stopping = false;
  std::atomic<bool> failed{false};
  bool failure_handled = false;  // ShutDownAfterFailureLocked ran
  mutable std::mutex failure_mu;
  std::string failure;     // what failed, for kUnavailable answers (failure_mu)
  JobTable jobs;           // every job not in a final state, its queue, deadlines, jobs on boards
  BoardTable boards;       // by name, with their leases and counter units
  RunTable runs;           // runs on boards, their ids, cancel grace periods, runs to finalize
  AgentSessions sessions;  // connected agents
  JobWatchers watchers;    // of live jobs (JobDesk::Watch)
  Dispatcher dispatch{jobs, boards, config.health_checks};  // passes, positions, estimates
  FeedHub feeds;                                            // the live feeds (Lab::Subscribe)
  RunFinalizer finalizer{store};  // a finished run's statistics and verdict (RunEnds::Finalize)
  PassPlanCache plans;            // the pass plans of (events, units) seen (RunMeasures)
  // Agent messages (and artifact fetches) refused because they named a run the agent does not
  // hold (since start).
  std::atomic<std::uint64_t> refused_agent_messages{0};
  // The schedule is stale until a pass (or the short-cut that finds no free board) saw every
  // change committed since; it is stale again at schedule_recheck_ms (a lease ending lets
  // anyone's jobs onto the board, with or without a write).
  bool schedule_stale = true;
  std::int64_t schedule_recheck_ms = kNoDeadline;
  std::atomic<std::uint64_t> schedule_passes{0};
};

class JobDesk;
class Scheduling;
class BoardDesk;
class BoardUpkeep;
class AgentDesk;
class RunEnds;
class UploadDesk;
class RunMeasures;

// The Lab's parts, for the parts that call each other (owned by the Lab).
struct LabParts {
  JobDesk* jobs = nullptr;
  Scheduling* scheduling = nullptr;
  BoardDesk* boards = nullptr;
  BoardUpkeep* upkeep = nullptr;
  AgentDesk* agents = nullptr;
  RunEnds* runs = nullptr;
  UploadDesk* uploads = nullptr;
  RunMeasures* measures = nullptr;
};

}  // namespace mculab::server
