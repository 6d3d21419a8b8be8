// A small writer of TFLite flatbuffers (schema version 3, identifier "TFL3"): int8 models of the
// operators the runner's interpreter runs, with seeded weights, for tests and the quick start
// that must not depend on files outside the repository. Only the fields the interpreter reads
// are written, with the schema's field ids. Not a general flatbuffer builder: tables are laid out
// front to back (each child after its parent, so every offset points forward).
#ifndef MCULAB_TOOLS_TFLITE_WRITER_H_
#define MCULAB_TOOLS_TFLITE_WRITER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace mculab::tflite_writer {

struct Tensor {
  std::vector<int32_t> shape;
  uint8_t type = 9;           // TensorType: 9 int8, 2 int32
  std::vector<uint8_t> data;  // empty: an activation (buffer 0)
  std::vector<float> scales;  // empty: no quantization
  std::vector<int64_t> zero_points;
  int32_t quantized_dimension = 0;
  std::string name;
  bool is_variable = false;  // state an operator keeps (SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM)
};

// One scalar field of an options table.
struct Option {
  int id;
  enum Kind { kU8, kI32, kF32 } kind;
  int32_t i = 0;
  float f = 0.0f;
};

struct Operator {
  int32_t builtin = 0;  // BuiltinOperator
  std::vector<int32_t> inputs, outputs;
  uint8_t options_type = 0;  // BuiltinOptions union member; 0: none
  std::vector<Option> options;
};

struct Model {
  uint32_t version = 3;
  std::vector<Tensor> tensors;
  std::vector<Operator> operators;
  std::vector<int32_t> inputs, outputs;
  // One operator code per operator, as PyTorch's exporter writes them (its MobileNetV2 has 84),
  // instead of one per distinct builtin.
  bool code_per_operator = false;
};

std::vector<uint8_t> Serialize(const Model& m);

// A network of every operator the interpreter runs: input 1x16x16x3 int8 -> CONV_2D 3x3/2 SAME
// RELU6 (8, per-channel) -> DEPTHWISE_CONV_2D 3x3 RELU -> CONV_2D 1x1 (8) and ADD of the two ->
// MAX_POOL_2D 2x2 -> AVERAGE_POOL_2D 2x2 VALID -> RESHAPE 1x32 -> FULLY_CONNECTED 10 -> SOFTMAX
// (beta 0.05). Weights, biases and scales come from `seed` (xorshift32).
Model SampleNet(uint32_t seed);

// SampleNet with float32 input and output, as a converter writes a model whose interface is
// float: QUANTIZE float32 -> int8 first; QUANTIZE int8 -> int8 (requantizing the softmax to
// scale 1/128, zero point 0) and DEQUANTIZE -> float32 last.
Model SampleNetFloatIO(uint32_t seed);

// HARD_SWISH, RELU, RELU6 and MEAN, int8: input [1][6][6][8] (scale 0.05: about -6 to 6.6) ->
// HARD_SWISH -> RELU (requantized) -> RELU6 -> MEAN over H and W, keep_dims -> [1][1][1][8];
// and the RELU6 output's MEAN over H and W without keep_dims, in its own quantization -> [1][8]
// (a second graph output).
Model ActivationsNet();

// The same in float32: input [1][4][4][3] x 6 (MUL by a constant) -> HARD_SWISH -> MEAN over H
// and W, keep_dims -> RELU6; and LOGISTIC and TANH of the scaled input (outputs 2 and 3).
Model ActivationsNetFloat();

// The convolutions in float32, weights and biases seeded multiples of 1/128 in [-1, 1]: input
// [1][9][9][3] -> CONV_2D 3x3/2 SAME RELU (8) -> DEPTHWISE_CONV_2D 3x3 SAME, depth multiplier 2,
// dilation 2, RELU6 (16) -> CONV_2D 2x2 VALID (4) -> TRANSPOSE_CONV 3x3/2 SAME ->
// [1][8][8][3]. Every convolution has a bias: TFLite's float CONV_2D refuses one without.
Model ConvNetFloat(uint32_t seed);

