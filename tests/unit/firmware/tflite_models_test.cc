// The int8 TFLite interpreter over the four MLPerf Tiny reference models (../shared/models):
// each loads, prepares within a planned arena and runs on a seeded input to a recorded output
// checksum. The checksums pin the kernels' arithmetic bit for bit: a change in any operator's
// rounding changes them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "mculab/runner_protocol.h"
#include "mculab/tflite.h"
#include "tflite_micro_models.h"
#include "tflite_writer.h"

namespace {

std::string ModelsDir() { return MCULAB_SHARED_MODELS_DIR; }

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

struct ModelCase {
  const char* file;
  uint32_t input_bytes;
  uint32_t output_bytes;
  int num_ops;
  uint32_t crc;  // CRC-32 of the output for mculab_tfl_seed_input(seed 1)
};

class MlperfTinyModel : public testing::TestWithParam<ModelCase> {};

TEST_P(MlperfTinyModel, LoadsPreparesAndRuns) {
  const ModelCase& mc = GetParam();
  const std::string path = ModelsDir() + "/mlperf-tiny/" + mc.file;
  std::vector<uint8_t> bytes = ReadFile(path);
  if (bytes.empty()) GTEST_SKIP() << path << " is absent (MCULAB_SHARED_MODELS_DIR)";
  auto m = std::make_unique<mculab_tfl_model>();
  ASSERT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK) << m->error;
  EXPECT_EQ(m->num_ops, mc.num_ops);
  ASSERT_EQ(mculab_tfl_prepare(m.get(), nullptr, 0), MCULAB_TFL_NO_MEMORY);
  const uint32_t need = m->plan.arena_bytes + m->plan.persistent_bytes + MCULAB_TFL_ALIGN;
  std::vector<uint8_t> arena(need);
  ASSERT_EQ(mculab_tfl_prepare(m.get(), arena.data(), arena.size()), MCULAB_TFL_OK) << m->error;
  uint32_t in_bytes = 0, out_bytes = 0;
  ASSERT_NE(mculab_tfl_input(m.get(), &in_bytes), nullptr);
  EXPECT_EQ(in_bytes, mc.input_bytes);
  mculab_tfl_seed_input(m.get(), 1);
  ASSERT_EQ(mculab_tfl_invoke(m.get(), nullptr), MCULAB_TFL_OK) << m->error;
  const int8_t* out = mculab_tfl_output(m.get(), &out_bytes);
  EXPECT_EQ(out_bytes, mc.output_bytes);
  const uint32_t crc = mculab_crc32(0, reinterpret_cast<const uint8_t*>(out), out_bytes);
  EXPECT_EQ(crc, mc.crc) << std::hex << crc;
  if (m->ops[m->num_ops - 1].builtin == MCULAB_TFL_SOFTMAX) {
    // Probabilities with scale 1/256 and zero point -128 add up to ~1.
    int sum = 0;
    for (uint32_t i = 0; i < out_bytes; ++i) sum += out[i] + 128;
    EXPECT_NEAR(sum, 256, out_bytes);
  }
  uint64_t macs = 0;
  for (unsigned i = 0; i < m->num_ops; ++i) macs += m->ops[i].macs;
  std::printf("%s: %u ops, %llu MACs, planned arena %u bytes (naive %u), persistent %u\n", mc.file,
              m->num_ops, static_cast<unsigned long long>(macs), m->plan.arena_bytes,
              m->plan.naive_bytes, m->plan.persistent_bytes);
}

INSTANTIATE_TEST_SUITE_P(
    All, MlperfTinyModel,
    testing::Values(ModelCase{"kws_ref_model.tflite", 490, 12, 13, 0xfc17dc01u},
                    ModelCase{"ic_resnet8_int8.tflite", 3072, 10, 16, 0x74f9d306u},
                    ModelCase{"vww_96_int8.tflite", 27648, 2, 31, 0xccf8c6c3u},
                    ModelCase{"ad01_int8.tflite", 640, 640, 10, 0x3c8bb83fu}),
    [](const testing::TestParamInfo<ModelCase>& i) {
      std::string n = i.param.file;
      return n.substr(0, n.find('_'));
    });

// TensorFlow Lite Micro's own models (../shared/models/tflite-micro): each runs on its seeded
// inputs (every input, in the graph's order) to a recorded checksum over every output.
struct MicroCase {
  const char* file;
  int num_inputs;
  int num_ops;
  uint32_t crc;  // mculab_tfl_output_crc32 for mculab_tfl_seed_input(seed 1)
};

