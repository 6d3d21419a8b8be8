// The TFLite interpreter's reader, planner and op regions, over models the writer
// (tools/tflite_writer) builds and, where present, the MLPerf Tiny models: each way a model's
// bytes can be wrong is refused with a status and a message, and no corruption makes the reader,
// the planner or the kernels touch memory outside the model and the arena (this file also builds
// as firmware_tflite_asan_test, under AddressSanitizer and UBSan).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "mculab/kernels_s8.h"
#include "mculab/runner_protocol.h"
#include "mculab/tflite.h"
#include "tflite_writer.h"

namespace {

namespace tw = mculab::tflite_writer;

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

const char* const kSharedModels[] = {"kws_ref_model.tflite", "ic_resnet8_int8.tflite",
                                     "vww_96_int8.tflite", "ad01_int8.tflite"};

std::string SharedModel(const char* file) {
  return std::string(MCULAB_SHARED_MODELS_DIR) + "/mlperf-tiny/" + file;
}

// Loads, prepares in an arena of exactly the planned size (on the heap, so ASan sees its ends)
// and runs a model held in a buffer of exactly its size.
struct ModelRun {
  std::vector<uint8_t> bytes;  // the model stays in place while it is used
  std::unique_ptr<mculab_tfl_model> m = std::make_unique<mculab_tfl_model>();
  std::vector<uint8_t> arena;
  mculab_tfl_status load = MCULAB_TFL_OK, prepare = MCULAB_TFL_OK, invoke = MCULAB_TFL_OK;
  std::vector<int8_t> output;

  explicit ModelRun(std::vector<uint8_t> model, uint32_t seed = 1) : bytes(std::move(model)) {
    load = mculab_tfl_load(m.get(), bytes.data(), bytes.size());
    if (load != MCULAB_TFL_OK) return;
    prepare = mculab_tfl_prepare(m.get(), nullptr, 0);
    if (prepare != MCULAB_TFL_NO_MEMORY) return;
    // Aligned start, so the arena is exactly the plan.
    arena.resize(m->plan.arena_bytes + m->plan.persistent_bytes + m->plan.scratch_bytes);
    prepare = mculab_tfl_prepare(m.get(), arena.data(), arena.size());
    if (prepare != MCULAB_TFL_OK) return;
    mculab_tfl_seed_input(m.get(), seed);
    invoke = mculab_tfl_invoke(m.get(), nullptr);
    uint32_t n = 0;
    const int8_t* out = mculab_tfl_output(m.get(), &n);
    output.assign(out, out + n);
  }
  bool Ok() const {
    return load == MCULAB_TFL_OK && prepare == MCULAB_TFL_OK && invoke == MCULAB_TFL_OK;
  }
  mculab_tfl_status First() const {
    return load != MCULAB_TFL_OK ? load : prepare != MCULAB_TFL_OK ? prepare : invoke;
  }
};

uint32_t Crc(const std::vector<int8_t>& v) {
  return mculab_crc32(0, reinterpret_cast<const uint8_t*>(v.data()), v.size());
}

// ---- the writer's sample network ----

TEST(TfliteSampleNet, RunsEveryOperatorToAPinnedChecksum) {
  const std::vector<uint8_t> bytes = tw::Serialize(tw::SampleNet(1));
  ModelRun r(bytes);
  ASSERT_TRUE(r.Ok()) << mculab_tfl_status_name(r.First()) << ": " << r.m->error;
  ASSERT_EQ(r.m->num_ops, 9);
  const int32_t expected_ops[9] = {
      MCULAB_TFL_CONV_2D, MCULAB_TFL_DEPTHWISE_CONV_2D, MCULAB_TFL_CONV_2D,
      MCULAB_TFL_ADD,     MCULAB_TFL_MAX_POOL_2D,       MCULAB_TFL_AVERAGE_POOL_2D,
      MCULAB_TFL_RESHAPE, MCULAB_TFL_FULLY_CONNECTED,   MCULAB_TFL_SOFTMAX};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(r.m->ops[i].builtin, expected_ops[i]) << i;
  ASSERT_EQ(r.output.size(), 10u);
  // A softmax with output scale 1/256, zero point -128: the probabilities add up to ~1.
  int sum = 0;
  for (int8_t v : r.output) sum += v + 128;
  EXPECT_NEAR(sum, 256, 6);
  EXPECT_EQ(Crc(r.output), 2003406745u);
}

TEST(TfliteSampleNet, SoftmaxIsWithinOneStepOfTheRealSoftmax) {
  ModelRun r(tw::Serialize(tw::SampleNet(1)));
  ASSERT_TRUE(r.Ok()) << r.m->error;
  const mculab_tfl_op& op = r.m->ops[8];
  ASSERT_EQ(op.builtin, MCULAB_TFL_SOFTMAX);
  const mculab_tfl_tensor& logits = r.m->tensors[op.inputs[0]];
  double sum = 0, max = -1e9;
  std::vector<double> x;
  for (uint32_t i = 0; i < logits.elements; ++i) {
    x.push_back(op.beta * logits.scale * (static_cast<int8_t>(logits.data[i]) - logits.zero_point));
    max = std::max(max, x.back());
  }
  for (double& v : x) sum += (v = std::exp(v - max));
  int distinct_probabilities = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::clamp(std::round(x[i] / sum * 256.0) - 128.0, -128.0, 127.0);
    EXPECT_NEAR(r.output[i], want, 1.0) << i;
    if (r.output[i] > -128) ++distinct_probabilities;
  }
  EXPECT_GE(distinct_probabilities, 5) << "the logits are too far apart to test the exp";
}

// The plan reuses the input's memory once its last reader ran (TFLite Micro's rule), so each
// inference is given its input again (the runner's reload does) and gives the same output.
TEST(TfliteSampleNet, RepeatedInferencesGivenTheSameInputGiveTheSameOutput) {
  ModelRun r(tw::Serialize(tw::SampleNet(1)));
  ASSERT_TRUE(r.Ok()) << r.m->error;
  const mculab_tfl_tensor& input = r.m->tensors[r.m->inputs[0]];
  EXPECT_LT(input.last_use, r.m->num_ops - 1) << "the input lives to the end";
  for (int i = 0; i < 3; ++i) {
    mculab_tfl_seed_input(r.m.get(), 1);
    ASSERT_EQ(mculab_tfl_invoke(r.m.get(), nullptr), MCULAB_TFL_OK);
    uint32_t n = 0;
    const int8_t* out = mculab_tfl_output(r.m.get(), &n);
    EXPECT_EQ(std::vector<int8_t>(out, out + n), r.output) << "inference " << i + 2;
  }
}

TEST(TfliteSampleNet, SeedsGiveDifferentWeightsAndTheSameSeedTheSameBytes) {
  EXPECT_EQ(tw::Serialize(tw::SampleNet(7)), tw::Serialize(tw::SampleNet(7)));
  EXPECT_NE(tw::Serialize(tw::SampleNet(7)), tw::Serialize(tw::SampleNet(8)));
}

TEST(TfliteSampleNet, EveryOperatorIsAnOpRegionNamedByItsOutput) {
  static std::vector<std::string> events;
  events.clear();
  const mculab_tfl_hooks hooks = {
      [](uint16_t index, const char* type, const char* name) {
        events.push_back("begin " + std::to_string(index) + " " + type + " " + name);
      },
      [] { events.push_back("end"); }};
  const std::vector<uint8_t> bytes = tw::Serialize(tw::SampleNet(1));
  ModelRun r(bytes);
  ASSERT_TRUE(r.Ok()) << r.m->error;
  ASSERT_EQ(mculab_tfl_invoke(r.m.get(), &hooks), MCULAB_TFL_OK);
  const std::vector<std::string> want = {"begin 0 CONV_2D conv1",
                                         "end",
                                         "begin 1 DEPTHWISE_CONV_2D dw",
                                         "end",
                                         "begin 2 CONV_2D pw",
                                         "end",
                                         "begin 3 ADD add",
                                         "end",
                                         "begin 4 MAX_POOL_2D maxpool",
                                         "end",
                                         "begin 5 AVERAGE_POOL_2D avgpool",
                                         "end",
                                         "begin 6 RESHAPE reshape",
                                         "end",
                                         "begin 7 FULLY_CONNECTED fc",
                                         "end",
                                         "begin 8 SOFTMAX softmax",
                                         "end"};
  EXPECT_EQ(events, want);
}

// ---- the planner ----

void ExpectPlanSound(const mculab_tfl_model& m) {
  uint32_t high = 0;
  for (unsigned i = 0; i < m.num_tensors; ++i) {
    const mculab_tfl_tensor& a = m.tensors[i];
    if (!a.is_planned) continue;
    EXPECT_EQ(a.arena_offset % MCULAB_TFL_ALIGN, 0u);
    high = std::max(high, a.arena_offset + a.bytes);
    for (unsigned j = i + 1; j < m.num_tensors; ++j) {
      const mculab_tfl_tensor& b = m.tensors[j];
      if (!b.is_planned) continue;
      const bool live_together = a.first_use <= b.last_use && b.first_use <= a.last_use;
      const bool share_bytes =
          a.arena_offset < b.arena_offset + b.bytes && b.arena_offset < a.arena_offset + a.bytes;
      EXPECT_FALSE(live_together && share_bytes) << "tensors " << i << " and " << j;
    }
  }
  // Each operator's scratch shares no byte with a tensor alive while it runs.
  for (unsigned i = 0; i < m.num_ops; ++i) {
    const mculab_tfl_op& op = m.ops[i];
    if (op.scratch_bytes == 0) continue;
    EXPECT_EQ(op.scratch_offset % MCULAB_TFL_ALIGN, 0u);
    high = std::max(high, op.scratch_offset + op.scratch_bytes);
    for (unsigned j = 0; j < m.num_tensors; ++j) {
      const mculab_tfl_tensor& b = m.tensors[j];
      if (!b.is_planned || b.first_use > static_cast<int>(i) || b.last_use < static_cast<int>(i)) {
        continue;
      }
      EXPECT_FALSE(op.scratch_offset < b.arena_offset + b.bytes &&
                   b.arena_offset < op.scratch_offset + op.scratch_bytes)
          << "operator " << i << "'s scratch and tensor " << j;
    }
  }
  EXPECT_LE(high, m.plan.arena_bytes);
  EXPECT_LT(m.plan.arena_bytes, m.plan.naive_bytes) << "the plan reuses no memory";
}

TEST(TflitePlanner, TensorsLiveTogetherNeverShareBytesAndMemoryIsReused) {
  ModelRun r(tw::Serialize(tw::SampleNet(1)));
  ASSERT_TRUE(r.Ok()) << r.m->error;
  ExpectPlanSound(*r.m);
  // The largest activations (conv1, dw, pw, add: 512 bytes) cannot all be live at once: the plan
  // is smaller than their sum.
  EXPECT_LT(r.m->plan.arena_bytes, 4u * 512u + 768u);
  EXPECT_EQ(r.m->plan.scratch_bytes, 0u);
  // Three convolutions of 8 channels: 8 multipliers and 8 shifts each, every array aligned.
  EXPECT_EQ(r.m->plan.persistent_bytes, 3u * 2u * 32u);
}

TEST(TflitePlanner, SharedModelPlansAreSound) {
  std::vector<std::string> paths;
  for (const char* file : kSharedModels) paths.push_back(SharedModel(file));
  // With operators' scratch in the plan (SVDF, the LSTM, MEAN) and variables outside it.
  for (const char* file : {"keyword_scrambled.tflite", "trained_lstm_int8.tflite"}) {
    paths.push_back(std::string(MCULAB_SHARED_MODELS_DIR) + "/tflite-micro/" + file);
  }
  for (const std::string& path : paths) {
    const std::vector<uint8_t> bytes = ReadFile(path);
    if (bytes.empty()) GTEST_SKIP() << path << " is absent (MCULAB_SHARED_MODELS_DIR)";
    ModelRun r(bytes);
    ASSERT_TRUE(r.Ok()) << path << ": " << r.m->error;
    SCOPED_TRACE(path);
    ExpectPlanSound(*r.m);
  }
}

TEST(TflitePlanner, ArenaSmallerThanThePlanIsRefusedNamingBothSizes) {
  const std::vector<uint8_t> bytes = tw::Serialize(tw::SampleNet(1));
  auto m = std::make_unique<mculab_tfl_model>();
  ASSERT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK);
  ASSERT_EQ(mculab_tfl_prepare(m.get(), nullptr, 0), MCULAB_TFL_NO_MEMORY);
  const size_t need = m->plan.arena_bytes + m->plan.persistent_bytes;
  alignas(16) static uint8_t arena[1 << 16];
  ASSERT_EQ(mculab_tfl_prepare(m.get(), arena, need - 1), MCULAB_TFL_NO_MEMORY);
  EXPECT_NE(std::string(m->error).find(std::to_string(need - 1)), std::string::npos) << m->error;
  EXPECT_NE(std::string(m->error).find(std::to_string(need)), std::string::npos) << m->error;
  EXPECT_EQ(mculab_tfl_prepare(m.get(), arena, need), MCULAB_TFL_OK) << m->error;
}

// ---- models refused, by the way they are wrong ----

mculab_tfl_status LoadAndPrepare(const tw::Model& model, std::string* error = nullptr) {
  ModelRun r(tw::Serialize(model));
  if (error != nullptr) *error = r.m->error;
  return r.First();
}

TEST(TfliteRefuses, ShorterThanAFlatbufferHeader) {
  const std::vector<uint8_t> bytes = tw::Serialize(tw::SampleNet(1));
  auto m = std::make_unique<mculab_tfl_model>();
  for (size_t n = 0; n < 8; ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    EXPECT_EQ(mculab_tfl_load(m.get(), cut.data(), cut.size()), MCULAB_TFL_NOT_A_MODEL) << n;
  }
}

TEST(TfliteRefuses, MissingFileIdentifier) {
  std::vector<uint8_t> bytes = tw::Serialize(tw::SampleNet(1));
  bytes[7] = '2';
  auto m = std::make_unique<mculab_tfl_model>();
  EXPECT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_NOT_A_MODEL);
  EXPECT_NE(std::string(m->error).find("TFL3"), std::string::npos) << m->error;
}

TEST(TfliteRefuses, EveryTruncation) {
  const std::vector<uint8_t> bytes = tw::Serialize(tw::SampleNet(1));
  auto m = std::make_unique<mculab_tfl_model>();
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);  // exactly n bytes on the heap
    EXPECT_NE(mculab_tfl_load(m.get(), cut.data(), cut.size()), MCULAB_TFL_OK) << n;
    EXPECT_NE(m->error[0], 0) << n;
  }
}

// A file cut short says so, with both lengths: where it ends and how far the model reaches.
TEST(TfliteRefuses, ATruncatedFileSaysWhereItEndsAndWhatTheModelNeeds) {
  const std::vector<uint8_t> bytes = tw::Serialize(tw::SampleNet(1));
  auto m = std::make_unique<mculab_tfl_model>();
  for (size_t n : {bytes.size() - 1, bytes.size() * 3 / 4}) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    ASSERT_EQ(mculab_tfl_load(m.get(), cut.data(), cut.size()), MCULAB_TFL_OUT_OF_BOUNDS) << n;
    const std::string error = m->error;
    EXPECT_NE(
        error.find("the file ends at byte " + std::to_string(n) + ", the model needs at least"),
        std::string::npos)
        << error;
    EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  }
  // An offset far past the end is corruption, not a short file: no length is claimed.
  std::vector<uint8_t> wild = bytes;
  const uint32_t root = 0x7FFFFFF0u;
  std::memcpy(wild.data(), &root, 4);
  mculab_tfl_load(m.get(), wild.data(), wild.size());
  EXPECT_EQ(std::string(m->error).find("truncated"), std::string::npos) << m->error;
}

TEST(TfliteRefuses, RootOffsetPastTheEnd) {
  std::vector<uint8_t> bytes = tw::Serialize(tw::SampleNet(1));
  for (uint32_t root : {0xFFFFFFF0u, static_cast<uint32_t>(bytes.size()),
                        static_cast<uint32_t>(bytes.size() - 2)}) {
    std::memcpy(bytes.data(), &root, 4);
    auto m = std::make_unique<mculab_tfl_model>();
    EXPECT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OUT_OF_BOUNDS)
        << root;
  }
}

// Position of the root table and of its vtable entry for field `id` (the writer's layout).
uint32_t U32At(const std::vector<uint8_t>& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, &b[at], 4);
  return v;
}

TEST(TfliteRefuses, VtableOutsideTheModel) {
  std::vector<uint8_t> bytes = tw::Serialize(tw::SampleNet(1));
  const uint32_t root = U32At(bytes, 0);
  for (int32_t soffset : {static_cast<int32_t>(root + 1), -0x40000000, INT32_MIN, INT32_MAX}) {
    std::memcpy(&bytes[root], &soffset, 4);
    auto m = std::make_unique<mculab_tfl_model>();
    EXPECT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OUT_OF_BOUNDS)
        << soffset;
  }
}

TEST(TfliteRefuses, VtableThatIsTheTableItself) {
  // A signed vtable offset of 0 makes the table its own vtable: a cycle of sorts, whose "fields"
  // are the table's bytes. It must be refused or read as harmless garbage, never out of bounds.
  std::vector<uint8_t> bytes = tw::Serialize(tw::SampleNet(1));
  const uint32_t root = U32At(bytes, 0);
  std::memset(&bytes[root], 0, 4);
  ModelRun r(bytes);
  EXPECT_FALSE(r.Ok());
}

