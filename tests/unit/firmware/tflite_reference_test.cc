// The runner's int8 interpreter against TFLite's own (tools/tflite_reference: npm
// @tensorflow/tfjs-tflite, TFLite compiled to wasm with XNNPACK, in headless Chromium), layer by
// layer on the writer's sample nets (int8, and float32 in and out around QUANTIZE and DEQUANTIZE),
// its pooling nets (float32 and 16x8: PoolNetFloat32WithinFloatRoundingAnd16x8Equal),
// two small nets of HARD_SWISH, RELU, RELU6 and MEAN over H and W (int8, and float32 after a MUL),
// a float32 net of CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV,
// the writer's float32 SVDF in each fused activation (SvdfFloat32WithinFloatRoundingOfTflite),
// the writer's MobileNetV2 at 96x96 and width 0.35 (TRANSPOSE, PAD, ADD, MEAN, RESHAPE besides
// the convolutions) and the MLPerf Tiny models: each operator runs alone in TFLite
// on exactly the input it had in our interpreter, so a difference belongs to that layer and not to
// an earlier one. The rule: equal, or 1 apart where XNNPACK requantizes in float (conv, depthwise,
// fully connected, add, pooling) or rounds ties to even (QUANTIZE from float32, where TFLite's
// reference rounds them away from zero); DEQUANTIZE's floats to 1 part in 10^6; SOFTMAX within 2,
// where TFLite's interpreter uses a lookup table of exp and our interpreter (like TFLite Micro)
// gemmlowp's fixed-point exp; int8 HARD_SWISH, RELU and RELU6 equal; MEAN within 1 (TFLite
// Micro's QuantizedMeanOrSum, which our interpreter follows, rounds twice: a sum of 1853 steps
// over 36 gives 52 where TFLite gives 51); float32 outputs, as DEQUANTIZE's, to 1 part in 10^6,
// the float32 convolutions' to 1 part in 10^5 (XNNPACK sums their products in another order).
// Label "integration": it starts Chromium; it skips, saying why, without node, Chromium, the npm
// packages or the models.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mculab/tflite.h"
#include "tflite_writer.h"

