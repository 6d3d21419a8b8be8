// The TFLite runner (firmware_stub/tflite/runner_main.c) as the agent runs it: a .tflite model as
// a custom workload's blob, the host build through pipes and, with label "integration", the
// an547 build under QEMU. Each operator arrives as an op sample named by the model, the memory
// report gives the plan, and CASE_END's checksum equals the interpreter's output checksum
// computed here in-process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "common/runner_messages.h"
#include "common/tflite_model.h"
#include "example_model.h"
#include "mculab/tflite.h"
#include "runner_link.h"
#include "tflite_micro_models.h"
#include "tflite_writer.h"

namespace mculab {
namespace {

using test_support::RunnerLink;
constexpr std::uint32_t kSeed = 5;

struct Expected {
  std::uint32_t checksum = 0;
  mculab_tfl_plan plan{};
  std::vector<std::pair<std::string, std::string>> ops;  // type, name
  std::uint64_t macs = 0;
  std::uint32_t model_bytes = 0;
};

// What the runner must report for a blob (a model, or a model with its input).
Expected Compute(const Bytes& blob, std::uint32_t seed) {
  Expected e;
  mculab_tfl_blob b;
  EXPECT_EQ(mculab_tfl_unpack(blob.data(), blob.size(), &b), 0);
  auto m = std::make_unique<mculab_tfl_model>();
  EXPECT_EQ(mculab_tfl_load(m.get(), b.model, b.model_len), MCULAB_TFL_OK) << m->error;
  std::vector<std::uint8_t> arena(8u << 20);
  EXPECT_EQ(mculab_tfl_prepare(m.get(), arena.data(), arena.size()), MCULAB_TFL_OK) << m->error;
  if (b.input != nullptr) {
    EXPECT_EQ(mculab_tfl_set_input(m.get(), b.input, b.input_len), MCULAB_TFL_OK) << m->error;
  } else {
    mculab_tfl_seed_input(m.get(), seed);
  }
  EXPECT_EQ(mculab_tfl_invoke(m.get(), nullptr), MCULAB_TFL_OK);
  e.checksum = mculab_tfl_output_crc32(m.get());
  e.model_bytes = b.model_len;
  e.plan = m->plan;
  for (unsigned i = 0; i < m->num_ops; ++i) {
    e.ops.emplace_back(mculab_tfl_op_name(m->ops[i].builtin), m->ops[i].name);
    e.macs += m->ops[i].macs;
  }
  return e;
}

Bytes SampleModel() { return tflite_writer::Serialize(tflite_writer::SampleNet(1)); }

Bytes ReadModel(const char* file) {
  std::ifstream f(std::string(MCULAB_SHARED_MODELS_DIR) + "/mlperf-tiny/" + file, std::ios::binary);
  if (!f) return {};
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

std::string Workload(const std::string& name, const Bytes& model,
                     const std::vector<std::int64_t>& ids) {
  return test_support::WriteFile(name, test_support::ExampleWorkload(ids, model, kSeed));
}

// The next frame of `type`, past any LOG frames (a port may log after HELLO); its payload.
Bytes Expect(RunnerLink& link, std::uint8_t type) {
  for (;;) {
    auto ev = link.Next();
    if (!ev) {
      ADD_FAILURE() << "stream ended, expected " << mculab_msg_type_name(type);
      return {};
    }
    if (ev->ok() && ev->type == MCULAB_MSG_LOG && type != MCULAB_MSG_LOG) continue;
    EXPECT_TRUE(ev->ok()) << ev->Describe();
    EXPECT_EQ(ev->type, type) << "got " << ev->Describe() << ", expected "
                              << mculab_msg_type_name(type);
    return ev->payload;
  }
}

// Runs one case of `iterations` with op profiles and memory reports; checks the frames.
// `runtime`: HELLO's, naming the kernel set the build runs ("tflite" on the reference kernels).
void ExpectCase(RunnerLink& link, const Expected& want, std::uint32_t iterations,
                std::uint32_t model_bytes, const std::string& runtime = "tflite") {
  auto hello = DecodeHello(Expect(link, MCULAB_MSG_HELLO));
  ASSERT_TRUE(hello.ok());
  EXPECT_EQ(hello->runtime, runtime);
  EXPECT_TRUE(hello->custom_workload);
  link.Send(ToWire(
      Configure{iterations, 1, 0, 0, MCULAB_CONFIGURE_OP_PROFILE | MCULAB_CONFIGURE_MEMORY}));
  link.Send(ToWire(RunMsg{}));
  Expect(link, MCULAB_MSG_CASE_START);
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < iterations; ++i) {
    total += DecodeSample(Expect(link, MCULAB_MSG_SAMPLE))->timer;
  }
  std::uint64_t in_ops = 0;
  for (std::size_t i = 0; i < want.ops.size(); ++i) {
    auto op = DecodeOpSample(Expect(link, MCULAB_MSG_OP_SAMPLE));
    ASSERT_TRUE(op.ok()) << op.error().message;
    EXPECT_EQ(op->op_index, i);
    EXPECT_EQ(op->type, want.ops[i].first.substr(0, 15));
    EXPECT_EQ(op->name, want.ops[i].second);
    EXPECT_EQ(op->count, iterations);
    EXPECT_FALSE(op->unclosed);
    in_ops += op->timer.sum;
  }
  EXPECT_LE(in_ops, total) << "the ops are inside the measured iterations";
  std::printf("%s port: %llu %s per inference\n", hello->port.c_str(),
              static_cast<unsigned long long>(total / iterations), hello->timer_unit.c_str());
  auto mem = DecodeMemory(Expect(link, MCULAB_MSG_MEMORY));
  ASSERT_TRUE(mem.ok());
  std::map<std::string, MemoryEntry> m;
  for (const auto& e : mem->entries) m[e.category] = e;
  EXPECT_EQ(m["arena"].used, want.plan.arena_bytes);
  EXPECT_EQ(m["arena"].reserved, hello->arena_bytes);
  // Persistent: the interpreter's tables (at the arena's start; smaller on a 32-bit target than
  // here), the per-channel requantization parameters and the variables. The operators' scratch
  // is inside "arena" (one plan), so there is no "scratch" figure to add to it.
  EXPECT_GT(m["persistent"].used, want.plan.persistent_bytes + (16u << 10));
  EXPECT_LE(m["persistent"].used, want.plan.persistent_bytes + sizeof(mculab_tfl_model) + 16u);
  EXPECT_EQ(m.count("scratch"), 0u);
  EXPECT_EQ(m["model"].used, model_bytes);
  auto end = DecodeCaseEnd(Expect(link, MCULAB_MSG_CASE_END));
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->checksum, want.checksum);
  EXPECT_EQ(DecodeDone(Expect(link, MCULAB_MSG_DONE))->status, 0);
}

TEST(TfliteRunnerHost, SampleNetGivesAnOpSamplePerOperatorThePlanAndTheChecksum) {
  const Bytes model = SampleModel();
  const Expected want = Compute(model, kSeed);
  ASSERT_EQ(want.ops.size(), 9u);
  auto link =
      RunnerLink::SpawnHost(MCULAB_TFLITE_RUNNER_HOST, Workload("tflite-sample.bin", model, {1}));
  ExpectCase(*link, want, 3, static_cast<std::uint32_t>(model.size()));
  EXPECT_EQ(link->Wait(), 0);
}

TEST(TfliteRunnerHost, MlperfTinyModelsGiveTheInterpretersChecksum) {
  for (const char* file : {"kws_ref_model.tflite", "ic_resnet8_int8.tflite", "vww_96_int8.tflite",
                           "ad01_int8.tflite"}) {
    const Bytes model = ReadModel(file);
    if (model.empty()) GTEST_SKIP() << file << " is absent (MCULAB_SHARED_MODELS_DIR)";
    SCOPED_TRACE(file);
    const Expected want = Compute(model, kSeed);
    auto link = RunnerLink::SpawnHost(MCULAB_TFLITE_RUNNER_HOST,
                                      Workload(std::string(file) + ".bin", model, {1}));
    ExpectCase(*link, want, 2, static_cast<std::uint32_t>(model.size()));
    EXPECT_EQ(link->Wait(), 0);
  }
}

void ExpectRefused(const Bytes& model, const std::string& name, const std::string& text) {
  auto link = RunnerLink::SpawnHost(MCULAB_TFLITE_RUNNER_HOST, Workload(name, model, {4}));
  link->Expect(MCULAB_MSG_HELLO);
  link->Send(ToWire(Configure{1, 0, 0, 0, 0}));
  link->Send(ToWire(RunMsg{}));
  auto err = DecodeError(link->Expect(MCULAB_MSG_ERROR));
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->code, MCULAB_ERR_BAD_WORKLOAD);
  EXPECT_NE(err->text.find(text), std::string::npos) << err->text;
  EXPECT_EQ(DecodeDone(link->Expect(MCULAB_MSG_DONE))->status, MCULAB_ERR_BAD_WORKLOAD);
  EXPECT_EQ(link->Wait(), 0);
}

