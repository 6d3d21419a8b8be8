// The workload a run's board gets, built from the assignment before the board starts:
//   operator benchmark  the op catalog's workload over the assignment's cases (BuildWorkload)
//   custom runner       (op "custom", firmware_sha256 set) the runner and blob from the
//                       ArtifactCache (fetched unless cached, SHA-256 verified), the blob wrapped
//                       in a custom workload of the case ids (one case, id 0, when the job names
//                       none); the board runs that runner instead of its own
//   model               (op "model") the model blob from the cache, wrapped for the board's own
//                       TFLite runner; the expected output checksum from ModelReference
// The seed is the assignment's or kDefaultSeed; the header's flags are WorkloadFlagsOf(a), except
// on a custom runner's workload.
//
// Thread-safety: PrepareWorkload may run on several board threads at once (the cache and the
// model reference are thread-safe).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "agent/boards/board.h"
#include "agent/run/run_types.h"
#include "common/result.h"
#include "common/workload_builder.h"

namespace mculab::agent {

class ArtifactCache;
class ModelReference;

inline constexpr std::uint32_t kDefaultSeed = 0x6d63756c;  // "mcul"

struct PreparedWorkload {
  std::vector<std::uint8_t> bytes;
  std::string sha256;  // of `bytes`: the run's workload_sha256
  std::uint32_t seed = 0;
  std::uint16_t op_id = 0;          // MCULAB_OP_CUSTOM for a custom runner or a model
  std::vector<WorkloadCase> cases;  // as in the workload, for the reference checksums
  std::filesystem::path firmware;   // the runner to run instead of the board's own; empty: its own
  bool custom_runner = false;       // `firmware` is the job's own (its checksums are unverified)
  bool model = false;               // the board's own model runner
  std::optional<std::uint32_t> model_checksum;  // every case's expected output (a model job)
  std::string note;                             // a model's input: given or seeded
};

// Where a custom runner's and a model's bytes come from; null: such jobs fail saying so.
struct WorkloadSources {
  ArtifactCache* artifacts = nullptr;
  const ModelReference* model_reference = nullptr;
};

// The workload of `a` for a board described by `board`. An error is the job's (a workload
// failure) unless IsInfrastructureError says it is the agent's or the server's.
Result<PreparedWorkload> PrepareWorkload(const RunAssignment& a, const BoardInfo& board,
                                         const WorkloadSources& sources);

// kUnavailable and kInternal: an artifact could not be fetched or read, the reference could not
// run. The run fails as an infrastructure failure (requeued), never blaming the job.
bool IsInfrastructureError(const Error& e);

// The workload header's flags the assignment asks for: MCULAB_WORKLOAD_REFERENCE_KERNELS when it
// says reference_kernels (`mculab submit --kernels reference`), else 0 (the runner's fastest set).
std::uint32_t WorkloadFlagsOf(const RunAssignment& a);

}  // namespace mculab::agent