TEST(TfliteRefuses, HugeVectorCounts) {
  const std::vector<uint8_t> good = tw::Serialize(tw::SampleNet(1));
  // Every u32 in the model that could be a vector's length, made huge: each such model is
  // refused or harmless, and at least the real lengths among them are refused as out of bounds.
  int out_of_bounds = 0;
  for (size_t at = 8; at + 4 <= good.size(); at += 4) {
    std::vector<uint8_t> bytes = good;
    const uint32_t huge = 0x7FFFFFFFu;
    std::memcpy(&bytes[at], &huge, 4);
    ModelRun r(bytes);
    if (r.load == MCULAB_TFL_OUT_OF_BOUNDS) ++out_of_bounds;
  }
  EXPECT_GT(out_of_bounds, 20);
}

TEST(TfliteRefuses, RandomBitFlipsAndByteNoiseNeverReachOutside) {
  // Corrupted copies of the sample net and of the shared models go through load, prepare and
  // invoke; under ASan any read outside the model or the arena fails the test.
  std::vector<std::vector<uint8_t>> models = {tw::Serialize(tw::SampleNet(3))};
  for (const char* file : {"kws_ref_model.tflite", "ad01_int8.tflite"}) {
    std::vector<uint8_t> b = ReadFile(SharedModel(file));
    if (!b.empty()) models.push_back(std::move(b));
  }
  uint32_t rng = 12345;
  auto next = [&rng] {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
  };
  int refused = 0, ran = 0;
  for (const std::vector<uint8_t>& good : models) {
    // The structure (everything before the first buffer's data) is where flips matter: the
    // sample net's first 2 KiB, the models' first 8 KiB.
    const size_t span = std::min<size_t>(good.size(), good.size() < 8192 ? 2048 : 8192);
    for (int k = 0; k < 300; ++k) {
      std::vector<uint8_t> bytes = good;
      const int flips = 1 + static_cast<int>(next() % 4);
      for (int f = 0; f < flips; ++f) {
        const size_t at = next() % span;
        if (next() % 4 == 0) {
          bytes[at] = static_cast<uint8_t>(next());
        } else {
          bytes[at] ^= static_cast<uint8_t>(1u << (next() % 8));
        }
      }
      ModelRun r(bytes);
      if (r.Ok()) {
        ++ran;
      } else {
        ++refused;
        EXPECT_NE(r.m->error[0], 0);
      }
    }
  }
  EXPECT_GT(refused, 50);
  std::printf("corrupted models: %d refused, %d ran\n", refused, ran);
}

TEST(TfliteRefuses, TensorIndexOutOfRange) {
  for (int32_t bad : {999, -2, 256}) {
    tw::Model m = tw::SampleNet(1);
    m.operators[1].inputs[0] = bad;
    std::string error;
    EXPECT_EQ(LoadAndPrepare(m, &error), MCULAB_TFL_MALFORMED) << bad;
    EXPECT_NE(error.find("tensor index"), std::string::npos) << error;
  }
}

TEST(TfliteRefuses, GraphInputOrOutputOutOfRange) {
  tw::Model m = tw::SampleNet(1);
  m.outputs = {4000};
  EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_MALFORMED);
  m = tw::SampleNet(1);
  m.inputs = {0, 1};  // tensor 1 is the first filter: a constant
  EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_MALFORMED);
  m = tw::SampleNet(1);
  m.inputs = {0, 0};
  EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_MALFORMED);
  m = tw::SampleNet(1);
  m.inputs = {};
  EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_MALFORMED);
  m = tw::SampleNet(1);
  m.outputs = std::vector<int32_t>(MCULAB_TFL_MAX_GRAPH_IO + 1, m.outputs[0]);
  EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_TOO_LARGE);
}

TEST(TfliteRefuses, UnsupportedOperatorNamingItAndTheSupportedOnes) {
  tw::Model m = tw::SampleNet(1);
  m.operators[3].builtin = 42;  // DIV
  m.operators[3].options_type = 0;
  std::string error;
  EXPECT_EQ(LoadAndPrepare(m, &error), MCULAB_TFL_UNSUPPORTED_OP);
  EXPECT_NE(error.find("not supported: operator 3: DIV (builtin 42)"), std::string::npos) << error;
  EXPECT_NE(error.find("DEPTHWISE_CONV_2D"), std::string::npos) << error;
}

TEST(TfliteRefuses, EveryMissingOperatorAtOnce) {
  tw::Model m = tw::SampleNet(1);
  for (int i : {2, 3, 5}) m.operators[i].options_type = 0;
  m.operators[2].builtin = 42;  // DIV
  m.operators[3].builtin = 52;  // BIDIRECTIONAL_SEQUENCE_LSTM
  m.operators[5].builtin = 42;  // DIV again: named once
  std::string error;
  EXPECT_EQ(LoadAndPrepare(m, &error), MCULAB_TFL_UNSUPPORTED_OP);
  EXPECT_NE(error.find("not supported: operator 2: DIV (builtin 42), operator 3: "
                       "BIDIRECTIONAL_SEQUENCE_LSTM (builtin 52)"
                       ";"),
            std::string::npos)
      << error;
}

// TFLite converters write a depthwise bias's 8 scales with quantized_dimension 3 over a 1-D
// tensor (person_detect); TFLite Micro never reads a bias's scales and runs such a model.
TEST(TfliteReads, BiasScalesOffTheirQuantizedDimensionAsTfliteMicroDoes) {
  tw::Model m = tw::SampleNet(1);
  const int32_t bias = m.operators[1].inputs[2];  // the depthwise conv's
  ASSERT_EQ(m.tensors[bias].shape.size(), 1u);
  m.tensors[bias].scales.assign(m.tensors[bias].shape[0], 0.001f);
  m.tensors[bias].zero_points.assign(m.tensors[bias].shape[0], 0);
  m.tensors[bias].quantized_dimension = 3;
  ModelRun tolerated(tw::Serialize(m));
  ASSERT_TRUE(tolerated.Ok()) << tolerated.m->error;
  EXPECT_EQ(tolerated.output, ModelRun(tw::Serialize(tw::SampleNet(1))).output);
  // A filter's per-channel scales must still run along its channels.
  m = tw::SampleNet(1);
  m.tensors[m.operators[0].inputs[1]].quantized_dimension = 3;
  std::string error;
  EXPECT_EQ(LoadAndPrepare(m, &error), MCULAB_TFL_UNSUPPORTED);
  EXPECT_NE(error.find("filter quantized along another dimension"), std::string::npos) << error;
}

TEST(TfliteRefuses, OptionsOfAnotherOperator) {
  tw::Model m = tw::SampleNet(1);
  m.operators[0].options_type = 5;  // Pool2DOptions on a CONV_2D
  EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_MALFORMED);
}

TEST(TfliteRefuses, ReadingATensorBeforeItIsWritten) {
  tw::Model m = tw::SampleNet(1);
  std::swap(m.operators[0], m.operators[1]);
  std::string error;
  EXPECT_EQ(LoadAndPrepare(m, &error), MCULAB_TFL_MALFORMED);
  EXPECT_NE(error.find("before any operator writes it"), std::string::npos) << error;
}

TEST(TfliteRefuses, AnOperatorWritingItsOwnInputOrAConstant) {
  tw::Model m = tw::SampleNet(1);
  m.operators[4].outputs[0] = m.operators[4].inputs[0];  // a cycle: maxpool writes its input
  EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_MALFORMED);
  m = tw::SampleNet(1);
  m.operators[4].outputs[0] = m.operators[0].inputs[1];  // a weight
  EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_MALFORMED);
}

TEST(TfliteRefuses, BufferSizeDisagreeingWithShapeAndType) {
  tw::Model m = tw::SampleNet(1);
  m.tensors[1].data.pop_back();
  std::string error;
  EXPECT_EQ(LoadAndPrepare(m, &error), MCULAB_TFL_MALFORMED);
  EXPECT_NE(error.find("tensor 1: buffer holds"), std::string::npos) << error;
}

TEST(TfliteRefuses, AbsurdShapes) {
  tw::Model m = tw::SampleNet(1);
  m.tensors[0].shape = {1, 65536, 65536, 3};
  EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_TOO_LARGE);
  m.tensors[0].shape = {1, 16, 0, 3};  // empty: read as TFLite reads it, refused by its operator
  std::string error;
  EXPECT_EQ(LoadAndPrepare(m, &error), MCULAB_TFL_UNSUPPORTED);
  EXPECT_NE(error.find("operator 0 (CONV_2D): an empty tensor"), std::string::npos) << error;
  m.tensors[0].shape = {1, -16, 16, 3};
  EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_MALFORMED);
  m.tensors[0].shape = {1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_TOO_LARGE);
}

TEST(TfliteRefuses, ShapesAnOperatorCannotProduce) {
  tw::Model m = tw::SampleNet(1);
  m.tensors[0].shape = {1, 17, 16, 3};  // conv1 would give 9 rows, its output has 8
  std::string error;
  EXPECT_EQ(LoadAndPrepare(m, &error), MCULAB_TFL_BAD_SHAPE);
  EXPECT_NE(error.find("operator 0 (CONV_2D)"), std::string::npos) << error;
  m = tw::SampleNet(1);
  m.tensors[m.operators[3].outputs[0]].shape = {1, 8, 8, 4};  // ADD output half the size
  EXPECT_NE(LoadAndPrepare(m), MCULAB_TFL_OK);
  m = tw::SampleNet(1);
  m.tensors[m.operators[6].outputs[0]].shape = {1, 33};  // RESHAPE changing the size
  EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_BAD_SHAPE);
}

TEST(TfliteRefuses, ScalesThatAreZeroNegativeOrNotANumber) {
  for (float s : {0.0f, -0.5f, std::nanf(""), 1e38f}) {
    tw::Model m = tw::SampleNet(1);
    m.tensors[1].scales[2] = s;  // one per-channel filter scale
    EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_UNSUPPORTED) << s;
    m = tw::SampleNet(1);
    m.tensors[0].scales[0] = s;  // the input's scale
    EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_UNSUPPORTED) << s;
  }
}

TEST(TfliteRefuses, SoftmaxOutputNotQuantizedAsTfliteRequires) {
  tw::Model m = tw::SampleNet(1);
  m.tensors[m.outputs[0]].zero_points = {0};
  std::string error;
  EXPECT_EQ(LoadAndPrepare(m, &error), MCULAB_TFL_UNSUPPORTED);
  EXPECT_NE(error.find("SOFTMAX"), std::string::npos) << error;
}

TEST(TfliteRefuses, ZeroPointOutsideInt8) {
  tw::Model m = tw::SampleNet(1);
  m.tensors[0].zero_points = {300};
  EXPECT_EQ(LoadAndPrepare(m), MCULAB_TFL_UNSUPPORTED);
}

TEST(TfliteRefuses, OtherSchemaVersions) {
  tw::Model m = tw::SampleNet(1);
  m.version = 2;
  std::string error;
  EXPECT_EQ(LoadAndPrepare(m, &error), MCULAB_TFL_UNSUPPORTED);
  EXPECT_NE(error.find("schema version 2"), std::string::npos) << error;
}

TEST(TfliteRefuses, StridesOfZeroOrAbsurd) {
  for (int32_t stride : {0, -1, 1 << 30}) {
    tw::Model m = tw::SampleNet(1);
    m.operators[0].options[1].i = stride;
    EXPECT_NE(LoadAndPrepare(m), MCULAB_TFL_OK) << stride;
  }
}

TEST(TfliteRefuses, MoreTensorsThanTheCapacity) {
  tw::Model m = tw::SampleNet(1);
  while (m.tensors.size() <= MCULAB_TFL_MAX_TENSORS) {
    m.tensors.push_back(tw::Tensor{{1}, 9, {}, {}, {}, 0, "spare"});
  }
  std::string error;
  EXPECT_EQ(LoadAndPrepare(m, &error), MCULAB_TFL_TOO_LARGE);
  EXPECT_NE(error.find(std::to_string(MCULAB_TFL_MAX_TENSORS + 1) + " tensors"), std::string::npos)
      << error;
}

}  // namespace

namespace {

// QUANTIZE float32 -> int8 with TFLite's reference rounding (ties away from zero, clamped),
// int8 -> int8 requantization and DEQUANTIZE back to float32, on the writer's float-interface net.
// Each operator's output is copied when it ends (the planner reuses dead tensors' bytes).
const mculab_tfl_model* g_quant_model;
std::vector<std::vector<int8_t>>* g_quant_outputs;
uint16_t g_quant_op;

void QuantBegin(uint16_t index, const char*, const char*) { g_quant_op = index; }
void QuantEnd() {
  const mculab_tfl_tensor& t = g_quant_model->tensors[g_quant_model->ops[g_quant_op].output];
  g_quant_outputs->emplace_back(reinterpret_cast<const int8_t*>(t.data),
                                reinterpret_cast<const int8_t*>(t.data) + t.bytes);
}

TEST(TfliteQuantize, FloatInterfaceRoundsTiesAwayFromZeroAndDequantizes) {
  const std::vector<uint8_t> b =
      mculab::tflite_writer::Serialize(mculab::tflite_writer::SampleNetFloatIO(1));
  auto m = std::make_unique<mculab_tfl_model>();
  ASSERT_EQ(mculab_tfl_load(m.get(), b.data(), b.size()), MCULAB_TFL_OK) << m->error;
  std::vector<uint8_t> arena(1u << 16);
  ASSERT_EQ(mculab_tfl_prepare(m.get(), arena.data(), arena.size()), MCULAB_TFL_OK) << m->error;
  EXPECT_EQ(m->ops[0].builtin, MCULAB_TFL_QUANTIZE);
  EXPECT_EQ(m->ops[m->num_ops - 1].builtin, MCULAB_TFL_DEQUANTIZE);
  uint32_t bytes = 0;
  float* in = reinterpret_cast<float*>(mculab_tfl_input(m.get(), &bytes));
  ASSERT_EQ(bytes, 16u * 16 * 3 * 4);
  const float scale = m->tensors[m->ops[0].output].scale;  // 0.02, zero point -3
  const float xs[] = {0.5f * scale, -0.5f * scale, 0.49f * scale, 10.0f, -10.0f, 0.0f};
  const int expected[] = {1 - 3, -1 - 3, 0 - 3, 127, -128, -3};
  for (size_t i = 0; i < bytes / 4; ++i) in[i] = xs[i % 6];
  std::vector<std::vector<int8_t>> outs;
  g_quant_model = m.get();
  g_quant_outputs = &outs;
  const mculab_tfl_hooks hooks = {QuantBegin, QuantEnd};
  ASSERT_EQ(mculab_tfl_invoke(m.get(), &hooks), MCULAB_TFL_OK);
  ASSERT_EQ(outs.size(), m->num_ops);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(outs[0][i], expected[i]) << "input " << xs[i];
  // The softmax (1/256, -128) requantized to (1/128, 0), then dequantized.
  const std::vector<int8_t>& soft = outs[m->num_ops - 3];
  const std::vector<int8_t>& re = outs[m->num_ops - 2];
  const float* out = reinterpret_cast<const float*>(mculab_tfl_output(m.get(), &bytes));
  ASSERT_EQ(bytes, 40u);
  for (int i = 0; i < 10; ++i) {
    // (s + 128) / 256 = r / 128, halves rounded away from zero.
    EXPECT_EQ(re[i], std::min(127, (soft[i] + 128 + 1) / 2)) << i;
    EXPECT_EQ(out[i], static_cast<float>((1.0 / 128.0) * re[i])) << i;
  }
}

}  // namespace

