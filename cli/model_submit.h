// `mculab submit --model FILE [--input FILE.bin]` and `mculab models inspect FILE`: the model
// (and input) read and packed into the job's blob, and the graph printed, on the client with the
// runner's own interpreter built for this machine (common/tflite_model.h). The server parses the
// blob again at admission.
// Thread-safety: pure functions over files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace mculab::cli {

// The largest model file the CLI reads (the server's artifact limit may be lower).
inline constexpr std::uint64_t kMaxModelBytes = 64ull << 20;

// The blob of a model job: the model file, with the input files' bytes concatenated (one file per
// graph input, in the graph's order) when `input_paths` is not empty. Errors name the file and what
// is wrong (missing, too large, not a model it runs, input of the wrong size).
Result<std::vector<std::uint8_t>> ReadModelBlob(const std::string& model_path,
                                                const std::vector<std::string>& input_paths);

// `mculab models inspect FILE [--input FILE.bin]... [--json]`.
Result<std::string> InspectModelFile(const std::string& model_path,
                                     const std::vector<std::string>& input_paths, bool json);

}  // namespace mculab::cli
