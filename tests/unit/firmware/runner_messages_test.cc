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

TEST(RunnerMessages, HelloLayoutIsTheHeaders) {
  const Bytes p = EncodeHello(SampleHello());
  EXPECT_EQ(p[3], MCULAB_HELLO_EMULATED);
  EXPECT_EQ(mculab_get_u32(&p[4]), 32000000u);
  EXPECT_EQ(p[8], MCULAB_TIMER_CYCLES);
  EXPECT_EQ(mculab_get_u32(&p[12]), 0x60000000u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&p[24])), "an547");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&p[40])), "cortex-m55");
  EXPECT_EQ(std::string(p.begin() + 56, p.end()), "instructions,loads");
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
  EXPECT_EQ(d->counters, (std::vector<std::uint32_t>{5, 6, 7}));
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
  auto d = DecodeCaseEnd(EncodeCaseEnd(CaseEnd{2, 0xDEADBEEF, 123456789012ull}));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->case_index, 2);
  EXPECT_EQ(d->checksum, 0xDEADBEEFu);
  EXPECT_EQ(d->overhead, 123456789012ull);
  auto bad = DecodeCaseEnd(Bytes(17));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("CASE_END payload is 17 bytes, expected 16"),
            std::string::npos);
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
  EXPECT_FALSE(DecodeConfigure(Bytes(15)).ok());

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

}  // namespace
}  // namespace mculab