namespace {

// Data movement on a small graph, against index arithmetic: input int8 [1][2][3] -> TRANSPOSE
// (perm 0, 2, 1) -> [1][3][2]; CONCATENATION of that and itself along axis -1 -> [1][3][4];
// EXPAND_DIMS -> [1][1][3][4] (the graph's output).
TEST(TfliteOps, TransposeConcatenationAndExpandDimsMoveBytesAsTfliteDoes) {
  namespace tw = mculab::tflite_writer;
  auto i32 = [](std::vector<int32_t> v) {
    std::vector<uint8_t> b;
    for (int32_t x : v) {
      for (int k = 0; k < 4; ++k) b.push_back(static_cast<uint8_t>(x >> (8 * k)));
    }
    return b;
  };
  tw::Model m;
  m.tensors = {
      tw::Tensor{{1, 2, 3}, 9, {}, {0.5f}, {0}, 0, "in"},
      tw::Tensor{{3}, 2, i32({0, 2, 1}), {}, {}, 0, "perm"},
      tw::Tensor{{1, 3, 2}, 9, {}, {0.5f}, {0}, 0, "transposed"},
      tw::Tensor{{1, 3, 4}, 9, {}, {0.5f}, {0}, 0, "joined"},
      tw::Tensor{{1}, 2, i32({0}), {}, {}, 0, "axis"},
      tw::Tensor{{1, 1, 3, 4}, 9, {}, {0.5f}, {0}, 0, "out"},
  };
  m.operators = {
      tw::Operator{39, {0, 1}, {2}, 0, {}},
      tw::Operator{2, {2, 2}, {3}, 10, {tw::Option{0, tw::Option::kI32, -1}}},
      tw::Operator{70, {3, 4}, {5}, 0, {}},
  };
  m.inputs = {0};
  m.outputs = {5};
  const std::vector<uint8_t> bytes = tw::Serialize(m);
  auto model = std::make_unique<mculab_tfl_model>();
  ASSERT_EQ(mculab_tfl_load(model.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK)
      << model->error;
  std::vector<uint8_t> arena(4096);
  ASSERT_EQ(mculab_tfl_prepare(model.get(), arena.data(), arena.size()), MCULAB_TFL_OK)
      << model->error;
  const uint8_t in[6] = {1, 2, 3, 4, 5, 6};  // [0][y][x] = 1 + 3y + x
  ASSERT_EQ(mculab_tfl_set_input(model.get(), in, 6), MCULAB_TFL_OK);
  ASSERT_EQ(mculab_tfl_invoke(model.get(), nullptr), MCULAB_TFL_OK) << model->error;
  uint32_t n = 0;
  const int8_t* out = mculab_tfl_output(model.get(), &n);
  ASSERT_EQ(n, 12u);
  for (int x = 0; x < 3; ++x) {
    for (int j = 0; j < 4; ++j) {
      const int y = j % 2;  // the transposed row, twice
      EXPECT_EQ(out[x * 4 + j], 1 + 3 * y + x) << x << "," << j;
    }
  }
}

// MUL int8 broadcasting a one-value input: scales 0.5 x 0.25 / 0.125 make the rescaling exactly
// 1, so each output is the product of the two inputs, clamped to int8.
TEST(TfliteOps, MulInt8BroadcastsAndRescales) {
  namespace tw = mculab::tflite_writer;
  tw::Model m;
  m.tensors = {
      tw::Tensor{{1, 4}, 9, {}, {0.5f}, {0}, 0, "a"},
      tw::Tensor{{1}, 9, {3}, {0.25f}, {0}, 0, "b"},
      tw::Tensor{{1, 4}, 9, {}, {0.125f}, {0}, 0, "out"},
  };
  m.operators = {tw::Operator{18, {0, 1}, {2}, 0, {}}};
  m.inputs = {0};
  m.outputs = {2};
  const std::vector<uint8_t> bytes = tw::Serialize(m);
  auto model = std::make_unique<mculab_tfl_model>();
  ASSERT_EQ(mculab_tfl_load(model.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK)
      << model->error;
  std::vector<uint8_t> arena(1024);
  ASSERT_EQ(mculab_tfl_prepare(model.get(), arena.data(), arena.size()), MCULAB_TFL_OK)
      << model->error;
  const int8_t in[4] = {1, -5, 40, -60};
  ASSERT_EQ(mculab_tfl_set_input(model.get(), reinterpret_cast<const uint8_t*>(in), 4),
            MCULAB_TFL_OK);
  ASSERT_EQ(mculab_tfl_invoke(model.get(), nullptr), MCULAB_TFL_OK) << model->error;
  const int8_t* out = mculab_tfl_output(model.get(), nullptr);
  const int expected[4] = {3, -15, 120, -128};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], expected[i]) << i;
}

// LOGISTIC (14) or TANH (28) over int16 [n]: input scale `in_scale`, output scale 2^-15, zero
// points `in_zp` and 0. Returns the outputs for `in`, or the status and message of a refusal.
struct Int16Activation {
  mculab_tfl_status status = MCULAB_TFL_OK;
  std::string error;
  std::vector<int16_t> out;
};

Int16Activation RunInt16Activation(int32_t builtin, float in_scale, int64_t in_zp,
                                   const std::vector<int16_t>& in) {
  namespace tw = mculab::tflite_writer;
  const int32_t n = static_cast<int32_t>(in.size());
  tw::Model m;
  m.tensors = {tw::Tensor{{n}, 7, {}, {in_scale}, {in_zp}, 0, "in"},
               tw::Tensor{{n}, 7, {}, {1.0f / 32768.0f}, {0}, 0, "out"}};
  m.operators = {tw::Operator{builtin, {0}, {1}, 0, {}}};
  m.inputs = {0};
  m.outputs = {1};
  const std::vector<uint8_t> bytes = tw::Serialize(m);
  auto model = std::make_unique<mculab_tfl_model>();
  Int16Activation r;
  r.status = mculab_tfl_load(model.get(), bytes.data(), bytes.size());
  std::vector<uint8_t> arena(4 * in.size() + 1024);
  if (r.status == MCULAB_TFL_OK) {
    r.status = mculab_tfl_prepare(model.get(), arena.data(), arena.size());
  }
  r.error = model->error;
  if (r.status != MCULAB_TFL_OK) return r;
  EXPECT_EQ(mculab_tfl_set_input(model.get(), reinterpret_cast<const uint8_t*>(in.data()),
                                 static_cast<uint32_t>(2 * in.size())),
            MCULAB_TFL_OK);
  EXPECT_EQ(mculab_tfl_invoke(model.get(), nullptr), MCULAB_TFL_OK) << model->error;
  uint32_t bytes_out = 0;
  const int8_t* out = mculab_tfl_output(model.get(), &bytes_out);
  r.out.resize(bytes_out / 2);
  std::memcpy(r.out.data(), out, bytes_out);
  return r;
}

std::vector<int16_t> EveryInt16(int step) {
  std::vector<int16_t> v;
  for (int q = -32768; q <= 32767; q += step) v.push_back(static_cast<int16_t>(q));
  v.push_back(32767);
  return v;
}

// The expected values are the real functions (double precision) in Q0.15: TFLite's table of
// sigmoid(i/24) interpolated is within 1.5 steps of them over the whole int16 range.
TEST(TfliteOps, LogisticInt16FollowsTheSigmoidAndSaturates) {
  for (float scale : {1.0f / 4096.0f, 1.0f / 1024.0f, 0.0003f}) {
    SCOPED_TRACE(scale);
    const std::vector<int16_t> in = EveryInt16(7);
    const Int16Activation r = RunInt16Activation(14, scale, 0, in);
    ASSERT_EQ(r.status, MCULAB_TFL_OK) << r.error;
    for (size_t i = 0; i < in.size(); ++i) {
      const double want = 32768.0 / (1.0 + std::exp(-in[i] * static_cast<double>(scale)));
      EXPECT_NEAR(r.out[i], std::min(want, 32767.0), 1.5) << in[i];
    }
  }
  // 0 is exactly one half; 8 (2^-12 x 32767) is 32757 (0.99966); at 2^-10 the largest inputs
  // (32) saturate to 32767 and the smallest to 1 (TFLite's table never reaches 0).
  const Int16Activation pot = RunInt16Activation(14, 1.0f / 4096.0f, 0, {0, 32767, -32768});
  EXPECT_EQ(pot.out, (std::vector<int16_t>{16384, 32757, 11}));
  const Int16Activation wide = RunInt16Activation(14, 1.0f / 1024.0f, 0, {32767, -32768});
  EXPECT_EQ(wide.out, (std::vector<int16_t>{32767, 1}));
}

TEST(TfliteOps, TanhInt16FollowsTheTanhAndSaturates) {
  for (float scale : {1.0f / 4096.0f, 1.0f / 2048.0f, 1.0f / 1024.0f, 0.0003f}) {
    SCOPED_TRACE(scale);
    const std::vector<int16_t> in = EveryInt16(7);
    const Int16Activation r = RunInt16Activation(28, scale, 0, in);
    ASSERT_EQ(r.status, MCULAB_TFL_OK) << r.error;
    for (size_t i = 0; i < in.size(); ++i) {
      const double want = 32768.0 * std::tanh(in[i] * static_cast<double>(scale));
      EXPECT_NEAR(r.out[i], std::max(std::min(want, 32767.0), -32768.0), 3.0) << in[i];
    }
  }
  const Int16Activation wide = RunInt16Activation(28, 1.0f / 1024.0f, 0, {0, 32767, -32768});
  EXPECT_EQ(wide.out, (std::vector<int16_t>{0, 32767, -32767}));
}

TEST(TfliteRefuses, Int16LogisticAndTanhNeedZeroPointsOfZeroAndAQ15Output) {
  for (int32_t builtin : {14, 28}) {
    const Int16Activation zp = RunInt16Activation(builtin, 1.0f / 4096.0f, 3, {0});
    EXPECT_EQ(zp.status, MCULAB_TFL_UNSUPPORTED);
    EXPECT_NE(zp.error.find("zero points of 0"), std::string::npos) << zp.error;
  }
}

std::pair<std::vector<int8_t>, std::vector<int8_t>> RunTwice(const tw::Model& model,
                                                             const std::vector<int8_t>& input,
                                                             std::string* error);

// LOGISTIC (14) or TANH (28) over every int8 value: input scale `in_scale` and zero point `in_zp`,
// the output as TFLite quantizes them (LOGISTIC 1/256 with zero point -128, TANH 1/128 with 0).
std::vector<int8_t> RunInt8Activation(int32_t builtin, float in_scale, int64_t in_zp) {
  namespace tw = mculab::tflite_writer;
  const bool logistic = builtin == 14;
  tw::Model m;
  m.tensors = {tw::Tensor{{256}, 9, {}, {in_scale}, {in_zp}, 0, "in"},
               tw::Tensor{{256},
                          9,
                          {},
                          {logistic ? 1.0f / 256.0f : 1.0f / 128.0f},
                          {logistic ? -128 : 0},
                          0,
                          "out"}};
  m.operators = {tw::Operator{builtin, {0}, {1}, 0, {}}};
  m.inputs = {0};
  m.outputs = {1};
  std::vector<int8_t> in(256);
  for (int q = -128; q < 128; ++q) in[static_cast<size_t>(q + 128)] = static_cast<int8_t>(q);
  std::string error;
  return RunTwice(m, in, &error).first;
}

// gemmlowp's fixed-point logistic and tanh are within half a step of the real functions before
// the final rounding: every int8 output within 1 of the rounded real value; the input's zero
// point gives exactly one half (0 after the -128 zero point) and 0; the ends saturate.
TEST(TfliteOps, LogisticAndTanhInt8FollowTheRealFunctions) {
  for (float scale : {0.1f, 0.02f, 0.5f}) {
    for (int64_t zp : {0, -20, 37}) {
      SCOPED_TRACE(::testing::Message() << scale << " " << zp);
      const std::vector<int8_t> logistic = RunInt8Activation(14, scale, zp);
      const std::vector<int8_t> tanh = RunInt8Activation(28, scale, zp);
      ASSERT_EQ(logistic.size(), 256u);
      ASSERT_EQ(tanh.size(), 256u);
      for (int q = -128; q < 128; ++q) {
        const double x = scale * static_cast<double>(q - zp);
        const double want_logistic = std::min(256.0 / (1.0 + std::exp(-x)) - 128.0, 127.0);
        const double want_tanh = std::max(std::min(128.0 * std::tanh(x), 127.0), -128.0);
        EXPECT_NEAR(logistic[static_cast<size_t>(q + 128)], want_logistic, 1.0) << q;
        EXPECT_NEAR(tanh[static_cast<size_t>(q + 128)], want_tanh, 1.0) << q;
      }
      EXPECT_EQ(logistic[static_cast<size_t>(zp + 128)], 0);
      EXPECT_EQ(tanh[static_cast<size_t>(zp + 128)], 0);
    }
  }
  // At scale 0.5 the ends are 64 from the zero point: beyond the input radius, saturated.
  const std::vector<int8_t> logistic = RunInt8Activation(14, 0.5f, 0);
  const std::vector<int8_t> tanh = RunInt8Activation(28, 0.5f, 0);
  EXPECT_EQ(logistic.front(), -128);
  EXPECT_EQ(logistic.back(), 127);
  EXPECT_EQ(tanh.front(), -128);
  EXPECT_EQ(tanh.back(), 127);
}

tw::Model LstmModel(bool time_major, int32_t batches, int32_t steps, int32_t width, int32_t units,
                    float cell_clip, int extra_input = -1,
                    tw::LstmKind kind = tw::LstmKind::kInt8) {
  return tw::LstmNet(kind, tw::LstmShape{time_major, batches, steps, width, units, cell_clip},
                     extra_input);
}

// Runs a model on `input` (its bytes), twice; both outputs.
std::pair<std::vector<int8_t>, std::vector<int8_t>> RunTwice(const tw::Model& model,
                                                             const std::vector<int8_t>& input,
                                                             std::string* error) {
  const std::vector<uint8_t> bytes = tw::Serialize(model);
  auto m = std::make_unique<mculab_tfl_model>();
  std::vector<uint8_t> arena(1u << 16);
  if (mculab_tfl_load(m.get(), bytes.data(), bytes.size()) != MCULAB_TFL_OK ||
      mculab_tfl_prepare(m.get(), arena.data(), arena.size()) != MCULAB_TFL_OK) {
    *error = m->error;
    return {};
  }
  std::pair<std::vector<int8_t>, std::vector<int8_t>> out;
  for (std::vector<int8_t>* o : {&out.first, &out.second}) {
    EXPECT_EQ(mculab_tfl_set_input(m.get(), reinterpret_cast<const uint8_t*>(input.data()),
                                   static_cast<uint32_t>(input.size())),
              MCULAB_TFL_OK);
    EXPECT_EQ(mculab_tfl_invoke(m.get(), nullptr), MCULAB_TFL_OK) << m->error;
    uint32_t n = 0;
    const int8_t* p = mculab_tfl_output(m.get(), &n);
    o->assign(p, p + n);
  }
  return out;
}

// The same sequences laid out time-major (all batches at each step, the states as one block) and
// batch-major (each batch through time with its own slice of the states) give the same hidden
// states, and every inference starts from reset states, in every kind (int8, 16x8, float32). With
// a cell clip of 0.25 the cell state saturates and the outputs change.
TEST(TfliteOps, LstmTimeMajorAndBatchMajorGiveTheSameHiddenStates) {
  const int32_t batches = 3, steps = 5, width = 6, units = 4;
  for (tw::LstmKind kind : {tw::LstmKind::kInt8, tw::LstmKind::kInt16x8, tw::LstmKind::kFloat32}) {
    SCOPED_TRACE(static_cast<int>(kind));
    const size_t size = kind == tw::LstmKind::kInt8 ? 1 : kind == tw::LstmKind::kInt16x8 ? 2 : 4;
    // Element i of a run's bytes.
    auto at = [size](const std::vector<int8_t>& v, int32_t i) {
      return std::string(
          v.begin() + static_cast<std::ptrdiff_t>(size * static_cast<size_t>(i)),
          v.begin() + static_cast<std::ptrdiff_t>(size * static_cast<size_t>(i + 1)));
    };
    std::vector<int8_t> bm;
    uint32_t x = 7;
    for (int32_t i = 0; i < batches * steps * width; ++i) {
      x = x * 1103515245u + 12345u;
      const float f = static_cast<float>(static_cast<int8_t>(x >> 24)) / 128.0f;
      const auto i16 = static_cast<int16_t>(x >> 16);
      const auto* bytes = size == 4 ? reinterpret_cast<const int8_t*>(&f)
                                    : reinterpret_cast<const int8_t*>(&i16) + (size == 1 ? 1 : 0);
      bm.insert(bm.end(), bytes, bytes + size);
    }
    std::vector<int8_t> tm;
    for (int32_t t = 0; t < steps; ++t) {
      for (int32_t b = 0; b < batches; ++b) {
        for (int32_t i = 0; i < width; ++i) {
          const std::string e = at(bm, (b * steps + t) * width + i);
          tm.insert(tm.end(), e.begin(), e.end());
        }
      }
    }
    std::vector<int8_t> unclipped;
    for (float clip : {0.0f, 0.25f}) {
      SCOPED_TRACE(clip);
      std::string error;
      const auto by_batch =
          RunTwice(LstmModel(false, batches, steps, width, units, clip, -1, kind), bm, &error);
      ASSERT_TRUE(error.empty()) << error;
      const auto by_time =
          RunTwice(LstmModel(true, batches, steps, width, units, clip, -1, kind), tm, &error);
      ASSERT_TRUE(error.empty()) << error;
      ASSERT_EQ(by_batch.first.size(), size * static_cast<size_t>(batches * steps * units));
      EXPECT_EQ(by_batch.first, by_batch.second);
      EXPECT_EQ(by_time.first, by_time.second);
      std::set<std::string> distinct;
      for (int32_t b = 0; b < batches; ++b) {
        for (int32_t t = 0; t < steps; ++t) {
          for (int32_t u = 0; u < units; ++u) {
            const std::string v = at(by_batch.first, (b * steps + t) * units + u);
            EXPECT_EQ(v, at(by_time.first, (t * batches + b) * units + u))
                << b << "," << t << "," << u;
            distinct.insert(v);
          }
        }
      }
      EXPECT_GT(distinct.size(), 10u);
      if (clip == 0.0f) {
        unclipped = by_batch.first;
      } else {
        EXPECT_NE(by_batch.first, unclipped);
      }
    }
  }
}

// A tensor of the writer's model as real numbers: float32, or int8, int16, int32, int64 times its
// scale.
std::vector<double> Dequantized(const tw::Tensor& t) {
  const size_t size = t.type == 9 ? 1 : t.type == 7 ? 2 : t.type == 4 ? 8 : 4;
  std::vector<double> v;
  for (size_t at = 0; at + size <= t.data.size(); at += size) {
    int64_t q = 0;
    std::memcpy(&q, t.data.data() + at, size);  // little-endian host
    if (t.type == 0) {
      float f;
      std::memcpy(&f, t.data.data() + at, 4);
      v.push_back(f);
    } else {
      q = t.type == 9   ? static_cast<int8_t>(q)
          : t.type == 7 ? static_cast<int16_t>(q)
          : t.type == 2 ? static_cast<int32_t>(q)
                        : q;
      v.push_back(static_cast<double>(q) * t.scales[0]);
    }
  }
  return v;
}

// The LSTM's equations in double over the writer's batch-major LstmNet, its weights and biases
// dequantized (tensors 1..4 input weights, 5..8 recurrent, 9..12 biases; gates input, forget,
// cell, output): per step, z = (W x + b) + R h per gate; i, f, o = sigmoid; g = tanh;
// c = f c + i g, clipped; h = o tanh(c). The states start at 0 for every batch. `q312`: the
// integer kinds' design, each of the two fully connected parts held to the Q3.12 range of their
// int16 buffers ([-8, 8 - 2^-12]) before the sum.
std::vector<double> LstmInDouble(const tw::Model& m, const tw::LstmShape& s,
                                 const std::vector<double>& input, bool q312) {
  auto range = [q312](double v) { return q312 ? std::clamp(v, -8.0, 32767.0 / 4096.0) : v; };
  std::vector<std::vector<double>> w(13);
  for (size_t k = 1; k <= 12; ++k) w[k] = Dequantized(m.tensors[k]);
  std::vector<double> out;
  for (int32_t b = 0; b < s.batches; ++b) {
    std::vector<double> h(static_cast<size_t>(s.units)), c(h.size());
    for (int32_t t = 0; t < s.steps; ++t) {
      const double* x = input.data() + (b * s.steps + t) * s.width;
      std::vector<double> z[4];
      for (int g = 0; g < 4; ++g) {
        for (int32_t u = 0; u < s.units; ++u) {
          double in = w[9 + g][static_cast<size_t>(u)], rec = 0.0;
          for (int32_t k = 0; k < s.width; ++k) in += w[1 + g][u * s.width + k] * x[k];
          for (int32_t k = 0; k < s.units; ++k) rec += w[5 + g][u * s.units + k] * h[k];
          z[g].push_back(range(in) + range(rec));
        }
      }
      for (size_t u = 0; u < h.size(); ++u) {
        auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
        c[u] = sigmoid(z[1][u]) * c[u] + sigmoid(z[0][u]) * std::tanh(z[2][u]);
        if (s.cell_clip > 0) c[u] = std::clamp<double>(c[u], -s.cell_clip, s.cell_clip);
        h[u] = sigmoid(z[3][u]) * std::tanh(c[u]);
        out.push_back(h[u]);
      }
    }
  }
  return out;
}

// Runs the model on its seeded input: {input, output}, each as real numbers.
std::pair<std::vector<double>, std::vector<double>> RunSeededReal(const tw::Model& model) {
  const std::vector<uint8_t> bytes = tw::Serialize(model);
  auto m = std::make_unique<mculab_tfl_model>();
  std::vector<uint8_t> arena(1u << 16);
  EXPECT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK) << m->error;
  EXPECT_EQ(mculab_tfl_prepare(m.get(), arena.data(), arena.size()), MCULAB_TFL_OK) << m->error;
  if (!m->prepared) return {};
  mculab_tfl_seed_input(m.get(), 1);
  auto real = [&](const mculab_tfl_tensor& t) {
    tw::Tensor copy{{}, t.type, std::vector<uint8_t>(t.data, t.data + t.bytes), {t.scale}, {},
                    0,  ""};
    std::vector<double> v = Dequantized(copy);
    for (double& x : v) x -= t.zero_point * static_cast<double>(t.scale);
    return v;
  };
  std::pair<std::vector<double>, std::vector<double>> r;
  r.first = real(m->tensors[m->inputs[0]]);
  EXPECT_EQ(mculab_tfl_invoke(m.get(), nullptr), MCULAB_TFL_OK) << m->error;
  r.second = real(m->tensors[m->outputs[0]]);
  return r;
}

