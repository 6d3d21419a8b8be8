// BoardUpkeep (board_upkeep.h): board state and health, reservations ending, health checks.
#include "server/service/board_upkeep.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "server/service/job_desk.h"
#include "server/service/scheduling.h"

namespace mculab::server {

BoardState BoardUpkeep::FreeState(const Board& b) {
  return b.holder.empty() ? BoardState::kIdle : BoardState::kReserved;
}

void BoardUpkeep::AuditReservationLocked(Board& b, const std::string& from, const std::string& to,
                                         const std::string& reason, const std::string& actor,
                                         Effects& fx) {
  fx.writes.board_transitions.push_back(
      BoardTransition{b.name, "reservation", from, to, reason, actor, st_.clock.NowMs()});
}

void BoardUpkeep::ClearReservationLocked(Board& b, const std::string& reason,
                                         const std::string& actor, Effects& fx) {
  AuditReservationLocked(b, b.holder, "", reason, actor, fx);
  st_.boards.ClearLease(b);
  // SetBoardStateLocked writes the board row even when the state stays (busy, offline).
  SetBoardStateLocked(b, b.state == BoardState::kReserved ? BoardState::kIdle : b.state, reason, fx,
                      actor);
}

void BoardUpkeep::ExpireLeasesLocked(Effects& fx) {
  const std::int64_t now = st_.clock.NowMs();
  bool any = false;
  for (const std::string& name : st_.boards.TakeEndedLeases(now)) {
    Board& b = *st_.boards.Find(name);
    const std::string why = b.hold ? fmt::format(
                                         "the --hold lease of {} ran out (its command "
                                         "stopped renewing it)",
                                         b.holder)
                                   : fmt::format("the reservation of {} expired", b.holder);
    spdlog::info("board {}: {}", name, why);
    ClearReservationLocked(b, why, "server", fx);
    any = true;
  }
  if (any) p_.scheduling->ScheduleLocked(fx);
}

bool BoardUpkeep::IsHealthCheck(const Job& job) { return job.origin == JobOrigin::kHealthCheck; }

void BoardUpkeep::QueueHealthCheckLocked(Board& b, Effects& fx) {
  if (!st_.config.health_checks || st_.stopping) return;
  for (const auto& [id, aj] : st_.jobs.all()) {
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
  job.timeout_s = std::min<std::uint32_t>(st_.config.default_timeout_s, 300);
  const JobId id = p_.jobs->CreateJobLocked(job, {CaseSpec{0, {1, 32, 8}}}, "server", fx);
  spdlog::info("board {}: health check job {} queued", b.name, id);
}

void BoardUpkeep::AdmitNewBoardLocked(Board& b, Effects& fx) {
  const std::string why = fmt::format("new board of agent {}", b.agent);
  if (st_.config.ApproveNewBoards()) {
    b.approved = false;
    SetBoardHealthLocked(
        b, BoardHealth::kMaintenance,
        fmt::format("{}: waits for an admin's approval (mculab board {} --approve)", why, b.name),
        fx);
  } else if (st_.config.health_checks) {
    spdlog::info("board {}: {}; its health check runs before any user's job", b.name, why);
    QueueHealthCheckLocked(b, fx);
  } else {
    SetBoardHealthLocked(b, BoardHealth::kGood, why + "; health checks are off", fx);
  }
}

void BoardUpkeep::HealthCheckEndedLocked(const ActiveJob& aj, JobState to, Effects& fx) {
  Board* found = st_.boards.Find(aj.job.board);
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
                  b.health_failures, st_.config.health_max_failures);
  fx.writes.boards.push_back(b);
  if (b.health != BoardHealth::kUnknown) return;  // maintenance meanwhile: leave it
  if (b.health_failures >= st_.config.health_max_failures) {
    SetBoardHealthLocked(b, BoardHealth::kBad, why, fx);
  } else {
    spdlog::warn("board {}: {}; checking again", b.name, why);
    // The ended check is still in st_.jobs (the caller removes it after this): queue directly.
    Job job = aj.job;
    job.attempts = 0;
    job.assigned_board.clear();
    job.last_run_id = 0;
    job.started_ms = job.finished_ms = 0;
    job.message.clear();
    std::vector<CaseSpec> cases = aj.cases;
    const JobId id = p_.jobs->CreateJobLocked(job, std::move(cases), "server", fx);
    spdlog::info("board {}: health check job {} queued", b.name, id);
  }
}

void BoardUpkeep::SetBoardStateLocked(Board& b, BoardState to, const std::string& reason,
                                      Effects& fx, const std::string& actor) {
  const std::int64_t now = st_.clock.NowMs();
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

void BoardUpkeep::SetBoardHealthLocked(Board& b, BoardHealth to, const std::string& reason,
                                       Effects& fx, const std::string& actor) {
  if (b.health == to) return;
  const std::int64_t now = st_.clock.NowMs();
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

}  // namespace mculab::server
