// The runner core in-process over a fake port (fake_port.h): counter selection per unit, the values
// SAMPLE and CASE_END carry, per-operator profiles, memory reports and custom workloads, checked
// value for value against a timer the test advances by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/frame_stream.h"
#include "common/runner_messages.h"
#include "common/workload_builder.h"
#include "fake_port.h"
#include "mculab/ops.h"
#include "mculab/runner.h"
#include "mculab/workload.h"
#include "port.h"

namespace mculab {
namespace {

using test_support::FakeUnit;
using test_support::Port;

// ---- a custom workload driven by the test ----

struct Script {
  std::uint16_t prepare_status = 0;
  std::string prepare_error;
  std::string log_at_prepare;
  std::vector<std::pair<std::string, std::uint32_t>> memory_at_prepare;  // category, used
  std::function<void(int)> invoke;  // gets the invocation number (warm-up included)
  int invocations = 0;
  std::string calls;  // "r" per reload, "i" per invoke, in order
  Bytes blob_seen;
  std::uintptr_t blob_address = 0;
  std::vector<std::int64_t> case_ids;
};

Script* g_script = nullptr;

std::uint16_t ScriptPrepare(void*, const mculab_case_info* info) {
  Script& s = *g_script;
  s.blob_seen.assign(info->blob, info->blob + info->blob_len);
  s.blob_address = reinterpret_cast<std::uintptr_t>(info->blob);
  s.case_ids.push_back(info->case_id);
  if (!s.log_at_prepare.empty()) mculab_log(1, s.log_at_prepare.c_str());
  for (const auto& [name, used] : s.memory_at_prepare)
    mculab_memory_report(name.c_str(), used, 999);
  if (!s.prepare_error.empty()) {
    std::snprintf(info->error_text, info->error_text_len, "%s", s.prepare_error.c_str());
  }
  return s.prepare_status;
}

void ScriptInvoke(void*) {
  Script& s = *g_script;
  if (s.invoke) s.invoke(s.invocations);
  ++s.invocations;
  s.calls += 'i';
}

std::uint32_t ScriptChecksum(void*) { return 0xC0DE; }

const mculab_workload_ops kScriptOps = {.name = "scripted",
                                        .prepare = ScriptPrepare,
                                        .invoke = ScriptInvoke,
                                        .checksum = ScriptChecksum,
                                        .user = nullptr,
                                        .reload = nullptr};

void Advance(std::uint64_t ticks) { Port().now += ticks; }

// A reload that takes 50 ticks: none may reach a sample.
void ScriptReload(void*) {
  Advance(50);
  g_script->calls += 'r';
}

const mculab_workload_ops kReloadingOps = {.name = "scripted",
                                           .prepare = ScriptPrepare,
                                           .invoke = ScriptInvoke,
                                           .checksum = ScriptChecksum,
                                           .user = nullptr,
                                           .reload = ScriptReload};

Bytes CustomWorkload(const std::vector<std::int64_t>& ids, const Bytes& blob) {
  Bytes out(4096);
  const std::size_t n = mculab_workload_write_custom(out.data(), out.size(), 7, ids.data(),
                                                     static_cast<std::uint16_t>(ids.size()),
                                                     blob.data(), blob.size());
  EXPECT_GT(n, 0u);
  out.resize(n);
  return out;
}

class CoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test_support::ResetPort();
    script_ = Script{};
    g_script = &script_;
  }
  void TearDown() override { g_script = nullptr; }

  // Runs one session: HELLO, then `configure` and RUN; returns the exit status.
  int Run(const Configure& configure, const mculab_workload_ops* ops = &kScriptOps) {
    Bytes in = ToWire(configure);
    Bytes run = ToWire(RunMsg{});
    in.insert(in.end(), run.begin(), run.end());
    Port().to_runner = in;
    const int status = mculab_core_run(ops);
    FrameStream stream(FrameSender::kRunner);
    stream.Feed(Port().from_runner);
    frames_.clear();
    while (auto ev = stream.Next()) {
      EXPECT_TRUE(ev->ok()) << ev->Describe();
      frames_.push_back(*ev);
    }
    return status;
  }

