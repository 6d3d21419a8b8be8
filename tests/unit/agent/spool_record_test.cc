// The spool's record format (docs/agent-spool.md): every kind survives a round trip, and each way
// the bytes can be wrong is refused with an error naming it.
#include "agent/run/spool_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "mculab/runner_protocol.h"
#include "run_records.h"

namespace mculab::agent {
namespace {

using ::testing::HasSubstr;

using testing::FullCaseDone;
using testing::FullRunStarted;

SampleBatchRecord Batch() {
  SampleBatchRecord b;
  b.run_id = 42;
  b.sequence = 9;
  b.pass = 2;
  b.as_columns = true;
  for (std::uint32_t i = 0; i < 5; ++i) {
    b.rows.push_back(SampleRow{1, i, i % 2, -static_cast<std::int64_t>(i) * 1'000'000'000'000});
  }
  return b;
}

RunFinishedRecord Finished() {
  return RunFinishedRecord{42, RunOutcome::kTimedOut, "the run's deadline passed", 10};
}

template <typename T>
T RoundTrip(const T& record) {
  auto decoded = DecodeSpoolRecord(EncodeSpoolRecord(record));
  EXPECT_TRUE(decoded.ok()) << decoded.error().message;
  if (!decoded.ok() || !std::holds_alternative<T>(*decoded)) return {};
  return std::get<T>(*decoded);
}

void PutLe32(std::string& b, std::size_t at, std::uint32_t v) {
  for (std::size_t i = 0; i < 4; ++i) b[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// The CRC recomputed after an edit, so the decoder gets past it to the damage under test.
void Reseal(std::string& b) {
  const std::size_t crc_at = b.size() - kSpoolRecordCrcBytes;
  PutLe32(b, crc_at, mculab_crc32(0, reinterpret_cast<const std::uint8_t*>(b.data()), crc_at));
}

std::string DecodeError(const std::string& bytes) {
  auto decoded = DecodeSpoolRecord(bytes);
  if (decoded.ok()) return "decoded";
  return decoded.error().message;
}

TEST(SpoolRecord, EveryKindSurvivesARoundTripFieldForField) {
  EXPECT_EQ(RoundTrip(FullRunStarted()), FullRunStarted());
  EXPECT_EQ(RoundTrip(FullCaseDone()), FullCaseDone());
  EXPECT_EQ(RoundTrip(Batch()), Batch());
  EXPECT_EQ(RoundTrip(Finished()), Finished());
  EXPECT_EQ(RoundTrip(RunStartedRecord{}), RunStartedRecord{});
  EXPECT_EQ(RoundTrip(SampleBatchRecord{}), SampleBatchRecord{});
}

TEST(SpoolRecord, TheHeaderSaysWhatFollows) {
  const std::string b = EncodeSpoolRecord(Batch());
  EXPECT_EQ(b.substr(0, 4), "MLSR");
  EXPECT_EQ(b[4], 1);  // version 1, little-endian
  EXPECT_EQ(b[5], 0);
  EXPECT_EQ(b[6], static_cast<char>(SpoolRecordKind::kSampleBatch));
  // The payload: run, sequence, pass, the form, the count and 20 bytes per row.
  EXPECT_EQ(b.size(), kSpoolRecordHeaderBytes + 8 + 8 + 4 + 1 + 4 + 5 * 20 + kSpoolRecordCrcBytes);
}

TEST(SpoolRecord, TruncatedBelowAFrameIsRefused) {
  const std::string b = EncodeSpoolRecord(Finished());
  EXPECT_THAT(DecodeError(""), HasSubstr("truncated"));
  EXPECT_THAT(DecodeError(b.substr(0, 15)), HasSubstr("truncated"));
}

TEST(SpoolRecord, ATruncatedPayloadIsALengthPastTheEnd) {
  const std::string b = EncodeSpoolRecord(Batch());
  EXPECT_THAT(DecodeError(b.substr(0, b.size() - 1)), HasSubstr("length past end"));
  EXPECT_THAT(DecodeError(b.substr(0, 20)), HasSubstr("length past end"));
}

TEST(SpoolRecord, BadMagicIsRefused) {
  std::string b = EncodeSpoolRecord(Finished());
  b[0] = 'X';
  EXPECT_THAT(DecodeError(b), HasSubstr("bad magic"));
  // A protobuf file an earlier agent wrote is not a record either.
  EXPECT_THAT(DecodeError(std::string("\x3a\x10\x08\x2a\x10\x02", 6) + std::string(12, 'x')),
              HasSubstr("bad magic"));
}

TEST(SpoolRecord, WrongVersionIsRefusedNamingBoth) {
  std::string b = EncodeSpoolRecord(Finished());
  b[4] = 2;
  Reseal(b);
  const std::string e = DecodeError(b);
  EXPECT_THAT(e, HasSubstr("wrong version"));
  EXPECT_THAT(e, HasSubstr("version 2"));
  EXPECT_THAT(e, HasSubstr("reads 1"));
}

TEST(SpoolRecord, ChecksumMismatchIsRefused) {
  std::string b = EncodeSpoolRecord(FullCaseDone());
  b[kSpoolRecordHeaderBytes + 9] ^= 0x01;  // one bit of the checksum field's payload
  EXPECT_THAT(DecodeError(b), HasSubstr("bad CRC"));
  std::string c = EncodeSpoolRecord(FullCaseDone());
  c.back() ^= 0x80;  // the CRC itself
  EXPECT_THAT(DecodeError(c), HasSubstr("bad CRC"));
}

TEST(SpoolRecord, ALengthOverTheLimitIsOversized) {
  std::string b = EncodeSpoolRecord(Finished());
  PutLe32(b, 8, static_cast<std::uint32_t>(kMaxSpoolRecordBytes + 1));
  auto decoded = DecodeSpoolRecord(b);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().code, ErrorCode::kResourceExhausted);
  EXPECT_THAT(decoded.error().message, HasSubstr("oversized"));
}

TEST(SpoolRecord, BytesAfterTheCrcAreRefused) {
  const std::string b = EncodeSpoolRecord(Finished()) + "x";
  EXPECT_THAT(DecodeError(b), HasSubstr("trailing bytes"));
}

TEST(SpoolRecord, UnknownKindIsRefused) {
  std::string b = EncodeSpoolRecord(Finished());
  b[6] = 9;
  Reseal(b);
  EXPECT_THAT(DecodeError(b), HasSubstr("unknown kind 9"));
}

TEST(SpoolRecord, APayloadThatDoesNotHoldItsKindsFieldsIsRefused) {
  // A batch's header on a run's end: too short for the rows it would need.
  std::string b = EncodeSpoolRecord(Finished());
  b[6] = static_cast<char>(SpoolRecordKind::kSampleBatch);
  Reseal(b);
  EXPECT_THAT(DecodeError(b), HasSubstr("bad payload"));

  // A row count larger than the payload could hold: refused before anything is allocated.
  std::string c = EncodeSpoolRecord(Batch());
  PutLe32(c, kSpoolRecordHeaderBytes + 8 + 8 + 4 + 1, 0xffffffffu);
  Reseal(c);
  EXPECT_THAT(DecodeError(c), HasSubstr("longer than the payload"));

  // A flag other than 0 or 1.
  std::string d = EncodeSpoolRecord(Batch());
  d[kSpoolRecordHeaderBytes + 8 + 8 + 4] = 7;
  Reseal(d);
  EXPECT_THAT(DecodeError(d), HasSubstr("flag"));

  // An outcome the agent does not know.
  std::string e = EncodeSpoolRecord(Finished());
  e[kSpoolRecordHeaderBytes + 8] = 9;
  Reseal(e);
  EXPECT_THAT(DecodeError(e), HasSubstr("unknown run outcome 9"));
}

TEST(SpoolRecord, ExtraBytesInThePayloadAreRefused) {
  // A longer payload than the kind's fields, with a header and CRC that agree with it.
  std::string b = EncodeSpoolRecord(Finished());
  b.insert(b.size() - kSpoolRecordCrcBytes, "zz");
  PutLe32(b, 8,
          static_cast<std::uint32_t>(b.size() - kSpoolRecordHeaderBytes - kSpoolRecordCrcBytes));
  Reseal(b);
  EXPECT_THAT(DecodeError(b), HasSubstr("2 bytes after the last field"));
}

}  // namespace
}  // namespace mculab::agent
