// A .tflite model job seen from the host: the runner's own interpreter (mculab/tflite.h, the same
// C code the boards run) compiled for this machine. The CLI packs the blob and prints the graph
// (`mculab models inspect`), the server admits a model job by parsing it, the agent computes the
// output checksum every board must report.
//
// Thread-safety: pure functions; each call uses its own interpreter tables on the heap.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"

namespace mculab {

// The op name of a model job (SubmitJobRequest.op); its blob_artifact is the packed model.
inline constexpr const char* kModelOp = "model";

struct ModelLayer {
  std::uint16_t index = 0;
  std::string type;  // "CONV_2D"
  std::string name;  // the output tensor's name
  std::vector<std::int32_t> input_shape, weight_shape, output_shape;
  std::string params;  // "3x3 /2 SAME RELU6", "" when the operator has none
  std::uint64_t macs = 0;
  std::uint32_t output_bytes = 0;
};

struct ModelInspection {
  std::uint32_t model_bytes = 0;
  std::uint32_t given_input_bytes = 0;  // 0: none given (the runner seeds the input)
  std::vector<std::int32_t> input_shape, output_shape;  // the graph's first input and output
  std::string input_type, output_type;                  // theirs: "int8", "int16", "float32"
  std::string model_sha256;  // of the .tflite alone (a blob may carry an input after it)
  std::uint32_t num_inputs = 1, num_outputs = 1;
  std::uint32_t input_bytes = 0, output_bytes = 0;  // every input's, every output's, added up
  std::uint32_t arena_bytes = 0;                    // planned activations
  std::uint32_t persistent_bytes = 0;               // per-channel requantization parameters
  std::uint32_t scratch_bytes = 0;
  std::uint32_t naive_bytes = 0;  // every activation apart
  std::uint64_t tables_bytes =
      0;  // the interpreter's tables (this build; a 32-bit port's are less)
  std::uint64_t macs = 0;
  std::vector<ModelLayer> layers;
};

// The operators the runner's interpreter runs, comma separated.
std::string SupportedModelOps();

// The blob a model job carries: the model alone when `input` is empty, else "MLMI" + lengths +
// model + input (mculab/tflite.h, mculab_tfl_unpack).
std::vector<std::uint8_t> PackModelBlob(std::span<const std::uint8_t> model,
                                        std::span<const std::uint8_t> input);

// Parses and plans the blob (nothing runs). kInvalidArgument naming what is wrong; for an
// operator the interpreter lacks, the message names it and lists the operators it has.
Result<ModelInspection> InspectModel(std::span<const std::uint8_t> blob);

// The CRC-32 of the outputs (concatenated in the graph's order) after one inference on this
// machine: the given input, or the input
// seeded from `seed` as the runner does. What CASE_END must report on every board.
Result<std::uint32_t> ModelReferenceChecksum(std::span<const std::uint8_t> blob,
                                             std::uint32_t seed);

// One line naming the graph, stored with a model job: "31 operators, 2,540,000 MACs, input
// 1x49x10x1 int8, output 1x12 int8".
std::string ModelSummary(const ModelInspection& m);

// `mculab models inspect`: the graph as text (one line per operator, then the plan).
std::string RenderModelInspection(const ModelInspection& m);

}  // namespace mculab