namespace {

struct Layer {
  int index;
  std::string type;
  nlohmann::json inputs =
      nlohmann::json::array();  // the activation inputs, as the operator read them
  std::vector<double> output;
  bool float_output = false;
};

// A tensor's values: int8, int16, or float32.
nlohmann::json Values(const mculab_tfl_tensor& t) {
  nlohmann::json v = nlohmann::json::array();
  if (t.type == MCULAB_TFL_FLOAT32) {
    for (uint32_t i = 0; i < t.elements; ++i) {
      float f;
      std::memcpy(&f, t.data + 4 * i, 4);
      v.push_back(f);
    }
  } else if (t.type == MCULAB_TFL_INT16) {
    for (uint32_t i = 0; i < t.elements; ++i) {
      v.push_back(static_cast<int16_t>(t.data[2 * i] | (t.data[2 * i + 1] << 8)));
    }
  } else {
    for (uint32_t i = 0; i < t.bytes; ++i) v.push_back(static_cast<int8_t>(t.data[i]));
  }
  return v;
}

std::vector<Layer>* g_layers;
mculab_tfl_model* g_model;

void OnBegin(uint16_t index, const char* type, const char*) {
  Layer l{index, type, nlohmann::json::array(), {}, false};
  const mculab_tfl_op& op = g_model->ops[index];
  for (unsigned k = 0; k < op.num_inputs; ++k) {
    if (op.inputs[k] < 0) continue;
    const mculab_tfl_tensor& t = g_model->tensors[op.inputs[k]];
    if (t.is_const) continue;
    l.inputs.push_back(Values(t));
  }
  g_layers->push_back(std::move(l));
}

void OnEnd() {
  Layer& l = g_layers->back();
  const mculab_tfl_tensor& t = g_model->tensors[g_model->ops[l.index].output];
  l.output = Values(t).get<std::vector<double>>();
  l.float_output = t.type == MCULAB_TFL_FLOAT32;
}

// Prepares the loaded `m` in `arena`, seeds its input (seed 1) and runs it, each operator's
// inputs and output recorded in `layers`.
::testing::AssertionResult RunRecordingLayers(mculab_tfl_model* m, std::vector<uint8_t>* arena,
                                              std::vector<Layer>* layers) {
  if (mculab_tfl_prepare(m, arena->data(), arena->size()) != MCULAB_TFL_OK) {
    return ::testing::AssertionFailure() << "prepare: " << m->error;
  }
  mculab_tfl_seed_input(m, 1);
  g_layers = layers;
  g_model = m;
  const mculab_tfl_hooks hooks = {OnBegin, OnEnd};
  if (mculab_tfl_invoke(m, &hooks) != MCULAB_TFL_OK) {
    return ::testing::AssertionFailure() << "invoke: " << m->error;
  }
  return ::testing::AssertionSuccess();
}

std::string Missing() {
  for (const std::string& path :
       {std::string(MCULAB_NODE), std::string(MCULAB_CHROMIUM),
        std::string(MCULAB_TFLITE_REFERENCE_DIR) + "/node_modules/@tensorflow/tfjs-tflite"}) {
    if (path.empty() || access(path.c_str(), R_OK) != 0) return path;
  }
  return {};
}

TEST(TfliteAgainstTflite, EveryLayerOfTheSampleNetAndTheMlperfTinyModelsWithinTheRule) {
  if (const std::string m = Missing(); !m.empty() || std::string(MCULAB_NODE).empty()) {
    GTEST_SKIP() << "'" << m << "' is absent (node, Chromium, or `npm ci` in "
                 << MCULAB_TFLITE_REFERENCE_DIR << ")";
  }
  // The writer's sample nets (every operator, always there), then the shared models.
  const std::string sample = ::testing::TempDir() + "tflite-reference-sample.tflite";
  const std::string sample_float = ::testing::TempDir() + "tflite-reference-sample-float.tflite";
  const std::string activations = ::testing::TempDir() + "tflite-reference-activations.tflite";
  const std::string activations_float =
      ::testing::TempDir() + "tflite-reference-activations-float.tflite";
  const std::string conv_float = ::testing::TempDir() + "tflite-reference-conv-float.tflite";
  const std::string mobilenet = ::testing::TempDir() + "tflite-reference-mobilenet-v2-96.tflite";
  for (const auto& [path, model] :
       {std::pair{sample, mculab::tflite_writer::SampleNet(1)},
        std::pair{sample_float, mculab::tflite_writer::SampleNetFloatIO(1)},
        std::pair{activations, mculab::tflite_writer::ActivationsNet()},
        std::pair{activations_float, mculab::tflite_writer::ActivationsNetFloat()},
        std::pair{conv_float, mculab::tflite_writer::ConvNetFloat(1)},
        std::pair{mobilenet, mculab::tflite_writer::MobileNetV2(1, 96, 0.35f)}}) {
    const std::vector<uint8_t> b = mculab::tflite_writer::Serialize(model);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  int models_run = 0;
  for (const char* name : {"sample", "sample_float", "activations", "activations_float",
                           "conv_float", "mobilenet_v2_96", "kws_ref_model.tflite",
                           "ic_resnet8_int8.tflite", "vww_96_int8.tflite", "ad01_int8.tflite"}) {
    const std::string file = name;
    const std::string path = file == "sample"            ? sample
                             : file == "sample_float"    ? sample_float
                             : file == "activations"     ? activations
                             : file == "mobilenet_v2_96" ? mobilenet
                             : file == "conv_float"      ? conv_float
                             : file == "activations_float"
                                 ? activations_float
                                 : std::string(MCULAB_SHARED_MODELS_DIR) + "/mlperf-tiny/" + file;
    std::ifstream f(path, std::ios::binary);
    if (!f) continue;
    const std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(f), {});
    SCOPED_TRACE(file);
    auto m = std::make_unique<mculab_tfl_model>();
    ASSERT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK) << m->error;
    std::vector<uint8_t> arena(8u << 20);
    ASSERT_EQ(mculab_tfl_prepare(m.get(), arena.data(), arena.size()), MCULAB_TFL_OK);
    mculab_tfl_seed_input(m.get(), 1);
    std::vector<Layer> layers;
    g_layers = &layers;
    g_model = m.get();
    const mculab_tfl_hooks hooks = {OnBegin, OnEnd};
    ASSERT_EQ(mculab_tfl_invoke(m.get(), &hooks), MCULAB_TFL_OK);

    nlohmann::json jobs = nlohmann::json::array();
    for (const Layer& l : layers)
      jobs.push_back({{"model", path}, {"op", l.index}, {"inputs", l.inputs}});
    const std::string jobs_file = ::testing::TempDir() + "tflite-reference-" + file + ".json";
    std::ofstream(jobs_file) << nlohmann::json{{"jobs", jobs}}.dump();
    const std::string cmd = std::string(MCULAB_NODE) + " " + MCULAB_TFLITE_REFERENCE_DIR +
                            "/run.mjs --jobs " + jobs_file;
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[1 << 16];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ASSERT_EQ(pclose(p), 0) << cmd;
    size_t at = 0;
    for (const Layer& l : layers) {
      const size_t end = out.find('\n', at);
      ASSERT_NE(end, std::string::npos) << "no TFLite result for operator " << l.index;
      const nlohmann::json r = nlohmann::json::parse(out.substr(at, end - at));
      at = end + 1;
      ASSERT_EQ(r["op"].get<int>(), l.index);
      const std::vector<double> theirs = r["output"].get<std::vector<double>>();
      ASSERT_EQ(theirs.size(), l.output.size()) << "operator " << l.index;
      if (l.float_output) {
        // DEQUANTIZE: scale x (q - zero point) in float on both sides: equal to 1 part in 10^6.
        // The float32 convolutions' sums: XNNPACK adds their products in another order than
        // TFLite's reference (which ours follows), so to float rounding of a sum of up to 64
        // products: 1 part in 10^5.
        const bool sum =
            l.type == "CONV_2D" || l.type == "DEPTHWISE_CONV_2D" || l.type == "TRANSPOSE_CONV";
        double max_diff = 0.0;
        for (size_t i = 0; i < theirs.size(); ++i) {
          max_diff = std::max(max_diff, std::abs(theirs[i] - l.output[i]));
          EXPECT_NEAR(theirs[i], l.output[i],
                      (sum ? 1e-5 : 1e-6) * std::max(1.0, std::abs(theirs[i])))
              << file << " operator " << l.index << " (" << l.type << ") value " << i;
        }
        std::printf("%s op %2d %-17s %6zu float values, max difference %.3g\n", file.c_str(),
                    l.index, l.type.c_str(), theirs.size(), max_diff);
        continue;
      }
      int max_diff = 0, differ = 0;
      for (size_t i = 0; i < theirs.size(); ++i) {
        const int d = static_cast<int>(std::abs(theirs[i] - l.output[i]));
        max_diff = std::max(max_diff, d);
        differ += d != 0;
      }
      const bool softmax = l.type == "SOFTMAX";
      // TFLite gives these bit for bit: their rule is equality. (MEAN is 1 apart at most: our
      // interpreter rounds twice as TFLite Micro's QuantizedMeanOrSum does, TFLite once.)
      const bool exact = l.type == "HARD_SWISH" || l.type == "RELU" || l.type == "RELU6";
      const int allowed = softmax ? 2 : exact ? 0 : 1;
      EXPECT_LE(max_diff, allowed)
          << file << " operator " << l.index << " (" << l.type << "): " << differ << " of "
          << theirs.size() << " values differ, by up to " << max_diff
          << (softmax ? " (TFLite's exp lookup table against gemmlowp's fixed-point exp)"
                      : " (XNNPACK's float requantization against gemmlowp's)");
      std::printf("%s op %2d %-17s %6zu values, %5d differ, max %d\n", file.c_str(), l.index,
                  l.type.c_str(), theirs.size(), differ, max_diff);
    }
    ++models_run;
  }
  if (models_run == 6) {
    GTEST_SKIP() << "only the sample nets ran: " << MCULAB_SHARED_MODELS_DIR
                 << " holds none of the MLPerf Tiny models";
  }
}

