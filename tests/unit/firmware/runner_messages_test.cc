// runner_messages: every message survives Encode -> Decode, and Decode names what is wrong with a
// payload of the wrong length.
#include "common/runner_messages.h"

#include <gtest/gtest.h>

#include "common/frame_stream.h"

namespace mculab {
namespace {

Hello SampleHello() {
  Hello h;
  h.runner_major = 0;
  h.runner_minor = 1;
  h.runner_patch = 2;
  h.emulated = true;
  h.clock_hz = 32000000;
  h.timer_unit = "cycles";
  h.max_counters = 2;
  h.workload_addr = 0x60000000;
  h.workload_max = 1 << 20;
  h.arena_bytes = 4 << 20;
  h.port = "an547";
  h.cpu = "cortex-m55";
  h.counters = {"instructions", "loads"};
  return h;
}

TEST(RunnerMessages, HelloRoundTrip) {
  const Hello h = SampleHello();
  auto d = DecodeHello(EncodeHello(h));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->version(), "0.1.2");
  EXPECT_TRUE(d->emulated);
  EXPECT_EQ(d->clock_hz, 32000000u);
  EXPECT_EQ(d->timer_unit, "cycles");
  EXPECT_EQ(d->max_counters, 2);
  EXPECT_EQ(d->workload_addr, 0x60000000u);
  EXPECT_EQ(d->workload_max, 1u << 20);
  EXPECT_EQ(d->arena_bytes, 4u << 20);
  EXPECT_EQ(d->port, "an547");
  EXPECT_EQ(d->cpu, "cortex-m55");
  EXPECT_EQ(d->counters, (std::vector<std::string>{"instructions", "loads"}));
}

TEST(RunnerMessages, HelloWithoutCountersAndInNanoseconds) {
  Hello h = SampleHello();
  h.counters.clear();
  h.timer_unit = "ns";
  h.emulated = false;
  const Bytes p = EncodeHello(h);
  EXPECT_EQ(p.size(), MCULAB_HELLO_FIXED_LEN);
  auto d = DecodeHello(p);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->counters.empty());
  EXPECT_EQ(d->timer_unit, "ns");
  EXPECT_FALSE(d->emulated);
}

TEST(RunnerMessages, HelloCarriesCachesAndArenaMemory) {
  Hello h = SampleHello();
  h.icache = true;
  h.dcache = false;
  h.arena_memory = "axi-sram";
  const Bytes p = EncodeHello(h);
  EXPECT_EQ(p[3], MCULAB_HELLO_EMULATED | MCULAB_HELLO_ICACHE);
  EXPECT_EQ(p[10], MCULAB_MEMORY_AXI_SRAM);
  auto d = DecodeHello(p);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(d->icache);
  EXPECT_FALSE(d->dcache);
  EXPECT_EQ(d->arena_memory, "axi-sram");
  EXPECT_EQ(DecodeHello(EncodeHello(SampleHello()))->arena_memory, "");
}

TEST(RunnerMessages, HelloRejectsAnUnknownArenaMemory) {
  Bytes p = EncodeHello(SampleHello());
  p[10] = 9;
  auto d = DecodeHello(p);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("arena_memory 9"), std::string::npos) << d.error().message;
}

TEST(RunnerMessages, HelloLayoutIsTheHeaders) {
  Hello h = SampleHello();
  h.runtime = "tflite-micro";
  const Bytes p = EncodeHello(h);
  EXPECT_EQ(p[3], MCULAB_HELLO_EMULATED);
  EXPECT_EQ(mculab_get_u32(&p[4]), 32000000u);
  EXPECT_EQ(p[8], MCULAB_TIMER_CYCLES);
  EXPECT_EQ(p[9], 1);  // the counters become one unit
  EXPECT_EQ(mculab_get_u32(&p[12]), 0x60000000u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&p[24])), "an547");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&p[40])), "cortex-m55");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&p[56])), "tflite-micro");
  ASSERT_EQ(p.size(), MCULAB_HELLO_FIXED_LEN + MCULAB_HELLO_UNIT_FIXED_LEN + 18);
  const std::uint8_t* unit = &p[MCULAB_HELLO_FIXED_LEN];
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(unit)), "counters");
  EXPECT_EQ(unit[16], 2);  // max_simultaneous
  EXPECT_EQ(unit[17], 0);  // flags
  EXPECT_EQ(unit[18], 2);  // num_events
  EXPECT_EQ(unit[19], 18);
  EXPECT_EQ(std::string(p.begin() + MCULAB_HELLO_FIXED_LEN + MCULAB_HELLO_UNIT_FIXED_LEN, p.end()),
            "instructions,loads");
}

