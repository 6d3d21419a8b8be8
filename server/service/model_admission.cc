#include "server/service/model_admission.h"

#include <fmt/format.h>

#include <fstream>

#include "server/service/artifacts.h"
#include "server/service/custom_firmware.h"
#include "server/service/lab.h"

namespace mculab::server {

Status ValidateModelRequest(const SubmitRequest& r) {
  auto invalid = [](std::string m) { return MakeError(ErrorCode::kInvalidArgument, std::move(m)); };
  if (!r.firmware_artifact.empty()) {
    return invalid("a model job runs on the lab's own runner; drop the custom runner (--firmware)");
  }
  if (r.blob_artifact.size() != 64 ||
      r.blob_artifact.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return invalid(
        "a model job needs its model: blob_artifact must be the SHA-256 (lowercase "
        "hex) of the uploaded model, got '" +
        r.blob_artifact + "'");
  }
  if (r.model_name.size() > kMaxModelNameBytes) {
    return invalid(fmt::format("the model's name is {} bytes; at most {} are kept: rename the file",
                               r.model_name.size(), kMaxModelNameBytes));
  }
  for (unsigned char c : r.model_name) {
    if (c < 0x20 || c == 0x7f || c == '/') {
      return invalid(
          "the model's name must be a file name without '/' or control characters (it names the "
          "model's series), got '" +
          r.model_name + "'");
    }
  }
  if (r.cases.size() > 1) return invalid("a model job has one case");
  for (const CaseSpec& c : r.cases) {
    if (!c.params.empty()) return invalid("a model job's case has no parameters");
  }
  return {};
}

Result<ModelInspection> AdmitModelFile(const std::filesystem::path& path, const std::string& name,
                                       std::uint64_t size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "model " + name +
                         " is recorded but its file is missing on the server; "
                         "upload it again");
  }
  std::vector<std::uint8_t> blob(size);
  in.read(reinterpret_cast<char*>(blob.data()), static_cast<std::streamsize>(size));
  if (static_cast<std::uint64_t>(in.gcount()) != size) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "model " + name + ": the stored file is shorter than recorded");
  }
  auto m = InspectModel(blob);
  if (!m) return MakeError(ErrorCode::kInvalidArgument, "model " + name + ": " + m.error().message);
  return m;
}

Result<std::shared_ptr<const ModelLayerNames>> ModelLayerCache::Get(
    const std::string& sha256, const std::filesystem::path& path) {
  {
    std::lock_guard l(mu_);
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->first != sha256) continue;
      kept_.splice(kept_.begin(), kept_, it);
      return kept_.front().second;
    }
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return MakeError(ErrorCode::kNotFound, "model " + sha256 + " is not on the server");
  auto m = AdmitModelFile(path, sha256, size);
  if (!m.ok()) return m.error();
  auto names = std::make_shared<ModelLayerNames>();
  for (const ModelLayer& layer : m->layers) names->push_back({layer.type, layer.name});
  std::lock_guard l(mu_);
  kept_.emplace_front(sha256, names);
  if (kept_.size() > kKept) kept_.pop_back();
  return std::shared_ptr<const ModelLayerNames>(names);
}

std::uint64_t ModelRamNeed(const ModelInspection& m, std::uint64_t blob_size) {
  return CustomWorkloadSize(blob_size, 1) + m.arena_bytes + m.persistent_bytes + m.tables_bytes;
}

std::uint64_t ModelArenaPlan(const ModelInspection& m) {
  return std::uint64_t{m.arena_bytes} + m.persistent_bytes;
}

Status AdmitModelOnBoards(const ModelInspection& m, std::uint64_t blob_size,
                          const std::string& name, const std::vector<const Board*>& boards,
                          std::uint64_t max_arena) {
  const std::uint64_t need = ModelRamNeed(m, blob_size);
  const std::uint64_t plan = ModelArenaPlan(m);
  std::vector<std::string> small;
  std::vector<std::string> undeclared;
  for (const Board* b : boards) {
    if (b->ram_bytes != 0 && need > b->ram_bytes) {
      small.push_back(fmt::format("{} ({} bytes)", b->name, b->ram_bytes));
    }
    if (b->ram_bytes == 0) undeclared.push_back(b->name);
  }
  if (!small.empty()) {
    return MakeError(
        ErrorCode::kFailedPrecondition,
        fmt::format("model {} needs {} bytes of RAM: the model ({} bytes in its workload) plus its "
                    "planned arena ({} bytes: {} of activations and scratch, {} persistent) and "
                    "the interpreter's tables ({} bytes); too much for board(s) it could run on: "
                    "{}",
                    name, need, CustomWorkloadSize(blob_size, 1), plan, m.arena_bytes,
                    m.persistent_bytes, m.tables_bytes, fmt::join(small, ", ")));
  }
  // A board that declares no RAM still runs the model somewhere with finite memory (and the
  // agent computes its reference output on its own host): the lab's default bound applies.
  if (!undeclared.empty() && plan > max_arena) {
    return MakeError(
        ErrorCode::kFailedPrecondition,
        fmt::format("model {} plans an arena of {} bytes ({}: {} of activations and scratch, {} "
                    "persistent), more than the {} bytes ({}) the lab allows on board(s) that "
                    "declare no RAM ({}); max_model_arena in the server config sets that bound, "
                    "ram_bytes in the agent's board configuration sets a board's own",
                    name, plan, HumanBytes(plan), m.arena_bytes, m.persistent_bytes, max_arena,
                    HumanBytes(max_arena), fmt::join(undeclared, ", ")));
  }
  return {};
}

}  // namespace mculab::server
