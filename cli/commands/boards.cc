#include <algorithm>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands/commands.h"
#include "cli/duration.h"
#include "cli/format.h"
#include "cli/profile_format.h"
#include "common/time_text.h"
#include "proto/json/documents.h"

namespace mculab::cli {

namespace {

std::string BoardLine(const v1::Board& b) {
  std::string line = "board " + b.name() + " " + b.state() + ", health " + b.health();
  if (b.awaiting_approval()) line += ", waiting for an admin's approval";
  if (!b.holder().empty()) {
    line += ", reserved by " + b.holder() + " until " + UtcTimeText(b.lease_until_ms());
    if (!b.reservation_note().empty()) line += " (" + b.reservation_note() + ")";
  }
  return line;
}

}  // namespace

int CmdBoards(Client& c, bool json) {
  v1::ListBoardsReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().ListBoards(ctx.get(), v1::ListBoardsRequest{}, &rep);
  if (!s.ok()) c.Fail(s, "listing boards");
  if (json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& b : rep.boards()) out.push_back(BoardDocument(b));
    std::cout << out.dump(2) << "\n";
  } else if (rep.boards_size() == 0) {
    std::cout << "no boards registered: start an agent (mculab-agent --config FILE)\n";
  } else {
    std::cout << RenderBoards(rep);
  }
  return 0;
}

int CmdEvents(Client& c, const std::string& kind, const std::string& board) {
  if (kind.empty() && board.empty()) throw UsageError{"give --kind KIND or --board NAME"};
  v1::ListEventsRequest req;
  req.set_kind(kind);
  req.set_board(board);
  v1::ListEventsReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().ListEvents(ctx.get(), req, &rep);
  if (!s.ok()) c.Fail(s, "listing events");
  std::cout << RenderEventUnits(rep);
  return 0;
}

int CmdReserve(Client& c, const std::string& board, const std::string& duration,
               const std::string& note, bool json) {
  auto ms = ParseDurationMs(duration);
  if (!ms.ok()) throw UsageError{ms.error().message};
  v1::ReserveRequest req;
  req.set_board(board);
  req.set_duration_ms(*ms);
  req.set_note(note);
  v1::Board b;
  auto ctx = c.Context();
  grpc::Status s = c.stub().Reserve(ctx.get(), req, &b);
  if (!s.ok()) c.Fail(s, "reserve " + board);
  if (json) {
    std::cout << nlohmann::json{{"board", b.name()},
                                {"holder", b.holder()},
                                {"lease_until_ms", b.lease_until_ms()},
                                {"state", b.state()}}
                     .dump()
              << "\n";
  } else {
    std::cout << BoardLine(b) << "\n";
  }
  return 0;
}

int CmdRelease(Client& c, const std::string& board) {
  v1::ReleaseRequest req;
  req.set_board(board);
  v1::Board b;
  auto ctx = c.Context();
  grpc::Status s = c.stub().Release(ctx.get(), req, &b);
  if (!s.ok()) c.Fail(s, "release " + board);
  // The board may go at once to a job that waited for it, or still run one it started for the
  // holder: say which job, so "busy" is not read as "still yours".
  std::cout << "released " << b.name();
  if (b.state() == "busy" && b.current_job() != 0)
    std::cout << "; it now runs job " << b.current_job() << " (health " << b.health() << ")";
  else
    std::cout << "; " << BoardLine(b);
  std::cout << "\n";
  return 0;
}