class TfliteMicroModel : public testing::TestWithParam<MicroCase> {};

TEST_P(TfliteMicroModel, LoadsPreparesAndRuns) {
  const MicroCase& mc = GetParam();
  const std::string path = ModelsDir() + "/tflite-micro/" + mc.file;
  std::vector<uint8_t> bytes = ReadFile(path);
  if (bytes.empty()) GTEST_SKIP() << path << " is absent (MCULAB_SHARED_MODELS_DIR)";
  auto m = std::make_unique<mculab_tfl_model>();
  ASSERT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK) << m->error;
  EXPECT_EQ(m->num_ops, mc.num_ops);
  EXPECT_EQ(m->num_inputs, mc.num_inputs);
  ASSERT_EQ(mculab_tfl_prepare(m.get(), nullptr, 0), MCULAB_TFL_NO_MEMORY) << m->error;
  std::vector<uint8_t> arena(m->plan.arena_bytes + m->plan.persistent_bytes +
                             m->plan.scratch_bytes + MCULAB_TFL_ALIGN);
  ASSERT_EQ(mculab_tfl_prepare(m.get(), arena.data(), arena.size()), MCULAB_TFL_OK) << m->error;
  mculab_tfl_seed_input(m.get(), 1);
  ASSERT_EQ(mculab_tfl_invoke(m.get(), nullptr), MCULAB_TFL_OK) << m->error;
  const uint32_t crc = mculab_tfl_output_crc32(m.get());
  EXPECT_EQ(crc, mc.crc) << std::hex << crc;
  std::printf("%s: %u ops, planned arena %u bytes (naive %u), persistent %u, scratch %u\n", mc.file,
              m->num_ops, m->plan.arena_bytes, m->plan.naive_bytes, m->plan.persistent_bytes,
              m->plan.scratch_bytes);
}

INSTANTIATE_TEST_SUITE_P(
    All, TfliteMicroModel,
    testing::Values(MicroCase{"person_detect.tflite", 1, 31, 0xf88cc5ebu},
                    MicroCase{"hello_world_int8.tflite", 1, 3, 0xd56f2b94u},
                    MicroCase{"hello_world_float.tflite", 1, 3, 0x2fc74fa6u},
                    MicroCase{"keyword_scrambled.tflite", 1, 15, 0x51b327d0u},
                    MicroCase{"keyword_scrambled_8bit.tflite", 1, 15, 0xe48af6f5u},
                    MicroCase{"micro_speech_quantized.tflite", 1, 4, 0xe4e8b6eeu},
                    MicroCase{"simple_add_model.tflite", 2, 1, 0x5ffd0ed2u},
                    MicroCase{"trained_lstm_int8.tflite", 1, 4, 0x13f31a7bu}),
    [](const testing::TestParamInfo<MicroCase>& i) {
      std::string n = i.param.file;
      return n.substr(0, n.find('.'));
    });

// TFLite Micro's own int16 integration tests (../shared/models/tflite-micro/seanet): each model
// run on its input CSVs (one per graph input, in the graph's order) gives its golden output CSV
// value for value, and the output checksum (mculab_tfl_output_crc32) is the CRC-32 of the golden
// values' bytes.
class SeanetGolden : public testing::TestWithParam<const char*> {};

TEST_P(SeanetGolden, GivesTheGoldenOutputBitForBit) {
  namespace ts = mculab::test_support;
  const ts::SeanetFiles files = ts::Seanet(GetParam());
  std::vector<uint8_t> bytes = ts::ReadBinary(files.Model());
  if (bytes.empty()) GTEST_SKIP() << files.Model() << " is absent (MCULAB_SHARED_MODELS_DIR)";
  auto m = std::make_unique<mculab_tfl_model>();
  ASSERT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK) << m->error;
  ASSERT_EQ(mculab_tfl_prepare(m.get(), nullptr, 0), MCULAB_TFL_NO_MEMORY) << m->error;
  std::vector<uint8_t> arena(m->plan.arena_bytes + m->plan.persistent_bytes +
                             m->plan.scratch_bytes + MCULAB_TFL_ALIGN);
  ASSERT_EQ(mculab_tfl_prepare(m.get(), arena.data(), arena.size()), MCULAB_TFL_OK) << m->error;
  const std::vector<uint8_t> given = ts::SeanetInput(files, *m);
  ASSERT_FALSE(given.empty()) << "an input CSV is missing or does not fit its tensor";
  ASSERT_EQ(mculab_tfl_set_input(m.get(), given.data(), static_cast<uint32_t>(given.size())),
            MCULAB_TFL_OK)
      << m->error;
  ASSERT_EQ(mculab_tfl_invoke(m.get(), nullptr), MCULAB_TFL_OK) << m->error;
  const mculab_tfl_tensor& out = m->tensors[m->outputs[0]];
  const std::vector<uint8_t> golden =
      ts::ValuesAsBytes(ts::ReadCsvValues(files.Csv("golden_")), out.type);
  ASSERT_EQ(golden.size(), out.bytes);
  size_t differ = 0;
  for (size_t i = 0; i < golden.size(); ++i) differ += golden[i] != out.data[i];
  EXPECT_EQ(differ, 0u) << "bytes differing from the golden output, of " << golden.size();
  EXPECT_EQ(mculab_tfl_output_crc32(m.get()), mculab_crc32(0, golden.data(), golden.size()));
}

