// The corstone300 (MPS3 silicon) runner started on QEMU's mps3-an547 by mistake: DWT CYCCNT does
// not count there, so the port must fall back to SysTick, say EMULATED, probe neither the PMU nor
// the NPU (it lists no unit: QEMU models neither), and still run a case correctly.
// Label "integration": it starts QEMU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/reference.h"
#include "common/runner_messages.h"
#include "common/workload_builder.h"
#include "mculab/ops.h"
#include "runner_link.h"

namespace mculab {
namespace {

using test_support::RunnerLink;

TEST(Corstone300OnQemu, FallsBackToEmulatedTimingListsNoUnitsAndRunsACase) {
  const std::vector<WorkloadCase> cases{{7, {1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1}}};
  auto wl = BuildWorkload(MCULAB_OP_CONV2D_S8, cases, 5);
  ASSERT_TRUE(wl.ok());
  auto link =
      RunnerLink::SpawnQemuMachine(MCULAB_QEMU, "mps3-an547", MCULAB_CORSTONE300_ELF,
                                   test_support::WriteFile("cs300.bin", *wl), 0x60000000, 5);
  auto hello = DecodeHello(link->Expect(MCULAB_MSG_HELLO));
  ASSERT_TRUE(hello.ok());
  EXPECT_EQ(hello->port, "corstone300");
  EXPECT_EQ(hello->cpu, "cortex-m55");
  EXPECT_TRUE(hello->emulated);
  EXPECT_EQ(hello->clock_hz, 32000000u);
  EXPECT_EQ(hello->workload_addr, 0x60000000u);
  EXPECT_EQ(hello->arena_bytes, 4u << 20);
  EXPECT_EQ(hello->arena_memory, "sram");
  EXPECT_TRUE(hello->units.empty()) << "no PMU or NPU unit where the hardware does not count";
  auto log = DecodeLog(link->Expect(MCULAB_MSG_LOG));
  ASSERT_TRUE(log.ok());
  EXPECT_NE(log->text.find("not silicon"), std::string::npos) << log->text;
  link->Send(ToWire(Configure{2, 0, static_cast<std::uint32_t>(wl->size()), 0}));
  link->Send(ToWire(RunMsg{}));
  link->Expect(MCULAB_MSG_CASE_START);
  const auto a = DecodeSample(link->Expect(MCULAB_MSG_SAMPLE));
  const auto b = DecodeSample(link->Expect(MCULAB_MSG_SAMPLE));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT(a->timer, 0u);
  EXPECT_EQ(a->timer, b->timer);
  auto end = DecodeCaseEnd(link->Expect(MCULAB_MSG_CASE_END));
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->checksum, *ReferenceChecksum(MCULAB_OP_CONV2D_S8, cases[0].params, 5));
  EXPECT_EQ(DecodeDone(link->Expect(MCULAB_MSG_DONE))->status, 0);
  EXPECT_TRUE(link->Running()) << "after DONE the core parks";
}

}  // namespace
}  // namespace mculab
