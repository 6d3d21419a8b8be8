// The C frame codec (mculab_frame_encode/_decode): round trips and one test per way the bytes can
// be wrong.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "mculab/runner_protocol.h"

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes Encode(std::uint8_t type, const Bytes& payload) {
  Bytes out(MCULAB_MAX_ENCODED_FRAME);
  const size_t n =
      mculab_frame_encode(type, payload.data(), payload.size(), out.data(), out.size());
  out.resize(n);
  return out;
}

// COBS bytes without the delimiter.
Bytes Cobs(const Bytes& frame) { return Bytes(frame.begin(), frame.end() - 1); }

// COBS-encodes `raw` (version, type, payload, CRC already in it), delimiter excluded.
Bytes CobsOf(const Bytes& raw) {
  Bytes out{0};
  size_t code_at = 0;
  std::uint8_t code = 1;
  for (std::uint8_t b : raw) {
    if (b == 0) {
      out[code_at] = code;
      code_at = out.size();
      out.push_back(0);
      code = 1;
    } else {
      out.push_back(b);
      if (++code == 0xFF) {
        out[code_at] = code;
        code_at = out.size();
        out.push_back(0);
        code = 1;
      }
    }
  }
  out[code_at] = code;
  return out;
}

Bytes RawFrame(std::uint8_t version, std::uint8_t type, const Bytes& payload) {
  Bytes raw{version, type};
  raw.insert(raw.end(), payload.begin(), payload.end());
  std::uint8_t crc[4];
  mculab_put_u32(crc, mculab_crc32(0, raw.data(), raw.size()));
  raw.insert(raw.end(), crc, crc + 4);
  return raw;
}

struct Decoded {
  mculab_frame_status status;
  std::uint8_t type = 0;
  Bytes payload;
};

Decoded Decode(const Bytes& cobs) {
  Decoded d;
  std::uint8_t payload[MCULAB_MAX_PAYLOAD];
  size_t len = 0;
  d.status = mculab_frame_decode(cobs.data(), cobs.size(), &d.type, payload, &len);
  if (d.status == MCULAB_FRAME_OK) d.payload.assign(payload, payload + len);
  return d;
}

TEST(FrameCodec, Crc32MatchesZlibCheckValue) {
  const char* s = "123456789";
  EXPECT_EQ(mculab_crc32(0, reinterpret_cast<const std::uint8_t*>(s), 9), 0xCBF43926u);
  // Continuing a CRC over a split buffer gives the same value.
  const std::uint32_t part = mculab_crc32(0, reinterpret_cast<const std::uint8_t*>(s), 4);
  EXPECT_EQ(mculab_crc32(part, reinterpret_cast<const std::uint8_t*>(s) + 4, 5), 0xCBF43926u);
}