// Each kind against the LSTM's equations in double over its own weights and seeded input, the
// cell clipped at 0.5 and not clipped. float32 to float rounding (measured 9e-8); the
// integer kinds as TFLite Micro designs them, each fully connected part saturating at the Q3.12
// range of its int16 buffer (the seeded inputs drive them well past it: without that saturation
// 16x8 measured 0.005 apart), within what their quantization leaves: int8 measured 0.0039, half
// a step of its hidden state (1/128); 16x8 0.00041, 13 steps of 2^-15 from the Q3.12 gates and
// the interpolated sigmoid table, 9 times closer than int8. A wrong bias width, zero point,
// rescaling or gate order is off by far more.
TEST(TfliteOps, LstmFollowsTheLstmEquations) {
  struct Case {
    tw::LstmKind kind;
    double tolerance;
  };
  for (const Case& k : {Case{tw::LstmKind::kFloat32, 1e-6}, Case{tw::LstmKind::kInt8, 0.006},
                        Case{tw::LstmKind::kInt16x8, 0.0006}}) {
    for (float clip : {0.0f, 0.5f}) {
      SCOPED_TRACE(::testing::Message() << static_cast<int>(k.kind) << " clip " << clip);
      const tw::LstmShape shape{false, 2, 5, 6, 4, clip};
      const tw::Model model = tw::LstmNet(k.kind, shape);
      const auto [input, output] = RunSeededReal(model);
      const std::vector<double> want =
          LstmInDouble(model, shape, input, k.kind != tw::LstmKind::kFloat32);
      ASSERT_EQ(output.size(), want.size());
      double max_diff = 0.0;
      for (size_t i = 0; i < want.size(); ++i) {
        max_diff = std::max(max_diff, std::abs(output[i] - want[i]));
      }
      EXPECT_LE(max_diff, k.tolerance);
      std::printf("LSTM kind %d clip %.1f: %zu hidden values within %.3g of the equations\n",
                  static_cast<int>(k.kind), clip, want.size(), max_diff);
    }
  }
}

// TFLite Micro's kernel runs the standard LSTM only (LstmTensors::ValidateTensorStatus: no
// peephole, projection or layer norm tensors, every gate's weights and bias present): each
// variant refused in every kind, naming the feature and saying TFLite Micro refuses it too.
TEST(TfliteRefuses, LstmVariantsTfliteMicroRefusesNamingTheFeature) {
  const std::pair<int, const char*> cases[] = {{9, "peephole weights are not implemented"},
                                               {16, "projection is not implemented"},
                                               {20, "layer normalization is not implemented"}};
  for (tw::LstmKind kind : {tw::LstmKind::kInt8, tw::LstmKind::kInt16x8, tw::LstmKind::kFloat32}) {
    SCOPED_TRACE(static_cast<int>(kind));
    for (const auto& [input, why] : cases) {
      std::string error;
      RunTwice(LstmModel(false, 1, 2, 3, 4, 0.0f, input, kind), std::vector<int8_t>(24), &error);
      EXPECT_NE(
          error.find(std::string("UNIDIRECTIONAL_SEQUENCE_LSTM): ") + why + ", as in TFLite Micro"),
          std::string::npos)
          << error;
    }
    tw::Model cifg = LstmModel(false, 1, 2, 3, 4, 0.0f, -1, kind);
    cifg.operators[0].inputs[1] = -1;
    std::string error;
    RunTwice(cifg, std::vector<int8_t>(24), &error);
    EXPECT_NE(error.find("CIFG (no input gate weights) is not implemented, as in TFLite Micro"),
              std::string::npos)
        << error;
  }
}

// 16x8 reads int64 biases (EvalLstm<int16_t, int8_t, int16_t, int64_t>) and symmetric
// activations: int32 biases, which TFLite Micro would read as int64, and a zero point are refused.
TEST(TfliteRefuses, Lstm16x8WithInt32BiasesOrAZeroPoint) {
  tw::Model int32_bias = LstmModel(false, 1, 2, 3, 4, 0.0f, -1, tw::LstmKind::kInt16x8);
  for (size_t k = 9; k <= 12; ++k) {
    tw::Tensor& b = int32_bias.tensors[k];
    std::vector<uint8_t> narrow;
    for (size_t at = 0; at < b.data.size(); at += 8) {
      narrow.insert(narrow.end(), b.data.begin() + static_cast<std::ptrdiff_t>(at),
                    b.data.begin() + static_cast<std::ptrdiff_t>(at + 4));
    }
    b.data = narrow;
    b.type = 2;
  }
  std::string error;
  RunTwice(int32_bias, std::vector<int8_t>(12), &error);
  EXPECT_NE(error.find("int64 (int16 activations)"), std::string::npos) << error;
  tw::Model zero_point = LstmModel(false, 1, 2, 3, 4, 0.0f, -1, tw::LstmKind::kInt16x8);
  zero_point.tensors[0].zero_points = {5};
  error.clear();
  RunTwice(zero_point, std::vector<int8_t>(12), &error);
  EXPECT_NE(error.find("must be symmetric (zero points 0)"), std::string::npos) << error;
}

}  // namespace

namespace {

namespace tw = mculab::tflite_writer;

// ---- one operator at a time: a graph of tensor 0 (the input) -> operator -> the last tensor ----

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <typename T>
std::vector<T> Values(const std::vector<uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

struct OpRun {
  mculab_tfl_status status = MCULAB_TFL_OK;
  std::string error;
  std::vector<uint8_t> out;
};

// Runs `op` on `in` given as tensor 0's bytes; the output is the model's last tensor.
OpRun RunOp(std::vector<tw::Tensor> tensors, tw::Operator op, const std::vector<uint8_t>& in) {
  tw::Model m;
  m.tensors = std::move(tensors);
  op.outputs = {static_cast<int32_t>(m.tensors.size() - 1)};
  m.operators = {std::move(op)};
  m.inputs = {0};
  m.outputs = {static_cast<int32_t>(m.tensors.size() - 1)};
  ModelRun r(tw::Serialize(m));
  OpRun result;
  result.status = r.First();
  result.error = r.m->error;
  if (result.status != MCULAB_TFL_OK) return result;
  result.status = mculab_tfl_set_input(r.m.get(), in.data(), static_cast<uint32_t>(in.size()));
  if (result.status == MCULAB_TFL_OK) result.status = mculab_tfl_invoke(r.m.get(), nullptr);
  result.error = r.m->error;
  uint32_t n = 0;
  const auto* out = static_cast<const uint8_t*>(mculab_tfl_output_at(r.m.get(), 0, &n));
  if (out != nullptr) result.out.assign(out, out + n);
  return result;
}

tw::Tensor Quantized(std::vector<int32_t> shape, uint8_t type, float scale, int64_t zp,
                     std::vector<uint8_t> data = {}) {
  return tw::Tensor{std::move(shape), type, std::move(data), {scale}, {zp}, 0, ""};
}

tw::Tensor Float(std::vector<int32_t> shape, std::vector<uint8_t> data = {}) {
  return tw::Tensor{std::move(shape), MCULAB_TFL_FLOAT32, std::move(data), {}, {}, 0, ""};
}

// A constant of int32 (2) or int64 (4) values: begin, size, axes.
tw::Tensor Const(std::vector<int32_t> shape, uint8_t type, std::vector<uint8_t> data) {
  return tw::Tensor{std::move(shape), type, std::move(data), {}, {}, 0, ""};
}

tw::Operator Op(int32_t builtin, std::vector<int32_t> inputs) {
  return tw::Operator{builtin, std::move(inputs), {}, 0, {}};
}

// RELU int8 requantizes (scale 0.5 -> 0.25: twice x - zero point, exactly) and clamps from the
// output's zero point; RELU6 clamps to [zero point, round(6 / scale) + zero point] of the input.
TEST(TfliteOps, ReluAndRelu6Int8ClampAndRequantize) {
  const std::vector<int8_t> in = {-128, -11, -10, 0, 40, 63, 100, 127};
  OpRun relu = RunOp({Quantized({1, 8}, 9, 0.5f, -10), Quantized({1, 8}, 9, 0.25f, -100)},
                     Op(MCULAB_TFL_RELU, {0}), Bytes(in));
  ASSERT_EQ(relu.status, MCULAB_TFL_OK) << relu.error;
  EXPECT_EQ(Values<int8_t>(relu.out),
            (std::vector<int8_t>{-100, -100, -100, -80, 0, 46, 120, 127}));
  // 6 / 0.05 = 120 steps above the zero point -20: [-20, 100].
  OpRun relu6 = RunOp({Quantized({8}, 9, 0.05f, -20), Quantized({8}, 9, 0.05f, -20)},
                      Op(MCULAB_TFL_RELU6, {0}), Bytes(in));
  ASSERT_EQ(relu6.status, MCULAB_TFL_OK) << relu6.error;
  EXPECT_EQ(Values<int8_t>(relu6.out), (std::vector<int8_t>{-20, -11, -10, 0, 40, 63, 100, 100}));
  // 6 / 0.01 is past int8: the top stays 127.
  OpRun wide = RunOp({Quantized({8}, 9, 0.01f, -20), Quantized({8}, 9, 0.01f, -20)},
                     Op(MCULAB_TFL_RELU6, {0}), Bytes(in));
  ASSERT_EQ(wide.status, MCULAB_TFL_OK) << wide.error;
  EXPECT_EQ(Values<int8_t>(wide.out), (std::vector<int8_t>{-20, -11, -10, 0, 40, 63, 100, 127}));
}

TEST(TfliteOps, ReluAndRelu6Int16AreSymmetric) {
  const std::vector<int16_t> in = {-32768, -5, 0, 100, 5999, 6001, 20000, 32767};
  OpRun relu = RunOp({Quantized({8}, 7, 0.5f, 0), Quantized({8}, 7, 0.25f, 0)},
                     Op(MCULAB_TFL_RELU, {0}), Bytes(in));
  ASSERT_EQ(relu.status, MCULAB_TFL_OK) << relu.error;
  EXPECT_EQ(Values<int16_t>(relu.out),
            (std::vector<int16_t>{0, 0, 0, 200, 11998, 12002, 32767, 32767}));
  OpRun relu6 = RunOp({Quantized({8}, 7, 0.001f, 0), Quantized({8}, 7, 0.001f, 0)},
                      Op(MCULAB_TFL_RELU6, {0}), Bytes(in));
  ASSERT_EQ(relu6.status, MCULAB_TFL_OK) << relu6.error;
  EXPECT_EQ(Values<int16_t>(relu6.out),
            (std::vector<int16_t>{0, 0, 0, 100, 5999, 6000, 6000, 6000}));
  // TFLite Micro's RELU needs int16 zero points of 0.
  OpRun refused = RunOp({Quantized({8}, 7, 0.5f, 3), Quantized({8}, 7, 0.25f, 0)},
                        Op(MCULAB_TFL_RELU, {0}), Bytes(in));
  EXPECT_EQ(refused.status, MCULAB_TFL_UNSUPPORTED);
  EXPECT_NE(refused.error.find("operator 0 (RELU): int16 tensors need zero point 0"),
            std::string::npos)
      << refused.error;
}

TEST(TfliteOps, ReluRelu6AndHardSwishFloat32) {
  const std::vector<float> in = {-4.0f, -3.0f, -1.5f, -0.0f, 1.0f, 3.0f, 5.5f, 7.0f};
  OpRun relu = RunOp({Float({8}), Float({8})}, Op(MCULAB_TFL_RELU, {0}), Bytes(in));
  ASSERT_EQ(relu.status, MCULAB_TFL_OK) << relu.error;
  EXPECT_EQ(Values<float>(relu.out),
            (std::vector<float>{0.0f, 0.0f, 0.0f, -0.0f, 1.0f, 3.0f, 5.5f, 7.0f}));
  OpRun relu6 = RunOp({Float({8}), Float({8})}, Op(MCULAB_TFL_RELU6, {0}), Bytes(in));
  ASSERT_EQ(relu6.status, MCULAB_TFL_OK) << relu6.error;
  EXPECT_EQ(Values<float>(relu6.out),
            (std::vector<float>{0.0f, 0.0f, 0.0f, -0.0f, 1.0f, 3.0f, 5.5f, 6.0f}));
  // x * min(6, max(0, x + 3)) / 6: 0 up to -3, x from 3 on, -1.5 * 1.5 / 6 and 1 * 4 / 6 between.
  OpRun hs = RunOp({Float({8}), Float({8})}, Op(MCULAB_TFL_HARD_SWISH, {0}), Bytes(in));
  ASSERT_EQ(hs.status, MCULAB_TFL_OK) << hs.error;
  const std::vector<float> out = Values<float>(hs.out);
  const float expected[8] = {0.0f, 0.0f, -0.375f, 0.0f, 4.0f / 6.0f, 3.0f, 5.5f, 7.0f};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], expected[i]) << in[i];
}

// HARD_SWISH int8 over every input value: TFLite's 16-bit fixed point is within one step of the
// real hard swish, exactly the output zero point at or below -3 and the input rescaled at or
// above +3 (within one step: the relu-ish factor saturates at 32767 / 32768).
TEST(TfliteOps, HardSwishInt8FollowsTheRealFunctionOverEveryInput) {
  const float in_scale = 0.05f, out_scale = 0.03f;
  const int in_zp = -5, out_zp = -110;
  std::vector<int8_t> in(256);
  for (int i = 0; i < 256; ++i) in[i] = static_cast<int8_t>(i - 128);
  OpRun hs = RunOp({Quantized({256}, 9, in_scale, in_zp), Quantized({256}, 9, out_scale, out_zp)},
                   Op(MCULAB_TFL_HARD_SWISH, {0}), Bytes(in));
  ASSERT_EQ(hs.status, MCULAB_TFL_OK) << hs.error;
  const std::vector<int8_t> out = Values<int8_t>(hs.out);
  for (int i = 0; i < 256; ++i) {
    const double x = in_scale * (in[i] - in_zp);
    const double y = x * std::min(6.0, std::max(0.0, x + 3.0)) / 6.0;
    const double q = std::min(127.0, std::max(-128.0, std::round(y / out_scale) + out_zp));
    EXPECT_NEAR(out[i], q, 1.0) << "x " << x;
    if (x <= -3.0) {
      EXPECT_EQ(out[i], out_zp) << "x " << x;
    }
  }
  // int16 HARD_SWISH is not in TFLite Micro: refused.
  OpRun refused = RunOp({Quantized({4}, 7, 0.5f, 0), Quantized({4}, 7, 0.5f, 0)},
                        Op(MCULAB_TFL_HARD_SWISH, {0}), std::vector<uint8_t>(8));
  EXPECT_EQ(refused.status, MCULAB_TFL_UNSUPPORTED);
  EXPECT_NE(refused.error.find("needs int8 or float32 tensors"), std::string::npos)
      << refused.error;
}