TEST(TfliteRunnerHost, ACorruptModelIsABadWorkloadWithTheReadersMessage) {
  Bytes model = SampleModel();
  model.resize(model.size() / 2);
  ExpectRefused(model, "tflite-cut.bin", "tflite: ");
}

TEST(TfliteRunnerHost, AnUnsupportedOperatorIsNamed) {
  tflite_writer::Model m = tflite_writer::SampleNet(1);
  m.operators[3].builtin = 42;  // DIV
  m.operators[3].options_type = 0;
  ExpectRefused(tflite_writer::Serialize(m), "tflite-div.bin",
                "not supported: operator 3: DIV (builtin 42)");
}

// TFLite Micro's own models, seeded, and the first seanet test of each operator with its input
// CSVs as the given input: what the boards run to the host's checksums (one run each). The
// writer's activation nets (HARD_SWISH, RELU, RELU6, MEAN; int8 and float32), its float32 and
// 16x8 LSTMs (2 batches of 5 steps, 4 units, the cell clipped at 3), its float32 convolutions
// (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV) and its pooling nets (pools, fully connected and
// softmax in float32 and 16x8) come first, always there.
std::vector<std::pair<std::string, Bytes>> TfliteMicroBlobs() {
  namespace ts = test_support;
  const tflite_writer::LstmShape lstm{false, 2, 5, 6, 4, 3.0f};
  std::vector<std::pair<std::string, Bytes>> out = {
      {"activations", tflite_writer::Serialize(tflite_writer::ActivationsNet())},
      {"activations_float", tflite_writer::Serialize(tflite_writer::ActivationsNetFloat())},
      {"lstm_float",
       tflite_writer::Serialize(tflite_writer::LstmNet(tflite_writer::LstmKind::kFloat32, lstm))},
      {"conv_float", tflite_writer::Serialize(tflite_writer::ConvNetFloat(1))},
      {"lstm_16x8",
       tflite_writer::Serialize(tflite_writer::LstmNet(tflite_writer::LstmKind::kInt16x8, lstm))},
      {"pool_net_float",
       tflite_writer::Serialize(tflite_writer::PoolNet(tflite_writer::PoolNetKind::kFloat32))},
      {"pool_net_16x8",
       tflite_writer::Serialize(tflite_writer::PoolNet(tflite_writer::PoolNetKind::kInt16x8))},
      {"svdf_float", tflite_writer::Serialize(tflite_writer::SvdfNetFloat())}};
  for (const char* file :
       {"hello_world_int8", "hello_world_float", "micro_speech_quantized", "simple_add_model",
        "person_detect", "keyword_scrambled", "keyword_scrambled_8bit", "trained_lstm_int8"}) {
    Bytes b = ts::ReadBinary(ts::TfliteMicroDir() + "/" + file + ".tflite");
    if (!b.empty()) out.emplace_back(file, std::move(b));
  }
  for (const char* name : {"add0", "conv0", "leaky_relu0", "pad0", "quantize0", "strided_slice0",
                           "sub0", "transpose_conv0"}) {
    const ts::SeanetFiles files = ts::Seanet(name);
    const Bytes model = ts::ReadBinary(files.Model());
    if (model.empty()) continue;
    auto m = std::make_unique<mculab_tfl_model>();
    if (mculab_tfl_load(m.get(), model.data(), model.size()) != MCULAB_TFL_OK) {
      ADD_FAILURE() << name << ": " << m->error;
      continue;
    }
    std::vector<std::uint8_t> arena(8u << 20);
    EXPECT_EQ(mculab_tfl_prepare(m.get(), arena.data(), arena.size()), MCULAB_TFL_OK) << m->error;
    out.emplace_back(name, PackModelBlob(model, ts::SeanetInput(files, *m)));
  }
  return out;
}