// One JSON line per model or job from tools/tflite_reference/run.mjs with `args`.
std::vector<nlohmann::json> RunReference(const std::string& args) {
  const std::string cmd =
      std::string(MCULAB_NODE) + " " + MCULAB_TFLITE_REFERENCE_DIR + "/run.mjs " + args;
  FILE* p = popen(cmd.c_str(), "r");
  std::vector<nlohmann::json> lines;
  if (p == nullptr) return lines;
  std::string out;
  char buf[1 << 16];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << cmd;
  for (size_t at = 0, end; (end = out.find('\n', at)) != std::string::npos; at = end + 1) {
    lines.push_back(nlohmann::json::parse(out.substr(at, end - at)));
  }
  return lines;
}

int MaxDifference(const std::vector<double>& a, const std::vector<double>& b, int* differ) {
  int max_diff = 0;
  *differ = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const int d = static_cast<int>(std::abs(a[i] - b[i]));
    max_diff = std::max(max_diff, d);
    *differ += d != 0;
  }
  return max_diff;
}

// LOGISTIC and TANH over every int8 value (gemmlowp's fixed point in TFLite Micro; measured equal
// to TFLite's interpreter) and over int16 (scales 0.0003, rescaled by a multiplier, and 2^-12, a
// power of two read directly), every 7th int16 value. Our interpreter runs TFLite Micro's kernels
// for both (logistic.cc and tanh.cc: reference_integer_ops::Logistic and Tanh, the sigmoid table
// interpolated). TFLite's interpreter (kernels/activations.cc) runs that same reference kernel
// only when the input needs a multiplier (`kernel_type == kReference || input_multiplier > 0`):
// there the two are equal, value for value. For a power-of-two scale it runs optimized_ops'
// Logistic and Tanh, gemmlowp's int16 fixed-point functions, which are less precise than the
// table (TfliteOps.*Int16Follows* holds ours within 1.5 and 3 steps of the real functions):
// measured up to 6 (LOGISTIC) and 11 (TANH) steps of 2^-15 apart; TFLite Micro is the runtime
// our users deploy.
TEST(TfliteAgainstTflite, LogisticAndTanhEqualWhereTfliteRunsTheReferenceKernel) {
  if (const std::string m = Missing(); !m.empty() || std::string(MCULAB_NODE).empty()) {
    GTEST_SKIP() << "'" << m << "' is absent (node, Chromium, or `npm ci` in "
                 << MCULAB_TFLITE_REFERENCE_DIR << ")";
  }
  namespace tw = mculab::tflite_writer;
  nlohmann::json jobs = nlohmann::json::array();
  std::vector<std::vector<double>> ours;
  std::vector<std::string> names;
  // One operator over [1, values] of `type`, written for TFLite and run in our interpreter.
  auto add = [&](const std::string& name, int32_t builtin, uint8_t type, float in_scale,
                 int64_t in_zp, float out_scale, int64_t out_zp, const std::vector<int>& values) {
    const int32_t n = static_cast<int32_t>(values.size());
    tw::Model m;
    m.tensors = {tw::Tensor{{1, n}, type, {}, {in_scale}, {in_zp}, 0, "in"},
                 tw::Tensor{{1, n}, type, {}, {out_scale}, {out_zp}, 0, "out"}};
    m.operators = {tw::Operator{builtin, {0}, {1}, 0, {}}};
    m.inputs = {0};
    m.outputs = {1};
    const std::vector<uint8_t> bytes = tw::Serialize(m);
    const std::string path = ::testing::TempDir() + "tflite-reference-" + name + ".tflite";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    auto model = std::make_unique<mculab_tfl_model>();
    std::vector<uint8_t> arena(1u << 20);
    ASSERT_EQ(mculab_tfl_load(model.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK);
    ASSERT_EQ(mculab_tfl_prepare(model.get(), arena.data(), arena.size()), MCULAB_TFL_OK)
        << model->error;
    const size_t size = type == 7 ? 2 : 1;
    std::vector<uint8_t> given;
    for (int v : values) {
      for (size_t k = 0; k < size; ++k) given.push_back(static_cast<uint8_t>(v >> (8 * k)));
    }
    ASSERT_EQ(mculab_tfl_set_input(model.get(), given.data(), static_cast<uint32_t>(given.size())),
              MCULAB_TFL_OK);
    ASSERT_EQ(mculab_tfl_invoke(model.get(), nullptr), MCULAB_TFL_OK) << model->error;
    const auto* out = reinterpret_cast<const uint8_t*>(mculab_tfl_output(model.get(), nullptr));
    std::vector<double> got;
    for (size_t i = 0; i < values.size(); ++i) {
      got.push_back(size == 2 ? static_cast<int16_t>(out[2 * i] | (out[2 * i + 1] << 8))
                              : static_cast<int8_t>(out[i]));
    }
    ours.push_back(got);
    names.push_back(name);
    jobs.push_back({{"model", path}, {"op", 0}, {"inputs", {values}}});
  };
  std::vector<int> int16_values, int8_values;
  for (int q = -32768; q <= 32767; q += 7) int16_values.push_back(q);
  for (int q = -128; q < 128; ++q) int8_values.push_back(q);
  for (int32_t builtin : {14, 28}) {
    const std::string op = builtin == 14 ? "logistic" : "tanh";
    add(op + "-int16-pot", builtin, 7, 1.0f / 4096.0f, 0, 1.0f / 32768.0f, 0, int16_values);
    add(op + "-int16-0.0003", builtin, 7, 0.0003f, 0, 1.0f / 32768.0f, 0, int16_values);
    // int8: input scale 0.1 and zero point -20, the output as TFLite quantizes it.
    add(op + "-int8", builtin, 9, 0.1f, -20, builtin == 14 ? 1.0f / 256.0f : 1.0f / 128.0f,
        builtin == 14 ? -128 : 0, int8_values);
  }
  const std::string jobs_file = ::testing::TempDir() + "tflite-reference-sigmoid-activations.json";
  std::ofstream(jobs_file) << nlohmann::json{{"jobs", jobs}}.dump();
  const std::vector<nlohmann::json> results = RunReference("--jobs " + jobs_file);
  ASSERT_EQ(results.size(), ours.size());
  for (size_t k = 0; k < ours.size(); ++k) {
    const std::vector<double> theirs = results[k]["output"].get<std::vector<double>>();
    ASSERT_EQ(theirs.size(), ours[k].size()) << names[k];
    int differ = 0;
    const int max_diff = MaxDifference(theirs, ours[k], &differ);
    const bool int8 = names[k].find("int8") != std::string::npos;
    const bool reference_kernel = names[k].find("0.0003") != std::string::npos;
    EXPECT_LE(max_diff, int8 || reference_kernel ? 0 : 12)
        << names[k] << ": " << differ << " values differ"
        << (int8 || reference_kernel ? "" : " (TFLite's gemmlowp int16 logistic and tanh)");
    std::printf("%-24s %6zu values, %5d differ, max %d\n", names[k].c_str(), theirs.size(), differ,
                max_diff);
  }
}

// TFLite Micro's trained_lstm_int8 (UNIDIRECTIONAL_SEQUENCE_LSTM of 20 units over 28 steps,
// RESHAPE, FULLY_CONNECTED, SOFTMAX) on the seeded input: the LSTM's output (tensor 23, every
// step's hidden state) within 1 of TFLite's interpreter and the model's output equal. Our LSTM
// is TFLite Micro's (lstm_eval.h: each gate's sigmoid and tanh are reference_integer_ops::Logistic
// and Tanh, the sigmoid table interpolated); TFLite's interpreter runs its own integer LSTM
// (kernels/lstm_eval.cc, EvalInteger8x8_16) whose gates go through
// tensor_utils::PortableApplySigmoid and PortableApplyTanh, gemmlowp's fixed-point logistic and
// tanh on int16: the two runtimes round a gate differently by one step now and then, and TFLite
// Micro is the runtime our users deploy. Measured: 20 of the 560 hidden values differ, by 1.
TEST(TfliteAgainstTflite, TrainedLstmWithinOneOfTfliteAndItsOutputEqual) {
  if (const std::string m = Missing(); !m.empty() || std::string(MCULAB_NODE).empty()) {
    GTEST_SKIP() << "'" << m << "' is absent (node, Chromium, or `npm ci` in "
                 << MCULAB_TFLITE_REFERENCE_DIR << ")";
  }
  const std::string path =
      std::string(MCULAB_SHARED_MODELS_DIR) + "/tflite-micro/trained_lstm_int8.tflite";
  std::ifstream f(path, std::ios::binary);
  if (!f) GTEST_SKIP() << path << " is absent";
  const std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(f), {});
  auto m = std::make_unique<mculab_tfl_model>();
  ASSERT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK) << m->error;
  ASSERT_EQ(m->ops[0].builtin, MCULAB_TFL_UNIDIRECTIONAL_SEQUENCE_LSTM);
  ASSERT_EQ(m->ops[0].output, 23);
  std::vector<uint8_t> arena(8u << 20);
  std::vector<Layer> layers;
  ASSERT_TRUE(RunRecordingLayers(m.get(), &arena, &layers));
  const std::vector<double> lstm = layers.at(0).output;
  const std::vector<double> output = layers.back().output;

  const std::vector<nlohmann::json> results = RunReference(path + "@23 " + path);
  ASSERT_EQ(results.size(), 2u);
  const std::vector<double> their_lstm = results[0]["output"].get<std::vector<double>>();
  const std::vector<double> their_output = results[1]["output"].get<std::vector<double>>();
  ASSERT_EQ(their_lstm.size(), lstm.size());
  int differ = 0;
  const int max_diff = MaxDifference(their_lstm, lstm, &differ);
  EXPECT_LE(max_diff, 1) << differ << " of " << lstm.size() << " hidden values differ";
  std::printf("trained_lstm_int8 LSTM %zu values, %d differ, max %d\n", lstm.size(), differ,
              max_diff);
  EXPECT_EQ(their_output, output);
}

}  // namespace

