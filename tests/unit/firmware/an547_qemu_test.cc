// The an547 runner firmware under qemu-system-arm -M mps3-an547: the session as the agent runs
// it, checksums against the host reference, and counts that are identical from run to run.
// Label "integration": it starts QEMU.
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

constexpr std::uint32_t kSeed = 2024;
const std::vector<WorkloadCase> kSweep{
    //  N  C   H   W   K kh kw ph pw sh sw
    {0, {1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1}},
    {1, {1, 3, 9, 9, 4, 3, 3, 0, 0, 2, 2}},
    // ~57 M ticks: its regions span several 2^24 SysTick wraps.
    {2, {1, 32, 32, 32, 32, 3, 3, 1, 1, 1, 1}},
};

struct CaseResult {
  std::vector<std::uint64_t> timers;
  std::uint32_t checksum = 0;
  std::uint64_t overhead = 0;
};

struct SessionResult {
  Hello hello;
  std::vector<CaseResult> cases;
  Done done;
  bool parked = false;
};

std::unique_ptr<RunnerLink> StartQemu(const Bytes& workload, const std::string& name,
                                      int shift = 5) {
  return RunnerLink::SpawnQemu(MCULAB_QEMU, MCULAB_AN547_ELF,
                               test_support::WriteFile(name, workload), shift);
}

SessionResult RunSweep(std::uint32_t iterations, int shift = 5) {
  auto wl = BuildWorkload(MCULAB_OP_CONV2D_S8, kSweep, kSeed);
  EXPECT_TRUE(wl.ok());
  // The reference kernels (workload flag): their case 2 spans several SysTick wraps, which the
  // fast kernels' would not (FastKernelsGiveTheHostReferencesChecksums checks those).
  mculab_put_u32(wl->data() + 20, MCULAB_WORKLOAD_REFERENCE_KERNELS);
  auto link = StartQemu(*wl, "sweep.bin", shift);
  SessionResult r;
  auto hello = DecodeHello(link->Expect(MCULAB_MSG_HELLO));
  EXPECT_TRUE(hello.ok());
  if (hello.ok()) r.hello = *hello;
  link->Send(ToWire(Configure{iterations, 1, static_cast<std::uint32_t>(wl->size()), 0}));
  link->Send(ToWire(RunMsg{}));
  for (std::uint16_t i = 0; i < kSweep.size(); ++i) {
    CaseResult c;
    auto start = DecodeCaseStart(link->Expect(MCULAB_MSG_CASE_START));
    EXPECT_TRUE(start.ok() && start->case_id == kSweep[i].id);
    for (std::uint32_t it = 0; it < iterations; ++it) {
      auto s = DecodeSample(link->Expect(MCULAB_MSG_SAMPLE));
      EXPECT_TRUE(s.ok() && s->iteration == it && s->case_index == i);
      c.timers.push_back(s.ok() ? s->timer : 0);
    }
    auto end = DecodeCaseEnd(link->Expect(MCULAB_MSG_CASE_END));
    EXPECT_TRUE(end.ok());
    if (end.ok()) {
      c.checksum = end->checksum;
      c.overhead = end->overhead;
    }
    r.cases.push_back(c);
  }
  auto done = DecodeDone(link->Expect(MCULAB_MSG_DONE));
  EXPECT_TRUE(done.ok());
  if (done.ok()) r.done = *done;
  r.parked = link->StopParked();
  return r;
}

TEST(An547Qemu, HelloSaysEmulatedCyclesAt32MHz) {
  auto wl = BuildWorkload(MCULAB_OP_CONV2D_S8, {}, 1);
  auto link = StartQemu(*wl, "empty.bin");
  auto hello = DecodeHello(link->Expect(MCULAB_MSG_HELLO));
  ASSERT_TRUE(hello.ok());
  EXPECT_EQ(hello->port, "an547");
  EXPECT_EQ(hello->cpu, "cortex-m55");
  EXPECT_TRUE(hello->emulated);
  EXPECT_EQ(hello->timer_unit, "cycles");
  EXPECT_EQ(hello->clock_hz, 32000000u);
  EXPECT_EQ(hello->workload_addr, 0x60000000u);
  EXPECT_GE(hello->arena_bytes, 4u << 20);
  EXPECT_TRUE(hello->counters.empty()) << "QEMU's PMU reads 0: not offered";
  ASSERT_EQ(hello->units.size(), 1u);
  EXPECT_EQ(hello->units[0].name, "qemu-plugin");
  EXPECT_TRUE(hello->units[0].external);
  // Zero cases: DONE straight away, and the runner parks (no semihosting: the agent stops QEMU).
  link->Send(ToWire(Configure{1, 0, 0, 0}));
  link->Send(ToWire(RunMsg{}));
  auto done = DecodeDone(link->Expect(MCULAB_MSG_DONE));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->cases_run, 0);
  EXPECT_EQ(done->status, 0);
  EXPECT_TRUE(link->StopParked());
}

