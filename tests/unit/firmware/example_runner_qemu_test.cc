// The example runner's an547 build under QEMU with the counting plugin: the same per-op samples
// and memory report as on the host, identical timings every iteration, and the plugin's per-op
// emulated events inside each iteration's. Label "integration": it starts QEMU; skips when QEMU,
// the ELF or the plugin is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/runner_messages.h"
#include "example_model.h"
#include "runner_link.h"

namespace mculab {
namespace {

using test_support::ExampleModel;
using test_support::RunnerLink;

constexpr std::uint32_t kSeed = 77;
const ExampleModel kModel{{1, 8, 12, 12, 8, 3, 3, 1, 1, 1, 1}, 10};

TEST(ExampleRunnerAn547, OpSamplesMemoryAndPluginCountsUnderQemu) {
  for (const std::string path :
       {MCULAB_QEMU, MCULAB_EXAMPLE_RUNNER_AN547_ELF, MCULAB_QEMU_PLUGIN}) {
    if (path.empty() || access(path.c_str(), R_OK) != 0) {
      GTEST_SKIP() << path << " is not there (QEMU, the example ELF or the plugin)";
    }
  }
  const auto ref = test_support::ComputeExample(kModel, kSeed);
  const std::string counts = test_support::ScratchPath("example-an547.counts");
  auto link = RunnerLink::SpawnQemu(
      MCULAB_QEMU, MCULAB_EXAMPLE_RUNNER_AN547_ELF,
      test_support::WriteFile(
          "example-an547.bin",
          test_support::ExampleWorkload({9}, test_support::ExampleBlob(kModel), kSeed)),
      5, {"-plugin", std::string(MCULAB_QEMU_PLUGIN) + ",out=" + counts});
  auto hello = DecodeHello(link->Expect(MCULAB_MSG_HELLO));
  ASSERT_TRUE(hello.ok());
  EXPECT_EQ(hello->runtime, "example");
  EXPECT_TRUE(hello->emulated);
  link->Send(ToWire(Configure{3, 1, 0, 0, MCULAB_CONFIGURE_OP_PROFILE | MCULAB_CONFIGURE_MEMORY}));
  link->Send(ToWire(RunMsg{}));
  link->Expect(MCULAB_MSG_CASE_START);
  std::vector<std::uint64_t> timers;
  for (int i = 0; i < 3; ++i)
    timers.push_back(DecodeSample(link->Expect(MCULAB_MSG_SAMPLE))->timer);
  EXPECT_EQ(timers[0], timers[1]) << "op profiling costs the same in every iteration";
  EXPECT_EQ(timers[1], timers[2]);
  auto conv = DecodeOpSample(link->Expect(MCULAB_MSG_OP_SAMPLE));
  auto fc = DecodeOpSample(link->Expect(MCULAB_MSG_OP_SAMPLE));
  ASSERT_TRUE(conv.ok() && fc.ok());
  EXPECT_EQ(conv->name, "conv1");
  EXPECT_EQ(conv->count, 3u);
  EXPECT_EQ(conv->timer.min, conv->timer.max) << "emulated cycles repeat exactly";
  EXPECT_EQ(fc->name, "fc1");
  EXPECT_LT(conv->timer.max + fc->timer.max, timers[0]);
  EXPECT_GT(conv->timer.max, 10 * fc->timer.max) << "conv2d does far more work here";
  auto mem = DecodeMemory(link->Expect(MCULAB_MSG_MEMORY));
  ASSERT_TRUE(mem.ok());
  std::map<std::string, MemoryEntry> m;
  for (const auto& e : mem->entries) m[e.category] = e;
  EXPECT_EQ(m["arena"].used, ref.arena_used);
  EXPECT_EQ(m["arena"].reserved, 4u << 20);
  EXPECT_GT(m["stack"].used, 256u);
  EXPECT_LT(m["stack"].used, 32u << 10);
  auto end = DecodeCaseEnd(link->Expect(MCULAB_MSG_CASE_END));
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->checksum, ref.checksum);
  EXPECT_EQ(DecodeDone(link->Expect(MCULAB_MSG_DONE))->status, 0);
  EXPECT_TRUE(link->StopParked());

  // The plugin: per iteration an "iter" line and, inside it, one "op" line per op.
  std::ifstream f(counts);
  std::string line;
  std::map<std::string, std::vector<std::uint64_t>> instructions;  // "iter", "op0", "op1"
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream l(line);
    std::string kind;
    unsigned c, index;
    std::uint64_t insns;
    l >> kind >> c >> index >> insns;
    if (kind == "op") kind += std::to_string(index);
    instructions[kind].push_back(insns);
  }
  ASSERT_EQ(instructions["iter"].size(), 3u);
  ASSERT_EQ(instructions["op0"].size(), 3u);
  ASSERT_EQ(instructions["op1"].size(), 3u);
  EXPECT_LT(instructions["op0"][0] + instructions["op1"][0], instructions["iter"][0]);
  EXPECT_EQ(instructions["op0"][0], instructions["op0"][2]);
}

}  // namespace
}  // namespace mculab
