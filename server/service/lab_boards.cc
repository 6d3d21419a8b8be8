// Lab: boards. Their state and health, the board list, reservations with leases, maintenance,
// the boards' audit trail, health checks and cancel grace periods. Lease ends and grace periods are
// deadlines of the background thread on the injected Clock: nothing polls.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "common/time_text.h"
#include "server/domain/scheduler.h"
#include "server/service/lab.h"

namespace mculab::server {

BoardState Lab::FreeState(const Board& b) {
  return b.holder.empty() ? BoardState::kIdle : BoardState::kReserved;
}

void Lab::AuditReservationLocked(Board& b, const std::string& from, const std::string& to,
                                 const std::string& reason, const std::string& actor, Effects& fx) {
  fx.writes.board_transitions.push_back(
      BoardTransition{b.name, "reservation", from, to, reason, actor, clock_.NowMs()});
}

void Lab::ClearReservationLocked(Board& b, const std::string& reason, const std::string& actor,
                                 Effects& fx) {
  AuditReservationLocked(b, b.holder, "", reason, actor, fx);
  boards_.ClearLease(b);
  // SetBoardStateLocked writes the board row even when the state stays (busy, offline).
  SetBoardStateLocked(b, b.state == BoardState::kReserved ? BoardState::kIdle : b.state, reason, fx,
                      actor);
}

Result<Board> Lab::Reserve(const Caller& caller, const ReserveRequest& request) {
  if (Status s = RequireRole(caller, Role::kMember, "reserving a board"); !s.ok()) {
    return s.error();
  }
  if (Status s = Serving(); !s.ok()) return s.error();
  const std::int64_t max_ms = static_cast<std::int64_t>(config_.max_reservation_s) * 1000;
  if (request.duration_ms <= 0 || request.duration_ms > max_ms) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("a reservation lasts between 1 ms and {} s (max_reservation_s), "
                                 "got {} ms; e.g. --for 2h",
                                 config_.max_reservation_s, request.duration_ms));
  }
  if (request.note.size() > 256) {
    return MakeError(ErrorCode::kInvalidArgument, "the note is longer than 256 characters");
  }
  std::unique_lock l(mu_);
  Board* found = boards_.Find(request.board);
  if (found == nullptr) return boards_.Unknown(request.board);
  Board& b = *found;
  const std::int64_t now = clock_.NowMs();
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
  AuditReservationLocked(b, b.holder, caller.user,
                         what + (request.note.empty() ? "" : ": " + request.note), caller.user, fx);
  boards_.SetLease(b, caller.user, now + request.duration_ms, request.note, request.hold);
  SetBoardStateLocked(b, b.state == BoardState::kIdle ? BoardState::kReserved : b.state,
                      "reserved by " + caller.user, fx, caller.user);
  bg_cv_.notify_all();
  spdlog::info("board {} {} by {}", b.name, what, caller.user);
  ScheduleLocked(fx);  // the holder's queued jobs for it may start
  Board out = b;
  if (Status s = CommitAndWait(l, fx); !s.ok()) return s.error();
  return out;
}

Result<Board> Lab::RenewReservation(const Caller& caller, const std::string& board,
                                    std::int64_t duration_ms) {
  if (Status s = RequireRole(caller, Role::kMember, "renewing a reservation"); !s.ok()) {
    return s.error();
  }
  if (Status s = Serving(); !s.ok()) return s.error();
  const std::int64_t max_ms = static_cast<std::int64_t>(config_.max_reservation_s) * 1000;
  if (duration_ms <= 0 || duration_ms > max_ms) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("a lease lasts between 1 ms and {} s, got {} ms",
                                 config_.max_reservation_s, duration_ms));
  }
  std::unique_lock l(mu_);
  Board* found = boards_.Find(board);
  if (found == nullptr) return boards_.Unknown(board);
  Board& b = *found;
  const std::int64_t now = clock_.NowMs();
  if (b.holder != caller.user || now >= b.lease_until_ms) {
    return MakeError(
        ErrorCode::kFailedPrecondition,
        fmt::format(
            "board {} is not reserved by {}{}; reserve it again", board, caller.user,
            b.holder.empty() ? std::string(" (the lease ended)") : " (holder: " + b.holder + ")"));
  }
  boards_.RenewLease(b, now + duration_ms);
  Effects fx;
  fx.writes.boards.push_back(b);
  fx.feed_boards.insert(b.name);
  bg_cv_.notify_all();
  Board out = b;
  if (Status s = CommitAndWait(l, fx); !s.ok()) return s.error();
  return out;
}

