// The host runner (bin/mculab-runner-host) end to end through pipes: the whole session as the
// agent runs it, checksums against the host reference, and every way a session ends early.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/frame_stream.h"
#include "common/reference.h"
#include "common/runner_messages.h"
#include "common/workload_builder.h"
#include "mculab/ops.h"
#include "runner_link.h"

namespace mculab {
namespace {

using test_support::RunnerLink;

// The host runner with its workload file ("" for none).
class RunnerProcess {
 public:
  explicit RunnerProcess(const std::string& workload_path)
      : link_(RunnerLink::SpawnHost(MCULAB_RUNNER_HOST, workload_path)) {}
  void Send(const Bytes& b) { link_->Send(b); }
  void CloseInput() { link_->CloseInput(); }
  std::optional<FrameEvent> Next() { return link_->Next(); }
  Bytes Expect(std::uint8_t type) { return link_->Expect(type); }
  int Wait() { return link_->Wait(); }

 private:
  std::unique_ptr<RunnerLink> link_;
};

std::string WriteWorkload(const std::string& name, const Bytes& bytes) {
  return test_support::WriteFile(name, bytes);
}

std::string ConvWorkloadFile(const std::vector<WorkloadCase>& cases, std::uint32_t seed,
                             const std::string& name) {
  auto wl = BuildWorkload(MCULAB_OP_CONV2D_S8, cases, seed);
  EXPECT_TRUE(wl.ok());
  return WriteWorkload(name, *wl);
}

const std::vector<std::int32_t> kSmallConv{1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1};
const std::vector<std::int32_t> kStrideConv{1, 3, 9, 9, 4, 3, 3, 0, 0, 2, 2};

Hello ExpectHello(RunnerProcess& r) {
  auto hello = DecodeHello(r.Expect(MCULAB_MSG_HELLO));
  EXPECT_TRUE(hello.ok());
  return hello.ok() ? *hello : Hello{};
}

ErrorMsg ExpectError(RunnerProcess& r, std::uint16_t code) {
  auto err = DecodeError(r.Expect(MCULAB_MSG_ERROR));
  EXPECT_TRUE(err.ok());
  if (!err.ok()) return {};
  EXPECT_EQ(err->code, code) << err->text;
  return *err;
}

Done ExpectDone(RunnerProcess& r) {
  auto done = DecodeDone(r.Expect(MCULAB_MSG_DONE));
  EXPECT_TRUE(done.ok());
  return done.ok() ? *done : Done{};
}

TEST(HostRunner, FullSessionReportsSamplesAndReferenceChecksums) {
  const std::uint32_t seed = 0xABCD;
  const std::vector<WorkloadCase> cases{{10, kSmallConv}, {-3, kStrideConv}};
  RunnerProcess r(ConvWorkloadFile(cases, seed, "full.bin"));
  const Hello hello = ExpectHello(r);
  EXPECT_EQ(hello.port, "host");
  EXPECT_EQ(hello.timer_unit, "ns");
  EXPECT_FALSE(hello.emulated);
  EXPECT_FALSE(hello.cpu.empty());
  EXPECT_GT(hello.arena_bytes, 1u << 20);

  r.Send(ToWire(Configure{4, 1, 0, 0}));
  r.Send(ToWire(RunMsg{}));
  for (std::uint16_t i = 0; i < cases.size(); ++i) {
    auto start = DecodeCaseStart(r.Expect(MCULAB_MSG_CASE_START));
    ASSERT_TRUE(start.ok());
    EXPECT_EQ(start->case_index, i);
    EXPECT_EQ(start->case_id, cases[i].id);
    for (std::uint32_t it = 0; it < 4; ++it) {
      auto s = DecodeSample(r.Expect(MCULAB_MSG_SAMPLE));
      ASSERT_TRUE(s.ok());
      EXPECT_EQ(s->case_index, i);
      EXPECT_EQ(s->iteration, it);
      EXPECT_GT(s->timer, 0u);
      EXPECT_TRUE(s->counters.empty());
    }
    auto end = DecodeCaseEnd(r.Expect(MCULAB_MSG_CASE_END));
    ASSERT_TRUE(end.ok());
    auto want = ReferenceChecksum(MCULAB_OP_CONV2D_S8, cases[i].params, seed);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(end->checksum, *want) << "case " << i;
  }
  const Done done = ExpectDone(r);
  EXPECT_EQ(done.cases_run, 2);
  EXPECT_EQ(done.status, MCULAB_ERR_NONE);
  EXPECT_EQ(r.Wait(), 0);
}

TEST(HostRunner, FullyConnectedChecksumMatchesReference) {
  const std::vector<std::int32_t> fc{2, 100, 30};
  auto wl = BuildWorkload(MCULAB_OP_FULLY_CONNECTED_S8, {{0, fc}}, 9);
  ASSERT_TRUE(wl.ok());
  RunnerProcess r(WriteWorkload("fc.bin", *wl));
  ExpectHello(r);
  r.Send(ToWire(Configure{1, 0, static_cast<std::uint32_t>(wl->size()), 0}));
  r.Send(ToWire(RunMsg{}));
  r.Expect(MCULAB_MSG_CASE_START);
  r.Expect(MCULAB_MSG_SAMPLE);
  auto end = DecodeCaseEnd(r.Expect(MCULAB_MSG_CASE_END));
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->checksum, *ReferenceChecksum(MCULAB_OP_FULLY_CONNECTED_S8, fc, 9));
  EXPECT_EQ(ExpectDone(r).status, MCULAB_ERR_NONE);
  EXPECT_EQ(r.Wait(), 0);
}

TEST(HostRunner, CorruptWorkloadIsBadWorkload) {
  auto wl = BuildWorkload(MCULAB_OP_CONV2D_S8, {{0, kSmallConv}}, 1);
  ASSERT_TRUE(wl.ok());
  (*wl)[30] ^= 0xFF;  // body byte: CRC no longer matches
  RunnerProcess r(WriteWorkload("corrupt.bin", *wl));
  ExpectHello(r);
  r.Send(ToWire(Configure{1, 0, 0, 0}));
  r.Send(ToWire(RunMsg{}));
  const ErrorMsg err = ExpectError(r, MCULAB_ERR_BAD_WORKLOAD);
  EXPECT_NE(err.text.find("CRC"), std::string::npos) << err.text;
  const Done done = ExpectDone(r);
  EXPECT_EQ(done.cases_run, 0);
  EXPECT_EQ(done.status, MCULAB_ERR_BAD_WORKLOAD);
  EXPECT_EQ(r.Wait(), 0);
}

TEST(HostRunner, MissingWorkloadFileIsBadWorkload) {
  RunnerProcess r(::testing::TempDir() + "/does-not-exist.bin");
  ExpectHello(r);
  r.Send(ToWire(Configure{1, 0, 0, 0}));
  r.Send(ToWire(RunMsg{}));
  const ErrorMsg err = ExpectError(r, MCULAB_ERR_BAD_WORKLOAD);
  EXPECT_NE(err.text.find("cannot open"), std::string::npos) << err.text;
  EXPECT_EQ(ExpectDone(r).status, MCULAB_ERR_BAD_WORKLOAD);
}

TEST(HostRunner, WorkloadLengthMustMatchConfigure) {
  RunnerProcess r(ConvWorkloadFile({{0, kSmallConv}}, 1, "len.bin"));
  ExpectHello(r);
  r.Send(ToWire(Configure{1, 0, 40, 0}));  // the agent says 40 bytes, the header says more
  r.Send(ToWire(RunMsg{}));
  ExpectError(r, MCULAB_ERR_BAD_WORKLOAD);
  EXPECT_EQ(ExpectDone(r).status, MCULAB_ERR_BAD_WORKLOAD);
}

TEST(HostRunner, UnknownOpInWorkload) {
  auto wl = BuildWorkload(42, {{0, {1, 2, 3}}}, 1);
  ASSERT_TRUE(wl.ok());
  RunnerProcess r(WriteWorkload("op42.bin", *wl));
  ExpectHello(r);
  r.Send(ToWire(Configure{1, 0, 0, 0}));
  r.Send(ToWire(RunMsg{}));
  ExpectError(r, MCULAB_ERR_UNKNOWN_OP);
  EXPECT_EQ(ExpectDone(r).status, MCULAB_ERR_UNKNOWN_OP);
}

TEST(HostRunner, BadParamsStopTheRunAfterTheCasesBefore) {
  const std::vector<std::int32_t> kernel_too_big{1, 8, 2, 2, 8, 5, 5, 0, 0, 1, 1};
  RunnerProcess r(ConvWorkloadFile({{0, kStrideConv}, {1, kernel_too_big}, {2, kSmallConv}}, 1,
                                   "badparams.bin"));
  ExpectHello(r);
  r.Send(ToWire(Configure{1, 0, 0, 0}));
  r.Send(ToWire(RunMsg{}));
  r.Expect(MCULAB_MSG_CASE_START);
  r.Expect(MCULAB_MSG_SAMPLE);
  r.Expect(MCULAB_MSG_CASE_END);
  const ErrorMsg err = ExpectError(r, MCULAB_ERR_BAD_PARAMS);
  EXPECT_EQ(err.case_index, 1);
  EXPECT_NE(err.text.find("case 1"), std::string::npos) << err.text;
  const Done done = ExpectDone(r);
  EXPECT_EQ(done.cases_run, 1);
  EXPECT_EQ(done.status, MCULAB_ERR_BAD_PARAMS);
  EXPECT_EQ(r.Wait(), 0);
}

TEST(HostRunner, TensorsLargerThanTheArenaAreNoMemory) {
  const std::vector<std::int32_t> huge{1, 4, 4096, 4096, 1, 1, 1, 0, 0, 1, 1};  // 64 MiB input
  RunnerProcess r(ConvWorkloadFile({{7, huge}}, 1, "huge.bin"));
  ExpectHello(r);
  r.Send(ToWire(Configure{1, 0, 0, 0}));
  r.Send(ToWire(RunMsg{}));
  const ErrorMsg err = ExpectError(r, MCULAB_ERR_NO_MEMORY);
  EXPECT_EQ(err.case_index, 0);
  EXPECT_NE(err.text.find("the arena has"), std::string::npos) << err.text;
  EXPECT_EQ(ExpectDone(r).status, MCULAB_ERR_NO_MEMORY);
}

TEST(HostRunner, RunBeforeConfigureIsBadState) {
  RunnerProcess r(ConvWorkloadFile({{0, kSmallConv}}, 1, "state.bin"));
  ExpectHello(r);
  r.Send(ToWire(RunMsg{}));
  ExpectError(r, MCULAB_ERR_BAD_STATE);
  EXPECT_EQ(ExpectDone(r).status, MCULAB_ERR_BAD_STATE);
  EXPECT_EQ(r.Wait(), 0);
}

TEST(HostRunner, InvalidConfigureIsRejectedAndTheNextOneAccepted) {
  RunnerProcess r(ConvWorkloadFile({{0, kStrideConv}}, 1, "config.bin"));
  ExpectHello(r);
  r.Send(ToWire(Configure{0, 0, 0, 0}));  // zero iterations
  ExpectError(r, MCULAB_ERR_BAD_PARAMS);
  r.Send(ToWire(Configure{1, 0, 0, 1}));  // a counter the host port does not have
  ExpectError(r, MCULAB_ERR_UNSUPPORTED_EVENT);
  r.Send(ToWire(Configure{2, 0, 0, 0}));
  r.Send(ToWire(RunMsg{}));
  r.Expect(MCULAB_MSG_CASE_START);
  r.Expect(MCULAB_MSG_SAMPLE);
  r.Expect(MCULAB_MSG_SAMPLE);
  r.Expect(MCULAB_MSG_CASE_END);
  EXPECT_EQ(ExpectDone(r).status, MCULAB_ERR_NONE);
}

TEST(HostRunner, GarbageFromTheAgentIsReportedAndTheSessionGoesOn) {
  RunnerProcess r(ConvWorkloadFile({{0, kStrideConv}}, 1, "garbage.bin"));
  ExpectHello(r);
  r.Send(Bytes{0x05, 0x11, 0x22, 0x00});                // bad COBS
  r.Send(EncodeFrame(MCULAB_MSG_HELLO, Bytes(56, 1)));  // a runner type sent to the runner
  ExpectError(r, MCULAB_ERR_BAD_FRAME);
  const ErrorMsg unknown = ExpectError(r, MCULAB_ERR_BAD_FRAME);
  EXPECT_NE(unknown.text.find("unknown frame type 0x01"), std::string::npos) << unknown.text;
  r.Send(ToWire(Configure{1, 0, 0, 0}));
  r.Send(ToWire(RunMsg{}));
  r.Expect(MCULAB_MSG_CASE_START);
  r.Expect(MCULAB_MSG_SAMPLE);
  r.Expect(MCULAB_MSG_CASE_END);
  EXPECT_EQ(ExpectDone(r).status, MCULAB_ERR_NONE);
}

TEST(HostRunner, AbortStopsTheRunBetweenIterations) {
  const std::vector<std::int32_t> slow{1, 32, 32, 32, 32, 3, 3, 1, 1, 1, 1};
  RunnerProcess r(ConvWorkloadFile({{0, slow}, {1, slow}}, 1, "abort.bin"));
  ExpectHello(r);
  r.Send(ToWire(Configure{100000, 0, 0, 0}));
  r.Send(ToWire(RunMsg{}));
  r.Expect(MCULAB_MSG_CASE_START);
  r.Expect(MCULAB_MSG_SAMPLE);
  r.Send(ToWire(AbortMsg{}));
  std::uint32_t samples = 1;
  for (;;) {
    auto ev = r.Next();
    ASSERT_TRUE(ev.has_value());
    ASSERT_TRUE(ev->ok()) << ev->Describe();
    if (ev->type != MCULAB_MSG_SAMPLE) {
      ASSERT_EQ(ev->type, MCULAB_MSG_ERROR);
      auto err = DecodeError(ev->payload);
      ASSERT_TRUE(err.ok());
      EXPECT_EQ(err->code, MCULAB_ERR_ABORTED);
      EXPECT_EQ(err->case_index, 0);
      break;
    }
    ++samples;
    ASSERT_LT(samples, 1000u) << "the runner does not stop after ABORT";
  }
  EXPECT_LT(samples, 100000u);
  const Done done = ExpectDone(r);
  EXPECT_EQ(done.status, MCULAB_ERR_ABORTED);
  EXPECT_EQ(done.cases_run, 0);
  EXPECT_EQ(r.Wait(), 0);
}

TEST(HostRunner, AbortBeforeRunEndsTheSession) {
  RunnerProcess r(ConvWorkloadFile({{0, kSmallConv}}, 1, "abort-idle.bin"));
  ExpectHello(r);
  r.Send(ToWire(AbortMsg{}));
  ExpectError(r, MCULAB_ERR_ABORTED);
  EXPECT_EQ(ExpectDone(r).status, MCULAB_ERR_ABORTED);
  EXPECT_EQ(r.Wait(), 0);
}

TEST(HostRunner, ClosedLinkExitsWithStatusTwo) {
  RunnerProcess r(ConvWorkloadFile({{0, kSmallConv}}, 1, "closed.bin"));
  ExpectHello(r);
  r.CloseInput();
  EXPECT_EQ(r.Wait(), 2);
}

TEST(HostRunner, MemoryReportHasTheCasesArenaAndTheStacksHighWaterMark) {
  RunnerProcess r(ConvWorkloadFile({{0, kSmallConv}, {1, kStrideConv}}, 5, "memory.bin"));
  const Hello hello = ExpectHello(r);
  EXPECT_TRUE(hello.units.empty()) << "the host port counts nothing besides its timer";
  r.Send(ToWire(Configure{1, 0, 0, 0, MCULAB_CONFIGURE_MEMORY}));
  r.Send(ToWire(RunMsg{}));
  for (std::uint16_t i = 0; i < 2; ++i) {
    r.Expect(MCULAB_MSG_CASE_START);
    r.Expect(MCULAB_MSG_SAMPLE);
    auto mem = DecodeMemory(r.Expect(MCULAB_MSG_MEMORY));
    ASSERT_TRUE(mem.ok()) << mem.error().message;
    EXPECT_EQ(mem->case_index, i);
    ASSERT_EQ(mem->entries.size(), 2u);
    EXPECT_EQ(mem->entries[0].category, "arena");
    const auto& params = i == 0 ? kSmallConv : kStrideConv;
    mculab_case c;
    std::vector<std::uint8_t> arena(1 << 20);
    ASSERT_EQ(
        mculab_case_prepare(MCULAB_OP_CONV2D_S8, params.data(), 5, arena.data(), arena.size(), &c),
        MCULAB_CASE_OK);
    // The runner's arena may start at another alignment: at most 15 bytes of difference.
    EXPECT_NEAR(static_cast<double>(mem->entries[0].used), static_cast<double>(c.arena_used), 15);
    EXPECT_EQ(mem->entries[0].reserved, hello.arena_bytes);
    EXPECT_EQ(mem->entries[1].category, "stack");
    EXPECT_GT(mem->entries[1].used, 1000u) << "the runner's frames and the kernel's";
    EXPECT_LT(mem->entries[1].used, 64u << 10);
    EXPECT_EQ(mem->entries[1].reserved, 1u << 20);
    r.Expect(MCULAB_MSG_CASE_END);
  }
  EXPECT_EQ(ExpectDone(r).status, 0);
  EXPECT_EQ(r.Wait(), 0);
}

TEST(HostRunner, EachBuiltInKernelIsOneOperatorInOpProfiles) {
  RunnerProcess r(ConvWorkloadFile({{0, kSmallConv}}, 5, "ops.bin"));
  ExpectHello(r);
  r.Send(ToWire(Configure{3, 1, 0, 0, MCULAB_CONFIGURE_OP_PROFILE}));
  r.Send(ToWire(RunMsg{}));
  r.Expect(MCULAB_MSG_CASE_START);
  std::uint64_t timers = 0;
  for (int i = 0; i < 3; ++i) timers += DecodeSample(r.Expect(MCULAB_MSG_SAMPLE))->timer;
  auto op = DecodeOpSample(r.Expect(MCULAB_MSG_OP_SAMPLE));
  ASSERT_TRUE(op.ok()) << op.error().message;
  EXPECT_EQ(op->op_index, 0);
  EXPECT_EQ(op->type, "CONV_2D");
  EXPECT_EQ(op->name, "conv2d_s8");
  EXPECT_EQ(op->count, 3u);
  EXPECT_LE(op->timer.sum, timers);
  EXPECT_LE(op->timer.min, op->timer.max);
  r.Expect(MCULAB_MSG_CASE_END);
  EXPECT_EQ(ExpectDone(r).status, 0);
}

TEST(HostRunner, CalibrationLoopRunsAndMatchesTheReference) {
  auto wl = BuildWorkload(MCULAB_OP_CALIBRATE,
                          {{0, {MCULAB_CAL_MVE, 1000}}, {1, {MCULAB_CAL_LDM, 10}}}, 3);
  ASSERT_TRUE(wl.ok());
  RunnerProcess r(WriteWorkload("calibrate.bin", *wl));
  ExpectHello(r);
  r.Send(ToWire(Configure{1, 0, 0, 0, 0}));
  r.Send(ToWire(RunMsg{}));
  for (std::int32_t i = 0; i < 2; ++i) {
    r.Expect(MCULAB_MSG_CASE_START);
    r.Expect(MCULAB_MSG_SAMPLE);
    auto end = DecodeCaseEnd(r.Expect(MCULAB_MSG_CASE_END));
    ASSERT_TRUE(end.ok());
    const std::vector<std::int32_t> p = i == 0 ? std::vector<std::int32_t>{MCULAB_CAL_MVE, 1000}
                                               : std::vector<std::int32_t>{MCULAB_CAL_LDM, 10};
    EXPECT_EQ(end->checksum, *ReferenceChecksum(MCULAB_OP_CALIBRATE, p, 3));
  }
  EXPECT_EQ(ExpectDone(r).status, 0);
}

}  // namespace
}  // namespace mculab