namespace {

// The writer's float32 UNIDIRECTIONAL_SEQUENCE_LSTM (2 batches of 5 steps of 6 values, 4 units,
// batch-major, the cell clipped at 3) on the seeded input in both interpreters: the whole
// sequence of hidden states.
struct LstmRun {
  std::vector<double> ours, theirs;
};

LstmRun RunFloatLstmBoth() {
  namespace tw = mculab::tflite_writer;
  LstmRun run;
  const tw::Model model =
      tw::LstmNet(tw::LstmKind::kFloat32, tw::LstmShape{false, 2, 5, 6, 4, 3.0f});
  const std::vector<uint8_t> bytes = tw::Serialize(model);
  const std::string path = ::testing::TempDir() + "tflite-reference-lstm-float32.tflite";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  auto m = std::make_unique<mculab_tfl_model>();
  std::vector<uint8_t> arena(1u << 20);
  EXPECT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK) << m->error;
  EXPECT_EQ(mculab_tfl_prepare(m.get(), arena.data(), arena.size()), MCULAB_TFL_OK) << m->error;
  if (!m->prepared) return run;
  mculab_tfl_seed_input(m.get(), 1);
  const nlohmann::json given = Values(m->tensors[m->inputs[0]]);
  EXPECT_EQ(mculab_tfl_invoke(m.get(), nullptr), MCULAB_TFL_OK) << m->error;
  run.ours = Values(m->tensors[m->outputs[0]]).get<std::vector<double>>();
  const std::string jobs_file = ::testing::TempDir() + "tflite-reference-lstm-float32.json";
  std::ofstream(jobs_file)
      << nlohmann::json{{"jobs", {{{"model", path}, {"op", 0}, {"inputs", {given}}}}}}.dump();
  const std::vector<nlohmann::json> results = RunReference("--jobs " + jobs_file);
  if (results.size() == 1) run.theirs = results[0]["output"].get<std::vector<double>>();
  return run;
}

