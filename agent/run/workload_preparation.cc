#include "agent/run/workload_preparation.h"

#include <fmt/format.h>

#include <span>

#include "agent/io/temp_dir.h"
#include "agent/run/artifact_cache.h"
#include "agent/run/model_reference.h"
#include "common/op_catalog.h"
#include "common/sha256.h"
#include "common/tflite_model.h"
#include "mculab/ops.h"
#include "mculab/tflite.h"
#include "mculab/workload.h"

namespace mculab::agent {
namespace {

// The bytes of artifact `sha256` (`what` names it in errors): kUnavailable/kInternal when the
// cache cannot get or read it.
Result<std::vector<std::uint8_t>> ReadArtifact(ArtifactCache& artifacts, const std::string& sha256,
                                               const std::string& what) {
  auto path = artifacts.Get(sha256);
  if (!path) {
    return MakeError(path.error().code,
                     "cannot get the " + what + " " + sha256 + ": " + path.error().message);
  }
  auto bytes = ReadFile(*path);
  if (!bytes) return MakeError(ErrorCode::kInternal, bytes.error().message);
  return std::vector<std::uint8_t>(bytes->begin(), bytes->end());
}

// `blob` wrapped in a custom workload of the case `ids`; `what` names the workload in errors.
Result<std::vector<std::uint8_t>> CustomWorkload(std::uint32_t seed,
                                                 const std::vector<std::int64_t>& ids,
                                                 const std::vector<std::uint8_t>& blob,
                                                 const char* what) {
  const auto n = static_cast<std::uint16_t>(ids.size());
  std::vector<std::uint8_t> out(mculab_workload_custom_blob_offset(n) + blob.size());
  const std::size_t written = mculab_workload_write_custom(out.data(), out.size(), seed, ids.data(),
                                                           n, blob.data(), blob.size());
  if (written == 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     fmt::format("cannot build the {} ({}-byte blob)", what, blob.size()));
  }
  out.resize(written);
  return out;
}

// A custom-runner assignment: the runner from the cache, the blob wrapped in a custom workload.
Status PrepareCustom(const RunAssignment& a, const BoardInfo& board, ArtifactCache* artifacts,
                     PreparedWorkload& w) {
  if (a.firmware_sha256.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "op \"custom\" without a custom runner");
  }
  if (!board.custom_runners) {
    return MakeError(ErrorCode::kFailedPrecondition, board.custom_runners_off);
  }
  if (artifacts == nullptr) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "this agent has no artifact cache, so it cannot run custom runners");
  }
  auto fw = artifacts->Get(a.firmware_sha256);
  if (!fw) {
    return MakeError(fw.error().code, "cannot get the custom runner " + a.firmware_sha256 + ": " +
                                          fw.error().message);
  }
  w.firmware = *fw;
  w.custom_runner = true;
  std::vector<std::uint8_t> blob;
  if (!a.blob_sha256.empty()) {
    auto bytes = ReadArtifact(*artifacts, a.blob_sha256, "blob");
    if (!bytes) return bytes.error();
    blob = std::move(*bytes);
  }
  std::vector<std::int64_t> ids;
  for (const RunCase& c : a.cases) {
    if (!c.params.empty()) {
      return MakeError(
          ErrorCode::kInvalidArgument,
          "case " + std::to_string(c.id) + " has parameters; a custom runner's cases are ids only");
    }
    ids.push_back(c.id);
  }
  if (ids.empty()) ids.push_back(0);
  if (ids.size() > MCULAB_MAX_CASES) {
    return MakeError(ErrorCode::kInvalidArgument, "the job has " + std::to_string(ids.size()) +
                                                      " cases; a workload holds " +
                                                      std::to_string(MCULAB_MAX_CASES));
  }
  for (std::int64_t id : ids) w.cases.push_back(WorkloadCase{id, {}});
  auto bytes = CustomWorkload(w.seed, ids, blob, "custom workload");
  if (!bytes) return bytes.error();
  w.bytes = std::move(*bytes);
  return {};
}

// Provenance of a model job's input: the file's bytes given with the model, or the pattern.
std::string ModelInputNote(const std::vector<std::uint8_t>& bytes, std::uint32_t seed) {
  mculab_tfl_blob blob;
  if (mculab_tfl_unpack(bytes.data(), bytes.size(), &blob) != 0) return {};
  if (blob.input == nullptr) {
    return fmt::format("model {} bytes, input seeded (xorshift32 from seed {})", blob.model_len,
                       seed);
  }
  return fmt::format("model {} bytes, input given ({} bytes, SHA-256 {})", blob.model_len,
                     blob.input_len,
                     Sha256Hex(std::span<const std::uint8_t>(blob.input, blob.input_len)));
}

