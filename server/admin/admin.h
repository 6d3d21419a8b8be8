// `mculab-server admin ...`: administration commands that work on the lab's database directly,
// found the way the server finds it (--home, else $MCULAB_HOME, else ~/.local/share/mculab). They
// may run while the server runs (SQLite WAL; the server sees a revoked token within the token
// cache's lifetime, 2 s). Output meant for scripts (a new token) goes to stdout alone;
// explanations go to stderr.
//
//   admin user add NAME --role admin|member|viewer   prints the user's first token
//   admin user list                                  users and agents with their token ids
//   admin token add USER                             prints another token for USER
//   admin token revoke TOKEN|ID                      by the token or its id (mcl_u_1a2b3c4d)
//   admin agent add HOST                             prints a token for the agent named HOST
//   admin artifact share SHA256 [--off]              every member's jobs may use the upload
//   admin migrate-store [--from URL] --to URL        copies the lab to another store (stopped
//                                                    server; db/store_copy.h)
//
// Each group of commands lives in its own file and registers itself in Admin's constructor
// (admin.cc); a new group adds one file and one line there. What changes the running server's live
// state (a board's maintenance mode or owning agent) is the CLI's: `mculab board`.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <iosfwd>
#include <string>

#include "server/service/clock.h"
#include "server/service/store.h"

namespace mculab::server::admin {

// What a command works with; opened once the command line is parsed.
struct AdminContext {
  Store& store;
  Clock& clock;
  std::ostream& out;  // results (tokens, lists)
  std::ostream& err;  // explanations and errors
};

// Returns the process exit code: 0 done, 1 failed (the message is on ctx.err).
using AdminAction = std::function<int(AdminContext& ctx)>;

// What a command that opens the stores it names itself gets instead (migrate-store): where the
// server's store is (`store_url` as --store or the config gives it, empty: sqlite:mculab.db in
// `home`), unopened.
struct StoreCommandContext {
  const std::string& home;
  const std::string& store_url;
  std::ostream& out;
  std::ostream& err;
};
using StoreAction = std::function<int(StoreCommandContext& ctx)>;

// Registers the commands of one group under `admin`; a chosen command stores its action.
void AddAccountCommands(CLI::App& admin, AdminAction& chosen);
void AddArtifactCommands(CLI::App& admin, AdminAction& chosen);
void AddStoreCommands(CLI::App& admin, StoreAction& chosen);

class Admin {
 public:
  // Adds the "admin" subcommand and its groups to `app`.
  explicit Admin(CLI::App& app);
  Admin(const Admin&) = delete;
  Admin& operator=(const Admin&) = delete;

  // Whether the parsed command line chose an admin command.
  bool chosen() const { return admin_->parsed(); }
  // Opens the database under `home` and runs the chosen command; returns the exit code.
  // `store_url`: the store to work on (db/lab_store.h); empty: the SQLite file in `home`.
  int Run(const std::string& home, const std::string& store_url);

 private:
  CLI::App* admin_;
  AdminAction action_;
  StoreAction store_action_;
};

}  // namespace mculab::server::admin