// float32: TFLite's interpreter runs kernels/lstm_eval.cc's EvalFloat, the same equations in
// float with its own sigmoid and tanh, so the two differ by float rounding only (measured: 2.4e-7
// at most). 16x8 cannot be compared here: TFLite's interpreter (this tfjs-tflite build) takes
// only int8 as integer LSTM activations and refuses the int16 model at prepare
// ("input_gate_bias->type != kTfLiteFloat32 (INT64 != FLOAT32)"); tflite_reader_test.cc's
// TfliteOps.LstmFollowsTheLstmEquations holds it to a double-precision LSTM instead.
TEST(TfliteAgainstTflite, LstmFloat32WithinFloatRoundingOfTflite) {
  if (const std::string m = Missing(); !m.empty() || std::string(MCULAB_NODE).empty()) {
    GTEST_SKIP() << "'" << m << "' is absent (node, Chromium, or `npm ci` in "
                 << MCULAB_TFLITE_REFERENCE_DIR << ")";
  }
  const LstmRun run = RunFloatLstmBoth();
  ASSERT_EQ(run.theirs.size(), run.ours.size());
  ASSERT_EQ(run.ours.size(), 2u * 5u * 4u);
  double max_diff = 0.0;
  for (size_t i = 0; i < run.ours.size(); ++i) {
    const double d = std::abs(run.ours[i] - run.theirs[i]);
    max_diff = std::max(max_diff, d);
    EXPECT_LE(d, 1e-5 * std::max(1.0, std::abs(run.theirs[i]))) << i;
  }
  std::printf("lstm float32 %zu values, max difference %.3g\n", run.ours.size(), max_diff);
}

}  // namespace