// A model job: the blob (model, or model + input) from the cache, wrapped in a custom workload for
// the board's own TFLite runner; the output checksum of the same interpreter on this host.
Status PrepareModel(const RunAssignment& a, const BoardInfo& board, const WorkloadSources& sources,
                    PreparedWorkload& w) {
  if (board.model_runner.empty()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "board " + board.name +
                         " has no model runner: set model_runner (mculab-tflite-runner-<port>) "
                         "for it in the agent's configuration");
  }
  if (a.blob_sha256.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "a model job without its model");
  }
  if (sources.artifacts == nullptr) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "this agent has no artifact cache, so it cannot fetch models");
  }
  auto blob = ReadArtifact(*sources.artifacts, a.blob_sha256, "model");
  if (!blob) return blob.error();
  if (sources.model_reference == nullptr) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "this agent cannot check a model's output (no mculab-model-reference)");
  }
  auto expected = sources.model_reference->Checksum(*blob, w.seed);
  if (!expected) {
    // What the model made its reference run do fails the job; the agent's own trouble is infra.
    return MakeError(expected.error().code == ErrorCode::kInternal ? ErrorCode::kInternal
                                                                   : ErrorCode::kInvalidArgument,
                     expected.error().message);
  }
  w.model = true;
  w.model_checksum = *expected;
  w.firmware = board.model_runner;
  const std::vector<std::int64_t> ids = {a.cases.empty() ? 0 : a.cases[0].id};
  w.cases.push_back(WorkloadCase{ids[0], {}});
  auto bytes = CustomWorkload(w.seed, ids, *blob, "model's workload");
  if (!bytes) return bytes.error();
  w.bytes = std::move(*bytes);
  w.note = ModelInputNote(*blob, w.seed);
  return {};
}

// An operator benchmark: the op catalog's workload over the cases. Every error is the job's.
Status PrepareOperator(const RunAssignment& a, PreparedWorkload& w) {
  const OpInfo* op = FindOp(a.op);
  if (op == nullptr) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "unknown op \"" + a.op + "\" (known: " + OpNames() + ")");
  }
  if (a.cases.empty()) return MakeError(ErrorCode::kInvalidArgument, "the job has no cases");
  for (const RunCase& c : a.cases) {
    WorkloadCase wc{c.id, c.params};
    if (auto s = ValidateCaseParams(*op, wc.params); !s) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "case " + std::to_string(c.id) + ": " + s.error().message);
    }
    w.cases.push_back(std::move(wc));
  }
  w.op_id = op->id;
  auto bytes = BuildWorkload(op->id, w.cases, w.seed);
  if (!bytes) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "cannot build the workload: " + bytes.error().message);
  }
  w.bytes = std::move(*bytes);
  return {};
}

}  // namespace

bool IsInfrastructureError(const Error& e) {
  return e.code == ErrorCode::kUnavailable || e.code == ErrorCode::kInternal;
}

std::uint32_t WorkloadFlagsOf(const RunAssignment& a) {
  return a.reference_kernels ? MCULAB_WORKLOAD_REFERENCE_KERNELS : 0u;
}

Result<PreparedWorkload> PrepareWorkload(const RunAssignment& a, const BoardInfo& board,
                                         const WorkloadSources& sources) {
  if (a.iterations == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "iterations must be at least 1");
  }
  PreparedWorkload w;
  w.seed = a.seed != 0 ? a.seed : kDefaultSeed;
  w.op_id = MCULAB_OP_CUSTOM;
  const bool model = a.op == kModelOp;
  const bool custom = !model && (!a.firmware_sha256.empty() || a.op == "custom");
  Status s = model    ? PrepareModel(a, board, sources, w)
             : custom ? PrepareCustom(a, board, sources.artifacts, w)
                      : PrepareOperator(a, w);
  if (!s) return s.error();
  if (!custom) SetWorkloadFlags(w.bytes, WorkloadFlagsOf(a));
  w.sha256 = Sha256Hex(std::span<const std::uint8_t>(w.bytes));
  return w;
}

}  // namespace mculab::agent
