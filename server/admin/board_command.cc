#include "server/admin/board_command.h"

#include <grpcpp/grpcpp.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include "common/time_text.h"
#include "lab.grpc.pb.h"

namespace mculab::server::admin {
namespace {

std::string EnvOr(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

int Failed(const grpc::Status& s, const std::string& what, const std::string& server) {
  std::cerr << "mculab-server admin board: " << what << ": " << s.error_message();
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
    std::cerr << " (is mculab-server running at " << server << "? give --server HOST:PORT)";
  }
  std::cerr << "\n";
  return 1;
}

}  // namespace

int RunBoardCommand(int argc, char** argv) {
  CLI::App app{"mculab-server admin board: maintenance mode and audit trail of a board",
               "mculab-server admin board"};
  std::string board, maintenance, reason, agent;
  std::string server = "127.0.0.1:" + EnvOr("MCULAB_GRPC_PORT", "7420");
  std::string token = EnvOr("MCULAB_TOKEN", "");
  bool history = false;
  app.add_option("board", board, "board name")->required();
  app.add_option("--maintenance", maintenance, "on or off")->check(CLI::IsMember({"on", "off"}));
  app.add_option("--reason", reason, "why, for the audit trail");
  app.add_flag("--history", history, "print the board's audit trail");
  app.add_option("--agent", agent,
                 "give the board to this agent (a board belongs to the agent that registered it "
                 "first; others are refused)");
  app.add_option("--server", server, "the running server's gRPC address")->capture_default_str();
  app.add_option("--token", token, "an admin token (or MCULAB_TOKEN)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (maintenance.empty() && !history && agent.empty()) {
    std::cerr
        << "mculab-server admin board: give --maintenance on|off, --agent NAME or --history\n";
    return 2;
  }
  auto stub =
      mculab::v1::Lab::NewStub(grpc::CreateChannel(server, grpc::InsecureChannelCredentials()));
  auto context = [&] {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    return ctx;
  };
  if (!maintenance.empty()) {
    mculab::v1::SetMaintenanceRequest req;
    req.set_board(board);
    req.set_on(maintenance == "on");
    req.set_reason(reason);
    mculab::v1::Board b;
    auto ctx = context();
    grpc::Status s = stub->SetMaintenance(ctx.get(), req, &b);
    if (!s.ok()) return Failed(s, "maintenance " + maintenance, server);
    std::cout << "board " << b.name() << " " << b.state() << ", health " << b.health() << "\n";
  }
  if (!agent.empty()) {
    mculab::v1::AssignBoardRequest req;
    req.set_board(board);
    req.set_agent(agent);
    mculab::v1::Board b;
    auto ctx = context();
    grpc::Status s = stub->AssignBoard(ctx.get(), req, &b);
    if (!s.ok()) return Failed(s, "giving it to agent " + agent, server);
    std::cout << "board " << b.name() << " now belongs to agent " << b.agent() << " (" << b.state()
              << ")\n";
  }
  if (history) {
    mculab::v1::BoardHistoryRequest req;
    req.set_board(board);
    mculab::v1::BoardHistoryReply rep;
    auto ctx = context();
    grpc::Status s = stub->BoardHistory(ctx.get(), req, &rep);
    if (!s.ok()) return Failed(s, "history", server);
    for (const auto& t : rep.transitions()) {
      std::cout << UtcTimeText(t.time_ms()) << "  " << t.actor() << "  " << t.field() << " "
                << (t.from().empty() ? "-" : t.from()) << " -> " << (t.to().empty() ? "-" : t.to())
                << "  " << t.reason() << "\n";
    }
  }
  return 0;
}

}  // namespace mculab::server::admin