namespace {

// Writes `model` to the temporary file `name`.tflite, runs it in ours on its seeded input recording
// each layer, then each layer alone in TFLite on the inputs it had in ours: our layers, and
// TFLite's output for each (empty when something failed, with a test failure).
struct EachLayerInBoth {
  std::vector<Layer> layers;
  std::vector<std::vector<double>> theirs;
};

EachLayerInBoth RunEachLayerInBoth(const mculab::tflite_writer::Model& model,
                                   const std::string& name) {
  EachLayerInBoth run;
  const std::vector<uint8_t> bytes = mculab::tflite_writer::Serialize(model);
  const std::string path = ::testing::TempDir() + "tflite-reference-" + name + ".tflite";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  auto m = std::make_unique<mculab_tfl_model>();
  std::vector<uint8_t> arena(1u << 20);
  if (mculab_tfl_load(m.get(), bytes.data(), bytes.size()) != MCULAB_TFL_OK) {
    ADD_FAILURE() << name << ": " << m->error;
    return run;
  }
  EXPECT_TRUE(RunRecordingLayers(m.get(), &arena, &run.layers)) << name;
  nlohmann::json jobs = nlohmann::json::array();
  for (const Layer& l : run.layers)
    jobs.push_back({{"model", path}, {"op", l.index}, {"inputs", l.inputs}});
  const std::string jobs_file = path + ".json";
  std::ofstream(jobs_file) << nlohmann::json{{"jobs", jobs}}.dump();
  for (const nlohmann::json& r : RunReference("--jobs " + jobs_file))
    run.theirs.push_back(r["output"].get<std::vector<double>>());
  EXPECT_EQ(run.theirs.size(), run.layers.size()) << name;
  return run;
}

// The writer's PoolNet in float32 and 16x8 (AVERAGE_POOL_2D SAME RELU6, MAX_POOL_2D VALID,
// FULLY_CONNECTED, SOFTMAX), each operator run alone in TFLite on the input it had in ours. 16x8:
// TFLite's interpreter runs these int16 forms in its builtin kernels (XNNPACK takes no int16):
// reference_integer_ops::AveragePool and MaxPool for int16, FullyConnected with int64 sums and
// reference_ops::SoftmaxInt16, as ours: equal. float32: XNNPACK runs the pools and the fully
// connected (its own order of sums) and TFLite's softmax calls expf: within float rounding, 1e-6
// relative.
TEST(TfliteAgainstTflite, PoolNetFloat32WithinFloatRoundingAnd16x8Equal) {
  if (const std::string m = Missing(); !m.empty() || std::string(MCULAB_NODE).empty()) {
    GTEST_SKIP() << "'" << m << "' is absent (node, Chromium, or `npm ci` in "
                 << MCULAB_TFLITE_REFERENCE_DIR << ")";
  }
  namespace tw = mculab::tflite_writer;
  for (const tw::PoolNetKind kind : {tw::PoolNetKind::kFloat32, tw::PoolNetKind::kInt16x8}) {
    const bool is_float = kind == tw::PoolNetKind::kFloat32;
    SCOPED_TRACE(is_float ? "float32" : "16x8");
    const EachLayerInBoth run =
        RunEachLayerInBoth(tw::PoolNet(kind), is_float ? "pool-net-float32" : "pool-net-16x8");
    const std::vector<Layer>& layers = run.layers;
    ASSERT_EQ(layers.size(), 4u);
    ASSERT_EQ(run.theirs.size(), layers.size());
    for (size_t k = 0; k < layers.size(); ++k) {
      const Layer& l = layers[k];
      const std::vector<double>& theirs = run.theirs[k];
      ASSERT_EQ(theirs.size(), l.output.size()) << l.type;
      double max_diff = 0.0;
      int differ = 0;
      for (size_t i = 0; i < theirs.size(); ++i) {
        const double d = std::abs(theirs[i] - l.output[i]);
        max_diff = std::max(max_diff, d);
        differ += d != 0.0;
        if (is_float) {
          EXPECT_LE(d, 1e-6 * std::max(1.0, std::abs(theirs[i]))) << l.type << " value " << i;
        } else {
          EXPECT_EQ(d, 0.0) << l.type << " value " << i;
        }
      }
      // Something was computed: not all one value.
      EXPECT_NE(*std::min_element(l.output.begin(), l.output.end()),
                *std::max_element(l.output.begin(), l.output.end()))
          << l.type;
      std::printf("pool net %s op %d %-16s %4zu values, %3d differ, max %.3g\n",
                  is_float ? "float32" : "16x8", l.index, l.type.c_str(), theirs.size(), differ,
                  max_diff);
    }
  }
}

}  // namespace

