// RunEnds: how a run on a board ends, over the LabState (lab_state.h). Closing a run (its board
// freed or taken offline, the agent told), failing it as an infrastructure or workload failure,
// the grace an agent has to confirm a cancelled run, and applying a finished run's outcome
// (run_finalizer.h: its statistics from the stored samples once every batch the agent sent is
// committed, and its verdict).
#pragma once

#include <string>

#include "server/domain/job.h"
#include "server/domain/run.h"
#include "server/service/lab_state.h"

namespace mculab::server {

class RunEnds {
 public:
  RunEnds(LabState& st, LabParts& parts) : st_(st), p_(parts) {}

  // ---- with st.mu held ----
  // Ends an active run: records it, frees (or takes offline) its board, tells the agent.
  void CloseRunLocked(ActiveRun& r, RunState state, const std::string& message, bool board_offline,
                      Effects& fx);
  // The board failed the run: the job is requeued (or gives up after config max_attempts).
  void InfraFailLocked(ActiveRun& r, const std::string& why, const std::string& actor,
                       bool board_offline, Effects& fx);
  void FailJobOfRunLocked(ActiveRun& r, JobState to, const std::string& message,
                          const std::string& actor, Effects& fx);
  // Queues the run for Finalize once its end and every batch it announced are committed.
  void MaybeFinalizeLocked(ActiveRun& r);
  // A cancelled or timed-out run the agent must confirm within config cancel_grace_ms.
  void ArmCancelGraceLocked(RunId run);
  // Runs whose agent did not confirm in time: their boards go offline (background thread).
  void ExpireCancelGraceLocked(Effects& fx);

  // On the background thread, without the lock: the run's statistics and verdict (the
  // finalizer's), then its end.
  void Finalize(RunId run);

 private:
  LabState& st_;
  LabParts& p_;
};

}  // namespace mculab::server
