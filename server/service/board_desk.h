// BoardDesk: the client use cases on boards (the board list, reservations with leases,
// maintenance, approval, giving a board to an agent, its audit trail, the events it counts), over
// the LabState (lab_state.h). A board's state and health changes are BoardUpkeep's.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"
#include "server/domain/board.h"
#include "server/service/board_requests.h"
#include "server/service/caller.h"
#include "server/service/lab_state.h"

namespace mculab::server {

class BoardDesk {
 public:
  BoardDesk(LabState& st, LabParts& parts) : st_(st), p_(parts) {}

  // Viewer. Every board with the queued jobs that could run on it.
  Result<std::vector<BoardView>> ListBoards(const Caller& caller);
  // Member. Reserves a board for the caller until now + duration (a busy board becomes the
  // caller's when its job ends); the caller's own reservation is extended. Another user's
  // reservation in force is FAILED_PRECONDITION naming the holder and its end.
  Result<Board> Reserve(const Caller& caller, const ReserveRequest& request);
  // Member, the holder only: the lease now ends at now + duration_ms.
  Result<Board> RenewReservation(const Caller& caller, const std::string& board,
                                 std::int64_t duration_ms);
  // Member for their own reservation; admin for anyone's.
  Result<Board> Release(const Caller& caller, const std::string& board);
  // Admin. On: health maintenance (no jobs; a running one finishes). Off: health unknown, so a
  // health check runs before the board takes jobs again (good at once when checks are off); a
  // board waiting for approval is refused (ApproveBoard).
  Result<Board> SetMaintenance(const Caller& caller, const std::string& board, bool on,
                               const std::string& reason);
  // Admin (`mculab board BOARD --approve`). A new board waiting for approval (approve_new_boards)
  // leaves maintenance for health unknown, so its health check runs before users' jobs (good at
  // once when checks are off). FAILED_PRECONDITION when the board is not waiting.
  Result<Board> ApproveBoard(const Caller& caller, const std::string& board);
  // Admin (`mculab board BOARD --agent NAME`). A board belongs to the agent that first registered
  // it; this gives it to `agent` (the old agent's registration of it is refused from now on). A
  // busy board is refused (cancel its job first); otherwise the board goes offline until `agent`
  // registers it.
  Result<Board> AssignBoard(const Caller& caller, const std::string& board,
                            const std::string& agent);
  // Viewer. The board's audit trail (state, health, reservation changes), oldest first.
  Result<std::vector<BoardTransition>> BoardHistory(const Caller& caller, const std::string& board);
  // Viewer. The events the boards of a kind (or one board) can count.
  Result<EventsView> ListEvents(const Caller& caller, const std::string& kind,
                                const std::string& board);

 private:
  LabState& st_;
  LabParts& p_;
};

}  // namespace mculab::server
