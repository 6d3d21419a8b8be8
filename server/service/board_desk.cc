// BoardDesk (board_desk.h): the board list, reservations, maintenance, approval, owners, the
// audit trail and the events boards count.
#include "server/service/board_desk.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "common/time_text.h"
#include "server/service/board_upkeep.h"
#include "server/service/results.h"
#include "server/service/scheduling.h"

namespace mculab::server {

namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

Result<Board> BoardDesk::Reserve(const Caller& caller, const ReserveRequest& request) {
  if (Status s = RequireRole(caller, Role::kMember, "reserving a board"); !s.ok()) {
    return s.error();
  }
  if (Status s = st_.Serving(); !s.ok()) return s.error();
  const std::int64_t max_ms = static_cast<std::int64_t>(st_.config.max_reservation_s) * 1000;
  if (request.duration_ms <= 0 || request.duration_ms > max_ms) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("a reservation lasts between 1 ms and {} s (max_reservation_s), "
                                 "got {} ms; e.g. --for 2h",
                                 st_.config.max_reservation_s, request.duration_ms));
  }
  if (request.note.size() > 256) {
    return MakeError(ErrorCode::kInvalidArgument, "the note is longer than 256 characters");
  }
  std::unique_lock l(st_.mu);
  Board* found = st_.boards.Find(request.board);
  if (found == nullptr) return st_.boards.Unknown(request.board);
  Board& b = *found;
  const std::int64_t now = st_.clock.NowMs();
  if (!b.holder.empty() && b.holder != caller.user && now < b.lease_until_ms) {
    return MakeError(
        ErrorCode::kFailedPrecondition,
        fmt::format("board {} is reserved by {} until {}{}; ask them, or an admin "
                    "(mculab release {})",
                    b.name, b.holder, UtcTimeText(b.lease_until_ms),
                    b.reservation_note.empty() ? "" : " (" + b.reservation_note + ")", b.name));
  }
  if (b.health == BoardHealth::kMaintenance || b.health == BoardHealth::kBad) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     fmt::format("board {} is in health {}; it takes no reservations until an "
                                 "admin brings it back (mculab board {} --maintenance off)",
                                 b.name, BoardHealthName(b.health), b.name));
  }
  Effects fx;
  const std::string what =
      request.hold ? "held (--hold)"
                   : fmt::format("reserved until {}", UtcTimeText(now + request.duration_ms));
  p_.upkeep->AuditReservationLocked(b, b.holder, caller.user,
                                    what + (request.note.empty() ? "" : ": " + request.note),
                                    caller.user, fx);
  st_.boards.SetLease(b, caller.user, now + request.duration_ms, request.note, request.hold);
  p_.upkeep->SetBoardStateLocked(b, b.state == BoardState::kIdle ? BoardState::kReserved : b.state,
                                 "reserved by " + caller.user, fx, caller.user);
  st_.bg_cv.notify_all();
  spdlog::info("board {} {} by {}", b.name, what, caller.user);
  p_.scheduling->ScheduleLocked(fx);  // the holder's queued jobs for it may start
  Board out = b;
  if (Status s = st_.CommitAndWait(l, fx); !s.ok()) return s.error();
  return out;
}

Result<Board> BoardDesk::RenewReservation(const Caller& caller, const std::string& board,
                                          std::int64_t duration_ms) {
  if (Status s = RequireRole(caller, Role::kMember, "renewing a reservation"); !s.ok()) {
    return s.error();
  }
  if (Status s = st_.Serving(); !s.ok()) return s.error();
  const std::int64_t max_ms = static_cast<std::int64_t>(st_.config.max_reservation_s) * 1000;
  if (duration_ms <= 0 || duration_ms > max_ms) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("a lease lasts between 1 ms and {} s, got {} ms",
                                 st_.config.max_reservation_s, duration_ms));
  }
  std::unique_lock l(st_.mu);
  Board* found = st_.boards.Find(board);
  if (found == nullptr) return st_.boards.Unknown(board);
  Board& b = *found;
  const std::int64_t now = st_.clock.NowMs();
  if (b.holder != caller.user || now >= b.lease_until_ms) {
    return MakeError(
        ErrorCode::kFailedPrecondition,
        fmt::format(
            "board {} is not reserved by {}{}; reserve it again", board, caller.user,
            b.holder.empty() ? std::string(" (the lease ended)") : " (holder: " + b.holder + ")"));
  }
  st_.boards.RenewLease(b, now + duration_ms);
  Effects fx;
  fx.writes.boards.push_back(b);
  fx.feed_boards.insert(b.name);
  st_.bg_cv.notify_all();
  Board out = b;
  if (Status s = st_.CommitAndWait(l, fx); !s.ok()) return s.error();
  return out;
}