namespace {

// SOFTMAX int16 -> int16 alone over 256 rows of 9 seeded values (input scale 2^-13: -4 to 4, so
// the differences run over most of the table's [-10, 0]), in both interpreters. Ours is TFLite
// Micro's (its tables built with gen_lut<float>); TFLite's interpreter builds the same tables in
// double.
TEST(TfliteAgainstTflite, SoftmaxInt16EqualToTflite) {
  if (const std::string m = Missing(); !m.empty() || std::string(MCULAB_NODE).empty()) {
    GTEST_SKIP() << "'" << m << "' is absent (node, Chromium, or `npm ci` in "
                 << MCULAB_TFLITE_REFERENCE_DIR << ")";
  }
  namespace tw = mculab::tflite_writer;
  tw::Model model;
  model.tensors = {tw::Tensor{{256, 9}, 7, {}, {1.0f / 8192}, {0}, 0, "in"},
                   tw::Tensor{{256, 9}, 7, {}, {1.0f / 32768}, {0}, 0, "out"}};
  model.operators = {tw::Operator{25, {0}, {1}, 9, {{0, tw::Option::kF32, 0, 1.0f}}}};
  model.inputs = {0};
  model.outputs = {1};
  const EachLayerInBoth run = RunEachLayerInBoth(model, "softmax-int16");
  ASSERT_EQ(run.layers.size(), 1u);
  ASSERT_EQ(run.theirs.size(), 1u);
  const std::vector<double>& theirs = run.theirs[0];
  ASSERT_EQ(theirs.size(), run.layers[0].output.size());
  int differ = 0;
  const int max_diff = MaxDifference(theirs, run.layers[0].output, &differ);
  EXPECT_EQ(max_diff, 0) << differ << " of " << theirs.size() << " values differ";
  std::vector<double> ours = run.layers[0].output;
  std::sort(ours.begin(), ours.end());
  EXPECT_GT(std::unique(ours.begin(), ours.end()) - ours.begin(), 1000)
      << "too few distinct values";
  std::printf("softmax int16 %zu values, %d differ, max %d\n", theirs.size(), differ, max_diff);
}

}  // namespace