  std::vector<Bytes> Payloads(std::uint8_t type) const {
    std::vector<Bytes> out;
    for (const auto& f : frames_) {
      if (f.type == type) out.push_back(f.payload);
    }
    return out;
  }
  std::vector<std::uint8_t> Types() const {
    std::vector<std::uint8_t> out;
    for (const auto& f : frames_) out.push_back(f.type);
    return out;
  }
  // The first ERROR (a refused CONFIGURE is followed by RUN's BAD_STATE).
  ErrorMsg TheError() const {
    auto e = Payloads(MCULAB_MSG_ERROR);
    EXPECT_FALSE(e.empty());
    return e.empty() ? ErrorMsg{} : *DecodeError(e[0]);
  }
  Hello TheHello() const { return *DecodeHello(Payloads(MCULAB_MSG_HELLO).at(0)); }
  std::vector<OpSample> Ops() const {
    std::vector<OpSample> out;
    for (const auto& p : Payloads(MCULAB_MSG_OP_SAMPLE)) out.push_back(*DecodeOpSample(p));
    return out;
  }
  std::vector<std::string> Logs() const {
    std::vector<std::string> out;
    for (const auto& p : Payloads(MCULAB_MSG_LOG)) out.push_back(DecodeLog(p)->text);
    return out;
  }

  Script script_;
  std::vector<FrameEvent> frames_;
};

// Units: "fake-a" (2 at once: e0, e1, e2), an external one, "fake-b" (1: f0).
class CoreCountersTest : public CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    Port().units = {a_.unit(), ext_.unit(), b_.unit()};
    Port().workload = CustomWorkload({5}, Bytes{1, 2, 3});
  }
  FakeUnit a_{"fake-a", 2, {{"e0", 2}, {"e1", 3}, {"e2", 5}}};
  FakeUnit ext_{"fake-ext", 3, {{"x0", 0}, {"x1", 1}}, MCULAB_UNIT_EXTERNAL};
  FakeUnit b_{"fake-b", 1, {{"f0", 7}}};
};

TEST_F(CoreCountersTest, HelloListsTheUnitsInOrderAndSaysItRunsItsOwnRuntime) {
  Run(Configure{1, 0, 0, 0, 0});
  const Hello h = TheHello();
  ASSERT_EQ(h.units.size(), 3u);
  EXPECT_EQ(h.units[0].name, "fake-a");
  EXPECT_EQ(h.units[0].max_simultaneous, 2);
  EXPECT_EQ(h.units[0].events, (std::vector<std::string>{"e0", "e1", "e2"}));
  EXPECT_TRUE(h.units[1].external);
  EXPECT_EQ(h.units[2].name, "fake-b");
  EXPECT_EQ(h.counters, (std::vector<std::string>{"e0", "e1", "e2", "f0"}));
  EXPECT_EQ(h.runtime, "scripted");
  EXPECT_TRUE(h.custom_workload);
  EXPECT_EQ(h.version(), "0.2.0");
}

TEST_F(CoreCountersTest, SampleCarriesTheSelectedCountersInIndexOrderOverTheTimedRegion) {
  script_.invoke = [](int) { Advance(100); };
  // e1, e2 of fake-a and f0 of fake-b: counter indices 1, 2, 3 (the external unit has none).
  ASSERT_EQ(Run(Configure{2, 1, 0, 0b1110, 0}), 0);
  EXPECT_EQ(a_.selected, (std::vector<std::uint16_t>{3, 5}));
  EXPECT_EQ(b_.selected, (std::vector<std::uint16_t>{7}));
  const auto samples = Payloads(MCULAB_MSG_SAMPLE);
  ASSERT_EQ(samples.size(), 2u);
  for (const auto& p : samples) {
    const SampleMsg s = *DecodeSample(p);
    EXPECT_EQ(s.timer, 101u);  // the 100 ticks of the workload and the first timer read
    // The counters start before the first timer read and stop after the second: 102 ticks.
    EXPECT_EQ(s.counters, (std::vector<std::uint64_t>{3 * 102, 5 * 102, 7 * 102}));
  }
  const CaseEnd end = *DecodeCaseEnd(Payloads(MCULAB_MSG_CASE_END).at(0));
  EXPECT_EQ(end.overhead, 1u);
  EXPECT_EQ(end.counter_overhead, (std::vector<std::uint64_t>{3 * 2, 5 * 2, 7 * 2}));
  EXPECT_EQ(end.checksum, 0xC0DEu);
}

