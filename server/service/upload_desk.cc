// UploadDesk (upload_desk.h): uploads begun, artifacts opened for agents, old uploads collected.
#include "server/service/upload_desk.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <set>

namespace mculab::server {

Result<std::unique_ptr<ArtifactUpload>> UploadDesk::BeginUpload(const Caller& caller,
                                                                std::string name,
                                                                std::uint64_t declared_size) {
  if (Status s = RequireRole(caller, Role::kMember, "uploading a file"); !s.ok()) return s.error();
  if (Status s = st_.Serving(); !s.ok()) return s.error();
  return st_.artifacts.Begin(caller, std::move(name), declared_size);
}

Result<std::size_t> UploadDesk::CollectArtifacts() {
  const std::int64_t cutoff = st_.clock.NowMs() - std::int64_t{st_.config.artifact_grace_s} * 1000;
  auto old = st_.store.ListArtifactsBefore(cutoff);  // read without the lock
  if (!old.ok()) return old.error();
  if (old->empty()) return std::size_t{0};
  WriteSet ws;
  {
    std::lock_guard l(st_.mu);
    std::set<std::string> in_use;
    for (const auto& [id, aj] : st_.jobs.all()) {  // every unfinished job
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
  if (Status s = st_.store.WriteAndWait(std::move(ws)); !s.ok()) return s.error();
  for (const std::string& sha : deleted) {
    std::error_code ec;
    std::filesystem::remove(st_.artifacts.PathOf(sha), ec);
  }
  spdlog::info("deleted {} upload(s) older than {} s that no unfinished job uses", deleted.size(),
               st_.config.artifact_grace_s);
  return deleted.size();
}

Result<std::pair<std::filesystem::path, Artifact>> UploadDesk::OpenArtifact(
    const Caller& caller, const std::string& sha256) {
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
      std::lock_guard l(st_.mu);
      for (const auto& [run_id, r] : st_.runs.all()) {
        if (r.run.agent != caller.user) continue;
        const ActiveJob* aj = st_.jobs.Find(r.run.job_id);
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
      ++st_.refused_agent_messages;
      spdlog::warn("agent {} asked for artifact {}, which no run it holds references; refused",
                   caller.user, sha256);
      return MakeError(
          ErrorCode::kPermissionDenied,
          "agent " + caller.user + " holds no active run that references artifact " + sha256);
    }
  }
  auto a = st_.store.GetArtifact(sha256);
  if (!a.ok()) return a.error();
  if (!a->has_value()) {
    return MakeError(ErrorCode::kNotFound, "no artifact " + sha256 + " on this server");
  }
  return std::make_pair(st_.artifacts.PathOf(sha256), **a);
}

}  // namespace mculab::server