INSTANTIATE_TEST_SUITE_P(All, SeanetGolden,
                         testing::Values("add0", "add1", "conv0", "conv1", "leaky_relu0",
                                         "leaky_relu1", "pad0", "pad1", "quantize0", "quantize1",
                                         "strided_slice0", "strided_slice1", "sub0", "sub1",
                                         "transpose_conv0", "transpose_conv1"),
                         [](const testing::TestParamInfo<const char*>& i) { return i.param; });

// TensorFlow Lite Micro's arena "head" for a loaded model, written from its rules
// (micro_allocation_info.cc and greedy_memory_planner.cc) apart from planner.c, to check it: time
// 0 is before the first operator and operator i runs at i + 1; the graph's inputs are created at 0
// and its outputs live to the last operator; a tensor lives from its writer to its last reader;
// constants and variables are not planned; each operator's scratch lives during that operator;
// every size is rounded up to 16; the largest goes first (ties: tensors in index order, then the
// scratch buffers), each to the lowest offset clear of every placed buffer alive with it.
uint64_t TfliteMicroHead(const mculab_tfl_model& m) {
  struct Buffer {
    uint64_t size;
    int first, last;
    uint64_t offset = 0;
  };
  std::vector<Buffer> buffers;
  std::vector<int> first(m.num_tensors, -1), last(m.num_tensors, -1);
  auto touch = [&](int t, int time) {
    if (first[t] < 0) first[t] = time;
    last[t] = std::max(last[t], time);
  };
  for (uint32_t k = 0; k < m.num_inputs; ++k) touch(m.inputs[k], 0);
  for (uint32_t i = 0; i < m.num_ops; ++i) {
    const mculab_tfl_op& op = m.ops[i];
    touch(op.output, static_cast<int>(i) + 1);
    for (uint32_t k = 0; k < op.num_inputs; ++k) {
      if (op.inputs[k] >= 0) touch(op.inputs[k], static_cast<int>(i) + 1);
    }
  }
  for (uint32_t k = 0; k < m.num_outputs; ++k) touch(m.outputs[k], static_cast<int>(m.num_ops));
  auto aligned = [](uint64_t v) { return (v + 15) / 16 * 16; };
  for (uint32_t t = 0; t < m.num_tensors; ++t) {
    const mculab_tfl_tensor& x = m.tensors[t];
    if (x.is_const || x.is_variable || first[t] < 0 || x.bytes == 0) continue;
    buffers.push_back({aligned(x.bytes), first[t], last[t]});
  }
  for (uint32_t i = 0; i < m.num_ops; ++i) {
    const int time = static_cast<int>(i) + 1;
    if (m.ops[i].scratch_bytes != 0)
      buffers.push_back({aligned(m.ops[i].scratch_bytes), time, time});
  }
  std::stable_sort(buffers.begin(), buffers.end(),
                   [](const Buffer& a, const Buffer& b) { return a.size > b.size; });
  uint64_t head = 0;
  for (size_t b = 0; b < buffers.size(); ++b) {
    std::vector<const Buffer*> alive;  // placed before b and alive with it, by offset
    for (size_t o = 0; o < b; ++o) {
      if (buffers[o].first <= buffers[b].last && buffers[b].first <= buffers[o].last) {
        alive.push_back(&buffers[o]);
      }
    }
    std::stable_sort(alive.begin(), alive.end(),
                     [](const Buffer* a, const Buffer* c) { return a->offset < c->offset; });
    uint64_t at = 0;
    for (const Buffer* o : alive) {
      if (o->offset >= at + buffers[b].size) break;
      at = std::max(at, o->offset + o->size);
    }
    buffers[b].offset = at;
    head = std::max(head, at + buffers[b].size);
  }
  return head;
}