TEST(An547Qemu, SweepChecksumsMatchReferenceAndCountsRepeat) {
  const SessionResult first = RunSweep(3);
  ASSERT_EQ(first.cases.size(), kSweep.size());
  EXPECT_EQ(first.done.cases_run, kSweep.size());
  EXPECT_EQ(first.done.status, 0);
  EXPECT_TRUE(first.parked);
  for (size_t i = 0; i < kSweep.size(); ++i) {
    auto want = ReferenceChecksum(MCULAB_OP_CONV2D_S8, kSweep[i].params, kSeed);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(first.cases[i].checksum, *want) << "case " << i;
    for (std::uint64_t t : first.cases[i].timers) {
      EXPECT_GT(t, 0u);
      EXPECT_EQ(t, first.cases[i].timers[0]) << "case " << i << ": iterations differ";
    }
    EXPECT_GT(first.cases[i].overhead, 0u);
    EXPECT_LT(first.cases[i].overhead, 200u);
  }
  // The case spanning several SysTick wraps is counted across them.
  EXPECT_GT(first.cases[2].timers[0], 3u * (1u << 24));

  const SessionResult second = RunSweep(3);
  ASSERT_EQ(second.cases.size(), kSweep.size());
  for (size_t i = 0; i < kSweep.size(); ++i) {
    EXPECT_EQ(second.cases[i].timers, first.cases[i].timers) << "case " << i;
    EXPECT_EQ(second.cases[i].overhead, first.cases[i].overhead) << "case " << i;
  }
}

TEST(An547Qemu, TicksScaleWithIcountShift) {
  // shift=5 runs 2^5 ns per instruction, shift=2 runs 2^2: SysTick at 32 MHz counts 8x more at
  // shift 5. Only the wrap handler's few instructions, which run at shift 5 and not at shift 2,
  // may differ: a lost or doubled wrap would be off by 2^24.
  const SessionResult fast = RunSweep(1, 2);
  const SessionResult slow = RunSweep(1, 5);
  ASSERT_EQ(fast.cases.size(), slow.cases.size());
  for (size_t i = 0; i < fast.cases.size(); ++i) {
    const auto scaled = static_cast<std::int64_t>(fast.cases[i].timers[0] * 8);
    const auto got = static_cast<std::int64_t>(slow.cases[i].timers[0]);
    EXPECT_NEAR(got, scaled, 64) << "case " << i;
  }
}

TEST(An547Qemu, CorruptWorkloadIsReportedAndTheRunnerParks) {
  auto wl = BuildWorkload(MCULAB_OP_CONV2D_S8, kSweep, kSeed);
  ASSERT_TRUE(wl.ok());
  (*wl)[40] ^= 0x01;
  auto link = StartQemu(*wl, "corrupt.bin");
  link->Expect(MCULAB_MSG_HELLO);
  link->Send(ToWire(Configure{1, 0, 0, 0}));
  link->Send(ToWire(RunMsg{}));
  auto err = DecodeError(link->Expect(MCULAB_MSG_ERROR));
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->code, MCULAB_ERR_BAD_WORKLOAD);
  auto done = DecodeDone(link->Expect(MCULAB_MSG_DONE));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->status, MCULAB_ERR_BAD_WORKLOAD);
  EXPECT_TRUE(link->StopParked());
}

TEST(An547Qemu, TensorsBeyondTheArenaAreNoMemory) {
  // 8 MiB of input: more than the 4 MiB ISRAM arena.
  auto wl = BuildWorkload(MCULAB_OP_CONV2D_S8, {{5, {1, 8, 1024, 1024, 1, 1, 1, 0, 0, 1, 1}}}, 1);
  ASSERT_TRUE(wl.ok());
  auto link = StartQemu(*wl, "big.bin");
  link->Expect(MCULAB_MSG_HELLO);
  link->Send(ToWire(Configure{1, 0, 0, 0}));
  link->Send(ToWire(RunMsg{}));
  auto err = DecodeError(link->Expect(MCULAB_MSG_ERROR));
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->code, MCULAB_ERR_NO_MEMORY) << err->text;
  EXPECT_EQ(DecodeDone(link->Expect(MCULAB_MSG_DONE))->status, MCULAB_ERR_NO_MEMORY);
  EXPECT_TRUE(link->StopParked());
}

