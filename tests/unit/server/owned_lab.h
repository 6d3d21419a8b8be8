// A Lab with the accounts and artifact store it uses, built as mculab-server's main builds them
// (from the same store and clock; the artifacts under home/artifacts), for tests and benchmarks
// that want one object. The parts are destroyed after the Lab.
#pragma once

#include <filesystem>

#include "server/service/accounts.h"
#include "server/service/artifacts.h"
#include "server/service/lab.h"

namespace mculab::server::testing {

struct LabParts {
  LabParts(Store& store, Clock& clock, const LabConfig& config, const std::filesystem::path& home)
      : accounts_part(store, clock),
        artifacts_part(home / "artifacts", ArtifactLimitsOf(config), store, clock) {}
  Accounts accounts_part;
  ArtifactStore artifacts_part;
};

class OwnedLab : private LabParts, public Lab {
 public:
  OwnedLab(Store& store, Clock& clock, LabConfig config, const std::filesystem::path& home)
      : LabParts(store, clock, config, home),
        Lab(store, clock, config, accounts_part, artifacts_part) {}
};

}  // namespace mculab::server::testing
