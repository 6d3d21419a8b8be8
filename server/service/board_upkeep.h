// BoardUpkeep: a board's state and health as the Lab's parts change them (each change written with
// its audit row and shown on the feeds), reservations ending, and health checks: queued for a
// board whose health is unknown, judged when they end. With st.mu held, over the LabState
// (lab_state.h). Lease ends are deadlines of the background thread on the injected Clock.
#pragma once

#include <string>

#include "server/domain/board.h"
#include "server/domain/job.h"
#include "server/service/lab_state.h"

namespace mculab::server {

class BoardUpkeep {
 public:
  BoardUpkeep(LabState& st, LabParts& parts) : st_(st), p_(parts) {}

  void SetBoardStateLocked(Board& b, BoardState to, const std::string& reason, Effects& fx,
                           const std::string& actor = "server");
  // Health unknown queues a health check.
  void SetBoardHealthLocked(Board& b, BoardHealth to, const std::string& reason, Effects& fx,
                            const std::string& actor = "server");
  // A free board's state: reserved while it has a holder, else idle.
  static BoardState FreeState(const Board& b);
  // Records a reservation change in the board's audit trail (field "reservation").
  void AuditReservationLocked(Board& b, const std::string& from, const std::string& to,
                              const std::string& reason, const std::string& actor, Effects& fx);
  void ClearReservationLocked(Board& b, const std::string& reason, const std::string& actor,
                              Effects& fx);
  // Leases that ran out (background thread).
  void ExpireLeasesLocked(Effects& fx);
  static bool IsHealthCheck(const Job& job);
  // Queues a health-check job for the board unless one is queued or running.
  void QueueHealthCheckLocked(Board& b, Effects& fx);
  // A board registered for the first time (health unknown): it waits for an admin's approval when
  // config approve_new_boards says so, else for its health check (good at once when checks are
  // off); until then it gets no user's job.
  void AdmitNewBoardLocked(Board& b, Effects& fx);
  // A health-check job ended (final state `to`): the board's health follows.
  void HealthCheckEndedLocked(const ActiveJob& aj, JobState to, Effects& fx);

 private:
  LabState& st_;
  LabParts& p_;
};

}  // namespace mculab::server