TEST_F(CoreCountersTest, ReloadRunsBeforeEveryInferenceOutsideTheMeasuredRegion) {
  script_.invoke = [](int) { Advance(100); };
  ASSERT_EQ(Run(Configure{2, 1, 0, 0b1110, 0}, &kReloadingOps), 0);
  EXPECT_EQ(script_.calls, "ririri") << "one warm-up and two measured inferences";
  const auto samples = Payloads(MCULAB_MSG_SAMPLE);
  ASSERT_EQ(samples.size(), 2u);
  for (const auto& p : samples) {
    const SampleMsg s = *DecodeSample(p);
    EXPECT_EQ(s.timer, 101u) << "the reload's 50 ticks were measured";
    EXPECT_EQ(s.counters, (std::vector<std::uint64_t>{3 * 102, 5 * 102, 7 * 102}));
  }
}

TEST_F(CoreCountersTest, CountersStartBeforeAndStopAfterTheTimerReads) {
  Run(Configure{1, 0, 0, 0b1, 0});
  // select at CONFIGURE, then one measured region and eight empty ones.
  ASSERT_GE(a_.calls.size(), 3u);
  EXPECT_EQ(a_.calls[0], "select");
  EXPECT_EQ(a_.calls[1], "start@1000");
  EXPECT_EQ(a_.calls[2], "stop@1002");
  EXPECT_EQ(a_.calls.size(), 1u + 2u * 9u);
  EXPECT_TRUE(b_.calls.empty()) << "a unit without a selected event is left alone";
}

TEST_F(CoreCountersTest, ACounterBeyondTheCatalogueIsUnsupportedAndNamesWhatTheRunnerCounts) {
  Run(Configure{1, 0, 0, 1u << 4, 0});
  const ErrorMsg e = TheError();
  EXPECT_EQ(e.code, MCULAB_ERR_UNSUPPORTED_EVENT);
  EXPECT_NE(e.text.find("counter 4 does not exist"), std::string::npos) << e.text;
  EXPECT_NE(e.text.find("fake-a (2 at once): e0, e1, e2"), std::string::npos) << e.text;
  EXPECT_EQ(e.text.find("x0"), std::string::npos) << "external events are not selectable";
  EXPECT_EQ(DecodeDone(Payloads(MCULAB_MSG_DONE).at(0))->status, MCULAB_ERR_BAD_STATE);
}

TEST_F(CoreCountersTest, MoreEventsThanAUnitCountsAtOnceIsUnsupportedWithAdviceToSplit) {
  Run(Configure{1, 0, 0, 0b111, 0});
  const ErrorMsg e = TheError();
  EXPECT_EQ(e.code, MCULAB_ERR_UNSUPPORTED_EVENT);
  EXPECT_NE(e.text.find("fake-a counts at most 2 events at once"), std::string::npos) << e.text;
  EXPECT_NE(e.text.find("passes"), std::string::npos) << e.text;
}

TEST_F(CoreCountersTest, AUnitThatRefusesItsSelectionIsUnsupported) {
  b_.refuse_select = true;
  Run(Configure{1, 0, 0, 0b1000, 0});
  const ErrorMsg e = TheError();
  EXPECT_EQ(e.code, MCULAB_ERR_UNSUPPORTED_EVENT);
  EXPECT_NE(e.text.find("fake-b cannot count"), std::string::npos) << e.text;
}