TEST(RunnerMessages, HelloRejectsShortPayloadAndBadTimerUnit) {
  Bytes p = EncodeHello(SampleHello());
  auto short_one = DecodeHello(std::span(p).first(55));
  ASSERT_FALSE(short_one.ok());
  EXPECT_NE(short_one.error().message.find("HELLO payload is 55 bytes"), std::string::npos)
      << short_one.error().message;
  p[8] = 7;
  auto bad_unit = DecodeHello(p);
  ASSERT_FALSE(bad_unit.ok());
  EXPECT_NE(bad_unit.error().message.find("timer_unit"), std::string::npos);
}

TEST(RunnerMessages, LongPortNameIsCutToItsField) {
  Hello h = SampleHello();
  h.port = "a-very-long-port-name";
  auto d = DecodeHello(EncodeHello(h));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->port, "a-very-long-por");
}

TEST(RunnerMessages, CaseStartRoundTripWithNegativeId) {
  auto d = DecodeCaseStart(EncodeCaseStart(CaseStart{7, -1234567890123}));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->case_index, 7);
  EXPECT_EQ(d->case_id, -1234567890123);
  EXPECT_FALSE(DecodeCaseStart(Bytes(11)).ok());
}

TEST(RunnerMessages, SampleRoundTripWithCounters) {
  SampleMsg m;
  m.case_index = 3;
  m.iteration = 41;
  m.timer = 0x1'0000'0002ull;
  m.counters = {5, 6, 7};
  auto d = DecodeSample(EncodeSample(m));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->case_index, 3);
  EXPECT_EQ(d->iteration, 41u);
  EXPECT_EQ(d->timer, 0x1'0000'0002ull);
  EXPECT_EQ(d->counters, (std::vector<std::uint64_t>{5, 6, 7}));
}

TEST(RunnerMessages, SampleLengthMustMatchItsCounterCount) {
  SampleMsg m;
  m.counters = {1, 2};
  Bytes p = EncodeSample(m);
  p.pop_back();
  auto d = DecodeSample(p);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("for 2 counters"), std::string::npos) << d.error().message;
  Bytes too_many = EncodeSample(SampleMsg{});
  too_many[2] = MCULAB_MAX_COUNTERS + 1;
  EXPECT_FALSE(DecodeSample(too_many).ok());
}

TEST(RunnerMessages, CaseEndRoundTrip) {
  auto d = DecodeCaseEnd(EncodeCaseEnd(CaseEnd{2, 0xDEADBEEF, 123456789012ull, {}}));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->case_index, 2);
  EXPECT_EQ(d->checksum, 0xDEADBEEFu);
  EXPECT_EQ(d->overhead, 123456789012ull);
  auto bad = DecodeCaseEnd(Bytes(17));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("CASE_END payload is 17 bytes, expected 16"),
            std::string::npos)
      << bad.error().message;
}

TEST(RunnerMessages, LogAndErrorCarryText) {
  auto log = DecodeLog(EncodeLog(LogMsg{2, "careful"}));
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->level, 2);
  EXPECT_EQ(log->text, "careful");
  EXPECT_FALSE(DecodeLog(Bytes{}).ok());

  auto err = DecodeError(EncodeError(ErrorMsg{MCULAB_ERR_NO_MEMORY, 4, "too big"}));
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->code, MCULAB_ERR_NO_MEMORY);
  EXPECT_EQ(err->case_index, 4);
  EXPECT_EQ(err->text, "too big");
  EXPECT_STREQ(err->code_name(), "no memory");
  EXPECT_FALSE(DecodeError(Bytes{1, 0, 0}).ok());
}

TEST(RunnerMessages, OverlongTextIsCutToOnePayload) {
  ErrorMsg m{MCULAB_ERR_BAD_WORKLOAD, MCULAB_NO_CASE, std::string(1000, 'e')};
  const Bytes p = EncodeError(m);
  EXPECT_EQ(p.size(), MCULAB_MAX_PAYLOAD);
  EXPECT_FALSE(ToWire(m).empty());
}