// The most bytes the planned buffers alive at one moment need: no plan is smaller.
uint64_t LiveBytesBound(const mculab_tfl_model& m) {
  uint64_t most = 0;
  for (int i = 0; i < m.num_ops; ++i) {
    uint64_t live = (m.ops[i].scratch_bytes + 15) / 16 * 16;
    for (uint32_t t = 0; t < m.num_tensors; ++t) {
      const mculab_tfl_tensor& x = m.tensors[t];
      if (x.is_planned && x.first_use <= i && i <= x.last_use) live += (x.bytes + 15) / 16 * 16;
    }
    most = std::max(most, live);
  }
  return most;
}

// Every model in ../shared (MLPerf Tiny, TFLite Micro's own, the seanet tests) and the writer's
// MobileNetV2: the planned arena within 5% of TFLite Micro's head (the two rules agree, so it is
// equal) and never below what is alive at once.
TEST(TflitePlanner, EveryModelsArenaIsWithinFivePercentOfTfliteMicros) {
  std::vector<std::pair<std::string, std::vector<uint8_t>>> models;
  for (const char* dir : {"/mlperf-tiny", "/tflite-micro"}) {
    if (!std::filesystem::is_directory(ModelsDir() + dir)) continue;
    for (const auto& e : std::filesystem::recursive_directory_iterator(ModelsDir() + dir)) {
      if (e.path().extension() == ".tflite") {
        models.emplace_back(e.path().filename().string(), ReadFile(e.path().string()));
      }
    }
  }
  if (models.empty()) GTEST_SKIP() << ModelsDir() << " holds no models (MCULAB_SHARED_MODELS_DIR)";
  models.emplace_back("MobileNetV2 224",
                      mculab::tflite_writer::Serialize(mculab::tflite_writer::MobileNetV2(1)));
  std::sort(models.begin(), models.end());
  for (const auto& [name, bytes] : models) {
    auto m = std::make_unique<mculab_tfl_model>();
    ASSERT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK) << name;
    ASSERT_EQ(mculab_tfl_prepare(m.get(), nullptr, 0), MCULAB_TFL_NO_MEMORY) << name;
    const uint64_t ours = m->plan.arena_bytes, theirs = TfliteMicroHead(*m);
    EXPECT_LE(ours, theirs * 105 / 100) << name;
    EXPECT_GE(ours * 105 / 100, theirs) << name;
    EXPECT_GE(ours, LiveBytesBound(*m)) << name << ": buffers alive together overlap";
    std::printf("%-34s arena %8llu bytes, TFLite Micro's rules %8llu, alive at once %8llu\n",
                name.c_str(), static_cast<unsigned long long>(ours),
                static_cast<unsigned long long>(theirs),
                static_cast<unsigned long long>(LiveBytesBound(*m)));
  }
}

// TFLite Micro's published figures for keyword_scrambled (memory_arena_threshold_test.cc:
// kKeywordModelHeadSize 672, kKeywordModelTfLiteTensorVariableBufferDataSize 10240, checked there
// within 3%): the plan is its head, the variables its tail's variable buffers.
TEST(TflitePlanner, KeywordScrambledMatchesTfliteMicrosPublishedArena) {
  const std::string path = ModelsDir() + "/tflite-micro/keyword_scrambled.tflite";
  std::vector<uint8_t> bytes = ReadFile(path);
  if (bytes.empty()) GTEST_SKIP() << path << " is absent (MCULAB_SHARED_MODELS_DIR)";
  auto m = std::make_unique<mculab_tfl_model>();
  ASSERT_EQ(mculab_tfl_load(m.get(), bytes.data(), bytes.size()), MCULAB_TFL_OK) << m->error;
  ASSERT_EQ(mculab_tfl_prepare(m.get(), nullptr, 0), MCULAB_TFL_NO_MEMORY) << m->error;
  EXPECT_NEAR(m->plan.arena_bytes, 672.0, 672 * 0.03);
  uint64_t variables = 0;
  for (uint32_t t = 0; t < m->num_tensors; ++t) {
    if (m->tensors[t].is_variable) variables += m->tensors[t].bytes;
  }
  EXPECT_EQ(variables, 10240u);
  EXPECT_GE(m->plan.persistent_bytes, variables) << "the variables live after the plan";
}

}  // namespace