// SLICE of int8 [2][3][4] (value 12a + 4b + c) from begin (1, 1, 0) with sizes (1, -1, 3): -1
// runs to the end of its dimension. begin and size int32, or int64 over float32.
TEST(TfliteOps, SliceCopiesTheBoxWithSizeMinusOneToTheEnd) {
  std::vector<int8_t> in(24);
  for (int i = 0; i < 24; ++i) in[i] = static_cast<int8_t>(i);
  OpRun s8 = RunOp({Quantized({2, 3, 4}, 9, 0.5f, 0), Const({3}, 2, Bytes<int32_t>({1, 1, 0})),
                    Const({3}, 2, Bytes<int32_t>({1, -1, 3})), Quantized({1, 2, 3}, 9, 0.5f, 0)},
                   Op(MCULAB_TFL_SLICE, {0, 1, 2}), Bytes(in));
  ASSERT_EQ(s8.status, MCULAB_TFL_OK) << s8.error;
  EXPECT_EQ(Values<int8_t>(s8.out), (std::vector<int8_t>{16, 17, 18, 20, 21, 22}));

  std::vector<float> f(24);
  for (int i = 0; i < 24; ++i) f[i] = 0.5f * static_cast<float>(i) - 3.0f;
  OpRun sf = RunOp({Float({2, 3, 4}), Const({3}, 4, Bytes<int64_t>({0, 2, 1})),
                    Const({3}, 4, Bytes<int64_t>({-1, 1, 2})), Float({2, 1, 2})},
                   Op(MCULAB_TFL_SLICE, {0, 1, 2}), Bytes(f));
  ASSERT_EQ(sf.status, MCULAB_TFL_OK) << sf.error;
  EXPECT_EQ(Values<float>(sf.out), (std::vector<float>{f[9], f[10], f[21], f[22]}));
}

TEST(TfliteRefuses, SliceOutsideTheInputOrOfAnotherSize) {
  auto slice = [](std::vector<int32_t> begin, std::vector<int32_t> size,
                  std::vector<int32_t> out_shape) {
    return RunOp({Quantized({2, 3}, 9, 0.5f, 0), Const({2}, 2, Bytes(begin)),
                  Const({2}, 2, Bytes(size)), Quantized(std::move(out_shape), 9, 0.5f, 0)},
                 Op(MCULAB_TFL_SLICE, {0, 1, 2}), std::vector<uint8_t>(6));
  };
  EXPECT_EQ(slice({0, 0}, {2, 3}, {2, 3}).status, MCULAB_TFL_OK);
  for (const auto& [begin, size] :
       std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>{
           {{0, 2}, {1, 2}}, {{-1, 0}, {1, 2}}, {{0, 4}, {1, -1}}, {{0, 0}, {1, -2}}}) {
    const OpRun r = slice(begin, size, {1, 2});
    EXPECT_EQ(r.status, MCULAB_TFL_BAD_SHAPE) << begin[0] << "," << begin[1];
    EXPECT_NE(r.error.find("operator 0 (SLICE): begin or size outside the input"),
              std::string::npos)
        << r.error;
  }
  const OpRun other = slice({0, 0}, {1, -1}, {1, 2});
  EXPECT_EQ(other.status, MCULAB_TFL_BAD_SHAPE);
  EXPECT_NE(other.error.find("the slice's size differs from the output's"), std::string::npos)
      << other.error;
}

// MUL int16 (16x8, symmetric): scales 0.5 x 0.25 / 0.125 make the rescaling exactly 1, so each
// output is the product, clamped to int16; the second input [2] broadcasts over [3][2].
TEST(TfliteOps, MulInt16BroadcastsSymmetricallyAndSaturates) {
  const std::vector<int16_t> in = {1, -5, 300, -300, 20000, -20000};
  OpRun mul =
      RunOp({Quantized({3, 2}, 7, 0.5f, 0), Quantized({2}, 7, 0.25f, 0, Bytes<int16_t>({3, -100})),
             Quantized({3, 2}, 7, 0.125f, 0)},
            Op(MCULAB_TFL_MUL, {0, 1}), Bytes(in));
  ASSERT_EQ(mul.status, MCULAB_TFL_OK) << mul.error;
  EXPECT_EQ(Values<int16_t>(mul.out), (std::vector<int16_t>{3, 500, 900, 30000, 32767, 32767}));
  // A quarter: 0.5 x 0.25 / 0.5, rounding -5 x -100 / 4 = 125 and 3 / 4 up to 1.
  OpRun quarter =
      RunOp({Quantized({3, 2}, 7, 0.5f, 0), Quantized({2}, 7, 0.25f, 0, Bytes<int16_t>({3, -100})),
             Quantized({3, 2}, 7, 0.5f, 0)},
            Op(MCULAB_TFL_MUL, {0, 1}), Bytes(in));
  ASSERT_EQ(quarter.status, MCULAB_TFL_OK) << quarter.error;
  EXPECT_EQ(Values<int16_t>(quarter.out), (std::vector<int16_t>{1, 125, 225, 7500, 15000, 32767}));
  OpRun refused =
      RunOp({Quantized({3, 2}, 7, 0.5f, 1), Quantized({2}, 7, 0.25f, 0, Bytes<int16_t>({3, -100})),
             Quantized({3, 2}, 7, 0.125f, 0)},
            Op(MCULAB_TFL_MUL, {0, 1}), Bytes(in));
  EXPECT_EQ(refused.status, MCULAB_TFL_UNSUPPORTED);
  EXPECT_NE(refused.error.find("operator 0 (MUL): int16 tensors need zero point 0"),
            std::string::npos)
      << refused.error;
}

tw::Operator Mean(int keep_dims) {
  return tw::Operator{MCULAB_TFL_MEAN, {0, 1}, {}, 27, {tw::Option{0, tw::Option::kU8, keep_dims}}};
}

// MEAN int8 over H and W of [1][2][2][3], keep_dims, one quantization: TFLite's QuantizedMeanOrSum
// rounds twice (the 1/4 folded into a multiplier of 2^30 and a right shift of 1), so a sum of 5
// steps gives 2 (1.25 rounded through 2.5), -6 gives -2 and 124 x 4 gives 124.
TEST(TfliteOps, MeanInt8OverHeightAndWidthRoundsAsTfliteMicro) {
  // [y][x][c], zero point 3: channel 0 is 8, 3, 3, 3; channel 1 is 2, 2, 2, 0; channel 2 is 127.
  const std::vector<int8_t> in = {8, 2, 127, 3, 2, 127, 3, 2, 127, 3, 0, 127};
  OpRun mean = RunOp({Quantized({1, 2, 2, 3}, 9, 0.5f, 3), Const({2}, 2, Bytes<int32_t>({1, 2})),
                      Quantized({1, 1, 1, 3}, 9, 0.5f, 3)},
                     Mean(1), Bytes(in));
  ASSERT_EQ(mean.status, MCULAB_TFL_OK) << mean.error;
  EXPECT_EQ(Values<int8_t>(mean.out), (std::vector<int8_t>{2 + 3, -2 + 3, 127}));
}

// MEAN int8 over the last axis (given twice, as -1 and 1), keep_dims false, rescaled from 0.5 to
// 0.25: (10 + 20 + 31) / 3 x 2 = 40.67 gives 41; -301 / 3 x 2 clamps to -128.
TEST(TfliteOps, MeanInt8RescalesAndClampsWithoutKeepDims) {
  const std::vector<int8_t> in = {10, 20, 31, -100, -100, -101};
  OpRun mean = RunOp({Quantized({2, 3}, 9, 0.5f, 0), Const({2}, 2, Bytes<int32_t>({-1, 1})),
                      Quantized({2}, 9, 0.25f, -128)},
                     Mean(0), Bytes(in));
  ASSERT_EQ(mean.status, MCULAB_TFL_OK) << mean.error;
  EXPECT_EQ(Values<int8_t>(mean.out), (std::vector<int8_t>{41 - 128, -128}));
}

TEST(TfliteOps, MeanInt16AndFloat32) {
  // int16 over axis 1 of [2][4]: 10 / 4 rounds to 3; four times 32767 sums in int32.
  const std::vector<int16_t> in16 = {1, 2, 3, 4, 32767, 32767, 32767, 32767};
  OpRun m16 = RunOp({Quantized({2, 4}, 7, 1.0f, 0), Const({1}, 2, Bytes<int32_t>({1})),
                     Quantized({2, 1}, 7, 1.0f, 0)},
                    Mean(1), Bytes(in16));
  ASSERT_EQ(m16.status, MCULAB_TFL_OK) << m16.error;
  EXPECT_EQ(Values<int16_t>(m16.out), (std::vector<int16_t>{3, 32767}));
  // float32 over H and W of [1][2][2][2] (keep_dims) and over axis 0 of [2][3] (not).
  const std::vector<float> f = {1.0f, -1.0f, 2.0f, 0.25f, 3.0f, 0.5f, 4.5f, 0.125f};
  OpRun hw =
      RunOp({Float({1, 2, 2, 2}), Const({2}, 2, Bytes<int32_t>({2, 1})), Float({1, 1, 1, 2})},
            Mean(1), Bytes(f));
  ASSERT_EQ(hw.status, MCULAB_TFL_OK) << hw.error;
  EXPECT_EQ(Values<float>(hw.out), (std::vector<float>{2.625f, -0.03125f}));
  const std::vector<float> g = {1.0f, 2.0f, 1.0f, 4.0f, 5.0f, 1.0f};
  OpRun rows =
      RunOp({Float({2, 3}), Const({1}, 2, Bytes<int32_t>({0})), Float({3})}, Mean(0), Bytes(g));
  ASSERT_EQ(rows.status, MCULAB_TFL_OK) << rows.error;
  EXPECT_EQ(Values<float>(rows.out), (std::vector<float>{2.5f, 3.5f, 1.0f}));
  OpRun third = RunOp({Float({3}), Const({1}, 2, Bytes<int32_t>({0})), Float({1})}, Mean(0),
                      Bytes(std::vector<float>{1.0f, 1.0f, 2.0f}));
  ASSERT_EQ(third.status, MCULAB_TFL_OK) << third.error;
  EXPECT_EQ(Values<float>(third.out), (std::vector<float>{4.0f / 3.0f}));
}

TEST(TfliteRefuses, MeanAxesOutsideTheInputOrAnOutputOfAnotherSize) {
  auto mean = [](std::vector<int32_t> axes, std::vector<int32_t> out_shape) {
    return RunOp(
        {Quantized({2, 3}, 9, 0.5f, 0), Const({static_cast<int32_t>(axes.size())}, 2, Bytes(axes)),
         Quantized(std::move(out_shape), 9, 0.5f, 0)},
        Mean(0), std::vector<uint8_t>(6));
  };
  EXPECT_EQ(mean({1}, {2}).status, MCULAB_TFL_OK);
  for (int32_t axis : {2, -3}) {
    const OpRun r = mean({axis}, {2});
    EXPECT_EQ(r.status, MCULAB_TFL_BAD_SHAPE) << axis;
    EXPECT_NE(r.error.find("operator 0 (MEAN): an axis outside the input's dimensions"),
              std::string::npos)
        << r.error;
  }
  const OpRun other = mean({1}, {3});
  EXPECT_EQ(other.status, MCULAB_TFL_BAD_SHAPE);
  EXPECT_NE(other.error.find("the output's size is not the input's without the axes"),
            std::string::npos)
      << other.error;
}

}  // namespace

// e^x for the float32 kernels (ops/common.c; private to the library): IEEE basic operations in
// double, so every board computes the host's bits.
extern "C" double mculab_tfl_exp(double x);

namespace {

TEST(TfliteFloatMath, ExpIsWithinTwoUnitsInTheLastPlaceOfLibm) {
  int worst = 0;
  for (int i = 0; i <= 400000; ++i) {
    const double x = -745.0 + (709.7 + 745.0) * i / 400000.0;
    const double want = std::exp(x), got = mculab_tfl_exp(x);
    int ulps = 0;
    for (double v = want; v != got && ulps < 3; ++ulps) v = std::nextafter(v, got);
    worst = std::max(worst, ulps);
    ASSERT_LE(ulps, 2) << "x " << x << ": " << got << ", libm " << want;
  }
  EXPECT_EQ(mculab_tfl_exp(0.0), 1.0);
  EXPECT_EQ(mculab_tfl_exp(-800.0), 0.0);
  EXPECT_TRUE(std::isinf(mculab_tfl_exp(710.0)));
  EXPECT_TRUE(std::isnan(mculab_tfl_exp(std::nan(""))));
  std::printf("mculab_tfl_exp: at most %d units in the last place from libm\n", worst);
}

// float32 LOGISTIC and TANH (outputs 1 and 2 of the writer's float activations net, on the
// seeded input x 6): TFLite's reference formulas in float (1 / (1 + expf(-x)), tanhf) with glibc,
// mostly equal (glibc's expf and tanhf are not always correctly rounded; ours round a double),
// never more than 1 unit in the last place apart.
TEST(TfliteFloatMath, LogisticAndTanhAreTflitesReferenceFormulas) {
  const std::vector<uint8_t> bytes =
      mculab::tflite_writer::Serialize(mculab::tflite_writer::ActivationsNetFloat());
  auto m = std::make_unique<mculab_tfl_model>();
  ASSERT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK) << m->error;
  std::vector<uint8_t> arena(1 << 16);
  ASSERT_EQ(mculab_tfl_prepare(m.get(), arena.data(), arena.size()), MCULAB_TFL_OK) << m->error;
  mculab_tfl_seed_input(m.get(), 3);
  uint32_t in_bytes = 0, n = 0;
  const float* input = static_cast<const float*>(mculab_tfl_input_at(m.get(), 0, &in_bytes));
  const std::vector<float> in(input, input + in_bytes / 4);  // the plan may reuse its memory
  ASSERT_EQ(mculab_tfl_invoke(m.get(), nullptr), MCULAB_TFL_OK);
  const float* logistic = static_cast<const float*>(mculab_tfl_output_at(m.get(), 1, &n));
  const float* tanh = static_cast<const float*>(mculab_tfl_output_at(m.get(), 2, &n));
  ASSERT_EQ(n, in_bytes);
  int equal = 0;
  for (uint32_t i = 0; i < n / 4; ++i) {
    const float x = in[i] * 6.0f;
    const float want_l = 1.0f / (1.0f + std::exp(-x)), want_t = std::tanh(x);
    EXPECT_TRUE(logistic[i] == want_l || std::nextafter(want_l, logistic[i]) == logistic[i])
        << "LOGISTIC(" << x << ") " << logistic[i] << ", TFLite's formula " << want_l;
    EXPECT_TRUE(tanh[i] == want_t || std::nextafter(want_t, tanh[i]) == tanh[i])
        << "TANH(" << x << ") " << tanh[i] << ", tanhf " << want_t;
    equal += (logistic[i] == want_l) + (tanh[i] == want_t);
  }
  EXPECT_GE(equal, static_cast<int>(n / 4) * 2 * 9 / 10) << "more than a tenth differ";
  std::printf("%d of %u values equal to glibc's, the rest 1 unit in the last place apart\n", equal,
              n / 4 * 2);
}

// The heavy operators' naive sums, with scales whose multiplier is a power of two, so that the
// requantization is a plain rounding shift: the 16x8 CONV_2D (input 1, filter 2^-6, output 1: the
// sum / 64 rounded half up) over SAME and VALID padding, strides and dilations, and the int8
// TRANSPOSE_CONV (output scale 2: the sum / 2 rounded half up) with input and output zero points.
struct Lcg {
  uint32_t x;
  int32_t In(int32_t lo, int32_t hi) {
    x = x * 1664525u + 1013904223u;
    return lo + static_cast<int32_t>((x >> 8) % static_cast<uint32_t>(hi - lo + 1));
  }
};

// TFLite's padding before for `padding` (0 SAME, 1 VALID), and the output size.
int32_t OutSize(int padding, int32_t in, int32_t k, int32_t s, int32_t d) {
  const int32_t eff = (k - 1) * d + 1;
  return padding == 0 ? (in + s - 1) / s : (in - eff + s) / s;
}
int32_t PadBefore(int padding, int32_t in, int32_t k, int32_t s, int32_t d, int32_t out) {
  if (padding == 1) return 0;
  return std::max((out - 1) * s + (k - 1) * d + 1 - in, 0) / 2;
}