TEST(An547Qemu, ArenaSpanningBothSramBanksWorks) {
  // 2.6 MB of tensors (2 MB input, 0.5 MB output): crosses from the first 2 MiB ISRAM bank into
  // the second.
  const std::vector<std::int32_t> p{1, 4, 720, 720, 1, 1, 1, 0, 0, 1, 1};
  ASSERT_GT(mculab_case_arena_bytes(MCULAB_OP_CONV2D_S8, p.data()), 2u << 20);
  auto wl = BuildWorkload(MCULAB_OP_CONV2D_S8, {{0, p}}, 3);
  ASSERT_TRUE(wl.ok());
  auto link = StartQemu(*wl, "banks.bin");
  link->Expect(MCULAB_MSG_HELLO);
  link->Send(ToWire(Configure{1, 0, 0, 0}));
  link->Send(ToWire(RunMsg{}));
  link->Expect(MCULAB_MSG_CASE_START);
  link->Expect(MCULAB_MSG_SAMPLE);
  auto end = DecodeCaseEnd(link->Expect(MCULAB_MSG_CASE_END));
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->checksum, *ReferenceChecksum(MCULAB_OP_CONV2D_S8, p, 3));
  EXPECT_EQ(DecodeDone(link->Expect(MCULAB_MSG_DONE))->status, 0);
  EXPECT_TRUE(link->StopParked());
}

TEST(An547Qemu, AbortDuringARun) {
  auto wl = BuildWorkload(MCULAB_OP_CONV2D_S8, kSweep, kSeed);
  ASSERT_TRUE(wl.ok());
  auto link = StartQemu(*wl, "abort.bin");
  link->Expect(MCULAB_MSG_HELLO);
  link->Send(ToWire(Configure{1000000, 0, 0, 0}));
  link->Send(ToWire(RunMsg{}));
  link->Expect(MCULAB_MSG_CASE_START);
  link->Expect(MCULAB_MSG_SAMPLE);
  link->Send(ToWire(AbortMsg{}));
  for (std::uint32_t samples = 1;; ++samples) {
    ASSERT_LT(samples, 1000u) << "the runner does not stop after ABORT";
    auto ev = link->Next();
    ASSERT_TRUE(ev.has_value());
    ASSERT_TRUE(ev->ok()) << ev->Describe();
    if (ev->type == MCULAB_MSG_SAMPLE) continue;
    ASSERT_EQ(ev->type, MCULAB_MSG_ERROR);
    EXPECT_EQ(DecodeError(ev->payload)->code, MCULAB_ERR_ABORTED);
    break;
  }
  EXPECT_EQ(DecodeDone(link->Expect(MCULAB_MSG_DONE))->status, MCULAB_ERR_ABORTED);
  EXPECT_TRUE(link->StopParked());
}

TEST(An547Qemu, CalibrationLoopsLeaveTheReferencesOutput) {
  // The hand-written Cortex-M55 loops (kernels/calibrate.c) against their C twins on the host.
  std::vector<WorkloadCase> cases;
  for (std::int32_t kind = 0; kind < MCULAB_CAL_NUM_KINDS; ++kind)
    cases.push_back({kind, {kind, 37}});
  auto wl = BuildWorkload(MCULAB_OP_CALIBRATE, cases, 4);
  ASSERT_TRUE(wl.ok());
  auto link = StartQemu(*wl, "calibrate.bin");
  link->Expect(MCULAB_MSG_HELLO);
  link->Send(ToWire(Configure{2, 0, 0, 0, 0}));
  link->Send(ToWire(RunMsg{}));
  for (const auto& c : cases) {
    link->Expect(MCULAB_MSG_CASE_START);
    const auto a = DecodeSample(link->Expect(MCULAB_MSG_SAMPLE));
    const auto b = DecodeSample(link->Expect(MCULAB_MSG_SAMPLE));
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->timer, b->timer);
    auto end = DecodeCaseEnd(link->Expect(MCULAB_MSG_CASE_END));
    ASSERT_TRUE(end.ok());
    EXPECT_EQ(end->checksum, *ReferenceChecksum(MCULAB_OP_CALIBRATE, c.params, 4))
        << "kind " << c.id;
  }
  EXPECT_EQ(DecodeDone(link->Expect(MCULAB_MSG_DONE))->status, 0);
  EXPECT_TRUE(link->StopParked());
}

TEST(An547Qemu, FastKernelsGiveTheHostReferencesChecksums) {
  test_support::ExpectFastKernelChecksums([](const Bytes& wl) { return StartQemu(wl, "fast.bin"); },
                                          "helium", false, kSeed);
}

}  // namespace
}  // namespace mculab