Result<Board> Lab::Release(const Caller& caller, const std::string& board) {
  if (Status s = RequireRole(caller, Role::kMember, "releasing a board"); !s.ok()) {
    return s.error();
  }
  if (Status s = Serving(); !s.ok()) return s.error();
  std::unique_lock l(mu_);
  Board* found = boards_.Find(board);
  if (found == nullptr) return boards_.Unknown(board);
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
  ClearReservationLocked(b, "released by " + caller.user, caller.user, fx);
  spdlog::info("board {} released by {}", board, caller.user);
  ScheduleLocked(fx);
  Board out = b;
  if (Status s = CommitAndWait(l, fx); !s.ok()) return s.error();
  return out;
}

void Lab::ExpireLeasesLocked(Effects& fx) {
  const std::int64_t now = clock_.NowMs();
  bool any = false;
  for (const std::string& name : boards_.TakeEndedLeases(now)) {
    Board& b = *boards_.Find(name);
    const std::string why = b.hold ? fmt::format(
                                         "the --hold lease of {} ran out (its command "
                                         "stopped renewing it)",
                                         b.holder)
                                   : fmt::format("the reservation of {} expired", b.holder);
    spdlog::info("board {}: {}", name, why);
    ClearReservationLocked(b, why, "server", fx);
    any = true;
  }
  if (any) ScheduleLocked(fx);
}

void Lab::ArmCancelGraceLocked(RunId run) {
  runs_.ArmCancelGrace(run, clock_.NowMs() + config_.cancel_grace_ms);
  bg_cv_.notify_all();
}

void Lab::ExpireCancelGraceLocked(Effects& fx) {
  const std::int64_t now = clock_.NowMs();
  bool any = false;
  for (const RunId id : runs_.TakeEndedGraces(now)) {
    ActiveRun* r = runs_.Find(id);
    if (r == nullptr || !r->job_ended) continue;  // closed by an earlier one
    const std::string why = fmt::format("agent {} did not confirm the end of run {} within {} ms",
                                        r->run.agent, id, config_.cancel_grace_ms);
    spdlog::warn("board {}: {}; taking it offline", r->run.board, why);
    if (Board* b = boards_.Find(r->run.board)) {
      SetBoardHealthLocked(*b, BoardHealth::kUnknown, why, fx);
    }
    CloseRunLocked(*r, r->end_state, why, /*board_offline=*/true, fx);
    any = true;
  }
  if (any) ScheduleLocked(fx);
}

Result<Board> Lab::SetMaintenance(const Caller& caller, const std::string& board, bool on,
                                  const std::string& reason) {
  if (Status s = RequireRole(caller, Role::kAdmin, "maintenance mode"); !s.ok()) return s.error();
  if (Status s = Serving(); !s.ok()) return s.error();
  std::unique_lock l(mu_);
  Board* found = boards_.Find(board);
  if (found == nullptr) return boards_.Unknown(board);
  Board& b = *found;
  Effects fx;
  const std::string why = fmt::format("maintenance {} by {}{}", on ? "on" : "off", caller.user,
                                      reason.empty() ? "" : ": " + reason);
  if (on) {
    SetBoardHealthLocked(b, BoardHealth::kMaintenance, why, fx, caller.user);
  } else if (!b.approved) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     fmt::format("board {} is new and waits for an admin's approval: mculab board "
                                 "{} --approve",
                                 board, board));
  } else if (b.health == BoardHealth::kMaintenance || b.health == BoardHealth::kBad) {
    b.health_failures = 0;
    SetBoardHealthLocked(b, config_.health_checks ? BoardHealth::kUnknown : BoardHealth::kGood, why,
                         fx, caller.user);
  } else {
    return MakeError(ErrorCode::kFailedPrecondition,
                     fmt::format("board {} is not in maintenance (health {})", board,
                                 BoardHealthName(b.health)));
  }
  ScheduleLocked(fx);
  Board out = b;
  if (Status s = CommitAndWait(l, fx); !s.ok()) return s.error();
  return out;
}