TEST(TfliteOps, Conv16x8IsTheSumOfTheTapsInsideOverPaddingStridesAndDilations) {
  // batches, h, w, in_c, out_c, kh, kw, stride h, w, dilation h, w, padding
  const int32_t shapes[][12] = {
      {1, 5, 7, 3, 5, 3, 3, 1, 1, 1, 1, 0},  {2, 6, 9, 2, 4, 3, 2, 2, 2, 1, 1, 0},
      {1, 7, 7, 3, 3, 3, 3, 1, 1, 2, 2, 0},  {1, 6, 8, 5, 2, 2, 3, 1, 2, 1, 2, 0},
      {1, 4, 6, 5, 6, 1, 3, 1, 1, 1, 1, 1},  {1, 4, 6, 9, 6, 1, 3, 1, 1, 1, 1, 0},
      {2, 4, 6, 17, 7, 1, 1, 2, 2, 1, 1, 1}, {1, 8, 5, 2, 9, 4, 4, 2, 1, 1, 1, 1}};
  Lcg rng{7};
  for (const auto& c : shapes) {
    const int32_t n = c[0], h = c[1], w = c[2], ic = c[3], oc = c[4], kh = c[5], kw = c[6];
    const int32_t sh = c[7], sw = c[8], dh = c[9], dw = c[10], padding = c[11];
    const int32_t oh = OutSize(padding, h, kh, sh, dh), ow = OutSize(padding, w, kw, sw, dw);
    const int32_t ph = PadBefore(padding, h, kh, sh, dh, oh),
                  pw = PadBefore(padding, w, kw, sw, dw, ow);
    std::vector<int16_t> in(static_cast<size_t>(n * h * w * ic));
    for (auto& v : in)
      v = static_cast<int16_t>(rng.In(0, 7) == 0 ? (rng.In(0, 1) ? 32767 : -32768)
                                                 : rng.In(-32768, 32767));
    std::vector<int8_t> filter(static_cast<size_t>(oc * kh * kw * ic));
    for (auto& v : filter) v = static_cast<int8_t>(rng.In(-127, 127));
    std::vector<int64_t> bias(static_cast<size_t>(oc));
    for (auto& v : bias) v = rng.In(-(1 << 20), 1 << 20);
    tw::Operator op{MCULAB_TFL_CONV_2D,
                    {0, 1, 2},
                    {},
                    1,
                    {tw::Option{0, tw::Option::kU8, padding}, tw::Option{1, tw::Option::kI32, sw},
                     tw::Option{2, tw::Option::kI32, sh}, tw::Option{4, tw::Option::kI32, dw},
                     tw::Option{5, tw::Option::kI32, dh}}};
    OpRun r = RunOp(
        {Quantized({n, h, w, ic}, 7, 1.0f, 0),
         Quantized({oc, kh, kw, ic}, 9, 1.0f / 64, 0, Bytes(filter)),
         Quantized({oc}, 4, 1.0f / 64, 0, Bytes(bias)), Quantized({n, oh, ow, oc}, 7, 1.0f, 0)},
        op, Bytes(in));
    ASSERT_EQ(r.status, MCULAB_TFL_OK) << r.error;
    const std::vector<int16_t> got = Values<int16_t>(r.out);
    ASSERT_EQ(got.size(), static_cast<size_t>(n * oh * ow * oc));
    size_t at = 0;
    for (int32_t b = 0; b < n; ++b)
      for (int32_t y = 0; y < oh; ++y)
        for (int32_t x = 0; x < ow; ++x)
          for (int32_t o = 0; o < oc; ++o, ++at) {
            int64_t acc = bias[o];
            for (int32_t fy = 0; fy < kh; ++fy)
              for (int32_t fx = 0; fx < kw; ++fx) {
                const int32_t iy = y * sh - ph + fy * dh, ix = x * sw - pw + fx * dw;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                for (int32_t i = 0; i < ic; ++i) {
                  acc += int64_t{filter[((o * kh + fy) * kw + fx) * ic + i]} *
                         in[((b * h + iy) * w + ix) * ic + i];
                }
              }
            const int64_t want = std::clamp<int64_t>((acc + 32) >> 6, -32768, 32767);
            ASSERT_EQ(got[at], want) << "shape " << (&c - shapes) << " output " << at;
          }
  }
}

TEST(TfliteOps, TransposeConvInt8IsTheScatteredSumWithZeroPoints) {
  // h, w, in_c, out_c, kh, kw, stride h, w, padding, output h, w
  const int32_t shapes[][11] = {{3, 4, 3, 5, 3, 3, 2, 2, 0, 6, 8},
                                {3, 4, 17, 3, 3, 4, 1, 2, 1, 5, 10},
                                {2, 3, 4, 18, 2, 2, 2, 2, 1, 4, 6}};
  Lcg rng{11};
  for (const auto& c : shapes) {
    const int32_t h = c[0], w = c[1], ic = c[2], oc = c[3], kh = c[4], kw = c[5];
    const int32_t sh = c[6], sw = c[7], padding = c[8], oh = c[9], ow = c[10];
    const int32_t ph = padding == 0 ? std::max((h - 1) * sh + kh - oh, 0) / 2 : 0;
    const int32_t pw = padding == 0 ? std::max((w - 1) * sw + kw - ow, 0) / 2 : 0;
    const int32_t in_zp = -7, out_zp = 5;
    std::vector<int8_t> in(static_cast<size_t>(h * w * ic));
    for (auto& v : in) v = static_cast<int8_t>(in_zp + rng.In(-3, 3));
    std::vector<int8_t> filter(static_cast<size_t>(oc * kh * kw * ic));
    for (auto& v : filter) v = static_cast<int8_t>(rng.In(-2, 2));
    std::vector<int32_t> bias(static_cast<size_t>(oc));
    for (auto& v : bias) v = rng.In(-20, 20);
    tw::Operator op{MCULAB_TFL_TRANSPOSE_CONV,
                    {3, 1, 0, 2},
                    {},
                    49,
                    {tw::Option{0, tw::Option::kU8, padding}, tw::Option{1, tw::Option::kI32, sw},
                     tw::Option{2, tw::Option::kI32, sh}}};
    OpRun r = RunOp(
        {Quantized({1, h, w, ic}, 9, 1.0f, in_zp),
         Quantized({oc, kh, kw, ic}, 9, 1.0f, 0, Bytes(filter)),
         Quantized({oc}, 2, 1.0f, 0, Bytes(bias)), Const({4}, 2, Bytes<int32_t>({1, oh, ow, oc})),
         Quantized({1, oh, ow, oc}, 9, 2.0f, out_zp)},
        op, Bytes(in));
    ASSERT_EQ(r.status, MCULAB_TFL_OK) << r.error;
    const std::vector<int8_t> got = Values<int8_t>(r.out);
    ASSERT_EQ(got.size(), static_cast<size_t>(oh * ow * oc));
    std::vector<int64_t> acc(got.size());
    for (int32_t y = 0; y < h; ++y)
      for (int32_t x = 0; x < w; ++x)
        for (int32_t fy = 0; fy < kh; ++fy)
          for (int32_t fx = 0; fx < kw; ++fx) {
            const int32_t oy = y * sh - ph + fy, ox = x * sw - pw + fx;
            if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
            for (int32_t o = 0; o < oc; ++o)
              for (int32_t i = 0; i < ic; ++i) {
                acc[(oy * ow + ox) * oc + o] +=
                    int64_t{filter[((o * kh + fy) * kw + fx) * ic + i]} *
                    (in[(y * w + x) * ic + i] - in_zp);
              }
          }
    for (size_t k = 0; k < got.size(); ++k) {
      const int64_t want =
          std::clamp<int64_t>(((acc[k] + bias[k % oc] + 1) >> 1) + out_zp, -128, 127);
      ASSERT_EQ(got[k], want) << "shape " << (&c - shapes) << " output " << k;
    }
  }
}

// ---- pooling, float32 and int16 ----

tw::Operator Pool(int32_t builtin, int padding, int32_t sh, int32_t sw, int32_t kh, int32_t kw,
                  int activation) {
  return tw::Operator{
      builtin,
      {0},
      {},
      5,
      {tw::Option{0, tw::Option::kU8, padding}, tw::Option{1, tw::Option::kI32, sw},
       tw::Option{2, tw::Option::kI32, sh}, tw::Option{3, tw::Option::kI32, kw},
       tw::Option{4, tw::Option::kI32, kh}, tw::Option{5, tw::Option::kU8, activation}}};
}

// batches, h, w, channels, kh, kw, stride h, w, padding (0 SAME, 1 VALID), activation (0 NONE,
// 1 RELU, 3 RELU6): SAME windows hanging over every edge (and a window larger than the input),
// VALID with strides that skip columns, each activation.
const int32_t kPoolShapes[][10] = {{1, 5, 7, 3, 3, 3, 1, 1, 0, 0}, {2, 6, 9, 2, 3, 2, 2, 2, 0, 1},
                                   {1, 3, 3, 4, 4, 4, 1, 1, 0, 3}, {1, 7, 8, 5, 2, 3, 2, 3, 1, 0},
                                   {1, 4, 6, 1, 4, 6, 1, 1, 1, 3}, {2, 5, 5, 3, 2, 2, 3, 3, 0, 1}};

// Calls visit(taps, maximum) for each output of a pooling of shape `c` over `in` (NHWC), in
// output order: the taps inside the input, row by row, and their maximum.
template <typename T, typename Visit>
void ForEachPoolWindow(const int32_t* c, const std::vector<T>& in, Visit visit) {
  const int32_t n = c[0], h = c[1], w = c[2], ch = c[3], kh = c[4], kw = c[5], sh = c[6], sw = c[7],
                padding = c[8];
  const int32_t oh = OutSize(padding, h, kh, sh, 1), ow = OutSize(padding, w, kw, sw, 1);
  const int32_t ph = PadBefore(padding, h, kh, sh, 1, oh),
                pw = PadBefore(padding, w, kw, sw, 1, ow);
  for (int32_t b = 0; b < n; ++b)
    for (int32_t y = 0; y < oh; ++y)
      for (int32_t x = 0; x < ow; ++x)
        for (int32_t k = 0; k < ch; ++k) {
          std::vector<T> taps;
          for (int32_t iy = std::max(y * sh - ph, 0); iy < std::min(y * sh - ph + kh, h); ++iy)
            for (int32_t ix = std::max(x * sw - pw, 0); ix < std::min(x * sw - pw + kw, w); ++ix)
              taps.push_back(in[((b * h + iy) * w + ix) * ch + k]);
          visit(taps, *std::max_element(taps.begin(), taps.end()));
        }
}

// AVERAGE_POOL_2D and MAX_POOL_2D float32: the sum of the taps inside the input in float, row by
// row, over their count (TFLite's reference order, so equal to the bit), or their maximum; then
// the activation's clamp.
TEST(TfliteOps, PoolFloat32AveragesAndMaximisesTheTapsInside) {
  Lcg rng{3};
  for (const auto& c : kPoolShapes) {
    const int32_t n = c[0], h = c[1], w = c[2], ch = c[3], padding = c[8], act = c[9];
    const int32_t oh = OutSize(padding, h, c[4], c[6], 1), ow = OutSize(padding, w, c[5], c[7], 1);
    std::vector<float> in(static_cast<size_t>(n * h * w * ch));
    for (auto& v : in) v = static_cast<float>(rng.In(-80000, 80000)) / 8192.0f;
    const float lo = act == 0 ? -3.4e38f : 0.0f, hi = act == 3 ? 6.0f : 3.4e38f;
    for (int32_t builtin : {MCULAB_TFL_AVERAGE_POOL_2D, MCULAB_TFL_MAX_POOL_2D}) {
      SCOPED_TRACE(testing::Message() << "shape " << (&c - kPoolShapes) << " op " << builtin);
      OpRun r = RunOp({Float({n, h, w, ch}), Float({n, oh, ow, ch})},
                      Pool(builtin, padding, c[6], c[7], c[4], c[5], act), Bytes(in));
      ASSERT_EQ(r.status, MCULAB_TFL_OK) << r.error;
      const std::vector<float> got = Values<float>(r.out);
      ASSERT_EQ(got.size(), static_cast<size_t>(n * oh * ow * ch));
      size_t at = 0;
      ForEachPoolWindow(c, in, [&](const std::vector<float>& taps, float max) {
        float sum = 0.0f;
        for (float v : taps) sum += v;
        const float v =
            builtin == MCULAB_TFL_MAX_POOL_2D ? max : sum / static_cast<float>(taps.size());
        ASSERT_EQ(got[at], std::clamp(v, lo, hi)) << "output " << at;
        ++at;
      });
    }
  }
}

// AVERAGE_POOL_2D and MAX_POOL_2D int16 (scale 2^-10, zero point 0): the average of the taps
// inside rounded to the nearest, halves away from zero (reference_integer_ops::AveragePool's
// (sum +- count / 2) / count), or the maximum; RELU from 0 and RELU6 to round(6 / scale) = 6144.
// Full-range inputs, so sums of 16 values pass int16 and halves of both signs occur.
TEST(TfliteOps, PoolInt16RoundsTheAverageHalfAwayFromZeroAndClamps) {
  Lcg rng{5};
  int halves = 0;
  for (const auto& c : kPoolShapes) {
    const int32_t n = c[0], h = c[1], w = c[2], ch = c[3], padding = c[8], act = c[9];
    const int32_t oh = OutSize(padding, h, c[4], c[6], 1), ow = OutSize(padding, w, c[5], c[7], 1);
    std::vector<int16_t> in(static_cast<size_t>(n * h * w * ch));
    for (auto& v : in) v = static_cast<int16_t>(rng.In(-32768, 32767));
    const int32_t lo = act == 0 ? -32768 : 0, hi = act == 3 ? 6144 : 32767;
    for (int32_t builtin : {MCULAB_TFL_AVERAGE_POOL_2D, MCULAB_TFL_MAX_POOL_2D}) {
      SCOPED_TRACE(testing::Message() << "shape " << (&c - kPoolShapes) << " op " << builtin);
      OpRun r = RunOp({Quantized({n, h, w, ch}, 7, 1.0f / 1024, 0),
                       Quantized({n, oh, ow, ch}, 7, 1.0f / 1024, 0)},
                      Pool(builtin, padding, c[6], c[7], c[4], c[5], act), Bytes(in));
      ASSERT_EQ(r.status, MCULAB_TFL_OK) << r.error;
      const std::vector<int16_t> got = Values<int16_t>(r.out);
      ASSERT_EQ(got.size(), static_cast<size_t>(n * oh * ow * ch));
      size_t at = 0;
      ForEachPoolWindow(c, in, [&](const std::vector<int16_t>& taps, int16_t max) {
        int64_t sum = 0;
        for (int16_t v : taps) sum += v;
        const auto count = static_cast<int64_t>(taps.size());
        if (builtin == MCULAB_TFL_AVERAGE_POOL_2D && sum < 0 && 2 * (-sum % count) == count) {
          ++halves;
        }
        const int64_t v = builtin == MCULAB_TFL_MAX_POOL_2D
                              ? max
                              : std::llround(static_cast<double>(sum) / static_cast<double>(count));
        ASSERT_EQ(got[at], std::clamp<int64_t>(v, lo, hi)) << "output " << at;
        ++at;
      });
    }
  }
  EXPECT_GT(halves, 0) << "no negative average fell on a half";
}

TEST(TfliteRefuses, PoolInt16WithAZeroPointOrAnotherScaleOrMixedTypes) {
  const tw::Operator op = Pool(MCULAB_TFL_AVERAGE_POOL_2D, 0, 1, 1, 2, 2, 0);
  const std::vector<uint8_t> in(2 * 16);
  for (const auto& [in_t, out_t, why] :
       {std::tuple{Quantized({1, 4, 4, 1}, 7, 0.5f, 3), Quantized({1, 4, 4, 1}, 7, 0.5f, 3),
                   "zero point"},
        std::tuple{Quantized({1, 4, 4, 1}, 7, 0.5f, 0), Quantized({1, 4, 4, 1}, 7, 0.25f, 0),
                   "scales differ"},
        std::tuple{Quantized({1, 4, 4, 1}, 7, 0.5f, 0), Quantized({1, 4, 4, 1}, 9, 0.5f, 0),
                   "int16 output"},
        std::tuple{Float({1, 4, 4, 1}), Quantized({1, 4, 4, 1}, 7, 0.5f, 0), "float32 output"}}) {
    OpRun r = RunOp({in_t, out_t}, op, in);
    EXPECT_EQ(r.status, MCULAB_TFL_UNSUPPORTED) << why;
    EXPECT_NE(r.error.find(why), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("AVERAGE_POOL_2D"), std::string::npos) << r.error;
  }
}

// SOFTMAX float32 of [3][2][7] (six rows), beta 0.7, against TFLite's reference formula written
// here with glibc's expf: each row's maximum subtracted (a row near 1000 would overflow without),
// e^((x - max) beta) summed in float in order, each divided by the sum. Ours rounds e^x from a
// double (mculab_tfl_exp) where TFLite calls expf: each output within 2 units in the last place
// of TFLite's (measured: all 42 equal here; expf and a rounded double differ in rare cases), and
// within 1e-6 of the softmax in double.
TEST(TfliteOps, SoftmaxFloat32IsTflitesReferenceFormula) {
  Lcg rng{9};
  std::vector<float> in(42);
  for (auto& v : in) v = static_cast<float>(rng.In(-20000, 20000)) / 1000.0f;
  for (size_t i = 14; i < 21; ++i) in[i] += 1000.0f;  // row 2 near 1000
  in[30] = in[31] = 5.0f;                             // a tie for the maximum
  const float beta = 0.7f;
  OpRun r = RunOp(
      {Float({3, 2, 7}), Float({3, 2, 7})},
      tw::Operator{MCULAB_TFL_SOFTMAX, {0}, {}, 9, {tw::Option{0, tw::Option::kF32, 0, beta}}},
      Bytes(in));
  ASSERT_EQ(r.status, MCULAB_TFL_OK) << r.error;
  const std::vector<float> got = Values<float>(r.out);
  ASSERT_EQ(got.size(), in.size());
  int equal = 0;
  for (size_t row = 0; row < 6; ++row) {
    const float* x = &in[row * 7];
    const float max = *std::max_element(x, x + 7);
    float sum = 0.0f;
    double dsum = 0.0;
    std::vector<float> e(7);
    for (int c = 0; c < 7; ++c) {
      e[c] = std::exp((x[c] - max) * beta);
      sum += e[c];
      dsum += std::exp((static_cast<double>(x[c]) - max) * beta);
    }
    float row_total = 0.0f;
    for (int c = 0; c < 7; ++c) {
      const float want = e[c] / sum;
      const float have = got[row * 7 + c];
      const float ulp = std::nextafter(want, 1.0f) - want;
      EXPECT_LE(std::fabs(have - want), 2 * ulp) << "row " << row << " column " << c;
      EXPECT_NEAR(have, std::exp((static_cast<double>(x[c]) - max) * beta) / dsum, 1e-6);
      if (have == want) ++equal;
      row_total += have;
    }
    EXPECT_NEAR(row_total, 1.0f, 1e-6f) << "row " << row;
  }
  EXPECT_GE(equal, 40) << "of 42 equal to TFLite's formula with glibc's expf";
  EXPECT_EQ(got[30], got[31]) << "tied inputs";
}

