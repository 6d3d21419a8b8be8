// FrameStream: the agent's view of the link. Each test names a way the byte stream goes wrong
// and pins that it costs the one frame it hits, never the stream.
#include "common/frame_stream.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/runner_messages.h"

namespace mculab {
namespace {

std::vector<FrameEvent> Drain(FrameStream& s) {
  std::vector<FrameEvent> out;
  while (auto ev = s.Next()) out.push_back(std::move(*ev));
  return out;
}

Bytes Concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Bytes SampleFrame(std::uint32_t iteration) {
  SampleMsg m;
  m.iteration = iteration;
  m.timer = 1000 + iteration;
  return ToWire(m);
}

std::uint32_t IterationOf(const FrameEvent& ev) {
  auto s = DecodeSample(ev.payload);
  EXPECT_TRUE(s.ok());
  return s.ok() ? s->iteration : ~0u;
}

TEST(FrameStream, DecodesFramesInOrder) {
  FrameStream s(FrameSender::kRunner);
  s.Feed(Concat({SampleFrame(0), SampleFrame(1), ToWire(Done{2, 0})}));
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 3u);
  EXPECT_EQ(IterationOf(evs[0]), 0u);
  EXPECT_EQ(IterationOf(evs[1]), 1u);
  EXPECT_EQ(evs[2].type, MCULAB_MSG_DONE);
  EXPECT_EQ(s.good_frames(), 3u);
  EXPECT_EQ(s.skipped_bytes(), 0u);
}

TEST(FrameStream, ByteByByteFeedingGivesTheSameFrames) {
  const Bytes wire = Concat({SampleFrame(0), SampleFrame(1)});
  FrameStream s(FrameSender::kRunner);
  for (std::uint8_t b : wire) {
    s.Feed(std::span<const std::uint8_t>(&b, 1));
  }
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_TRUE(evs[0].ok());
  EXPECT_TRUE(evs[1].ok());
}

TEST(FrameStream, NothingUntilTheDelimiter) {
  const Bytes f = SampleFrame(0);
  FrameStream s(FrameSender::kRunner);
  s.Feed(std::span(f).first(f.size() - 1));
  EXPECT_FALSE(s.Next().has_value());
  EXPECT_EQ(s.pending_bytes(), f.size() - 1);
  s.Feed(std::span(f).last(1));
  auto ev = s.Next();
  ASSERT_TRUE(ev.has_value());
  EXPECT_TRUE(ev->ok());
}

TEST(FrameStream, BadCrc) {
  Bytes bad = ToWire(LogMsg{1, "hello"});
  // No zero in the raw frame: one COBS block, so byte 4 is the text's 'h', not a code byte.
  ASSERT_EQ(bad[0], bad.size() - 1);
  bad[4] = 'j';
  FrameStream s(FrameSender::kRunner);
  s.Feed(Concat({SampleFrame(0), bad, SampleFrame(2)}));
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 3u);
  EXPECT_EQ(evs[1].kind, FrameEventKind::kBadCrc) << evs[1].Describe();
  EXPECT_EQ(IterationOf(evs[2]), 2u);
  EXPECT_EQ(s.skipped_bytes(), bad.size());
  EXPECT_EQ(s.bad_frames(), 1u);
}

TEST(FrameStream, BadCobs) {
  FrameStream s(FrameSender::kRunner);
  s.Feed(Concat({Bytes{0x09, 0x01, 0x02, 0x00}, SampleFrame(0)}));
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[0].kind, FrameEventKind::kBadCobs);
  EXPECT_TRUE(evs[1].ok());
}

TEST(FrameStream, TruncatedFrame) {
  const Bytes f = SampleFrame(0);
  Bytes cut(f.begin(), f.begin() + 3);  // the rest was lost, then the link resynchronised
  cut.push_back(0);
  FrameStream s(FrameSender::kRunner);
  s.Feed(Concat({cut, SampleFrame(1)}));
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_TRUE(evs[0].kind == FrameEventKind::kTooShort || evs[0].kind == FrameEventKind::kBadCobs)
      << evs[0].Describe();
  EXPECT_EQ(IterationOf(evs[1]), 1u);
}

TEST(FrameStream, TooShortFrame) {
  FrameStream s(FrameSender::kRunner);
  s.Feed(Bytes{0x03, 0x01, 0x03, 0x00});  // COBS of {1, 3}: version and type, no CRC
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].kind, FrameEventKind::kTooShort);
}

TEST(FrameStream, UnknownType) {
  FrameStream s(FrameSender::kRunner);
  s.Feed(Concat({EncodeFrame(0x42, Bytes{1, 2}), ToWire(Configure{}), SampleFrame(0)}));
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 3u);
  EXPECT_EQ(evs[0].kind, FrameEventKind::kUnknownType);
  EXPECT_EQ(evs[0].type, 0x42);
  // An agent -> runner type is unknown when it comes from the runner.
  EXPECT_EQ(evs[1].kind, FrameEventKind::kUnknownType);
  EXPECT_EQ(evs[1].type, MCULAB_MSG_CONFIGURE);
  EXPECT_TRUE(evs[2].ok());
}

TEST(FrameStream, AgentDirectionKnowsAgentTypes) {
  FrameStream s(FrameSender::kAgent);
  s.Feed(Concat({ToWire(Configure{}), ToWire(RunMsg{}), SampleFrame(0)}));
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 3u);
  EXPECT_TRUE(evs[0].ok());
  EXPECT_EQ(evs[1].type, MCULAB_MSG_RUN);
  EXPECT_EQ(evs[2].kind, FrameEventKind::kUnknownType);
}

