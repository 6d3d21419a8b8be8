// UploadDesk: files users upload (cases, custom runners, models) and agents fetch, over the
// LabState (lab_state.h) and the ArtifactStore (artifacts.h): beginning an upload, opening an
// artifact for the agent that runs a job referencing it, collecting uploads no unfinished job
// uses, and a model's operator names.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

#include "common/result.h"
#include "server/service/artifacts.h"
#include "server/service/caller.h"
#include "server/service/lab_state.h"
#include "server/service/model_admission.h"

namespace mculab::server {

class UploadDesk {
 public:
  explicit UploadDesk(LabState& st) : st_(st) {}

  // Member. Size-limited, content-addressed (artifacts.h).
  Result<std::unique_ptr<ArtifactUpload>> BeginUpload(const Caller& caller, std::string name,
                                                      std::uint64_t declared_size);
  // An artifact's file for AgentLink.FetchArtifact: an agent only while it holds an active run
  // whose job references the artifact (a stranger agent is PERMISSION_DENIED whether or not the
  // artifact exists); admins always.
  Result<std::pair<std::filesystem::path, Artifact>> OpenArtifact(const Caller& caller,
                                                                  const std::string& sha256);
  // Deletes the uploads older than config artifact_grace_s that no unfinished job references
  // (rows and files), so the per-user quota frees up; finished jobs keep their results and the
  // artifact's hash. The Lab's background thread runs it every kArtifactCollectionPeriodMs.
  // Returns how many were deleted.
  Result<std::size_t> CollectArtifacts();
  // A model blob's operators, whole names and types (for a model job's per-operator rows).
  Result<std::shared_ptr<const ModelLayerNames>> ModelLayers(const std::string& blob_sha256) {
    return model_layers_.Get(blob_sha256, st_.artifacts.PathOf(blob_sha256));
  }

 private:
  LabState& st_;
  ModelLayerCache model_layers_;
};

}  // namespace mculab::server