TEST(RunnerMessages, DoneConfigureRunAbortRoundTrip) {
  auto done = DecodeDone(EncodeDone(Done{3, MCULAB_ERR_ABORTED}));
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->cases_run, 3);
  EXPECT_EQ(done->status, MCULAB_ERR_ABORTED);
  EXPECT_FALSE(DecodeDone(Bytes(3)).ok());

  auto cfg = DecodeConfigure(EncodeConfigure(Configure{20, 2, 136, 0}));
  ASSERT_TRUE(cfg.ok());
  EXPECT_EQ(cfg->iterations, 20u);
  EXPECT_EQ(cfg->warmup, 2u);
  EXPECT_EQ(cfg->workload_len, 136u);
  EXPECT_EQ(cfg->counter_mask, 0u);
  EXPECT_FALSE(DecodeConfigure(Bytes(16)).ok());  // protocol 1's CONFIGURE

  EXPECT_TRUE(DecodeRun(EncodeRun(RunMsg{})).ok());
  EXPECT_FALSE(DecodeRun(Bytes{1}).ok());
  EXPECT_TRUE(DecodeAbort(EncodeAbort(AbortMsg{})).ok());
}

TEST(RunnerMessages, ToWireFramesDecodeThroughTheStream) {
  FrameStream s(FrameSender::kRunner);
  s.Feed(ToWire(SampleHello()));
  s.Feed(ToWire(ErrorMsg{MCULAB_ERR_ABORTED, 0, "stop"}));
  auto hello = s.Next();
  ASSERT_TRUE(hello && hello->ok());
  EXPECT_EQ(hello->type, MCULAB_MSG_HELLO);
  EXPECT_TRUE(DecodeHello(hello->payload).ok());
  auto err = s.Next();
  ASSERT_TRUE(err && err->ok());
  EXPECT_EQ(DecodeError(err->payload)->text, "stop");
}

Hello SiliconHello() {
  Hello h = SampleHello();
  h.emulated = false;
  h.counters.clear();
  h.max_counters = 0;
  h.runtime = "builtin";
  h.units = {
      CounterUnit{"cortex-m55-pmu", 4, false, {"instructions", "loads", "stores", "branches"}},
      CounterUnit{"qemu-plugin", 5, true, {"instructions", "mve_instructions"}},
      CounterUnit{"ethos-u-pmu", 4, false, {"npu_active", "axi0_rd"}},
      CounterUnit{"ethos-u-ccnt", 1, false, {"npu_cycles"}},
  };
  return h;
}

TEST(RunnerMessages, HelloUnitsRoundTripAndDefineTheCounterIndexSpace) {
  auto d = DecodeHello(EncodeHello(SiliconHello()));
  ASSERT_TRUE(d.ok()) << d.error().message;
  ASSERT_EQ(d->units.size(), 4u);
  EXPECT_EQ(d->units[0].name, "cortex-m55-pmu");
  EXPECT_EQ(d->units[0].max_simultaneous, 4);
  EXPECT_FALSE(d->units[0].external);
  EXPECT_EQ(d->units[0].events.size(), 4u);
  EXPECT_TRUE(d->units[1].external);
  EXPECT_EQ(d->units[1].events, (std::vector<std::string>{"instructions", "mve_instructions"}));
  EXPECT_EQ(d->runtime, "builtin");
  // External units are not in the counter index space; the others follow in record order.
  EXPECT_EQ(d->counters, (std::vector<std::string>{"instructions", "loads", "stores", "branches",
                                                   "npu_active", "axi0_rd", "npu_cycles"}));
  EXPECT_EQ(d->max_counters, 8);  // 4 + 4 + 1, capped at MCULAB_MAX_COUNTERS
  EXPECT_EQ(d->CounterIndexUnit(0), 0);
  EXPECT_EQ(d->CounterIndexUnit(3), 0);
  EXPECT_EQ(d->CounterIndexUnit(4), 2);
  EXPECT_EQ(d->CounterIndexUnit(6), 3);
  EXPECT_EQ(d->CounterIndexUnit(7), -1);
}

TEST(RunnerMessages, HelloCustomWorkloadFlag) {
  Hello h = SiliconHello();
  h.custom_workload = true;
  const Bytes p = EncodeHello(h);
  EXPECT_EQ(p[3], MCULAB_HELLO_CUSTOM_WORKLOAD);
  EXPECT_TRUE(DecodeHello(p)->custom_workload);
}