// UNIDIRECTIONAL_SEQUENCE_LSTM alone, in one of TFLite Micro's three kinds: int8 activations
// (input scale 0.05 zero point 3, hidden state and output 1/128 zero point -2) with int32 biases;
// 16x8 (int16 activations, symmetric: input 2^-12, hidden state and output 2^-15) with int64
// biases; both with int8 weights (symmetric) and an int16 cell state of scale 2^-11; or float32
// throughout. `units` over `steps` x `batches` sequences of `width`, time-major
// ([steps, batches, width]) or batch-major; the cell gate's activation TANH; TFLite's 24 inputs
// without peephole, projection or layer norm. Weights and biases come from one fixed xorshift32
// stream: the same draws in every kind, the float32 ones the int8 values times their scale.
// `extra_input`, when not -1, is an optional input (peephole, projection, layer norm) given a
// constant tensor, to see it refused.
enum class LstmKind { kInt8, kInt16x8, kFloat32 };
struct LstmShape {
  bool time_major = false;
  int32_t batches = 1, steps = 2, width = 3, units = 4;
  float cell_clip = 0.0f;
};
Model LstmNet(LstmKind kind, const LstmShape& shape, int extra_input = -1);

// MobileNetV2 (Sandler et al. 2018) int8 as PyTorch's exporter writes it, with seeded weights:
// input [1][3][R][R] (NCHW) -> TRANSPOSE to NHWC -> PAD + CONV_2D 3x3/2 VALID RELU6 -> 17
// inverted residual blocks (CONV_2D 1x1 expand RELU6, DEPTHWISE_CONV_2D 3x3 RELU6 (PAD + VALID
// where the stride is 2, SAME otherwise), CONV_2D 1x1 project, ADD where the shape is kept) ->
// CONV_2D 1x1 1280 RELU6 -> MEAN over H and W -> RESHAPE -> FULLY_CONNECTED 1000 (logits).
// `alpha` the width multiplier (channels rounded to multiples of 8, as torchvision does), `r`
// the resolution (a multiple of 32). Per-channel filter scales are drawn so each layer keeps its
// activations spread over their int8 range. At r 224 and alpha 1: 3.5 M parameters, 300 M MACs,
// 71 operators, each with its own operator code.
Model MobileNetV2(uint32_t seed, int resolution = 224, float alpha = 1.0f);

// Pooling, fully connected and softmax in the types beyond int8: input [1][8][8][3] ->
// AVERAGE_POOL_2D 3x3 stride 2 SAME RELU6 -> [1][4][4][3] -> MAX_POOL_2D 2x2 stride 1 VALID ->
// [1][3][3][3] -> FULLY_CONNECTED 10 (the 4-D input as one batch of 27) -> [1][10] -> SOFTMAX
// (beta 1.5). 16x8: activations int16 symmetric (input and pools 2^-12, the fully connected
// output 2^-9, the softmax 2^-15), weights int8 of scale 1/128, int64 bias; float32: the same
// weights times 1/128. Weights and biases from `seed` (xorshift32).
enum class PoolNetKind { kFloat32, kInt16x8 };
Model PoolNet(PoolNetKind kind, uint32_t seed = 1);

// SVDF alone in float32: input [batches][5] -> SVDF (rank `rank`, 3 units, so 3 x rank filters,
// memory 4, fused `activation`) -> [batches][3]. Tensors: 0 input, 1 feature weights
// [filters][5], 2 time weights [filters][4], 3 bias [3], 4 state [batches][4 x filters]
// (variable), 5 output. Weights and biases seeded multiples of 1/128 in [-1, 1] (xorshift32).
Model SvdfNetFloat(int32_t batches = 2, int32_t rank = 2, uint8_t activation = 0,
                   uint32_t seed = 1);

}  // namespace mculab::tflite_writer

#endif  // MCULAB_TOOLS_TFLITE_WRITER_H_