TEST(TfliteRefuses, SoftmaxFloat32WithAnotherOutputType) {
  OpRun r = RunOp({Float({1, 4}), Quantized({1, 4}, 9, 1.0f / 256, -128)},
                  tw::Operator{MCULAB_TFL_SOFTMAX, {0}, {}, 9, {}}, Bytes(std::vector<float>(4)));
  EXPECT_EQ(r.status, MCULAB_TFL_UNSUPPORTED);
  EXPECT_NE(r.error.find("SOFTMAX"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("float32 output"), std::string::npos) << r.error;
}

// FULLY_CONNECTED 16x8 (input 1, filter 2^-6, output 1: the multiplier a power of two) against
// the naive sums: with an int64 bias the sum / 64 rounded half up (TFLite's int64
// MultiplyByQuantizedMultiplier, one rounding), exactly; with an int32 bias or none TFLite
// accumulates in int32 and rounds twice (gemmlowp's doubling multiply, then the shift): within 1.
// Inputs at the int16 extremes, depths past one block of the kernel set, batches from a 3-D
// input, RELU from 0.
TEST(TfliteOps, FullyConnected16x8IsTheSumOfProductsRequantized) {
  // batches, depth, outputs, bias (0 none, 2 int32, 4 int64), activation
  const int32_t shapes[][5] = {{1, 5, 3, 4, 0},   {3, 37, 9, 4, 1}, {2, 64, 16, 4, 0},
                               {1, 130, 7, 2, 0}, {2, 17, 5, 0, 1}, {4, 8, 33, 4, 0}};
  Lcg rng{13};
  for (const auto& c : shapes) {
    SCOPED_TRACE(testing::Message() << "shape " << (&c - shapes));
    const int32_t n = c[0], depth = c[1], oc = c[2], bias_type = c[3], act = c[4];
    std::vector<int16_t> in(static_cast<size_t>(n * depth));
    for (auto& v : in)
      v = static_cast<int16_t>(rng.In(0, 5) == 0 ? (rng.In(0, 1) ? 32767 : -32768)
                                                 : rng.In(-32768, 32767));
    std::vector<int8_t> filter(static_cast<size_t>(oc * depth));
    for (auto& v : filter) v = static_cast<int8_t>(rng.In(-127, 127));
    std::vector<int64_t> bias(static_cast<size_t>(oc));
    for (auto& v : bias) v = bias_type == 0 ? 0 : rng.In(-(1 << 22), 1 << 22);
    std::vector<tw::Tensor> tensors = {Quantized({n, 1, depth}, 7, 1.0f, 0),
                                       Quantized({oc, depth}, 9, 1.0f / 64, 0, Bytes(filter))};
    std::vector<int32_t> inputs = {0, 1};
    if (bias_type == 4) tensors.push_back(Quantized({oc}, 4, 1.0f / 64, 0, Bytes(bias)));
    if (bias_type == 2) {
      std::vector<int32_t> b32(bias.begin(), bias.end());
      tensors.push_back(Quantized({oc}, 2, 1.0f / 64, 0, Bytes(b32)));
    }
    if (bias_type != 0) inputs.push_back(2);
    tensors.push_back(Quantized({n, oc}, 7, 1.0f, 0));
    OpRun r =
        RunOp(tensors,
              tw::Operator{
                  MCULAB_TFL_FULLY_CONNECTED, inputs, {}, 8, {tw::Option{0, tw::Option::kU8, act}}},
              Bytes(in));
    ASSERT_EQ(r.status, MCULAB_TFL_OK) << r.error;
    const std::vector<int16_t> got = Values<int16_t>(r.out);
    ASSERT_EQ(got.size(), static_cast<size_t>(n * oc));
    for (int32_t b = 0; b < n; ++b)
      for (int32_t o = 0; o < oc; ++o) {
        int64_t acc = bias[o];
        for (int32_t d = 0; d < depth; ++d)
          acc += int64_t{filter[o * depth + d]} * in[b * depth + d];
        const int64_t want = std::clamp<int64_t>((acc + 32) >> 6, act == 1 ? 0 : -32768, 32767);
        if (bias_type == 4) {
          ASSERT_EQ(got[b * oc + o], want) << "batch " << b << " output " << o;
        } else {
          ASSERT_NEAR(got[b * oc + o], want, 1) << "batch " << b << " output " << o;
        }
      }
  }
}

TEST(TfliteRefuses, FullyConnected16x8WithAZeroPointOrAnInt64BiasOverInt8) {
  const std::vector<uint8_t> filter(8), bias(16), in(8);
  const tw::Operator op{MCULAB_TFL_FULLY_CONNECTED, {0, 1, 2}, {}, 8, {}};
  // input type and zero point, output type; what the message names
  for (const auto& [in_type, in_zp, out_type, why] :
       {std::tuple{7, 2, 7, "zero point"}, std::tuple{9, 0, 9, "int64 for int16"},
        std::tuple{7, 0, 9, "of one type"}}) {
    OpRun r = RunOp({Quantized({1, 4}, static_cast<uint8_t>(in_type), 1.0f, in_zp),
                     Quantized({2, 4}, 9, 0.5f, 0, filter), Quantized({2}, 4, 0.5f, 0, bias),
                     Quantized({1, 2}, static_cast<uint8_t>(out_type), 1.0f, 0)},
                    op, std::vector<uint8_t>(in.begin(), in.begin() + (in_type == 7 ? 8 : 4)));
    EXPECT_EQ(r.status, MCULAB_TFL_UNSUPPORTED) << why;
    EXPECT_NE(r.error.find(why), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("FULLY_CONNECTED"), std::string::npos) << r.error;
  }
}

// TFLite Micro's SoftmaxInt16 written out (reference_ops::SoftmaxInt16 over the tables its
// Prepare builds with gen_lut<float>, glibc's expf): the tables of e^x on [-10, 0] and
// 1 / (1 + x) on [0, 1], 513 entries, interpolated.
float TfliteRound(float v) { return std::round(v); }

std::vector<int16_t> TfliteMicroLut(float (*func)(float), float lo, float hi) {
  std::vector<int16_t> lut(513);
  const float step = (hi - lo) / 512, half = step / 2, scaling = 65536.0f / 2.0f;
  auto sat = [](float v) { return static_cast<int16_t>(std::clamp(v, -32768.0f, 32767.0f)); };
  for (int i = 0; i < 512; ++i) {
    const float val = func(lo + i * step), mid = func(lo + i * step + half),
                next = func(lo + (i + 1) * step);
    const float interp = TfliteRound((next * scaling + TfliteRound(val * scaling)) / 2);
    const float bias = TfliteRound((interp - TfliteRound(mid * scaling)) / 2);
    lut[i] = sat(TfliteRound(val * scaling) - bias);
  }
  lut[512] = sat(TfliteRound(func(hi) * scaling));
  return lut;
}

int16_t TfliteLookup(int16_t v, const std::vector<int16_t>& lut) {
  const int index = 256 + (v >> 7), offset = v & 0x7f;
  return static_cast<int16_t>(lut[index] + (((lut[index + 1] - lut[index]) * offset + 64) >> 7));
}

// SOFTMAX int16 -> int16 (input scale 2^-10, beta 1 and 0.3; output 1/32768): bit for bit
// TFLite Micro's kernel written out above, over rows of spread values, a row of equal values, a
// row at both int16 ends and one wider than a table step; each probability within 3e-4 of the
// softmax in double (the tables' interpolation; measured below that).
TEST(TfliteOps, SoftmaxInt16IsTfliteMicrosTableSoftmax) {
  const std::vector<int16_t> exp_lut =
      TfliteMicroLut([](float x) { return std::exp(x); }, -10.0f, 0.0f);
  const std::vector<int16_t> recip_lut =
      TfliteMicroLut([](float x) { return 1.0f / (1.0f + x); }, 0.0f, 1.0f);
  Lcg rng{21};
  const int32_t rows = 12, depth = 9;
  std::vector<int16_t> in(rows * depth);
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < depth; ++c)
      in[r * depth + c] = static_cast<int16_t>(r == 0   ? 500
                                               : r == 1 ? (c % 2 ? 32767 : -32768)
                                               : r == 2 ? rng.In(-200, 200)
                                                        : rng.In(-6000, 6000));
  for (float beta : {1.0f, 0.3f}) {
    SCOPED_TRACE(beta);
    OpRun r = RunOp(
        {Quantized({rows / 3, 3, depth}, 7, 1.0f / 1024, 0),
         Quantized({rows / 3, 3, depth}, 7, 1.0f / 32768, 0)},
        tw::Operator{MCULAB_TFL_SOFTMAX, {0}, {}, 9, {tw::Option{0, tw::Option::kF32, 0, beta}}},
        Bytes(in));
    ASSERT_EQ(r.status, MCULAB_TFL_OK) << r.error;
    const std::vector<int16_t> got = Values<int16_t>(r.out);
    ASSERT_EQ(got.size(), in.size());
    int32_t multiplier = 0;
    int shift = 0;
    mculab_quantize_multiplier(1.0 / 1024 * beta / (10.0 / 65535.0), &multiplier, &shift);
    ASSERT_GT(shift, 0);
    for (int32_t row = 0; row < rows; ++row) {
      const int16_t* x = &in[row * depth];
      const int16_t max = *std::max_element(x, x + depth);
      std::vector<int32_t> e(depth);
      int32_t sum = 0;
      double dsum = 0;
      for (int32_t c = 0; c < depth; ++c) {
        // MultiplyByQuantizedMultiplier for a left shift (3 and 1 here): one rounding of
        // diff x multiplier x 2^(shift - 31), halves away from zero.
        const int64_t prod = (int64_t{x[c] - max} << std::max(shift, 0)) * multiplier;
        const int32_t right = 31 - std::min(shift, 0);
        const int64_t scaled = (prod + (int64_t{1} << (right - 1)) - (prod < 0)) >> right;
        e[c] = TfliteLookup(
            static_cast<int16_t>(std::clamp<int64_t>(scaled + 32767, -32768, 32767)), exp_lut);
        sum += e[c];
        dsum += std::exp((x[c] - max) / 1024.0 * beta);
      }
      const int headroom = __builtin_clz(static_cast<uint32_t>(sum));
      const int32_t shifted =
          static_cast<int32_t>(((int64_t{sum} << (headroom - 1)) + (1 << 13)) >> 14);
      const int16_t reciprocal = TfliteLookup(
          static_cast<int16_t>(std::clamp(shifted - (1 << 15) - (1 << 16), -32768, 32767)),
          recip_lut);
      for (int32_t c = 0; c < depth; ++c) {
        const int right = 31 - headroom;
        const int64_t want = std::clamp<int64_t>(
            (int64_t{e[c]} * reciprocal + (int64_t{1} << (right - 1))) >> right, 0, 32767);
        ASSERT_EQ(got[row * depth + c], want) << "row " << row << " column " << c;
        EXPECT_NEAR(got[row * depth + c] / 32768.0, std::exp((x[c] - max) / 1024.0 * beta) / dsum,
                    3e-4)
            << "row " << row << " column " << c;
      }
    }
  }
}

TEST(TfliteRefuses, SoftmaxInt16OutputNotQuantizedAsTfliteMicroRequires) {
  for (const auto& [scale, zp] :
       {std::pair{1.0f / 65536, int64_t{0}}, std::pair{1.0f / 32768, int64_t{-32768}}}) {
    OpRun r = RunOp({Quantized({1, 4}, 7, 0.01f, 0), Quantized({1, 4}, 7, scale, zp)},
                    tw::Operator{MCULAB_TFL_SOFTMAX, {0}, {}, 9, {}}, std::vector<uint8_t>(8));
    EXPECT_EQ(r.status, MCULAB_TFL_UNSUPPORTED) << scale;
    EXPECT_NE(r.error.find("scale 1/32768"), std::string::npos) << r.error;
  }
}

}  // namespace

namespace {

// float32 values k x 0.0173 for k in [-128, 128], from `rng`: their products and sums round, so
// a sum in another order gives other bits.
std::vector<float> FloatValues(Lcg& rng, size_t n) {
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(rng.In(-128, 128)) * 0.0173f;
  return v;
}

// A fused activation's clamp (ActivationFunctionType: 0 NONE, 1 RELU, 2 RELU_N1_TO_1, 3 RELU6).
float ClampTo(int activation, float v) {
  const float lo[] = {-INFINITY, 0.0f, -1.0f, 0.0f}, hi[] = {INFINITY, INFINITY, 1.0f, 6.0f};
  return std::min(std::max(v, lo[activation]), hi[activation]);
}

// A float32 convolution's outputs: equal to `exact` (TFLite's reference order in float), and
// within float rounding of `in_double` (the same sums in double, then the bias and the clamp).
void ExpectFloatOutputs(const OpRun& r, const std::vector<float>& exact,
                        const std::vector<double>& in_double, size_t shape) {
  ASSERT_EQ(r.status, MCULAB_TFL_OK) << r.error;
  const std::vector<float> got = Values<float>(r.out);
  ASSERT_EQ(got.size(), exact.size());
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_EQ(got[k], exact[k]) << "shape " << shape << " output " << k;
    ASSERT_NEAR(got[k], in_double[k], 1e-5 * std::max(1.0, std::abs(in_double[k])))
        << "shape " << shape << " output " << k;
  }
}

// float32 CONV_2D and DEPTHWISE_CONV_2D: reference_ops::Conv and DepthwiseConv, each output the
// float sum from 0 over filter y, filter x, input channel (taps outside the input skipped), then
// the bias, then the activation clamp; over SAME and VALID, strides, dilations, depth
// multipliers, every fused activation, with and without bias.
TEST(TfliteOps, ConvAndDepthwiseFloat32AreTheReferenceSumsInTheirOrder) {
  // batches, h, w, in_c, out_c (depthwise: the multiplier), kh, kw, stride h, w, dilation h, w,
  // padding, activation, bias
  const int32_t shapes[][14] = {
      {1, 5, 7, 3, 5, 3, 3, 1, 1, 1, 1, 0, 0, 1}, {2, 6, 9, 2, 4, 3, 2, 2, 2, 1, 1, 0, 1, 1},
      {1, 7, 7, 3, 3, 3, 3, 1, 1, 2, 2, 0, 3, 0}, {1, 6, 8, 5, 2, 2, 3, 1, 2, 1, 2, 0, 2, 1},
      {1, 4, 6, 5, 6, 1, 3, 1, 1, 1, 1, 1, 1, 1}, {1, 8, 5, 2, 3, 4, 4, 2, 1, 1, 1, 1, 0, 0}};
  Lcg rng{13};
  for (const bool depthwise : {false, true}) {
    for (const auto& c : shapes) {
      const int32_t n = c[0], h = c[1], w = c[2], ic = c[3], kh = c[5], kw = c[6];
      const int32_t mult = depthwise ? c[4] : 1, oc = depthwise ? ic * c[4] : c[4];
      const int32_t sh = c[7], sw = c[8], dh = c[9], dw = c[10], padding = c[11];
      const int32_t act = c[12];
      const bool has_bias = c[13] != 0;
      const int32_t oh = OutSize(padding, h, kh, sh, dh), ow = OutSize(padding, w, kw, sw, dw);
      const int32_t ph = PadBefore(padding, h, kh, sh, dh, oh),
                    pw = PadBefore(padding, w, kw, sw, dw, ow);
      const std::vector<float> in = FloatValues(rng, static_cast<size_t>(n * h * w * ic));
      // CONV_2D's filter [out][kh][kw][in]; DEPTHWISE_CONV_2D's [1][kh][kw][out].
      const std::vector<float> filter =
          FloatValues(rng, static_cast<size_t>(oc * kh * kw * (depthwise ? 1 : ic)));
      const std::vector<float> bias = FloatValues(rng, static_cast<size_t>(oc));
      const int32_t builtin = depthwise ? MCULAB_TFL_DEPTHWISE_CONV_2D : MCULAB_TFL_CONV_2D;
      tw::Operator op{
          builtin, {0, 1, has_bias ? 2 : -1}, {}, static_cast<uint8_t>(depthwise ? 2 : 1), {}};
      if (depthwise) {
        op.options = {
            tw::Option{0, tw::Option::kU8, padding}, tw::Option{1, tw::Option::kI32, sw},
            tw::Option{2, tw::Option::kI32, sh},     tw::Option{3, tw::Option::kI32, mult},
            tw::Option{4, tw::Option::kU8, act},     tw::Option{5, tw::Option::kI32, dw},
            tw::Option{6, tw::Option::kI32, dh}};
      } else {
        op.options = {tw::Option{0, tw::Option::kU8, padding}, tw::Option{1, tw::Option::kI32, sw},
                      tw::Option{2, tw::Option::kI32, sh},     tw::Option{3, tw::Option::kU8, act},
                      tw::Option{4, tw::Option::kI32, dw},     tw::Option{5, tw::Option::kI32, dh}};
      }
      const std::vector<int32_t> filter_shape =
          depthwise ? std::vector<int32_t>{1, kh, kw, oc} : std::vector<int32_t>{oc, kh, kw, ic};
      const OpRun r = RunOp({Float({n, h, w, ic}), Float(filter_shape, Bytes(filter)),
                             Float({oc}, Bytes(bias)), Float({n, oh, ow, oc})},
                            op, Bytes(in));
      std::vector<float> exact;
      std::vector<double> in_double;
      for (int32_t b = 0; b < n; ++b)
        for (int32_t y = 0; y < oh; ++y)
          for (int32_t x = 0; x < ow; ++x)
            for (int32_t o = 0; o < oc; ++o) {
              float sum = 0.0f;
              double sum_d = 0.0;
              for (int32_t fy = 0; fy < kh; ++fy)
                for (int32_t fx = 0; fx < kw; ++fx) {
                  const int32_t iy = y * sh - ph + fy * dh, ix = x * sw - pw + fx * dw;
                  if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                  for (int32_t i = depthwise ? o / mult : 0; i < (depthwise ? o / mult + 1 : ic);
                       ++i) {
                    const float fv = depthwise ? filter[(fy * kw + fx) * oc + o]
                                               : filter[((o * kh + fy) * kw + fx) * ic + i];
                    const float xv = in[((b * h + iy) * w + ix) * ic + i];
                    const float product = fv * xv;  // rounded to float, as the reference
                    sum += product;
                    sum_d += static_cast<double>(fv) * xv;
                  }
                }
              const float bv = has_bias ? bias[o] : 0.0f;
              exact.push_back(ClampTo(act, sum + bv));
              in_double.push_back(ClampTo(act, static_cast<float>(sum_d + bv)));
            }
      SCOPED_TRACE(depthwise ? "DEPTHWISE_CONV_2D" : "CONV_2D");
      ExpectFloatOutputs(r, exact, in_double, static_cast<size_t>(&c - shapes));
    }
  }
}