Result<Board> BoardDesk::Release(const Caller& caller, const std::string& board) {
  if (Status s = RequireRole(caller, Role::kMember, "releasing a board"); !s.ok()) {
    return s.error();
  }
  if (Status s = st_.Serving(); !s.ok()) return s.error();
  std::unique_lock l(st_.mu);
  Board* found = st_.boards.Find(board);
  if (found == nullptr) return st_.boards.Unknown(board);
  Board& b = *found;
  if (b.holder.empty()) {
    return MakeError(ErrorCode::kFailedPrecondition, "board " + board + " is not reserved");
  }
  if (b.holder != caller.user && caller.role != Role::kAdmin) {
    return MakeError(ErrorCode::kPermissionDenied,
                     fmt::format("board {} is reserved by {}; only they or an admin can release "
                                 "it",
                                 board, b.holder));
  }
  Effects fx;
  p_.upkeep->ClearReservationLocked(b, "released by " + caller.user, caller.user, fx);
  spdlog::info("board {} released by {}", board, caller.user);
  p_.scheduling->ScheduleLocked(fx);
  Board out = b;
  if (Status s = st_.CommitAndWait(l, fx); !s.ok()) return s.error();
  return out;
}

Result<Board> BoardDesk::SetMaintenance(const Caller& caller, const std::string& board, bool on,
                                        const std::string& reason) {
  if (Status s = RequireRole(caller, Role::kAdmin, "maintenance mode"); !s.ok()) return s.error();
  if (Status s = st_.Serving(); !s.ok()) return s.error();
  std::unique_lock l(st_.mu);
  Board* found = st_.boards.Find(board);
  if (found == nullptr) return st_.boards.Unknown(board);
  Board& b = *found;
  Effects fx;
  const std::string why = fmt::format("maintenance {} by {}{}", on ? "on" : "off", caller.user,
                                      reason.empty() ? "" : ": " + reason);
  if (on) {
    p_.upkeep->SetBoardHealthLocked(b, BoardHealth::kMaintenance, why, fx, caller.user);
  } else if (!b.approved) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     fmt::format("board {} is new and waits for an admin's approval: mculab board "
                                 "{} --approve",
                                 board, board));
  } else if (b.health == BoardHealth::kMaintenance || b.health == BoardHealth::kBad) {
    b.health_failures = 0;
    p_.upkeep->SetBoardHealthLocked(
        b, st_.config.health_checks ? BoardHealth::kUnknown : BoardHealth::kGood, why, fx,
        caller.user);
  } else {
    return MakeError(ErrorCode::kFailedPrecondition,
                     fmt::format("board {} is not in maintenance (health {})", board,
                                 BoardHealthName(b.health)));
  }
  p_.scheduling->ScheduleLocked(fx);
  Board out = b;
  if (Status s = st_.CommitAndWait(l, fx); !s.ok()) return s.error();
  return out;
}

Result<Board> BoardDesk::ApproveBoard(const Caller& caller, const std::string& board) {
  if (Status s = RequireRole(caller, Role::kAdmin, "approving a board"); !s.ok()) return s.error();
  if (Status s = st_.Serving(); !s.ok()) return s.error();
  std::unique_lock l(st_.mu);
  Board* found = st_.boards.Find(board);
  if (found == nullptr) return st_.boards.Unknown(board);
  Board& b = *found;
  if (b.approved) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     fmt::format("board {} does not wait for approval (health {})", board,
                                 BoardHealthName(b.health)));
  }
  Effects fx;
  b.approved = true;
  b.health_failures = 0;
  p_.upkeep->SetBoardHealthLocked(
      b, st_.config.health_checks ? BoardHealth::kUnknown : BoardHealth::kGood,
      "approved by " + caller.user, fx, caller.user);
  fx.writes.boards.push_back(b);
  p_.scheduling->ScheduleLocked(fx);
  Board out = b;
  if (Status s = st_.CommitAndWait(l, fx); !s.ok()) return s.error();
  spdlog::info("board {} approved by {}", board, caller.user);
  return out;
}