TEST(RunnerMessages, HelloUnitRecordsThatOverrunThePayloadAreRejected) {
  const Bytes good = EncodeHello(SiliconHello());
  // A unit's names reach past the end.
  Bytes cut(good.begin(), good.end() - 3);
  auto d = DecodeHello(cut);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("HELLO unit 3 names need 10 bytes"), std::string::npos)
      << d.error().message;
  // A unit record header cut in half.
  Bytes half(good.begin(), good.begin() + MCULAB_HELLO_FIXED_LEN + 10);
  EXPECT_FALSE(DecodeHello(half).ok());
  // Bytes after the last record.
  Bytes longer = good;
  longer.push_back('x');
  auto l = DecodeHello(longer);
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error().message.find("unit records"), std::string::npos) << l.error().message;
  // Too many units.
  Bytes many = good;
  many[9] = MCULAB_MAX_UNITS + 1;
  EXPECT_FALSE(DecodeHello(many).ok());
}

TEST(RunnerMessages, HelloEventCountMustMatchTheNames) {
  Bytes p = EncodeHello(SiliconHello());
  p[MCULAB_HELLO_FIXED_LEN + 18] = 3;  // the PMU unit says 3 events but names 4
  auto d = DecodeHello(p);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("cortex-m55-pmu"), std::string::npos) << d.error().message;
}

TEST(RunnerMessages, HelloUnitsThatDoNotFitThePayloadAreLeftOut) {
  Hello h = SiliconHello();
  h.units.clear();
  for (int u = 0; u < 8; ++u) {
    h.units.push_back(CounterUnit{"unit" + std::to_string(u), 1, false,
                                  std::vector<std::string>(5, std::string(9, 'e'))});
  }
  const Bytes p = EncodeHello(h);
  EXPECT_LE(p.size(), MCULAB_MAX_PAYLOAD);
  auto d = DecodeHello(p);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_LT(d->units.size(), 8u);
  EXPECT_EQ(d->units.size(), p[9]);
}

TEST(RunnerMessages, SampleCountersAreSixtyFourBit) {
  SampleMsg m;
  m.counters = {0x1'2345'6789ull, 0};
  const Bytes p = EncodeSample(m);
  ASSERT_EQ(p.size(), MCULAB_SAMPLE_FIXED_LEN + 16);
  EXPECT_EQ(mculab_get_u64(&p[16]), 0x1'2345'6789ull);
  EXPECT_EQ(DecodeSample(p)->counters, m.counters);
}

OpSample SampleOp() {
  OpSample m;
  m.case_index = 3;
  m.op_index = 17;
  m.count = 20;
  m.type = "CONV_2D";
  m.name = "model/conv2d_1/Relu;model/conv2d_1/BiasAdd";  // cut to 31
  m.timer = {200000, 9000, 11000};
  m.counters = {{40, 2, 2}, {1ull << 40, 1ull << 35, 1ull << 36}};
  return m;
}

TEST(RunnerMessages, OpSampleRoundTripCutsTheName) {
  auto d = DecodeOpSample(EncodeOpSample(SampleOp()));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->case_index, 3);
  EXPECT_EQ(d->op_index, 17);
  EXPECT_EQ(d->count, 20u);
  EXPECT_FALSE(d->unclosed);
  EXPECT_EQ(d->type, "CONV_2D");
  EXPECT_EQ(d->name, "model/conv2d_1/Relu;model/conv2");
  EXPECT_EQ(d->timer, (OpMetric{200000, 9000, 11000}));
  EXPECT_EQ(d->counters, SampleOp().counters);
}

TEST(RunnerMessages, OpSampleLayoutIsTheHeaders) {
  OpSample m = SampleOp();
  m.unclosed = true;
  const Bytes p = EncodeOpSample(m);
  ASSERT_EQ(p.size(), MCULAB_OP_SAMPLE_FIXED_LEN + 3 * MCULAB_OP_SAMPLE_METRIC_LEN);
  EXPECT_EQ(mculab_get_u16(&p[0]), 3);
  EXPECT_EQ(mculab_get_u16(&p[2]), 17);
  EXPECT_EQ(mculab_get_u32(&p[4]), 20u);
  EXPECT_EQ(p[8], 2);
  EXPECT_EQ(p[9], MCULAB_OP_UNCLOSED);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&p[12])), "CONV_2D");
  EXPECT_EQ(p[28 + 31], 0);                            // the name keeps a NUL
  EXPECT_EQ(mculab_get_u64(&p[60]), 200000u);          // timer sum
  EXPECT_EQ(mculab_get_u64(&p[68]), 9000u);            // timer min
  EXPECT_EQ(mculab_get_u64(&p[76]), 11000u);           // timer max
  EXPECT_EQ(mculab_get_u64(&p[84 + 24]), 1ull << 40);  // counter 1 sum
}

