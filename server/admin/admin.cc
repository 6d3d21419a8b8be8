#include "server/admin/admin.h"

#include <filesystem>
#include <iostream>

#include "db/sqlite_store.h"

namespace mculab::server::admin {

Admin::Admin(CLI::App& app) {
  admin_ = app.add_subcommand(
      "admin",
      "Administer the lab's database: users, tokens, agents (works while the server runs)");
  admin_->require_subcommand(1);
  admin_->fallthrough();  // --home may come after the command
  AddAccountCommands(*admin_, action_);
  // `admin board` is parsed on its own (server/admin/board_command.h): list it here too.
  admin_->footer(
      "Also:\n  board BOARD --maintenance on|off [--reason TEXT] | --history  [--server "
      "HOST:PORT] [--token T]\n      a board's maintenance mode and audit trail, through the "
      "running server\n      (mculab-server admin board --help)");
  // More groups register here, each from its own file (e.g. boards: maintenance on|off).
}

int Admin::Run(const std::string& home) {
  if (!action_) {
    std::cerr << "mculab-server admin: choose a command (--help lists them)\n";
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(home, ec);
  if (ec) {
    std::cerr << "mculab-server admin: error: cannot create home directory " << home << ": "
              << ec.message() << "\n";
    return 1;
  }
  auto store = db::SqliteStore::Open(std::filesystem::path(home) / "mculab.db");
  if (!store.ok()) {
    std::cerr << "mculab-server admin: error: " << store.error().message << "\n";
    return 1;
  }
  SystemClock clock;
  AdminContext ctx{**store, clock, std::cout, std::cerr};
  const int rc = action_(ctx);
  (*store)->Close();
  return rc;
}

}  // namespace mculab::server::admin