int CmdHold(Client& c, const std::string& board, const std::string& lease, const std::string& note,
            const sigset_t& signals) {
  auto ms = ParseDurationMs(lease);
  if (!ms.ok()) throw UsageError{ms.error().message};
  v1::ReserveRequest req;
  req.set_board(board);
  req.set_duration_ms(*ms);
  req.set_note(note);
  req.set_hold(true);
  v1::Board b;
  {
    auto ctx = c.Context();
    grpc::Status s = c.stub().Reserve(ctx.get(), req, &b);
    if (!s.ok()) c.Fail(s, "hold " + board);
  }
  std::cout << "holding " << board << " (lease " << FormatDurationMs(*ms)
            << ", renewed while this runs); Ctrl-C releases it" << std::endl;
  const std::int64_t every_ms = std::max<std::int64_t>(*ms / 3, 100);
  while (true) {
    timespec ts{static_cast<time_t>(every_ms / 1000),
                static_cast<long>((every_ms % 1000) * 1000000)};
    const int sig = sigtimedwait(&signals, nullptr, &ts);
    if (sig == SIGINT || sig == SIGTERM) break;
    v1::RenewReservationRequest renew;
    renew.set_board(board);
    renew.set_duration_ms(*ms);
    auto ctx = c.Context(std::max<int>(1, static_cast<int>(every_ms / 1000)));
    grpc::Status s = c.stub().RenewReservation(ctx.get(), renew, &b);
    if (!s.ok() && s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
      std::cerr << "mculab: error: lost the hold of " << board << ": " << s.error_message() << "\n";
      return 1;
    }
    if (!s.ok())
      std::cerr << "mculab: warning: renewing the hold failed: " << s.error_message() << "\n";
  }
  v1::ReleaseRequest rel;
  rel.set_board(board);
  auto ctx = c.Context(10);
  grpc::Status s = c.stub().Release(ctx.get(), rel, &b);
  if (!s.ok()) c.Fail(s, "release " + board);
  std::cout << "released " << board << std::endl;
  return 0;
}

int CmdBoard(Client& c, const std::string& board, const std::string& maintenance,
             const std::string& reason, const std::string& agent, bool approve, bool history,
             bool json) {
  if (approve) {
    v1::ApproveBoardRequest req;
    req.set_board(board);
    v1::Board b;
    auto ctx = c.Context();
    grpc::Status s = c.stub().ApproveBoard(ctx.get(), req, &b);
    if (!s.ok()) c.Fail(s, "approving " + board);
    std::cout << BoardLine(b)
              << (b.health() == "unknown"
                      ? " (approved: it takes jobs once its health check passes)"
                      : " (approved)")
              << "\n";
  }
  if (!maintenance.empty()) {
    if (maintenance != "on" && maintenance != "off")
      throw UsageError{"--maintenance takes on or off, got '" + maintenance + "'"};
    v1::SetMaintenanceRequest req;
    req.set_board(board);
    req.set_on(maintenance == "on");
    req.set_reason(reason);
    v1::Board b;
    auto ctx = c.Context();
    grpc::Status s = c.stub().SetMaintenance(ctx.get(), req, &b);
    if (!s.ok()) c.Fail(s, "maintenance " + maintenance + " for " + board);
    std::cout << BoardLine(b) << "\n";
  }
  if (!agent.empty()) {
    v1::AssignBoardRequest req;
    req.set_board(board);
    req.set_agent(agent);
    v1::Board b;
    auto ctx = c.Context();
    grpc::Status s = c.stub().AssignBoard(ctx.get(), req, &b);
    if (!s.ok()) c.Fail(s, "giving " + board + " to agent " + agent);
    std::cout << "board " << b.name() << " now belongs to agent " << b.agent() << " (" << b.state()
              << ")\n";
  }
  if (!history) {
    if (maintenance.empty() && agent.empty() && !approve)
      throw UsageError{"give --history, --maintenance on|off, --agent NAME or --approve"};
    return 0;
  }
  v1::BoardHistoryRequest req;
  req.set_board(board);
  v1::BoardHistoryReply rep;
  auto ctx = c.Context();
  grpc::Status s = c.stub().BoardHistory(ctx.get(), req, &rep);
  if (!s.ok()) c.Fail(s, "history of " + board);
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& t : rep.transitions())
      out.push_back({{"field", t.field()},
                     {"from", t.from()},
                     {"to", t.to()},
                     {"reason", t.reason()},
                     {"actor", t.actor()},
                     {"time_ms", t.time_ms()}});
    std::cout << out.dump(2) << "\n";
    return 0;
  }
  for (const auto& t : rep.transitions()) {
    std::cout << UtcTimeText(t.time_ms()) << "  " << t.actor() << "  " << t.field() << " "
              << (t.from().empty() ? "-" : t.from()) << " -> " << (t.to().empty() ? "-" : t.to())
              << "  " << t.reason() << "\n";
  }
  return 0;
}

}  // namespace mculab::cli
