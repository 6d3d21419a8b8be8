// The runner's int8 interpreter against TFLite's own (tools/tflite_reference: npm
// @tensorflow/tfjs-tflite, TFLite compiled to wasm with XNNPACK, in headless Chromium), layer by
// layer on the writer's sample nets (int8, and float32 in and out around QUANTIZE and DEQUANTIZE),
// two small nets of HARD_SWISH, RELU, RELU6 and MEAN over H and W (int8, and float32 after a MUL)
// and the MLPerf Tiny models: each operator runs alone in TFLite
// on exactly the input it had in our interpreter, so a difference belongs to that layer and not to
// an earlier one. The rule: equal, or 1 apart where XNNPACK requantizes in float (conv, depthwise,
// fully connected, add, pooling) or rounds ties to even (QUANTIZE from float32, where TFLite's
// reference rounds them away from zero); DEQUANTIZE's floats to 1 part in 10^6; SOFTMAX within 2,
// where TFLite's interpreter uses a lookup table of exp and our interpreter (like TFLite Micro)
// gemmlowp's fixed-point exp; int8 HARD_SWISH, RELU and RELU6 equal; MEAN within 1 (TFLite
// Micro's QuantizedMeanOrSum, which our interpreter follows, rounds twice: a sum of 1853 steps
// over 36 gives 52 where TFLite gives 51); float32 outputs, as DEQUANTIZE's, to 1 part in 10^6.
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

// A tensor's values: int8, or float32 around QUANTIZE and DEQUANTIZE.
nlohmann::json Values(const mculab_tfl_tensor& t) {
  nlohmann::json v = nlohmann::json::array();
  if (t.type == MCULAB_TFL_FLOAT32) {
    for (uint32_t i = 0; i < t.elements; ++i) {
      float f;
      std::memcpy(&f, t.data + 4 * i, 4);
      v.push_back(f);
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
  for (const auto& [path, model] :
       {std::pair{sample, mculab::tflite_writer::SampleNet(1)},
        std::pair{sample_float, mculab::tflite_writer::SampleNetFloatIO(1)},
        std::pair{activations, mculab::tflite_writer::ActivationsNet()},
        std::pair{activations_float, mculab::tflite_writer::ActivationsNetFloat()}}) {
    const std::vector<uint8_t> b = mculab::tflite_writer::Serialize(model);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  }
  int models_run = 0;
  for (const char* name :
       {"sample", "sample_float", "activations", "activations_float", "kws_ref_model.tflite",
        "ic_resnet8_int8.tflite", "vww_96_int8.tflite", "ad01_int8.tflite"}) {
    const std::string file = name;
    const std::string path = file == "sample"         ? sample
                             : file == "sample_float" ? sample_float
                             : file == "activations"  ? activations
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
        for (size_t i = 0; i < theirs.size(); ++i) {
          EXPECT_NEAR(theirs[i], l.output[i], 1e-6 * std::max(1.0, std::abs(theirs[i])))
              << file << " operator " << l.index << " (" << l.type << ") value " << i;
        }
        std::printf("%s op %2d %-17s %6zu float values\n", file.c_str(), l.index, l.type.c_str(),
                    theirs.size());
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
  if (models_run == 4) {
    GTEST_SKIP() << "only the sample nets ran: " << MCULAB_SHARED_MODELS_DIR
                 << " holds none of the MLPerf Tiny models";
  }
}

}  // namespace