Result<Board> Lab::ApproveBoard(const Caller& caller, const std::string& board) {
  if (Status s = RequireRole(caller, Role::kAdmin, "approving a board"); !s.ok()) return s.error();
  if (Status s = Serving(); !s.ok()) return s.error();
  std::unique_lock l(mu_);
  Board* found = boards_.Find(board);
  if (found == nullptr) return boards_.Unknown(board);
  Board& b = *found;
  if (b.approved) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     fmt::format("board {} does not wait for approval (health {})", board,
                                 BoardHealthName(b.health)));
  }
  Effects fx;
  b.approved = true;
  b.health_failures = 0;
  SetBoardHealthLocked(b, config_.health_checks ? BoardHealth::kUnknown : BoardHealth::kGood,
                       "approved by " + caller.user, fx, caller.user);
  fx.writes.boards.push_back(b);
  ScheduleLocked(fx);
  Board out = b;
  if (Status s = CommitAndWait(l, fx); !s.ok()) return s.error();
  spdlog::info("board {} approved by {}", board, caller.user);
  return out;
}

Result<Board> Lab::AssignBoard(const Caller& caller, const std::string& board,
                               const std::string& agent) {
  if (Status s = RequireRole(caller, Role::kAdmin, "giving a board to an agent"); !s.ok()) {
    return s.error();
  }
  if (agent.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "give the agent's name (--agent NAME)");
  }
  std::unique_lock l(mu_);
  Board* found = boards_.Find(board);
  if (found == nullptr) return boards_.Unknown(board);
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
                      caller.user, clock_.NowMs()});
  spdlog::info("board {} now belongs to agent {} (was {}), by {}", board, agent, from, caller.user);
  if (b.state != BoardState::kOffline) {
    SetBoardStateLocked(b, BoardState::kOffline,
                        "given to agent " + agent + "; it registers the board when it connects", fx,
                        caller.user);
  } else {
    fx.writes.boards.push_back(b);
  }
  ScheduleLocked(fx);
  Board out = b;
  if (Status s = CommitAndWait(l, fx); !s.ok()) return s.error();
  return out;
}

Result<std::vector<BoardTransition>> Lab::BoardHistory(const Caller& caller,
                                                       const std::string& board) {
  if (Status s = RequireRole(caller, Role::kViewer, "reading a board's history"); !s.ok()) {
    return s.error();
  }
  {
    std::lock_guard l(mu_);
    if (boards_.Find(board) == nullptr) return boards_.Unknown(board);
  }
  return store_.GetBoardTransitions(board);
}

// ---------------------------------------------------------------------------------------------
// Health checks

bool Lab::IsHealthCheck(const Job& job) { return job.origin == JobOrigin::kHealthCheck; }

void Lab::QueueHealthCheckLocked(Board& b, Effects& fx) {
  if (!config_.health_checks || stopping_) return;
  for (const auto& [id, aj] : jobs_.all()) {
    if (IsHealthCheck(aj.job) && aj.job.board == b.name) return;
  }
  // A small deterministic workload every port runs: its checksum is checked against the host
  // reference, its median timer value against the board's calibration.
  Job job;
  job.user = kHealthCheckUser;
  job.origin = JobOrigin::kHealthCheck;
  job.kind = b.kind;
  job.board = b.name;
  job.op = "fully_connected_s8";
  job.label = "health check of " + b.name;
  job.priority = JobPriority::kHigh;
  job.iterations = 5;
  job.warmup = 1;
  job.num_cases = 1;
  job.timeout_s = std::min<std::uint32_t>(config_.default_timeout_s, 300);
  const JobId id = CreateJobLocked(job, {CaseSpec{0, {1, 32, 8}}}, "server", fx);
  spdlog::info("board {}: health check job {} queued", b.name, id);
}

void Lab::AdmitNewBoardLocked(Board& b, Effects& fx) {
  const std::string why = fmt::format("new board of agent {}", b.agent);
  if (config_.ApproveNewBoards()) {
    b.approved = false;
    SetBoardHealthLocked(
        b, BoardHealth::kMaintenance,
        fmt::format("{}: waits for an admin's approval (mculab board {} --approve)", why, b.name),
        fx);
  } else if (config_.health_checks) {
    spdlog::info("board {}: {}; its health check runs before any user's job", b.name, why);
    QueueHealthCheckLocked(b, fx);
  } else {
    SetBoardHealthLocked(b, BoardHealth::kGood, why + "; health checks are off", fx);
  }
}