TEST_F(CoreCountersTest, UnknownConfigureFlagsAreBadParams) {
  Run(Configure{1, 0, 0, 0, 0x80});
  EXPECT_EQ(TheError().code, MCULAB_ERR_BAD_PARAMS);
}

TEST_F(CoreCountersTest, OpsAggregateOverMeasuredIterationsWithNestingAndCounters) {
  script_.invoke = [](int n) {
    mculab_op_begin(3, "CONV_2D", "conv");
    Advance(50 + 10 * static_cast<std::uint64_t>(n));
    mculab_op_begin(4, "RELU", "relu");  // nested: conv's figures include it
    Advance(5);
    mculab_op_end();
    mculab_op_end();
    mculab_op_begin(9, "FULLY_CONNECTED", "fc");
    Advance(20);
    mculab_op_end();
  };
  // 2 warm-up invocations (n = 0, 1) are not profiled; measured ones are n = 2, 3, 4.
  ASSERT_EQ(Run(Configure{3, 2, 0, 0b1, MCULAB_CONFIGURE_OP_PROFILE}), 0);
  const auto ops = Ops();
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(Types().back(), MCULAB_MSG_DONE);
  const OpSample& conv = ops[0];
  EXPECT_EQ(conv.op_index, 3);
  EXPECT_EQ(conv.type, "CONV_2D");
  EXPECT_EQ(conv.name, "conv");
  EXPECT_EQ(conv.count, 3u);
  EXPECT_FALSE(conv.unclosed);
  // conv: 8 ticks of profiler reads (its own and relu's) + 70, 80, 90.
  EXPECT_EQ(conv.timer, (OpMetric{78 + 88 + 98, 78, 98}));
  // e0 counts 2 per tick, from before conv's first timer read to after its last: 9 + a ticks.
  ASSERT_EQ(conv.counters.size(), 1u);
  EXPECT_EQ(conv.counters[0], (OpMetric{2 * (79 + 89 + 99), 2 * 79, 2 * 99}));
  EXPECT_EQ(ops[1].op_index, 4);
  EXPECT_EQ(ops[1].timer, (OpMetric{18, 6, 6}));
  EXPECT_EQ(ops[1].counters[0], (OpMetric{42, 14, 14}));
  EXPECT_EQ(ops[2].name, "fc");
  EXPECT_EQ(ops[2].timer, (OpMetric{63, 21, 21}));
  // OP_SAMPLEs come after the samples and before CASE_END.
  const auto t = Types();
  const auto first_op = std::find(t.begin(), t.end(), MCULAB_MSG_OP_SAMPLE) - t.begin();
  const auto end = std::find(t.begin(), t.end(), MCULAB_MSG_CASE_END) - t.begin();
  EXPECT_EQ(t[first_op - 1], MCULAB_MSG_SAMPLE);
  EXPECT_EQ(end, first_op + 3);
}

TEST_F(CoreCountersTest, NoOpSamplesUnlessConfigureAsksForThem) {
  script_.invoke = [](int) {
    mculab_op_begin(0, "ADD", "add");
    Advance(1);
    mculab_op_end();
  };
  Run(Configure{2, 0, 0, 0, 0});
  EXPECT_TRUE(Ops().empty());
}

TEST_F(CoreCountersTest, AnOpLeftOpenIsFlaggedAndNotCounted) {
  script_.invoke = [](int n) {
    mculab_op_begin(1, "SOFTMAX", "softmax");
    Advance(3);
    if (n != 1) mculab_op_end();  // the second iteration forgets it
  };
  Run(Configure{3, 0, 0, 0, MCULAB_CONFIGURE_OP_PROFILE});
  const auto ops = Ops();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_TRUE(ops[0].unclosed);
  EXPECT_EQ(ops[0].count, 2u);
}