namespace {

// The writer's SVDF in float32 (batches 2, memory 4, rank 2, 3 units), in each fused activation,
// alone in both interpreters on the same seeded input. TFLite's interpreter runs
// kernels/svdf.cc's float path (reference_ops::EvalFloatSVDF: the matrix product through
// tensor_utils, whose order of sums may differ from TFLite Micro's reference loops, which ours
// follows): within float rounding, 1e-6 relative.
TEST(TfliteAgainstTflite, SvdfFloat32WithinFloatRoundingOfTflite) {
  if (const std::string m = Missing(); !m.empty() || std::string(MCULAB_NODE).empty()) {
    GTEST_SKIP() << "'" << m << "' is absent (node, Chromium, or `npm ci` in "
                 << MCULAB_TFLITE_REFERENCE_DIR << ")";
  }
  namespace tw = mculab::tflite_writer;
  for (uint8_t act : {0, 1, 2, 3}) {
    SCOPED_TRACE(static_cast<int>(act));
    const EachLayerInBoth run =
        RunEachLayerInBoth(tw::SvdfNetFloat(2, 2, act), "svdf-float32-" + std::to_string(act));
    ASSERT_EQ(run.layers.size(), 1u);
    ASSERT_EQ(run.theirs.size(), 1u);
    const std::vector<double>& ours = run.layers[0].output;
    const std::vector<double>& theirs = run.theirs[0];
    ASSERT_EQ(ours.size(), 6u);
    ASSERT_EQ(theirs.size(), ours.size());
    double max_diff = 0.0;
    for (size_t i = 0; i < ours.size(); ++i) {
      const double d = std::abs(ours[i] - theirs[i]);
      max_diff = std::max(max_diff, d);
      EXPECT_LE(d, 1e-6 * std::max(1.0, std::abs(theirs[i]))) << i;
    }
    EXPECT_NE(*std::min_element(ours.begin(), ours.end()),
              *std::max_element(ours.begin(), ours.end()));
    std::printf("svdf float32 activation %d: %zu values, max difference %.3g\n", act, ours.size(),
                max_diff);
  }
}

}  // namespace
