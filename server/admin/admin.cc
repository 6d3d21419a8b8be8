#include "server/admin/admin.h"

#include <filesystem>
#include <iostream>

#include "db/lab_store.h"

namespace mculab::server::admin {

Admin::Admin(CLI::App& app) {
  admin_ = app.add_subcommand(
      "admin",
      "Administer the lab's database: users, tokens, agents (works while the server runs); move "
      "it to another store");
  admin_->require_subcommand(1);
  admin_->fallthrough();  // --home may come after the command
  AddAccountCommands(*admin_, action_);
  AddArtifactCommands(*admin_, action_);
  AddStoreCommands(*admin_, store_action_);
  // A board's live state is the running server's: the CLI changes it through the server.
  admin_->footer(
      "Boards (through the running server, with an admin token): mculab board BOARD\n"
      "  --maintenance on|off [--reason TEXT] | --agent NAME | --approve | --history");
  // More groups register here, each from its own file.
}

int Admin::Run(const std::string& home, const std::string& store_url) {
  if (store_action_) {
    StoreCommandContext ctx{home, store_url, std::cout, std::cerr};
    return store_action_(ctx);
  }
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
  auto store = db::OpenStore(store_url, home);
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