TEST(RunnerMessages, OpSampleLengthMustMatchItsCounterCount) {
  Bytes p = EncodeOpSample(SampleOp());
  p.pop_back();
  auto d = DecodeOpSample(p);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("OP_SAMPLE payload is 131 bytes, expected 132 for 2 counters"),
            std::string::npos)
      << d.error().message;
  Bytes many = EncodeOpSample(SampleOp());
  many[8] = MCULAB_MAX_COUNTERS + 1;
  EXPECT_FALSE(DecodeOpSample(many).ok());
  EXPECT_FALSE(DecodeOpSample(Bytes(59)).ok());
}

TEST(RunnerMessages, MemoryReportRoundTripAndLayout) {
  MemoryReport m;
  m.case_index = 1;
  m.entries = {{"arena", 27392, 4194304}, {"stack", 1676, 32768}, {"a-very-long-category", 1, 2}};
  const Bytes p = EncodeMemory(m);
  ASSERT_EQ(p.size(), MCULAB_MEMORY_FIXED_LEN + 3 * MCULAB_MEMORY_ENTRY_LEN);
  EXPECT_EQ(mculab_get_u16(&p[0]), 1);
  EXPECT_EQ(p[2], 3);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&p[4])), "arena");
  EXPECT_EQ(mculab_get_u32(&p[20]), 27392u);
  EXPECT_EQ(mculab_get_u32(&p[24]), 4194304u);
  auto d = DecodeMemory(p);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->case_index, 1);
  ASSERT_EQ(d->entries.size(), 3u);
  EXPECT_EQ(d->entries[1], (MemoryEntry{"stack", 1676, 32768}));
  EXPECT_EQ(d->entries[2].category, "a-very-long-cat");
}

TEST(RunnerMessages, MemoryReportLengthMustMatchItsEntries) {
  MemoryReport m;
  m.entries = {{"arena", 1, 2}};
  Bytes p = EncodeMemory(m);
  p.push_back(0);
  auto d = DecodeMemory(p);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("MEMORY payload is 29 bytes, expected 28 for 1 entries"),
            std::string::npos)
      << d.error().message;
  Bytes many(MCULAB_MEMORY_FIXED_LEN, 0);
  many[2] = MCULAB_MAX_MEMORY_ENTRIES + 1;
  EXPECT_FALSE(DecodeMemory(many).ok());
}

TEST(RunnerMessages, CaseEndCarriesTheCountersOverhead) {
  auto d = DecodeCaseEnd(EncodeCaseEnd(CaseEnd{4, 1, 31, {7, 1ull << 33}}));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->counter_overhead, (std::vector<std::uint64_t>{7, 1ull << 33}));
  const Bytes p = EncodeCaseEnd(CaseEnd{4, 1, 31, {7}});
  EXPECT_EQ(p[2], 1);
  EXPECT_EQ(mculab_get_u64(&p[16]), 7u);
}

TEST(RunnerMessages, ConfigureFlagsAreTheLastWord) {
  Configure c{1, 0, 0, 0x5, MCULAB_CONFIGURE_OP_PROFILE | MCULAB_CONFIGURE_MEMORY};
  const Bytes p = EncodeConfigure(c);
  ASSERT_EQ(p.size(), MCULAB_CONFIGURE_LEN);
  EXPECT_EQ(mculab_get_u32(&p[12]), 0x5u);
  EXPECT_EQ(mculab_get_u32(&p[16]), 3u);
  EXPECT_EQ(DecodeConfigure(p)->flags, 3u);
}

TEST(RunnerMessages, OpSampleAndMemoryFramesDecodeThroughTheStream) {
  FrameStream s(FrameSender::kRunner);
  s.Feed(ToWire(SampleOp()));
  s.Feed(ToWire(MemoryReport{2, {{"arena", 1, 2}}}));
  auto op = s.Next();
  ASSERT_TRUE(op && op->ok()) << (op ? op->Describe() : "nothing");
  EXPECT_EQ(op->type, MCULAB_MSG_OP_SAMPLE);
  EXPECT_TRUE(DecodeOpSample(op->payload).ok());
  auto mem = s.Next();
  ASSERT_TRUE(mem && mem->ok());
  EXPECT_EQ(mem->type, MCULAB_MSG_MEMORY);
  EXPECT_EQ(DecodeMemory(mem->payload)->case_index, 2);
}

}  // namespace
}  // namespace mculab
