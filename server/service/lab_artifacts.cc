// Lab: uploads. Beginning an upload, collecting uploads no unfinished job uses, and opening an
// artifact for the agent that runs a job referencing it.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <limits>

#include "common/crash_point.h"
#include "common/op_catalog.h"
#include "common/time_text.h"
#include "server/domain/admission.h"
#include "server/domain/queue_position.h"
#include "server/domain/scheduler.h"
#include "server/service/lab.h"
#include "server/service/model_admission.h"
#include "server/service/profiles.h"

namespace mculab::server {

Result<std::unique_ptr<ArtifactUpload>> Lab::BeginUpload(const Caller& caller, std::string name,
                                                         std::uint64_t declared_size) {
  if (Status s = RequireRole(caller, Role::kMember, "uploading a file"); !s.ok()) return s.error();
  if (Status s = Serving(); !s.ok()) return s.error();
  return artifacts_.Begin(caller, std::move(name), declared_size);
}

Result<std::size_t> Lab::CollectArtifacts() {
  const std::int64_t cutoff = clock_.NowMs() - std::int64_t{config_.artifact_grace_s} * 1000;
  auto old = store_.ListArtifactsBefore(cutoff);  // read without the lock
  if (!old.ok()) return old.error();
  if (old->empty()) return std::size_t{0};
  WriteSet ws;
  {
    std::lock_guard l(mu_);
    std::set<std::string> in_use;
    for (const auto& [id, aj] : jobs_.all()) {  // every unfinished job
      for (const std::string* sha :
           {&aj.job.cases_artifact, &aj.job.firmware_artifact, &aj.job.blob_artifact}) {
        if (!sha->empty()) in_use.insert(*sha);
      }
    }
    for (const Artifact& a : *old) {
      if (!in_use.contains(a.sha256)) ws.deleted_artifacts.push_back(a.sha256);
    }
  }
  if (ws.deleted_artifacts.empty()) return std::size_t{0};
  std::vector<std::string> deleted = ws.deleted_artifacts;
  if (Status s = store_.WriteAndWait(std::move(ws)); !s.ok()) return s.error();
  for (const std::string& sha : deleted) {
    std::error_code ec;
    std::filesystem::remove(artifacts_.PathOf(sha), ec);
  }
  spdlog::info("deleted {} upload(s) older than {} s that no unfinished job uses", deleted.size(),
               config_.artifact_grace_s);
  return deleted.size();
}

Result<std::pair<std::filesystem::path, Artifact>> Lab::OpenArtifact(const Caller& caller,
                                                                     const std::string& sha256) {
  // Agents fetch what their jobs need; admins may do everything. A user token is refused.
  if (caller.role != Role::kAgent && caller.role != Role::kAdmin) {
    if (caller.role == Role::kNone) {
      return MakeError(ErrorCode::kUnauthenticated, "fetching an artifact needs an agent token");
    }
    return MakeError(ErrorCode::kPermissionDenied, "fetching an artifact needs an agent token; " +
                                                       caller.user + " is " +
                                                       std::string(RoleName(caller.role)));
  }
  if (!IsArtifactHash(sha256)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "artifact must be a SHA-256 in lowercase hex, got '" + sha256 + "'");
  }
  if (caller.role == Role::kAgent) {
    // Only what the agent's own active runs need: another agent's uploads stay private.
    bool referenced = false;
    {
      std::lock_guard l(mu_);
      for (const auto& [run_id, r] : runs_.all()) {
        if (r.run.agent != caller.user) continue;
        const ActiveJob* aj = jobs_.Find(r.run.job_id);
        if (aj == nullptr) continue;
        const Job& job = aj->job;
        if (job.firmware_artifact == sha256 || job.blob_artifact == sha256 ||
            job.cases_artifact == sha256) {
          referenced = true;
          break;
        }
      }
    }
    if (!referenced) {
      ++refused_agent_messages_;
      spdlog::warn("agent {} asked for artifact {}, which no run it holds references; refused",
                   caller.user, sha256);
      return MakeError(
          ErrorCode::kPermissionDenied,
          "agent " + caller.user + " holds no active run that references artifact " + sha256);
    }
  }
  auto a = store_.GetArtifact(sha256);
  if (!a.ok()) return a.error();
  if (!a->has_value()) {
    return MakeError(ErrorCode::kNotFound, "no artifact " + sha256 + " on this server");
  }
  return std::make_pair(artifacts_.PathOf(sha256), **a);
}

}  // namespace mculab::server