TEST_F(CoreCountersTest, OpsBeyondTheTableAndUnmatchedEndsAreReportedInALog) {
  script_.invoke = [](int) {
    for (std::uint16_t i = 0; i < MCULAB_MAX_OPS + 2; ++i) {
      mculab_op_begin(i, "OP", "op");
      mculab_op_end();
    }
    mculab_op_end();
  };
  Run(Configure{1, 0, 0, 0, MCULAB_CONFIGURE_OP_PROFILE});
  EXPECT_EQ(Ops().size(), MCULAB_MAX_OPS);
  const auto logs = Logs();
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_NE(logs[0].find("2 op calls beyond " + std::to_string(MCULAB_MAX_OPS) + " ops"),
            std::string::npos)
      << logs[0];
  EXPECT_NE(logs[0].find("1 mculab_op_end() without a begin"), std::string::npos) << logs[0];
}

TEST_F(CoreCountersTest, MemoryCategoriesPersistAndUpdateAcrossCases) {
  Port().workload = CustomWorkload({10, 11}, Bytes{9});
  script_.memory_at_prepare = {{"arena", 100}, {"persistent", 40}};
  Run(Configure{1, 0, 0, 0, MCULAB_CONFIGURE_MEMORY});
  const auto reports = Payloads(MCULAB_MSG_MEMORY);
  ASSERT_EQ(reports.size(), 2u);
  const MemoryReport m = *DecodeMemory(reports[1]);
  EXPECT_EQ(m.case_index, 1);
  EXPECT_EQ(m.entries, (std::vector<MemoryEntry>{{"arena", 100, 999}, {"persistent", 40, 999}}))
      << "the fake port paints no stack, so there is no stack entry";
  EXPECT_EQ(script_.case_ids, (std::vector<std::int64_t>{10, 11}));
}

TEST_F(CoreCountersTest, NoMemoryReportUnlessConfigureAsksForIt) {
  script_.memory_at_prepare = {{"arena", 100}};
  Run(Configure{1, 0, 0, 0, 0});
  EXPECT_TRUE(Payloads(MCULAB_MSG_MEMORY).empty());
}

TEST_F(CoreCountersTest, MoreMemoryCategoriesThanTheTableHoldsAreCountedInALog) {
  for (unsigned i = 0; i < MCULAB_MAX_MEMORY_CATEGORIES + 3; ++i) {
    script_.memory_at_prepare.push_back({"cat" + std::to_string(i), i});
  }
  Run(Configure{1, 0, 0, 0, MCULAB_CONFIGURE_MEMORY});
  EXPECT_EQ(DecodeMemory(Payloads(MCULAB_MSG_MEMORY).at(0))->entries.size(),
            MCULAB_MAX_MEMORY_CATEGORIES);
  const auto logs = Logs();
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_NE(logs[0].find("3 reports of categories beyond 16 dropped"), std::string::npos);
}