// The host's table-driven CRC equals the firmware's bitwise one on every byte value and length.
TEST(FrameCodec, Crc32EqualsTheBitwiseDefinition) {
  auto bitwise = [](const std::vector<std::uint8_t>& data) {
    std::uint32_t crc = 0xFFFFFFFFu;
    for (std::uint8_t b : data) {
      crc ^= b;
      for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
  };
  std::vector<std::uint8_t> data;
  for (int i = 0; i < 600; ++i) {
    data.push_back(static_cast<std::uint8_t>(i * 131 + (i >> 3)));
    ASSERT_EQ(mculab_crc32(0, data.data(), data.size()), bitwise(data)) << "length " << data.size();
  }
}

TEST(FrameCodec, RoundTripsEveryPayloadLength) {
  for (size_t len = 0; len <= MCULAB_MAX_PAYLOAD; ++len) {
    for (int fill : {0x00, 0xFF, -1}) {
      Bytes payload(len);
      for (size_t i = 0; i < len; ++i) {
        payload[i] = fill >= 0 ? static_cast<std::uint8_t>(fill) : static_cast<std::uint8_t>(i * 7);
      }
      const Bytes frame = Encode(MCULAB_MSG_SAMPLE, payload);
      ASSERT_FALSE(frame.empty()) << len;
      ASSERT_LE(frame.size(), MCULAB_MAX_ENCODED_FRAME) << len;
      ASSERT_EQ(frame.back(), 0) << "frame ends in its delimiter";
      for (size_t i = 0; i + 1 < frame.size(); ++i) ASSERT_NE(frame[i], 0) << "only one 0x00";
      const Decoded d = Decode(Cobs(frame));
      ASSERT_EQ(d.status, MCULAB_FRAME_OK) << len << " fill " << fill;
      EXPECT_EQ(d.type, MCULAB_MSG_SAMPLE);
      EXPECT_EQ(d.payload, payload);
    }
  }
}

TEST(FrameCodec, EncodeRejectsOversizedPayloadAndSmallBuffer) {
  Bytes payload(MCULAB_MAX_PAYLOAD + 1, 1);
  Bytes out(2 * MCULAB_MAX_ENCODED_FRAME);
  EXPECT_EQ(mculab_frame_encode(1, payload.data(), payload.size(), out.data(), out.size()), 0u);
  EXPECT_EQ(mculab_frame_encode(1, payload.data(), 10, out.data(), 12), 0u);
}

TEST(FrameCodec, EmptyFrame) { EXPECT_EQ(Decode({}).status, MCULAB_FRAME_EMPTY); }

TEST(FrameCodec, BadCrc) {
  Bytes cobs = Cobs(Encode(MCULAB_MSG_DONE, {1, 2, 3, 4}));
  cobs[4] ^= 0x10;  // a payload byte, still non-zero
  ASSERT_NE(cobs[4], 0);
  EXPECT_EQ(Decode(cobs).status, MCULAB_FRAME_BAD_CRC);
}

TEST(FrameCodec, BadCobs) {
  // The code byte says 5 bytes follow, only 2 do.
  EXPECT_EQ(Decode({0x05, 0x01, 0x02}).status, MCULAB_FRAME_BAD_COBS);
  // A zero inside a frame is never valid COBS.
  EXPECT_EQ(Decode({0x03, 0x01, 0x00, 0x02}).status, MCULAB_FRAME_BAD_COBS);
}

TEST(FrameCodec, TruncatedFrame) {
  // Version and type but not a whole CRC.
  EXPECT_EQ(Decode(CobsOf({1, 3, 7, 7, 7})).status, MCULAB_FRAME_TOO_SHORT);
  // The last bytes of a frame lost: what remains is valid COBS but too short.
  Bytes cobs = Cobs(Encode(MCULAB_MSG_RUN, {}));
  cobs.resize(4);
  const Decoded d = Decode(cobs);
  EXPECT_TRUE(d.status == MCULAB_FRAME_TOO_SHORT || d.status == MCULAB_FRAME_BAD_COBS)
      << mculab_frame_status_name(d.status);
}

TEST(FrameCodec, TooLong) {
  const Bytes raw(MCULAB_MAX_RAW_FRAME + 1, 0x11);
  EXPECT_EQ(Decode(CobsOf(raw)).status, MCULAB_FRAME_TOO_LONG);
}

TEST(FrameCodec, BadVersion) {
  EXPECT_EQ(
      Decode(CobsOf(RawFrame(MCULAB_PROTOCOL_VERSION + 1, MCULAB_MSG_DONE, {0, 0, 0, 0}))).status,
      MCULAB_FRAME_BAD_VERSION);
  // A peer of the previous protocol (1: HELLO without counter units) is refused, not misread.
  EXPECT_EQ(
      Decode(CobsOf(RawFrame(MCULAB_PROTOCOL_VERSION - 1, MCULAB_MSG_DONE, {0, 0, 0, 0}))).status,
      MCULAB_FRAME_BAD_VERSION);
  EXPECT_EQ(Decode(CobsOf(RawFrame(MCULAB_PROTOCOL_VERSION, MCULAB_MSG_DONE, {0, 0, 0, 0}))).status,
            MCULAB_FRAME_OK);
}

TEST(FrameCodec, DecodeDoesNotJudgeTheType) {
  const Decoded d = Decode(Cobs(Encode(0x42, {9})));
  EXPECT_EQ(d.status, MCULAB_FRAME_OK);
  EXPECT_EQ(d.type, 0x42);
}

TEST(FrameCodec, MessageTypesKnowTheirDirection) {
  EXPECT_TRUE(mculab_msg_type_known(MCULAB_MSG_HELLO, 1));
  EXPECT_FALSE(mculab_msg_type_known(MCULAB_MSG_HELLO, 0));
  EXPECT_TRUE(mculab_msg_type_known(MCULAB_MSG_ABORT, 0));
  EXPECT_FALSE(mculab_msg_type_known(MCULAB_MSG_ABORT, 1));
  EXPECT_FALSE(mculab_msg_type_known(0x0A, 1));
  EXPECT_FALSE(mculab_msg_type_known(0x84, 0));
}

}  // namespace