// float32 TRANSPOSE_CONV: reference_ops::TransposeConv, every input value times every filter tap
// landing inside the output added into it from 0 in input order (y, x, channel), then the bias,
// then the activation clamp.
TEST(TfliteOps, TransposeConvFloat32IsTheReferenceScatterInItsOrder) {
  // h, w, in_c, out_c, kh, kw, stride h, w, padding, output h, w, activation, bias
  const int32_t shapes[][13] = {{3, 4, 3, 5, 3, 3, 2, 2, 0, 6, 8, 0, 1},
                                {3, 4, 17, 3, 3, 4, 1, 2, 1, 5, 10, 1, 1},
                                {2, 3, 4, 6, 2, 2, 2, 2, 1, 4, 6, 3, 0},
                                {4, 2, 2, 3, 3, 1, 2, 1, 0, 8, 2, 2, 1}};
  Lcg rng{17};
  for (const auto& c : shapes) {
    const int32_t h = c[0], w = c[1], ic = c[2], oc = c[3], kh = c[4], kw = c[5];
    const int32_t sh = c[6], sw = c[7], padding = c[8], oh = c[9], ow = c[10], act = c[11];
    const bool has_bias = c[12] != 0;
    const int32_t ph = padding == 0 ? std::max((h - 1) * sh + kh - oh, 0) / 2 : 0;
    const int32_t pw = padding == 0 ? std::max((w - 1) * sw + kw - ow, 0) / 2 : 0;
    const std::vector<float> in = FloatValues(rng, static_cast<size_t>(h * w * ic));
    const std::vector<float> filter = FloatValues(rng, static_cast<size_t>(oc * kh * kw * ic));
    const std::vector<float> bias = FloatValues(rng, static_cast<size_t>(oc));
    tw::Operator op{MCULAB_TFL_TRANSPOSE_CONV,
                    {3, 1, 0, has_bias ? 2 : -1},
                    {},
                    49,
                    {tw::Option{0, tw::Option::kU8, padding}, tw::Option{1, tw::Option::kI32, sw},
                     tw::Option{2, tw::Option::kI32, sh}, tw::Option{3, tw::Option::kU8, act}}};
    const OpRun r = RunOp(
        {Float({1, h, w, ic}), Float({oc, kh, kw, ic}, Bytes(filter)), Float({oc}, Bytes(bias)),
         Const({4}, 2, Bytes<int32_t>({1, oh, ow, oc})), Float({1, oh, ow, oc})},
        op, Bytes(in));
    std::vector<float> exact(static_cast<size_t>(oh * ow * oc), 0.0f);
    std::vector<double> in_double(exact.size(), 0.0);
    for (int32_t y = 0; y < h; ++y)
      for (int32_t x = 0; x < w; ++x)
        for (int32_t i = 0; i < ic; ++i)
          for (int32_t fy = 0; fy < kh; ++fy)
            for (int32_t fx = 0; fx < kw; ++fx)
              for (int32_t o = 0; o < oc; ++o) {
                const int32_t oy = y * sh - ph + fy, ox = x * sw - pw + fx;
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                const float fv = filter[((o * kh + fy) * kw + fx) * ic + i];
                const float xv = in[(y * w + x) * ic + i];
                const float product = fv * xv;
                exact[(oy * ow + ox) * oc + o] += product;
                in_double[(oy * ow + ox) * oc + o] += static_cast<double>(fv) * xv;
              }
    for (size_t k = 0; k < exact.size(); ++k) {
      const float bv = bias[k % oc];
      exact[k] = ClampTo(act, has_bias ? exact[k] + bv : exact[k]);
      in_double[k] = ClampTo(act, static_cast<float>(in_double[k] + (has_bias ? bv : 0.0)));
    }
    ExpectFloatOutputs(r, exact, in_double, static_cast<size_t>(&c - shapes));
  }
}

// float32 convolutions refuse a filter or bias of another type, and a float32 input with an int8
// output, naming what they need.
TEST(TfliteOps, ConvFloat32RefusesMixedTypes) {
  const std::vector<float> filter(2 * 3 * 3 * 3, 0.5f);
  const tw::Operator conv{MCULAB_TFL_CONV_2D,
                          {0, 1, 2},
                          {},
                          1,
                          {tw::Option{0, tw::Option::kU8, 0}, tw::Option{1, tw::Option::kI32, 1},
                           tw::Option{2, tw::Option::kI32, 1}}};
  const std::vector<uint8_t> in(4 * 4 * 4 * 3, 0);
  OpRun int8_filter =
      RunOp({Float({1, 4, 4, 3}), Quantized({2, 3, 3, 3}, 9, 0.5f, 0, std::vector<uint8_t>(54, 1)),
             Float({2}, Bytes(std::vector<float>{0.0f, 0.0f})), Float({1, 4, 4, 2})},
            conv, in);
  EXPECT_EQ(int8_filter.status, MCULAB_TFL_UNSUPPORTED);
  EXPECT_NE(int8_filter.error.find("float32 input needs a constant float32 filter"),
            std::string::npos)
      << int8_filter.error;
  OpRun int32_bias = RunOp({Float({1, 4, 4, 3}), Float({2, 3, 3, 3}, Bytes(filter)),
                            Const({2}, 2, Bytes<int32_t>({0, 0})), Float({1, 4, 4, 2})},
                           conv, in);
  EXPECT_EQ(int32_bias.status, MCULAB_TFL_UNSUPPORTED);
  EXPECT_NE(int32_bias.error.find("bias must be constant float32"), std::string::npos)
      << int32_bias.error;
  OpRun int8_out = RunOp(
      {Float({1, 4, 4, 3}), Float({2, 3, 3, 3}, Bytes(filter)),
       Float({2}, Bytes(std::vector<float>{0.0f, 0.0f})), Quantized({1, 4, 4, 2}, 9, 0.5f, 0)},
      conv, in);
  EXPECT_EQ(int8_out.status, MCULAB_TFL_UNSUPPORTED);
  EXPECT_NE(int8_out.error.find("float32 output"), std::string::npos) << int8_out.error;
}

}  // namespace

namespace {

// ---- SVDF float32 ----

// The state the SVDF test puts in place of the reset one (every inference starts from a zero
// state), written by the hook before the operator runs: a state with a past, so the shift and
// every time weight count.
mculab_tfl_model* g_svdf_model = nullptr;
std::vector<float> g_svdf_state;

void FillSvdfState(uint16_t, const char*, const char*) {
  const mculab_tfl_tensor& s = g_svdf_model->tensors[g_svdf_model->ops[0].inputs[4]];
  ASSERT_EQ(s.bytes, g_svdf_state.size() * sizeof(float));
  std::memcpy(s.data, g_svdf_state.data(), s.bytes);
}

// ActivationValFloat for NONE (0), RELU (1), RELU_N1_TO_1 (2), RELU6 (3).
template <typename T>
T SvdfActivation(int act, T x) {
  switch (act) {
    case 1:
      return std::max<T>(0, x);
    case 2:
      return std::max<T>(-1, std::min<T>(x, 1));
    case 3:
      return std::max<T>(0, std::min<T>(x, 6));
    default:
      return x;
  }
}

// SVDF float32, batches 2, memory 4, rank 2 (3 units, 6 filters), from a zero state and from a
// state with a past, in each fused activation: against the SVDF written out in double (shift each
// filter's state row left, the feature dot product into its newest value, the time dot product,
// the rank's sums onto the bias, the activation) within 1e-6, and bit for bit against
// EvalFloatSvdfReference's loops in float in TFLite Micro's order. A wrong shift, column, time
// weight, rank grouping or bias is off by far more.
TEST(TfliteOps, SvdfFloat32IsTfliteMicrosReferenceInItsOrder) {
  const int32_t batches = 2, rank = 2, units = 3, filters = 6, memory = 4, width = 5;
  for (int act : {0, 1, 2, 3}) {
    for (bool past : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "activation " << act << " past " << past);
      const tw::Model model = tw::SvdfNetFloat(batches, rank, static_cast<uint8_t>(act));
      const std::vector<float> wf = Values<float>(model.tensors[1].data);
      const std::vector<float> wt = Values<float>(model.tensors[2].data);
      const std::vector<float> bias = Values<float>(model.tensors[3].data);
      ASSERT_EQ(wf.size(), static_cast<size_t>(filters * width));
      ASSERT_EQ(wt.size(), static_cast<size_t>(filters * memory));
      std::vector<float> state0(static_cast<size_t>(batches * filters * memory), 0.0f);
      if (past) {
        for (size_t i = 0; i < state0.size(); ++i) {
          state0[i] = static_cast<float>(static_cast<int>((i * 5u) % 11u) - 5) / 3.0f;
        }
      }
      const std::vector<uint8_t> bytes = tw::Serialize(model);
      auto m = std::make_unique<mculab_tfl_model>();
      std::vector<uint8_t> arena(1u << 14);
      ASSERT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK) << m->error;
      ASSERT_EQ(mculab_tfl_prepare(m.get(), arena.data(), arena.size()), MCULAB_TFL_OK) << m->error;
      mculab_tfl_seed_input(m.get(), 1);
      const mculab_tfl_tensor& in_t = m->tensors[m->inputs[0]];
      std::vector<float> x(in_t.bytes / sizeof(float));
      std::memcpy(x.data(), in_t.data, in_t.bytes);
      ASSERT_EQ(x.size(), static_cast<size_t>(batches * width));
      g_svdf_model = m.get();
      g_svdf_state = state0;
      const mculab_tfl_hooks hooks{FillSvdfState, nullptr};
      ASSERT_EQ(mculab_tfl_invoke(m.get(), past ? &hooks : nullptr), MCULAB_TFL_OK) << m->error;
      uint32_t n = 0;
      const auto* out_bytes = static_cast<const uint8_t*>(mculab_tfl_output_at(m.get(), 0, &n));
      ASSERT_EQ(n, static_cast<uint32_t>(batches * units * 4));
      const std::vector<float> out = Values<float>(std::vector<uint8_t>(out_bytes, out_bytes + n));

      // In double, filter by filter.
      double max_diff = 0.0;
      for (int32_t b = 0; b < batches; ++b) {
        for (int32_t u = 0; u < units; ++u) {
          double acc = bias[u];
          for (int32_t k = 0; k < rank; ++k) {
            const int32_t f = u * rank + k;
            const size_t row = static_cast<size_t>((b * filters + f) * memory);
            double feature = 0.0;
            for (int32_t i = 0; i < width; ++i) {
              feature += static_cast<double>(wf[f * width + i]) * x[b * width + i];
            }
            for (int32_t j = 0; j < memory; ++j) {
              const double s = j + 1 < memory ? static_cast<double>(state0[row + j + 1]) : feature;
              acc += static_cast<double>(wt[f * memory + j]) * s;
            }
          }
          const double want = SvdfActivation<double>(act, acc);
          const double d = std::abs(want - out[b * units + u]);
          max_diff = std::max(max_diff, d);
          EXPECT_LE(d, 1e-6 * std::max(1.0, std::abs(want))) << b << " " << u;
        }
      }
      // EvalFloatSvdfReference's loops, in float.
      std::vector<float> state = state0;
      for (size_t i = 0; i + 1 < state.size(); ++i) state[i] = state[i + 1];
      for (int32_t b = 0; b < batches; ++b) {
        for (int32_t f = 0; f < filters; ++f) {
          float dot = 0.0f;
          for (int32_t i = 0; i < width; ++i) dot += wf[f * width + i] * x[b * width + i];
          state[static_cast<size_t>((b * filters + f) * memory + memory - 1)] = dot;
        }
      }
      std::vector<float> scratch(static_cast<size_t>(batches * filters));
      for (int32_t b = 0; b < batches; ++b) {
        for (int32_t f = 0; f < filters; ++f) {
          float sum = 0.0f;
          for (int32_t j = 0; j < memory; ++j) {
            sum += wt[f * memory + j] * state[static_cast<size_t>((b * filters + f) * memory + j)];
          }
          scratch[static_cast<size_t>(b * filters + f)] = sum;
        }
      }
      for (int32_t b = 0; b < batches; ++b) {
        for (int32_t u = 0; u < units; ++u) {
          float o = bias[u];
          for (int32_t k = 0; k < rank; ++k)
            o += scratch[static_cast<size_t>(b * filters + u * rank + k)];
          o = SvdfActivation<float>(act, o);
          EXPECT_EQ(std::memcmp(&o, &out[b * units + u], 4), 0)
              << b << " " << u << ": " << o << " vs " << out[b * units + u];
        }
      }
      // Something was computed: not all one value.
      EXPECT_NE(*std::min_element(out.begin(), out.end()),
                *std::max_element(out.begin(), out.end()));
      // The hook's state was used and left shifted: the state after is the float loop's.
      const mculab_tfl_tensor& s = m->tensors[m->ops[0].inputs[4]];
      EXPECT_EQ(std::memcmp(s.data, state.data(), s.bytes), 0);
      std::printf("SVDF float32 activation %d %s: %zu values within %.3g of double\n", act,
                  past ? "with a past" : "from zero", out.size(), max_diff);
    }
  }
  g_svdf_model = nullptr;
}

// float32 SVDF refuses mixed types (int8 weights, an int8 output, an int32 bias), a state of
// another shape and a fused activation TFLite Micro's float path does not clamp to (TANH),
// naming what it needs.
TEST(TfliteRefuses, SvdfFloat32MixedTypesShapesAndActivation) {
  auto run = [](tw::Model model) {
    ModelRun r(tw::Serialize(model));
    return std::make_pair(r.First(), std::string(r.m->error));
  };
  tw::Model int8_weights = tw::SvdfNetFloat();
  int8_weights.tensors[1] =
      Quantized(int8_weights.tensors[1].shape, 9, 0.5f, 0, std::vector<uint8_t>(6 * 5, 1));
  tw::Model int8_out = tw::SvdfNetFloat();
  int8_out.tensors[5] = Quantized({2, 3}, 9, 0.5f, 0);
  tw::Model int32_bias = tw::SvdfNetFloat();
  int32_bias.tensors[3] = Const({3}, 2, Bytes<int32_t>({0, 0, 0}));
  tw::Model state_shape = tw::SvdfNetFloat();
  state_shape.tensors[4].shape = {2, 4 * 6 + 1};
  tw::Model tanh = tw::SvdfNetFloat(2, 2, 4);
  const std::pair<tw::Model, const char*> cases[] = {
      {int8_weights, "float32 input needs constant float32 feature and time weights"},
      {int8_out, "float32 input needs constant float32 feature and time weights"},
      {int32_bias, "bias must be constant float32"},
      {state_shape, "weights, state and output do not fit the input and rank"},
      {tanh, "fused activation other than RELU, RELU6, RELU_N1_TO_1"}};
  for (const auto& [model, why] : cases) {
    const auto [status, error] = run(model);
    EXPECT_NE(status, MCULAB_TFL_OK) << why;
    EXPECT_NE(error.find(why), std::string::npos) << error;
  }
  const auto [status, error] = run(tw::SvdfNetFloat());
  EXPECT_EQ(status, MCULAB_TFL_OK) << error;
}

}  // namespace