TEST(TfliteRunnerHost, TfliteMicroModelsGiveTheInterpretersChecksum) {
  const auto blobs = TfliteMicroBlobs();
  for (const auto& [name, blob] : blobs) {
    SCOPED_TRACE(name);
    const Expected want = Compute(blob, kSeed);
    auto link =
        RunnerLink::SpawnHost(MCULAB_TFLITE_RUNNER_HOST, Workload(name + ".bin", blob, {1}));
    ExpectCase(*link, want, 2, want.model_bytes);
    EXPECT_EQ(link->Wait(), 0);
  }
}

TEST(TfliteRunnerAn547, TfliteMicroModelsUnderQemuGiveTheHostChecksum) {
  for (const std::string path : {MCULAB_QEMU, MCULAB_TFLITE_RUNNER_AN547_ELF}) {
    if (path.empty() || access(path.c_str(), R_OK) != 0) {
      GTEST_SKIP() << "'" << path << "' is not there (QEMU or the an547 TFLite runner)";
    }
  }
  for (const auto& [name, blob] : TfliteMicroBlobs()) {
    SCOPED_TRACE(name);
    const Expected want = Compute(blob, kSeed);
    auto link = RunnerLink::SpawnQemu(MCULAB_QEMU, MCULAB_TFLITE_RUNNER_AN547_ELF,
                                      Workload(name + "-an547.bin", blob, {1}), 5);
    ExpectCase(*link, want, 2, want.model_bytes, "tflite-helium");
  }
}

