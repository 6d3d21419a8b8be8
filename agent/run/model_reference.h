// ModelReference: the output checksum every board must report for a model job, computed by the
// runner's own interpreter on the agent's machine, in the job sandbox and under a memory limit.
// The model is the job's: it names its own tensor sizes, so its reference run gets the
// confinement a job's runner gets (no network, no agent files, an unprivileged user) and no more
// memory than `memory_limit`, instead of running inside the agent as root.
//
// The program (mculab-model-reference, built beside mculab-agent) reads the blob from the file it
// is given and prints the CRC-32 in decimal; any failure is its exit status and its stderr.
//
// Thread-safety: Checksum() may be called from several threads at once (one process each).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <span>

#include "agent/io/sandbox.h"
#include "common/result.h"

namespace mculab::agent {

struct ModelReferenceOptions {
  std::filesystem::path program;  // mculab-model-reference
  Sandbox sandbox = Sandbox::None();
  std::uint64_t memory_limit = 512ull << 20;  // address space of the reference run (RLIMIT_AS)
  std::chrono::milliseconds timeout{60'000};
};

class ModelReference {
 public:
  explicit ModelReference(ModelReferenceOptions options) : options_(std::move(options)) {}

  // kInvalidArgument with the interpreter's words for a model it refuses; kResourceExhausted
  // naming the limit when the run needs more memory than it may have; kDeadlineExceeded when it
  // runs past the timeout (each the model's doing); kFailedPrecondition when the program cannot be
  // started, kInternal when the agent cannot make the run's folder (the agent's own trouble).
  Result<std::uint32_t> Checksum(std::span<const std::uint8_t> blob, std::uint32_t seed) const;

  const ModelReferenceOptions& options() const { return options_; }

 private:
  ModelReferenceOptions options_;
};

// mculab-model-reference beside the running program ("" when it is not there).
std::filesystem::path DefaultModelReferenceProgram();

}  // namespace mculab::agent
