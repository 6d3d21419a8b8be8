// admin artifact share: an upload every member's jobs may use, not only its uploaders'.
#include <ostream>
#include <string>

#include "server/admin/admin.h"
#include "server/service/artifacts.h"

namespace mculab::server::admin {

void AddArtifactCommands(CLI::App& admin, AdminAction& chosen) {
  auto* artifact = admin.add_subcommand("artifact", "Uploads: share one with every member");
  artifact->require_subcommand(1);
  artifact->fallthrough();
  auto* share = artifact->add_subcommand(
      "share",
      "Let every member's jobs use an upload (a job may otherwise use only the files its "
      "submitter uploaded); --off: only its uploaders' again");
  auto sha = std::make_shared<std::string>();
  auto off = std::make_shared<bool>(false);
  share->add_option("sha256", *sha, "the artifact's SHA-256 (mculab show lists a job's)")
      ->required();
  share->add_flag("--off", *off, "stop sharing it");
  share->fallthrough();
  share->callback([&chosen, sha, off] {
    chosen = [sha, off](AdminContext& ctx) {
      if (Status s = ShareArtifact(ctx.store, *sha, !*off); !s.ok()) {
        ctx.err << "mculab-server admin: error: " << s.error().message << "\n";
        return 1;
      }
      ctx.err << "artifact " << *sha
              << (*off ? " is no longer shared: only its uploaders' jobs may use it\n"
                       : " is shared: every member's jobs may use it\n");
      return 0;
    };
  });
}

}  // namespace mculab::server::admin
