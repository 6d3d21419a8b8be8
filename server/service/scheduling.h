// Scheduling: when a scheduling pass runs (and when nothing can have changed since the last), and
// assigning the jobs the Dispatcher placed (dispatcher.h) to their boards. Scheduling is event
// driven: a submit, a run that ends, a board that registers or comes free runs the pure scheduler
// (domain/scheduler.h) at once.
#pragma once

#include "server/service/lab_state.h"

namespace mculab::server {

class Scheduling {
 public:
  Scheduling(LabState& st, LabParts& parts) : st_(st), p_(parts) {}

  // With st.mu held: places what can run now; skipped when nothing changed since a pass that
  // placed nothing.
  void ScheduleLocked(Effects& fx);

 private:
  void AssignLocked(ActiveJob& aj, Board& board, Effects& fx);

  LabState& st_;
  LabParts& p_;
};

}  // namespace mculab::server