TEST_F(CoreTest, TheBlobReachesPrepareAlignedAndWhole) {
  Bytes blob(1000);
  for (std::size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<std::uint8_t>(i * 7);
  Port().workload = CustomWorkload({1, 2, 3}, blob);
  ASSERT_EQ(Run(Configure{1, 0, 0, 0, 0}), 0);
  EXPECT_EQ(script_.blob_seen, blob);
  EXPECT_EQ((script_.blob_address - reinterpret_cast<std::uintptr_t>(Port().workload.data())) %
                MCULAB_WORKLOAD_BLOB_ALIGN,
            0u);
  EXPECT_EQ(DecodeDone(Payloads(MCULAB_MSG_DONE).at(0))->cases_run, 3);
}

TEST_F(CoreTest, APrepareFailureStopsTheRunWithItsCodeAndText) {
  Port().workload = CustomWorkload({42}, Bytes{1});
  script_.prepare_status = MCULAB_ERR_NO_MEMORY;
  script_.prepare_error = "the model needs 300 KiB of arena";
  script_.log_at_prepare = "tflite-micro 2.16";
  Run(Configure{1, 0, 0, 0, 0});
  const ErrorMsg e = TheError();
  EXPECT_EQ(e.code, MCULAB_ERR_NO_MEMORY);
  EXPECT_EQ(e.case_index, 0);
  EXPECT_EQ(e.text, "case 42: the model needs 300 KiB of arena");
  EXPECT_EQ(Logs(), (std::vector<std::string>{"tflite-micro 2.16"}));
  EXPECT_EQ(DecodeDone(Payloads(MCULAB_MSG_DONE).at(0))->status, MCULAB_ERR_NO_MEMORY);
  EXPECT_TRUE(Payloads(MCULAB_MSG_CASE_START).empty());
}

TEST_F(CoreTest, ACustomRunnerRefusesABuiltInOpWorkload) {
  Port().workload =
      *BuildWorkload(MCULAB_OP_CONV2D_S8, {{0, {1, 1, 4, 4, 1, 1, 1, 0, 0, 1, 1}}}, 1);
  Run(Configure{1, 0, 0, 0, 0});
  const ErrorMsg e = TheError();
  EXPECT_EQ(e.code, MCULAB_ERR_UNKNOWN_OP);
  EXPECT_NE(e.text.find("runs its own runtime (scripted)"), std::string::npos) << e.text;
}

TEST_F(CoreTest, TheGenericRunnerRefusesACustomWorkload) {
  Port().workload = CustomWorkload({0}, Bytes{1});
  Run(Configure{1, 0, 0, 0, 0}, nullptr);
  const ErrorMsg e = TheError();
  EXPECT_EQ(e.code, MCULAB_ERR_UNKNOWN_OP);
  EXPECT_NE(e.text.find("generic runner"), std::string::npos) << e.text;
  EXPECT_EQ(TheHello().runtime, "builtin");
  EXPECT_FALSE(TheHello().custom_workload);
}

TEST_F(CoreTest, BuiltInKernelsAreOneOpEachAndReportTheirArena) {
  const std::vector<std::int32_t> p{1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1};
  Port().workload = *BuildWorkload(MCULAB_OP_CONV2D_S8, {{0, p}}, 1);
  ASSERT_EQ(
      Run(Configure{4, 0, 0, 0, MCULAB_CONFIGURE_OP_PROFILE | MCULAB_CONFIGURE_MEMORY}, nullptr),
      0);
  const auto ops = Ops();
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].op_index, 0);
  EXPECT_EQ(ops[0].type, "CONV_2D");
  EXPECT_EQ(ops[0].name, "conv2d_s8");
  EXPECT_EQ(ops[0].count, 4u);
  EXPECT_EQ(ops[0].timer, (OpMetric{4, 1, 1}));  // the fake timer: one tick per read
  const MemoryReport m = *DecodeMemory(Payloads(MCULAB_MSG_MEMORY).at(0));
  ASSERT_EQ(m.entries.size(), 1u);
  EXPECT_EQ(m.entries[0].category, "arena");
  mculab_case c;
  ASSERT_EQ(mculab_case_prepare(MCULAB_OP_CONV2D_S8, p.data(), 1, Port().arena.data(),
                                Port().arena.size(), &c),
            MCULAB_CASE_OK);
  EXPECT_EQ(m.entries[0].used, c.arena_used);
  EXPECT_EQ(m.entries[0].reserved, Port().arena.size());
}

TEST(Watermark, UsedIsTheExtentWrittenSincePainting) {
  std::vector<std::uint32_t> arena(64);
  mculab_watermark_paint(arena.data(), arena.size() * 4);
  EXPECT_EQ(mculab_watermark_used(arena.data(), arena.size() * 4), 0u);
  arena[3] = 0;
  arena[10] = 1;
  EXPECT_EQ(mculab_watermark_used(arena.data(), arena.size() * 4), 8u * 4);
  arena[63] = 5;  // a runtime allocating from the arena's tail too (TFLM's persistent buffers)
  EXPECT_EQ(mculab_watermark_used(arena.data(), arena.size() * 4), 61u * 4);
}

}  // namespace
}  // namespace mculab
