// RunMeasures: what a run measures beyond its timer, over the LabState (lab_state.h). Boards
// register counter units (a job's events are checked against them at submit: domain/admission.h);
// each run is planned into passes on its board (domain/pass_planner.h), run back to back by the
// agent; op profiles and memory figures arrive with each case's end and the firmware's memory with
// the run's start, stored for the run.
#pragma once

#include <string>

#include "server/domain/profile.h"
#include "server/service/agent_events.h"
#include "server/service/lab_state.h"

namespace mculab::server {

class RunMeasures {
 public:
  explicit RunMeasures(LabState& st) : st_(st) {}

  // ---- with st.mu held ----
  // Remembers (and stores) the counter units an agent registered for a board.
  void SetBoardUnitsLocked(const std::string& board, BoardUnits units, Effects& fx);
  // Plans the run's passes on its board and fills the assignment's passes.
  void PlanPassesLocked(const ActiveJob& aj, const Board& board, ActiveRun& run,
                        RunAssignment& assignment, Effects& fx);
  // Store rows for the op profiles and memory figures of a case's end / a run's start, for `run`.
  static void AddCaseProfiles(RunId run, CaseDoneReport& m, Effects& fx);
  static void AddFirmwareMemory(RunId run, RunStartedReport& m, Effects& fx);

 private:
  LabState& st_;
};

}  // namespace mculab::server
