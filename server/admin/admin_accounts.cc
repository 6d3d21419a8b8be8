// admin user add|list, admin token add|revoke, admin agent add.
#include <ostream>
#include <string>

#include "common/time_text.h"
#include "server/admin/admin.h"
#include "server/service/accounts.h"

namespace mculab::server::admin {
namespace {

int Fail(AdminContext& ctx, const Error& e) {
  ctx.err << "mculab-server admin: error: " << e.message << "\n";
  return 1;
}

std::string Pad(std::string s, std::size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s;
}

}  // namespace

void AddAccountCommands(CLI::App& admin, AdminAction& chosen) {
  auto* user = admin.add_subcommand("user", "People: add, list");
  user->require_subcommand(1);
  user->fallthrough();

  auto* user_add = user->add_subcommand("add", "Add a user; prints their token (shown only once)");
  auto name = std::make_shared<std::string>();
  auto role = std::make_shared<std::string>();
  user_add->add_option("name", *name, "user name (letters, digits, . _ - @)")->required();
  user_add->add_option("--role", *role, "admin, member or viewer")->required();
  user_add->fallthrough();
  user_add->callback([&chosen, name, role] {
    chosen = [name, role](AdminContext& ctx) {
      Accounts accounts(ctx.store, ctx.clock);
      auto issued = accounts.AddUser(*name, *role);
      if (!issued.ok()) return Fail(ctx, issued.error());
      ctx.err << "user " << *name << " (" << *role << ") added; their token (" << issued->record.id
              << "), shown only this once:\n";
      ctx.out << issued->token << "\n";
      return 0;
    };
  });

  auto* user_list = user->add_subcommand("list", "Users and agents with their tokens' ids");
  user_list->fallthrough();
  user_list->callback([&chosen] {
    chosen = [](AdminContext& ctx) {
      Accounts accounts(ctx.store, ctx.clock);
      auto list = accounts.List();
      if (!list.ok()) return Fail(ctx, list.error());
      if (list->empty()) {
        ctx.err << "no users yet: `mculab-server admin user add NAME --role admin` makes one\n";
        return 0;
      }
      ctx.out << Pad("NAME", 20) << Pad("ROLE", 8) << Pad("CREATED", 24) << "TOKENS\n";
      for (const Account& a : *list) {
        std::string tokens;
        for (const TokenRecord& t : a.tokens) {
          if (!tokens.empty()) tokens += ", ";
          tokens += t.id + (t.revoked_ms != 0 ? " (revoked)" : "");
        }
        ctx.out << Pad(a.user.name, 19) << " " << Pad(a.user.role, 8)
                << Pad(UtcTimeText(a.user.created_ms), 24) << (tokens.empty() ? "-" : tokens)
                << "\n";
      }
      return 0;
    };
  });

  auto* token = admin.add_subcommand("token", "Tokens: add one for a user, revoke one");
  token->require_subcommand(1);
  token->fallthrough();
  auto* token_add = token->add_subcommand("add", "Another token for a user (shown only once)");
  auto owner = std::make_shared<std::string>();
  token_add->add_option("user", *owner, "the user's name")->required();
  token_add->fallthrough();
  token_add->callback([&chosen, owner] {
    chosen = [owner](AdminContext& ctx) {
      Accounts accounts(ctx.store, ctx.clock);
      auto issued = accounts.AddUserToken(*owner);
      if (!issued.ok()) return Fail(ctx, issued.error());
      ctx.err << "new token (" << issued->record.id << ") for " << *owner
              << ", shown only this once:\n";
      ctx.out << issued->token << "\n";
      return 0;
    };
  });
  auto* revoke = token->add_subcommand("revoke", "Revoke a token, given whole or by its id");
  auto which = std::make_shared<std::string>();
  revoke->add_option("token", *which, "the token, or its id from `admin user list`")->required();
  revoke->fallthrough();
  revoke->callback([&chosen, which] {
    chosen = [which](AdminContext& ctx) {
      Accounts accounts(ctx.store, ctx.clock);
      auto revoked = accounts.Revoke(*which);
      if (!revoked.ok()) return Fail(ctx, revoked.error());
      ctx.out << "revoked " << revoked->kind << " token " << revoked->id << " of " << revoked->owner
              << " (a running server stops accepting it within seconds)\n";
      return 0;
    };
  });

  auto* agent = admin.add_subcommand("agent", "Agents: add one (prints its token)");
  agent->require_subcommand(1);
  agent->fallthrough();
  auto* agent_add = agent->add_subcommand(
      "add", "A token for the agent named HOST (its [agent] name); shown only once");
  auto host = std::make_shared<std::string>();
  agent_add->add_option("host", *host, "the agent's name ([agent] name in its config)")->required();
  agent_add->fallthrough();
  agent_add->callback([&chosen, host] {
    chosen = [host](AdminContext& ctx) {
      Accounts accounts(ctx.store, ctx.clock);
      auto issued = accounts.AddAgent(*host);
      if (!issued.ok()) return Fail(ctx, issued.error());
      ctx.err << "agent token (" << issued->record.id << ") for agent " << *host
              << ", shown only this once; put it in a file named by token_file in the agent's "
                 "[agent] section:\n";
      ctx.out << issued->token << "\n";
      return 0;
    };
  });
}

}  // namespace mculab::server::admin
