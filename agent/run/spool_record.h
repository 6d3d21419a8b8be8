// The spool's record format (docs/agent-spool.md): one run message per file, self-described and
// checked, so a damaged or foreign file is recognised as such and never sent.
//
//   offset  size  field
//   0       4     magic "MLSR"
//   4       2     version (kSpoolRecordVersion), little-endian
//   6       2     kind (SpoolRecordKind)
//   8       4     payload length N
//   12      N     payload: the record's fields in a fixed order (docs/agent-spool.md)
//   12+N    4     CRC-32 (IEEE, as the runner frames) of bytes [0, 12+N)
//
// Every integer is little-endian; a string is a u32 length and its bytes; a list is a u32 count and
// its items. The decoder refuses, naming the damage: a file shorter than a header and a CRC
// (truncated), another magic, another version, a length over kMaxSpoolRecordBytes (oversized), a
// length running past the end of the file, bytes after the CRC, a CRC mismatch, an unknown kind,
// and a payload that does not hold exactly the kind's fields.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "agent/run/run_types.h"
#include "common/result.h"

namespace mculab::agent {

enum class SpoolRecordKind : std::uint16_t {
  kRunStarted = 1,
  kCaseDone = 2,
  kSampleBatch = 3,
  kRunFinished = 4,
};

inline constexpr char kSpoolRecordMagic[4] = {'M', 'L', 'S', 'R'};
inline constexpr std::uint16_t kSpoolRecordVersion = 1;
inline constexpr std::size_t kSpoolRecordHeaderBytes = 12;
inline constexpr std::size_t kSpoolRecordCrcBytes = 4;
// The largest payload the decoder accepts: above anything the spool writes (it refuses messages
// over its own, smaller limit), so a larger length can only be damage.
inline constexpr std::size_t kMaxSpoolRecordBytes = 64u << 20;

// What the spool keeps: every run message but the transient RunStateRecord.
using SpoolRecord =
    std::variant<RunStartedRecord, CaseDoneRecord, SampleBatchRecord, RunFinishedRecord>;

std::string EncodeSpoolRecord(const RunStartedRecord& r);
std::string EncodeSpoolRecord(const CaseDoneRecord& r);
std::string EncodeSpoolRecord(const SampleBatchRecord& r);
std::string EncodeSpoolRecord(const RunFinishedRecord& r);

// The record in `bytes` (one whole file). kDataLoss naming the damage when the bytes are not one
// whole, intact record of a known kind; kResourceExhausted when the length is over the limit.
Result<SpoolRecord> DecodeSpoolRecord(std::string_view bytes);

// The record as the run message it is.
RunMessage ToRunMessage(SpoolRecord record);

}  // namespace mculab::agent