TEST(FrameStream, BadVersion) {
  // COBS of [version + 1][DONE][1 1 1 1][crc] built by hand with a valid CRC.
  Bytes raw{MCULAB_PROTOCOL_VERSION + 1, MCULAB_MSG_DONE, 1, 1, 1, 1};
  std::uint8_t crc[4];
  mculab_put_u32(crc, mculab_crc32(0, raw.data(), raw.size()));
  raw.insert(raw.end(), crc, crc + 4);
  Bytes wire;
  for (auto b : raw) ASSERT_NE(b, 0) << "test frame must need no COBS zero handling";
  wire.push_back(static_cast<std::uint8_t>(raw.size() + 1));
  wire.insert(wire.end(), raw.begin(), raw.end());
  wire.push_back(0);
  FrameStream s(FrameSender::kRunner);
  s.Feed(Concat({wire, SampleFrame(0)}));
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[0].kind, FrameEventKind::kBadVersion);
  EXPECT_TRUE(evs[1].ok());
}

TEST(FrameStream, OversizedFrame) {
  Bytes junk(3 * MCULAB_MAX_ENCODED_FRAME, 0x7E);
  junk.push_back(0);
  FrameStream s(FrameSender::kRunner);
  s.Feed(Concat({SampleFrame(0), junk, SampleFrame(1)}));
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 3u);
  EXPECT_EQ(evs[1].kind, FrameEventKind::kOversized);
  EXPECT_EQ(evs[1].wire_bytes, junk.size());
  EXPECT_EQ(IterationOf(evs[2]), 1u);
  EXPECT_EQ(s.skipped_bytes(), junk.size());
  EXPECT_EQ(s.pending_bytes(), 0u);
}

TEST(FrameStream, OversizedRunIsNotBuffered) {
  FrameStream s(FrameSender::kRunner);
  const Bytes junk(10 * MCULAB_MAX_ENCODED_FRAME, 0x7E);
  s.Feed(junk);
  EXPECT_LE(s.buffered_bytes(), MCULAB_MAX_ENCODED_FRAME);
  EXPECT_EQ(s.pending_bytes(), junk.size());
  EXPECT_FALSE(s.Next().has_value()) << "decided only at the delimiter";
  s.Feed(Concat({Bytes{0}, SampleFrame(3)}));
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[0].kind, FrameEventKind::kOversized);
  EXPECT_EQ(IterationOf(evs[1]), 3u);
}

TEST(FrameStream, LargestFrameIsNotOversized) {
  LogMsg log;
  log.text = std::string(MCULAB_MAX_PAYLOAD, 'x');
  const Bytes wire = ToWire(log);
  FrameStream s(FrameSender::kRunner);
  s.Feed(wire);
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 1u);
  ASSERT_TRUE(evs[0].ok()) << evs[0].Describe();
  EXPECT_EQ(DecodeLog(evs[0].payload)->text.size(), MCULAB_MAX_PAYLOAD - 1);
}

TEST(FrameStream, BytesBetweenFramesAreSkipped) {
  // Boot noise ended by a delimiter, then extra delimiters: one bad frame, no lost good frame.
  const Bytes noise{'b', 'o', 'o', 't', '\r', '\n', 0, 0, 0};
  FrameStream s(FrameSender::kRunner);
  s.Feed(Concat({SampleFrame(0), noise, SampleFrame(1)}));
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 3u);
  EXPECT_TRUE(evs[0].ok());
  EXPECT_FALSE(evs[1].ok());
  EXPECT_EQ(IterationOf(evs[2]), 1u);
  EXPECT_EQ(s.skipped_bytes(), noise.size());
}

TEST(FrameStream, GarbageBeforeAFrameCostsThatFrameOnly) {
  FrameStream s(FrameSender::kRunner);
  s.Feed(Concat({SampleFrame(0), Bytes{0x13, 0x37}, SampleFrame(1), SampleFrame(2)}));
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 3u);
  EXPECT_TRUE(evs[0].ok());
  EXPECT_FALSE(evs[1].ok());
  EXPECT_EQ(IterationOf(evs[2]), 2u);
}

TEST(FrameStream, LostByteCostsOneFrame) {
  for (size_t drop = 0; drop + 1 < SampleFrame(1).size(); ++drop) {
    Bytes hurt = SampleFrame(1);
    hurt.erase(hurt.begin() + static_cast<std::ptrdiff_t>(drop));
    FrameStream s(FrameSender::kRunner);
    s.Feed(Concat({SampleFrame(0), hurt, SampleFrame(2)}));
    auto evs = Drain(s);
    ASSERT_EQ(evs.size(), 3u) << "dropped byte " << drop;
    EXPECT_EQ(IterationOf(evs[0]), 0u);
    EXPECT_FALSE(evs[1].ok()) << "dropped byte " << drop;
    EXPECT_EQ(IterationOf(evs[2]), 2u);
  }
}

TEST(FrameStream, LostDelimiterCostsTwoFramesAtMost) {
  Bytes first = SampleFrame(0);
  first.pop_back();  // the delimiter is lost: two frames run together
  FrameStream s(FrameSender::kRunner);
  s.Feed(Concat({first, SampleFrame(1), SampleFrame(2)}));
  auto evs = Drain(s);
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_FALSE(evs[0].ok());
  EXPECT_EQ(IterationOf(evs[1]), 2u);
}

}  // namespace
}  // namespace mculab
