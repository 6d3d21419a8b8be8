// The an500 runner firmware (Cortex-M7) under qemu-system-arm -M mps2-an500: HELLO, a sweep whose
// checksums match the host reference and whose counts repeat, DONE, and a core that parks instead
// of ending the emulation. Label "integration": it starts QEMU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/reference.h"
#include "common/runner_messages.h"
#include "common/workload_builder.h"
#include "fast_kernel_checksums.h"
#include "mculab/ops.h"
#include "mculab/runner_protocol.h"
#include "mculab/workload.h"
#include "runner_link.h"

namespace mculab {
namespace {

using test_support::RunnerLink;

constexpr std::uint32_t kSeed = 77;
constexpr std::uint32_t kWorkloadAddr = 0x60000000;
const std::vector<WorkloadCase> kSweep{
    //  N  C   H   W   K kh kw ph pw sh sw
    {0, {1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1}},
    {1, {1, 3, 9, 9, 4, 3, 3, 0, 0, 2, 2}},
    // ~60 M ticks at shift 5: its regions span several 2^24 SysTick wraps.
    {2, {1, 32, 32, 32, 32, 3, 3, 1, 1, 1, 1}},
};

std::unique_ptr<RunnerLink> StartQemu(const Bytes& workload, const std::string& name) {
  return RunnerLink::SpawnQemuMachine(MCULAB_QEMU, "mps2-an500", MCULAB_AN500_ELF,
                                      test_support::WriteFile(name, workload), kWorkloadAddr, 5);
}

struct Sweep {
  std::vector<std::vector<std::uint64_t>> timers;
  std::vector<std::uint32_t> checksums;
  Done done;
  bool parked = false;
};

Sweep RunSweep(std::uint32_t iterations) {
  auto wl = BuildWorkload(MCULAB_OP_CONV2D_S8, kSweep, kSeed);
  EXPECT_TRUE(wl.ok());
  // The reference kernels (workload flag): their case 2 spans several SysTick wraps, which the
  // fast kernels' would not (FastKernelsGiveTheHostReferencesChecksums checks those).
  mculab_put_u32(wl->data() + 20, MCULAB_WORKLOAD_REFERENCE_KERNELS);
  auto link = StartQemu(*wl, "an500-sweep.bin");
  Sweep r;
  EXPECT_TRUE(DecodeHello(link->Expect(MCULAB_MSG_HELLO)).ok());
  link->Expect(MCULAB_MSG_LOG);
  link->Send(ToWire(Configure{iterations, 1, static_cast<std::uint32_t>(wl->size()), 0}));
  link->Send(ToWire(RunMsg{}));
  for (std::uint16_t i = 0; i < kSweep.size(); ++i) {
    auto start = DecodeCaseStart(link->Expect(MCULAB_MSG_CASE_START));
    EXPECT_TRUE(start.ok() && start->case_id == kSweep[i].id);
    std::vector<std::uint64_t> t;
    for (std::uint32_t it = 0; it < iterations; ++it) {
      auto s = DecodeSample(link->Expect(MCULAB_MSG_SAMPLE));
      EXPECT_TRUE(s.ok() && s->iteration == it && s->case_index == i);
      t.push_back(s.ok() ? s->timer : 0);
    }
    r.timers.push_back(t);
    auto end = DecodeCaseEnd(link->Expect(MCULAB_MSG_CASE_END));
    EXPECT_TRUE(end.ok());
    r.checksums.push_back(end.ok() ? end->checksum : 0);
  }
  auto done = DecodeDone(link->Expect(MCULAB_MSG_DONE));
  EXPECT_TRUE(done.ok());
  if (done.ok()) r.done = *done;
  r.parked = link->Running();
  return r;
}

TEST(An500Qemu, HelloSaysEmulatedCortexM7At25MHz) {
  auto wl = BuildWorkload(MCULAB_OP_CONV2D_S8, {}, 1);
  auto link = StartQemu(*wl, "an500-empty.bin");
  auto hello = DecodeHello(link->Expect(MCULAB_MSG_HELLO));
  ASSERT_TRUE(hello.ok());
  EXPECT_EQ(hello->port, "an500");
  EXPECT_EQ(hello->cpu, "cortex-m7");
  EXPECT_TRUE(hello->emulated) << "QEMU models no DWT: SysTick timing, labelled emulated";
  EXPECT_EQ(hello->timer_unit, "cycles");
  EXPECT_EQ(hello->clock_hz, 25000000u);
  EXPECT_EQ(hello->workload_addr, kWorkloadAddr);
  EXPECT_EQ(hello->workload_max, (16u << 20) - (64u << 10));
  EXPECT_GE(hello->arena_bytes, 3u << 20);
  EXPECT_EQ(hello->arena_memory, "sram");
  EXPECT_FALSE(hello->icache);
  EXPECT_FALSE(hello->dcache);
  EXPECT_TRUE(hello->counters.empty());
  ASSERT_EQ(hello->units.size(), 1u);
  EXPECT_EQ(hello->units[0].name, "qemu-plugin");
  EXPECT_TRUE(hello->units[0].external);
  auto log = DecodeLog(link->Expect(MCULAB_MSG_LOG));
  ASSERT_TRUE(log.ok());
  EXPECT_NE(log->text.find("emulated"), std::string::npos) << log->text;
  link->Send(ToWire(Configure{1, 0, 0, 0}));
  link->Send(ToWire(RunMsg{}));
  auto done = DecodeDone(link->Expect(MCULAB_MSG_DONE));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->cases_run, 0);
  EXPECT_EQ(done->status, 0);
  EXPECT_TRUE(link->Running()) << "after DONE the core parks; the agent ends the emulation";
}

TEST(An500Qemu, SweepChecksumsMatchReferenceAndCountsRepeat) {
  const Sweep first = RunSweep(3);
  ASSERT_EQ(first.checksums.size(), kSweep.size());
  EXPECT_EQ(first.done.cases_run, kSweep.size());
  EXPECT_EQ(first.done.status, 0);
  EXPECT_TRUE(first.parked);
  for (size_t i = 0; i < kSweep.size(); ++i) {
    auto want = ReferenceChecksum(MCULAB_OP_CONV2D_S8, kSweep[i].params, kSeed);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(first.checksums[i], *want) << "case " << i;
    for (std::uint64_t t : first.timers[i]) {
      EXPECT_GT(t, 0u);
      EXPECT_EQ(t, first.timers[i][0]) << "case " << i << ": iterations differ";
    }
  }
  EXPECT_GT(first.timers[2][0], 3u * (1u << 24)) << "the largest case spans SysTick wraps";
  const Sweep second = RunSweep(3);
  EXPECT_EQ(second.timers, first.timers);
}

TEST(An500Qemu, CorruptWorkloadIsReported) {
  auto wl = BuildWorkload(MCULAB_OP_CONV2D_S8, kSweep, kSeed);
  ASSERT_TRUE(wl.ok());
  (*wl)[40] ^= 0x01;
  auto link = StartQemu(*wl, "an500-corrupt.bin");
  link->Expect(MCULAB_MSG_HELLO);
  link->Expect(MCULAB_MSG_LOG);
  link->Send(ToWire(Configure{1, 0, 0, 0}));
  link->Send(ToWire(RunMsg{}));
  auto err = DecodeError(link->Expect(MCULAB_MSG_ERROR));
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->code, MCULAB_ERR_BAD_WORKLOAD);
  EXPECT_EQ(DecodeDone(link->Expect(MCULAB_MSG_DONE))->status, MCULAB_ERR_BAD_WORKLOAD);
  EXPECT_TRUE(link->Running());
}

TEST(An500Qemu, FastKernelsGiveTheHostReferencesChecksums) {
  test_support::ExpectFastKernelChecksums(
      [](const Bytes& wl) { return StartQemu(wl, "an500-fast.bin"); }, "dsp", true, kSeed);
}

}  // namespace
}  // namespace mculab
