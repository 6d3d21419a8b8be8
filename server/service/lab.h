// Lab: mculab-server's use cases, one part per family over one shared LabState (lab_state.h: the
// mutex, the live tables, the effects committed and then said). Clients submit, get, watch and
// cancel jobs (JobDesk), list, reserve and look after boards (BoardDesk), upload files
// (UploadDesk); agents register boards and report runs (AgentDesk). Inside, Scheduling places
// queued jobs, BoardUpkeep changes boards' state and health and runs health checks, RunEnds ends
// runs and finalizes them, RunMeasures plans passes and stores op profiles and memory. Reads of
// history (lists, comparisons, trends, results) are LabQueries' and ReadJobResults' (above the
// Lab). The Lab owns the parts, loads the state at Start, and runs the background thread.
//
// Concurrency:
// - Public methods of the Lab and its desks may be called from any thread.
// - The store's commit callbacks (sample batches) call back in on the store's writer thread.
// - One background thread ends jobs whose timeout passed (it sleeps until the next deadline on
//   the injected Clock; nothing polls), computes statistics of finished runs (it reads the store,
//   which must not happen on the writer thread or under the lock) and collects old uploads.
// - Under the lock the parts only decide and queue effects; replies that report a change (Submit,
//   Cancel, reservations) wait for its commit. A failed write stops the Lab (fail-stop): agents are
//   hung up, watches and feeds end, and every use case answers kUnavailable until the server is
//   restarted (which reloads the state from the database).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "common/result.h"
#include "server/service/agent_desk.h"
#include "server/service/board_desk.h"
#include "server/service/board_upkeep.h"
#include "server/service/job_desk.h"
#include "server/service/lab_feed.h"
#include "server/service/lab_state.h"
#include "server/service/run_ends.h"
#include "server/service/run_measures.h"
#include "server/service/scheduling.h"
#include "server/service/upload_desk.h"

namespace mculab::server {

// How often open streams' tokens are checked against the store (a revocation made by
// `mculab-server admin`, another process, ends them within this).
inline constexpr std::chrono::milliseconds kRevocationCheckPeriod{1000};
inline constexpr std::int64_t kArtifactCollectionPeriodMs = 3'600'000;

// The artifact store's limits set by the lab's configuration.
inline ArtifactStore::Limits ArtifactLimitsOf(const LabConfig& config) {
  return {config.max_artifact_bytes, config.max_user_artifact_bytes, config.max_user_artifacts};
}

class Lab {
 public:
  // The Lab uses `accounts` and `artifacts` (built by the caller, main or a test, from the same
  // store and clock; ArtifactLimitsOf(config) gives the artifact store's limits) and must be
  // destroyed before them.
  Lab(Store& store, Clock& clock, LabConfig config, Accounts& accounts, ArtifactStore& artifacts);
  ~Lab();
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;

  // Loads the boards and unfinished jobs from the store. Boards start offline until their agent
  // registers. A job that was on a board when the server stopped keeps its run, which waits for
  // its agent (config reconnect_grace_s): when the agent registers and lists the run in
  // AgentRegistration.active_runs, the run resumes (the agent resends what the server has not
  // acknowledged; committed batches are known from the store); when the agent registers without
  // it, or the grace ends, the job is requeued as an infrastructure failure. Starts the
  // background thread. Call once, before serving.
  Status Start();
  // Ends every watch, stops the background thread, and waits until the store has committed what
  // the Lab queued (and run its callbacks).
  void Stop();

  JobDesk& jobs() { return jobs_; }
  BoardDesk& boards() { return boards_; }
  AgentDesk& agents() { return agents_; }
  UploadDesk& uploads() { return uploads_; }

  // Every job change (submitted, state, progress, message) and board change (state, health,
  // queue length) from now on, until the subscriber closes the feed or the Lab stops (then the
  // feed ends). See lab_feed.h for the delivery contract.
  // samples_of: a job whose per-iteration values the feed also carries as they are committed
  // (LiveSamples, for the job page's plot while it runs); 0: none.
  std::shared_ptr<LabFeed> Subscribe(std::size_t capacity = LabFeed::kDefaultCapacity,
                                     JobId samples_of = 0);
  // The same for a caller with a token: the feed ends when that token is revoked.
  std::shared_ptr<LabFeed> Subscribe(const Caller& subscriber,
                                     std::size_t capacity = LabFeed::kDefaultCapacity,
                                     JobId samples_of = 0);

  const LabConfig& config() const { return st_.config; }
  // Users and tokens: the rpc and HTTP layers turn a request's bearer token into its Caller here.
  Accounts& accounts() { return st_.accounts; }
  // Agent messages refused because they named a run the agent does not hold (since start).
  std::uint64_t refused_agent_messages() const { return st_.refused_agent_messages.load(); }
  // Scheduling passes run since start (the scheduler called on the queue and the boards): a
  // call with no free board, or with nothing changed since a pass that placed nothing, runs none.
  std::uint64_t schedule_passes() const { return st_.schedule_passes.load(); }

 private:
  void BackgroundLoop();

  LabState st_;
  LabParts parts_;
  JobDesk jobs_{st_, parts_};
  Scheduling scheduling_{st_, parts_};
  BoardDesk boards_{st_, parts_};
  BoardUpkeep upkeep_{st_, parts_};
  AgentDesk agents_{st_, parts_};
  RunEnds runs_{st_, parts_};
  UploadDesk uploads_{st_};
  RunMeasures measures_{st_};
  std::thread background_;
  std::int64_t next_artifact_collection_ms_ = 0;  // background thread
};

}  // namespace mculab::server
