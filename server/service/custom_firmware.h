// Custom runners ("bring your own runtime", docs/writing-a-runner.md): what the Lab checks when a
// job carries an uploaded runner (`mculab submit --firmware runner.elf [--blob model.bin]`).
//
// - ValidateCustomRequest (pure): op is "custom" or empty, cases carry ids only (none: one case,
//   id 0), hashes are lowercase hex, a blob needs a firmware.
// - FindCustomFiles: the submitter uploaded the artifacts (or an admin shared them).
// - AdmitCustomFirmware: the firmware is an ELF for the architecture
//   of the boards that could run the job (a board's `cpu` tag: cortex-m* -> ARM 32-bit; a "host"
//   board without one: the server's machine), and the custom workload (header + case ids + blob)
//   fits each such board's RAM when the board declares it.
// Thread-safety: pure functions over their arguments; AdmitCustomFirmware reads files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "server/domain/board.h"
#include "server/domain/job.h"
#include "server/domain/run.h"

namespace mculab::server {

class JobStore;

struct SubmitRequest;
class ArtifactStore;

inline constexpr const char* kCustomOp = "custom";

// Bytes of the custom workload the agent builds around a blob of blob_size for num_cases cases.
std::uint64_t CustomWorkloadSize(std::uint64_t blob_size, std::size_t num_cases);

// The architecture of a board ("arm32", "x86_64", ...), empty when the lab cannot tell.
std::string BoardArch(const Board& board);

struct CustomFirmwareFiles {
  Artifact firmware;  // from the store
  std::filesystem::path firmware_path;
  std::optional<Artifact> blob;  // when the job has one
};

// The request's own consistency (no store, no boards).
Status ValidateCustomRequest(const SubmitRequest& r);

// Looks the artifacts up: both must have been uploaded by `user` (the submitter) or shared.
Result<CustomFirmwareFiles> FindCustomFiles(JobStore& store, const ArtifactStore& artifacts,
                                            const SubmitRequest& r, const std::string& user);

// Whether some board the job could run on takes custom runners (its agent's
// allow_custom_runners): refused naming the board or kind and what to change when every one says
// no. Boards whose agent did not say are given the benefit of the doubt (the run checks again).
Status AdmitCustomRunners(const std::vector<const Board*>& boards, const std::string& where);

// Checks the firmware file and the blob against the boards that could run the job (all boards of
// the kind, or the one board named). Errors say what was wrong and what to do.
Status AdmitCustomFirmware(const CustomFirmwareFiles& files,
                           const std::vector<const Board*>& boards, std::size_t num_cases,
                           const std::string& where);

}  // namespace mculab::server