TEST(TfliteRunnerAn500, TfliteMicroModelsUnderQemuM7GiveTheHostChecksum) {
  for (const std::string path : {MCULAB_QEMU, MCULAB_TFLITE_RUNNER_AN500_ELF}) {
    if (path.empty() || access(path.c_str(), R_OK) != 0) {
      GTEST_SKIP() << "'" << path << "' is not there (QEMU or the an500 TFLite runner)";
    }
  }
  for (const auto& [name, blob] : TfliteMicroBlobs()) {
    SCOPED_TRACE(name);
    const Expected want = Compute(blob, kSeed);
    auto link =
        RunnerLink::SpawnQemuMachine(MCULAB_QEMU, "mps2-an500", MCULAB_TFLITE_RUNNER_AN500_ELF,
                                     Workload(name + "-an500.bin", blob, {1}), 0x60000000u, 5);
    ExpectCase(*link, want, 2, want.model_bytes, "tflite-dsp");
  }
}

TEST(TfliteRunnerAn547, MlperfTinyModelsUnderQemuGiveTheHostChecksum) {
  for (const std::string path : {MCULAB_QEMU, MCULAB_TFLITE_RUNNER_AN547_ELF}) {
    if (path.empty() || access(path.c_str(), R_OK) != 0) {
      GTEST_SKIP() << "'" << path << "' is not there (QEMU or the an547 TFLite runner)";
    }
  }
  // The sample net always; the four models where the shared folder is.
  std::vector<std::pair<std::string, Bytes>> models = {{"sample", SampleModel()}};
  for (const char* file : {"kws_ref_model.tflite", "ic_resnet8_int8.tflite", "vww_96_int8.tflite",
                           "ad01_int8.tflite"}) {
    Bytes b = ReadModel(file);
    if (!b.empty()) models.emplace_back(file, std::move(b));
  }
  const std::string plugin = MCULAB_QEMU_PLUGIN;
  const bool counting = !plugin.empty() && access(plugin.c_str(), R_OK) == 0;
  for (const auto& [name, model] : models) {
    SCOPED_TRACE(name);
    const Expected want = Compute(model, kSeed);
    const std::string counts = test_support::ScratchPath(name + "-an547.counts");
    std::vector<std::string> extra;
    if (counting) extra = {"-plugin", plugin + ",out=" + counts};
    {
      auto link = RunnerLink::SpawnQemu(MCULAB_QEMU, MCULAB_TFLITE_RUNNER_AN547_ELF,
                                        Workload(name + "-an547.bin", model, {1}), 5, extra);
      ExpectCase(*link, want, 2, static_cast<std::uint32_t>(model.size()), "tflite-helium");
    }
    if (!counting) continue;
    // The counting plugin: per measured iteration an "iter" line and one "op" line per operator,
    // each with its emulated instruction count; the same count in both iterations.
    std::ifstream f(counts);
    std::string line;
    std::vector<std::uint64_t> iters;
    std::map<unsigned, std::vector<std::uint64_t>> ops;
    while (std::getline(f, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream l(line);
      std::string kind;
      unsigned c, index;
      std::uint64_t insns;
      l >> kind >> c >> index >> insns;
      if (kind == "iter") iters.push_back(insns);
      if (kind == "op") ops[index].push_back(insns);
    }
    ASSERT_EQ(iters.size(), 2u);
    EXPECT_EQ(iters[0], iters[1]);
    ASSERT_EQ(ops.size(), want.ops.size());
    for (const auto& [index, v] : ops) {
      ASSERT_EQ(v.size(), 2u) << "operator " << index;
      EXPECT_EQ(v[0], v[1]) << "operator " << index;
    }
    std::printf(
        "%s on the an547 (M55, reference kernels): %llu instructions per inference, %.2f "
        "per MAC\n",
        name.c_str(), static_cast<unsigned long long>(iters[0]),
        want.macs > 0 ? static_cast<double>(iters[0]) / static_cast<double>(want.macs) : 0.0);
  }
}

TEST(TfliteRunnerAn500, MlperfTinyModelsUnderQemuM7GiveTheHostChecksum) {
  for (const std::string path : {MCULAB_QEMU, MCULAB_TFLITE_RUNNER_AN500_ELF}) {
    if (path.empty() || access(path.c_str(), R_OK) != 0) {
      GTEST_SKIP() << "'" << path << "' is not there (QEMU or the an500 TFLite runner)";
    }
  }
  std::vector<std::pair<std::string, Bytes>> models = {{"sample", SampleModel()}};
  for (const char* file : {"kws_ref_model.tflite", "ic_resnet8_int8.tflite", "vww_96_int8.tflite",
                           "ad01_int8.tflite"}) {
    Bytes b = ReadModel(file);
    if (!b.empty()) models.emplace_back(file, std::move(b));
  }
  for (const auto& [name, model] : models) {
    SCOPED_TRACE(name);
    const Expected want = Compute(model, kSeed);
    auto link =
        RunnerLink::SpawnQemuMachine(MCULAB_QEMU, "mps2-an500", MCULAB_TFLITE_RUNNER_AN500_ELF,
                                     Workload(name + "-an500.bin", model, {1}), 0x60000000u, 5);
    ExpectCase(*link, want, 2, static_cast<std::uint32_t>(model.size()), "tflite-dsp");
  }
}

// MobileNetV2 int8 at 224x224 as PyTorch's exporter writes it (the writer's, seeded weights: 4 MB
// of model, 71 operators each with its own operator code, 301 M MACs, a 2.6 MB arena): one
// measured inference, its output checksum that of the interpreter here.
// One MobileNetV2 inference under QEMU's counting plugin is about 15 s of one core here; on a
// loaded 2-core machine (CI running two suites at once) it took more than the default 30 s between
// frames.
constexpr int kMobileNetFrameTimeoutMs = 180'000;

Bytes MobileNetV2() { return tflite_writer::Serialize(tflite_writer::MobileNetV2(1)); }

TEST(TfliteRunnerHost, MobileNetV2GivesTheInterpretersChecksum) {
  const Bytes model = MobileNetV2();
  ASSERT_GT(model.size(), 3u << 20);
  const Expected want = Compute(model, kSeed);
  EXPECT_EQ(want.ops.size(), 71u);
  EXPECT_EQ(want.macs, 301053376u);
  auto link =
      RunnerLink::SpawnHost(MCULAB_TFLITE_RUNNER_HOST, Workload("mobilenet_v2.bin", model, {1}));
  ExpectCase(*link, want, 1, want.model_bytes);
  EXPECT_EQ(link->Wait(), 0);
}

TEST(TfliteRunnerAn547, MobileNetV2UnderQemuM55GivesTheHostChecksum) {
  for (const std::string path : {MCULAB_QEMU, MCULAB_TFLITE_RUNNER_AN547_ELF}) {
    if (path.empty() || access(path.c_str(), R_OK) != 0) {
      GTEST_SKIP() << "'" << path << "' is not there (QEMU or the an547 TFLite runner)";
    }
  }
  const Bytes model = MobileNetV2();
  const Expected want = Compute(model, kSeed);
  auto link = RunnerLink::SpawnQemu(MCULAB_QEMU, MCULAB_TFLITE_RUNNER_AN547_ELF,
                                    Workload("mobilenet_v2-an547.bin", model, {1}), 5);
  link->SetFrameTimeoutMs(kMobileNetFrameTimeoutMs);
  ExpectCase(*link, want, 1, want.model_bytes, "tflite-helium");
}

TEST(TfliteRunnerAn500, MobileNetV2UnderQemuM7GivesTheHostChecksum) {
  for (const std::string path : {MCULAB_QEMU, MCULAB_TFLITE_RUNNER_AN500_ELF}) {
    if (path.empty() || access(path.c_str(), R_OK) != 0) {
      GTEST_SKIP() << "'" << path << "' is not there (QEMU or the an500 TFLite runner)";
    }
  }
  const Bytes model = MobileNetV2();
  const Expected want = Compute(model, kSeed);
  auto link =
      RunnerLink::SpawnQemuMachine(MCULAB_QEMU, "mps2-an500", MCULAB_TFLITE_RUNNER_AN500_ELF,
                                   Workload("mobilenet_v2-an500.bin", model, {1}), 0x60000000u, 5);
  link->SetFrameTimeoutMs(kMobileNetFrameTimeoutMs);
  ExpectCase(*link, want, 1, want.model_bytes, "tflite-dsp");
}

}  // namespace
}  // namespace mculab
