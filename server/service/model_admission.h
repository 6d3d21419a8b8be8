// Model jobs (`mculab submit --model FILE [--input FILE.bin]`, op "model"): what the Lab checks
// before queueing one. The blob (the model, or model + input: mculab/tflite.h) was uploaded as an
// artifact (content-addressed, size-limited, the user's quota); admission parses it with the
// runner's own interpreter compiled for this machine (common/tflite_model.h): a corrupt model or
// an operator the runner lacks is refused here, naming it, and a board whose RAM cannot hold the
// workload (the model) plus the planned arena and the interpreter's tables is refused, giving
// both sizes; on a board that declares no RAM, an arena over the lab's max_model_arena is.
// Thread-safety: pure functions over their arguments; AdmitModelFile reads a file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "common/tflite_model.h"
#include "server/domain/board.h"

namespace mculab::server {

struct SubmitRequest;

// The longest model name a job keeps (a file name; bytes of UTF-8).
inline constexpr std::size_t kMaxModelNameBytes = 255;

// The request's own consistency: a blob, no runner, cases are ids only, a model name that is a
// file name.
Status ValidateModelRequest(const SubmitRequest& r);

// Parses the uploaded blob at `path` (`name`: how the user called it, for messages).
Result<ModelInspection> AdmitModelFile(const std::filesystem::path& path, const std::string& name,
                                       std::uint64_t size);

// RAM a board needs for the job: the workload around the blob, the planned arena (activations,
// persistent, scratch) and the interpreter's tables.
std::uint64_t ModelRamNeed(const ModelInspection& m, std::uint64_t blob_size);

// The arena a model plans: activations, persistent and scratch bytes.
std::uint64_t ModelArenaPlan(const ModelInspection& m);

// Refuses when a board that could run the job (the scheduler may pick any) declares less RAM
// than the model needs, or when one declares none and the planned arena exceeds `max_arena` (the
// server's max_model_arena); both sizes are in the message.
Status AdmitModelOnBoards(const ModelInspection& m, std::uint64_t blob_size,
                          const std::string& name, const std::vector<const Board*>& boards,
                          std::uint64_t max_arena);

// A model's operators by index, type and whole output name ("DEPTHWISE_CONV_2D",
// "functional_1/activation/Relu;functional_1/..."): what a model job's per-operator rows are
// named with, since a runner sends names cut to 31 characters and types to 15.
struct ModelLayerName {
  std::string type;
  std::string name;
};
using ModelLayerNames = std::vector<ModelLayerName>;

// The layer names of recently read models, by the blob's SHA-256 (content-addressed, so an entry
// never goes stale). Thread-safety: safe from any thread.
class ModelLayerCache {
 public:
  static constexpr std::size_t kKept = 32;
  // The blob's layers, read from `path` once; an error when it cannot be read or parsed.
  Result<std::shared_ptr<const ModelLayerNames>> Get(const std::string& sha256,
                                                     const std::filesystem::path& path);

 private:
  std::mutex mu_;
  std::list<std::pair<std::string, std::shared_ptr<const ModelLayerNames>>> kept_;  // newest first
};

}  // namespace mculab::server