Result<Board> BoardDesk::AssignBoard(const Caller& caller, const std::string& board,
                                     const std::string& agent) {
  if (Status s = RequireRole(caller, Role::kAdmin, "giving a board to an agent"); !s.ok()) {
    return s.error();
  }
  if (agent.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "give the agent's name (--agent NAME)");
  }
  std::unique_lock l(st_.mu);
  Board* found = st_.boards.Find(board);
  if (found == nullptr) return st_.boards.Unknown(board);
  Board& b = *found;
  if (b.agent == agent) return b;
  if (b.state == BoardState::kBusy) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     fmt::format("board {} is busy with job {} on agent {}; cancel the job or wait "
                                 "for it to end, then give the board to agent {}",
                                 board, b.current_job, b.agent, agent));
  }
  Effects fx;
  const std::string from = b.agent;
  b.agent = agent;
  fx.writes.board_transitions.push_back(
      BoardTransition{board, "agent", from, agent, "given to agent " + agent + " by " + caller.user,
                      caller.user, st_.clock.NowMs()});
  spdlog::info("board {} now belongs to agent {} (was {}), by {}", board, agent, from, caller.user);
  if (b.state != BoardState::kOffline) {
    p_.upkeep->SetBoardStateLocked(
        b, BoardState::kOffline,
        "given to agent " + agent + "; it registers the board when it connects", fx, caller.user);
  } else {
    fx.writes.boards.push_back(b);
  }
  p_.scheduling->ScheduleLocked(fx);
  Board out = b;
  if (Status s = st_.CommitAndWait(l, fx); !s.ok()) return s.error();
  return out;
}

Result<std::vector<BoardTransition>> BoardDesk::BoardHistory(const Caller& caller,
                                                             const std::string& board) {
  if (Status s = RequireRole(caller, Role::kViewer, "reading a board's history"); !s.ok()) {
    return s.error();
  }
  {
    std::lock_guard l(st_.mu);
    if (st_.boards.Find(board) == nullptr) return st_.boards.Unknown(board);
  }
  return st_.store.GetBoardTransitions(board);
}

Result<std::vector<BoardView>> BoardDesk::ListBoards(const Caller& caller) {
  if (Status s = RequireRole(caller, Role::kViewer, "listing boards"); !s.ok()) return s.error();
  if (Status s = st_.Serving(); !s.ok()) return s.error();
  std::lock_guard l(st_.mu);
  std::map<std::string, std::uint32_t> by_kind;
  for (const auto& [id, q] : st_.jobs.queue()) ++by_kind[q.kind];
  const std::map<std::string, std::uint32_t> lengths = st_.dispatch.QueueLengths();
  std::vector<BoardView> out;
  out.reserve(st_.boards.all().size());
  for (const auto& [name, b] : st_.boards.all()) {
    BoardView v{b, lengths.at(name), 0};
    if (auto k = by_kind.find(b.kind); k != by_kind.end()) v.kind_queue_length = k->second;
    out.push_back(std::move(v));
  }
  return out;
}

Result<EventsView> BoardDesk::ListEvents(const Caller& caller, const std::string& kind,
                                         const std::string& board) {
  if (Status s = RequireRole(caller, Role::kViewer, "list the events boards count"); !s.ok()) {
    return s.error();
  }
  if (kind.empty() && board.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "give a board kind (--kind) or a board name");
  }
  std::lock_guard l(st_.mu);
  EventsView view;
  std::vector<std::string> kinds;
  for (const auto& [name, b] : st_.boards.all()) {
    if (std::find(kinds.begin(), kinds.end(), b.kind) == kinds.end()) kinds.push_back(b.kind);
    if (!board.empty() ? name != board : b.kind != kind) continue;
    view.boards.push_back(name);
    view.emulated = view.emulated || b.emulated;
    view.measured =
        MeasuredOfBoard(view.emulated, view.measured == kMeasuredHost || IsHostBoard(b));
    const BoardUnits* units = st_.boards.RegisteredUnits(name);
    if (view.units.board.empty() && units != nullptr && !units->units.empty()) {
      view.units = *units;
    }
  }
  if (view.boards.empty()) {
    return MakeError(ErrorCode::kNotFound,
                     board.empty() ? "no board of kind '" + kind + "'; the lab has: " + Join(kinds)
                                   : "no board named '" + board + "'");
  }
  view.countable = CountableEvents(view.units.units);
  return view;
}

}  // namespace mculab::server