void Lab::HealthCheckEndedLocked(const ActiveJob& aj, JobState to, Effects& fx) {
  Board* found = boards_.Find(aj.job.board);
  if (found == nullptr) return;
  Board& b = *found;
  if (to == JobState::kCancelled) return;  // no answer: the board stays as it is
  const std::string what = fmt::format("health check job {}", aj.job.id);
  if (to == JobState::kSucceeded) {
    b.health_failures = 0;
    if (b.calibration == 0 && aj.health_median > 0) b.calibration = aj.health_median;
    if (b.health == BoardHealth::kUnknown) {
      SetBoardHealthLocked(b, BoardHealth::kGood, what + " passed", fx);
    }
    fx.writes.boards.push_back(b);
    return;
  }
  ++b.health_failures;
  const std::string why =
      fmt::format("{} {}: {} ({} of {} allowed failures)", what, JobStateName(to), aj.job.message,
                  b.health_failures, config_.health_max_failures);
  fx.writes.boards.push_back(b);
  if (b.health != BoardHealth::kUnknown) return;  // maintenance meanwhile: leave it
  if (b.health_failures >= config_.health_max_failures) {
    SetBoardHealthLocked(b, BoardHealth::kBad, why, fx);
  } else {
    spdlog::warn("board {}: {}; checking again", b.name, why);
    // The ended check is still in jobs_ (the caller removes it after this): queue directly.
    Job job = aj.job;
    job.attempts = 0;
    job.assigned_board.clear();
    job.last_run_id = 0;
    job.started_ms = job.finished_ms = 0;
    job.message.clear();
    std::vector<CaseSpec> cases = aj.cases;
    const JobId id = CreateJobLocked(job, std::move(cases), "server", fx);
    spdlog::info("board {}: health check job {} queued", b.name, id);
  }
}

// ---------------------------------------------------------------------------------------------
// Board state and the board list

void Lab::SetBoardStateLocked(Board& b, BoardState to, const std::string& reason, Effects& fx,
                              const std::string& actor) {
  const std::int64_t now = clock_.NowMs();
  if (b.state != to) {
    fx.writes.board_transitions.push_back(
        BoardTransition{b.name, "state", std::string(BoardStateName(b.state)),
                        std::string(BoardStateName(to)), reason, actor, now});
    b.state = to;
  }
  b.updated_ms = now;
  fx.writes.boards.push_back(b);
  fx.feed_boards.insert(b.name);
}

void Lab::SetBoardHealthLocked(Board& b, BoardHealth to, const std::string& reason, Effects& fx,
                               const std::string& actor) {
  if (b.health == to) return;
  const std::int64_t now = clock_.NowMs();
  fx.writes.board_transitions.push_back(
      BoardTransition{b.name, "health", std::string(BoardHealthName(b.health)),
                      std::string(BoardHealthName(to)), reason, actor, now});
  spdlog::warn("board {}: health {} -> {} ({})", b.name, BoardHealthName(b.health),
               BoardHealthName(to), reason);
  b.health = to;
  b.updated_ms = now;
  fx.writes.boards.push_back(b);
  fx.feed_boards.insert(b.name);
  if (to == BoardHealth::kUnknown) QueueHealthCheckLocked(b, fx);
}

Result<std::vector<BoardView>> Lab::ListBoards(const Caller& caller) {
  if (Status s = RequireRole(caller, Role::kViewer, "listing boards"); !s.ok()) return s.error();
  if (Status s = Serving(); !s.ok()) return s.error();
  std::lock_guard l(mu_);
  std::map<std::string, std::uint32_t> by_kind;
  for (const auto& [id, q] : jobs_.queue()) ++by_kind[q.kind];
  const std::map<std::string, std::uint32_t> lengths = dispatch_.QueueLengths();
  std::vector<BoardView> out;
  out.reserve(boards_.all().size());
  for (const auto& [name, b] : boards_.all()) {
    BoardView v{b, lengths.at(name), 0};
    if (auto k = by_kind.find(b.kind); k != by_kind.end()) v.kind_queue_length = k->second;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace mculab::server
