#include "agent/run/spool_record.h"

#include <cstring>
#include <type_traits>

#include "mculab/runner_protocol.h"

namespace mculab::agent {
namespace {

// Appends little-endian fields to a record being built.
class Writer {
 public:
  explicit Writer(SpoolRecordKind kind) {
    out_.append(kSpoolRecordMagic, sizeof kSpoolRecordMagic);
    Int<std::uint16_t>(kSpoolRecordVersion);
    Int<std::uint16_t>(static_cast<std::uint16_t>(kind));
    Int<std::uint32_t>(0);  // the payload's length, set by Finish()
  }

  template <typename T>
  void Int(T v) {
    using U = std::make_unsigned_t<T>;
    auto u = static_cast<U>(v);
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      out_.push_back(static_cast<char>(u & 0xff));
      if constexpr (sizeof(T) > 1) u = static_cast<U>(u >> 8);
    }
  }
  void Bool(bool b) { Int<std::uint8_t>(b ? 1 : 0); }
  void Count(std::size_t n) { Int<std::uint32_t>(static_cast<std::uint32_t>(n)); }
  void Str(const std::string& s) {
    Count(s.size());
    out_.append(s);
  }
  void Reserve(std::size_t n) { out_.reserve(out_.size() + n); }

  std::string Finish() && {
    const auto n = static_cast<std::uint32_t>(out_.size() - kSpoolRecordHeaderBytes);
    for (std::size_t i = 0; i < 4; ++i) out_[8 + i] = static_cast<char>((n >> (8 * i)) & 0xff);
    const std::uint32_t crc =
        mculab_crc32(0, reinterpret_cast<const std::uint8_t*>(out_.data()), out_.size());
    Int<std::uint32_t>(crc);
    return std::move(out_);
  }

 private:
  std::string out_;
};

// Reads little-endian fields from a payload; the first read past its end marks it bad, and every
// later read returns zeros.
class Reader {
 public:
  explicit Reader(std::string_view payload) : in_(payload) {}

  template <typename T>
  T Int() {
    using U = std::make_unsigned_t<T>;
    if (!Take(sizeof(T))) return T{};
    U u = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      u = static_cast<U>(u | static_cast<U>(static_cast<std::uint8_t>(in_[pos_ - sizeof(T) + i]))
                                 << (8 * i));
    }
    return static_cast<T>(u);
  }
  bool Bool() {
    const auto b = Int<std::uint8_t>();
    if (b > 1) Fail("a flag other than 0 or 1");
    return b == 1;
  }
  // A list's count, refused when its items (each at least `min_item` bytes) cannot fit.
  std::size_t Count(std::size_t min_item) {
    const auto n = Int<std::uint32_t>();
    if (ok() && static_cast<std::uint64_t>(n) * min_item > in_.size() - pos_) {
      Fail("a list of " + std::to_string(n) + " items longer than the payload");
      return 0;
    }
    return ok() ? n : 0;
  }
  std::string Str() {
    const std::size_t n = Count(1);
    if (!Take(n)) return {};
    return std::string(in_.substr(pos_ - n, n));
  }
  std::vector<std::string> Strs() {
    std::vector<std::string> out(Count(4));
    for (auto& s : out) s = Str();
    return out;
  }

  bool ok() const { return error_.empty(); }
  // After the last field: the payload must end there.
  Status End() {
    if (ok() && pos_ != in_.size()) {
      Fail(std::to_string(in_.size() - pos_) + " bytes after the last field");
    }
    if (ok()) return {};
    return MakeError(ErrorCode::kDataLoss, "bad payload: " + error_);
  }

 private:
  bool Take(std::size_t n) {
    if (!ok()) return false;
    if (n > in_.size() - pos_) {
      Fail("a field runs past the payload's end (" + std::to_string(in_.size()) + " bytes)");
      return false;
    }
    pos_ += n;
    return true;
  }
  void Fail(std::string why) {
    if (ok()) error_ = std::move(why);
  }

  std::string_view in_;
  std::size_t pos_ = 0;
  std::string error_;
};

void PutMemory(Writer& w, const std::vector<MemoryFigureRecord>& memory) {
  w.Count(memory.size());
  for (const auto& m : memory) {
    w.Int(m.case_index);
    w.Str(m.source);
    w.Str(m.category);
    w.Int(m.used);
    w.Int(m.reserved);
  }
}

std::vector<MemoryFigureRecord> GetMemory(Reader& r) {
  std::vector<MemoryFigureRecord> out(r.Count(28));
  for (auto& m : out) {
    m.case_index = r.Int<std::int32_t>();
    m.source = r.Str();
    m.category = r.Str();
    m.used = r.Int<std::uint64_t>();
    m.reserved = r.Int<std::uint64_t>();
  }
  return out;
}

constexpr std::size_t kRowBytes = 4 + 4 + 4 + 8;

RunStartedRecord GetRunStarted(Reader& r) {
  RunStartedRecord s;
  s.run_id = r.Int<std::uint64_t>();
  s.runner_version = r.Str();
  s.port = r.Str();
  s.cpu = r.Str();
  s.clock_hz = r.Int<std::uint64_t>();
  s.emulated = r.Bool();
  s.timer_unit = r.Str();
  s.counters = r.Strs();
  s.firmware_sha256 = r.Str();
  s.workload_sha256 = r.Str();
  s.toolchain = r.Str();
  s.board_serial = r.Str();
  s.note = r.Str();
  s.seed = r.Int<std::uint32_t>();
  s.firmware_memory = GetMemory(r);
  s.kernel_set = r.Str();
  return s;
}

CaseDoneRecord GetCaseDone(Reader& r) {
  CaseDoneRecord c;
  c.run_id = r.Int<std::uint64_t>();
  c.case_index = r.Int<std::uint32_t>();
  c.checksum = r.Int<std::uint32_t>();
  c.expected_checksum = r.Int<std::uint32_t>();
  c.checksum_ok = r.Bool();
  c.overhead = r.Int<std::int64_t>();
  c.counter_overhead.resize(r.Count(8));
  for (auto& v : c.counter_overhead) v = r.Int<std::int64_t>();
  c.pass = r.Int<std::uint32_t>();
  c.ops.resize(r.Count(21));
  for (auto& op : c.ops) {
    op.op_index = r.Int<std::uint32_t>();
    op.type = r.Str();
    op.name = r.Str();
    op.count = r.Int<std::uint32_t>();
    op.unclosed = r.Bool();
    op.metrics.resize(r.Count(36));
    for (auto& m : op.metrics) {
      m.metric = r.Int<std::uint32_t>();
      m.count = r.Int<std::uint64_t>();
      m.sum = r.Int<std::uint64_t>();
      m.min = r.Int<std::uint64_t>();
      m.max = r.Int<std::uint64_t>();
    }
  }
  c.memory = GetMemory(r);
  c.checksum_unverified = r.Bool();
  return c;
}

SampleBatchRecord GetSampleBatch(Reader& r) {
  SampleBatchRecord b;
  b.run_id = r.Int<std::uint64_t>();
  b.sequence = r.Int<std::uint64_t>();
  b.pass = r.Int<std::uint32_t>();
  b.as_columns = r.Bool();
  b.rows.resize(r.Count(kRowBytes));
  for (auto& row : b.rows) {
    row.case_index = r.Int<std::uint32_t>();
    row.iteration = r.Int<std::uint32_t>();
    row.metric = r.Int<std::uint32_t>();
    row.value = r.Int<std::int64_t>();
  }
  return b;
}

Result<RunFinishedRecord> GetRunFinished(Reader& r) {
  RunFinishedRecord f;
  f.run_id = r.Int<std::uint64_t>();
  const auto outcome = r.Int<std::uint8_t>();
  f.message = r.Str();
  f.batches_sent = r.Int<std::uint32_t>();
  if (r.ok() && outcome > static_cast<std::uint8_t>(RunOutcome::kTimedOut)) {
    return MakeError(ErrorCode::kDataLoss,
                     "bad payload: unknown run outcome " + std::to_string(outcome));
  }
  f.outcome = static_cast<RunOutcome>(outcome);
  return f;
}

std::uint32_t Le32(std::string_view b, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    v |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(b[at + i])) << (8 * i);
  }
  return v;
}

}  // namespace

std::string EncodeSpoolRecord(const RunStartedRecord& s) {
  Writer w(SpoolRecordKind::kRunStarted);
  w.Int(s.run_id);
  w.Str(s.runner_version);
  w.Str(s.port);
  w.Str(s.cpu);
  w.Int(s.clock_hz);
  w.Bool(s.emulated);
  w.Str(s.timer_unit);
  w.Count(s.counters.size());
  for (const auto& c : s.counters) w.Str(c);
  w.Str(s.firmware_sha256);
  w.Str(s.workload_sha256);
  w.Str(s.toolchain);
  w.Str(s.board_serial);
  w.Str(s.note);
  w.Int(s.seed);
  PutMemory(w, s.firmware_memory);
  w.Str(s.kernel_set);
  return std::move(w).Finish();
}

std::string EncodeSpoolRecord(const CaseDoneRecord& c) {
  Writer w(SpoolRecordKind::kCaseDone);
  w.Int(c.run_id);
  w.Int(c.case_index);
  w.Int(c.checksum);
  w.Int(c.expected_checksum);
  w.Bool(c.checksum_ok);
  w.Int(c.overhead);
  w.Count(c.counter_overhead.size());
  for (auto v : c.counter_overhead) w.Int(v);
  w.Int(c.pass);
  w.Count(c.ops.size());
  for (const auto& op : c.ops) {
    w.Int(op.op_index);
    w.Str(op.type);
    w.Str(op.name);
    w.Int(op.count);
    w.Bool(op.unclosed);
    w.Count(op.metrics.size());
    for (const auto& m : op.metrics) {
      w.Int(m.metric);
      w.Int(m.count);
      w.Int(m.sum);
      w.Int(m.min);
      w.Int(m.max);
    }
  }
  PutMemory(w, c.memory);
  w.Bool(c.checksum_unverified);
  return std::move(w).Finish();
}

std::string EncodeSpoolRecord(const SampleBatchRecord& b) {
  Writer w(SpoolRecordKind::kSampleBatch);
  w.Reserve(8 + 8 + 4 + 1 + 4 + b.rows.size() * kRowBytes + kSpoolRecordCrcBytes);
  w.Int(b.run_id);
  w.Int(b.sequence);
  w.Int(b.pass);
  w.Bool(b.as_columns);
  w.Count(b.rows.size());
  for (const auto& row : b.rows) {
    w.Int(row.case_index);
    w.Int(row.iteration);
    w.Int(row.metric);
    w.Int(row.value);
  }
  return std::move(w).Finish();
}

std::string EncodeSpoolRecord(const RunFinishedRecord& f) {
  Writer w(SpoolRecordKind::kRunFinished);
  w.Int(f.run_id);
  w.Int(static_cast<std::uint8_t>(f.outcome));
  w.Str(f.message);
  w.Int(f.batches_sent);
  return std::move(w).Finish();
}

Result<SpoolRecord> DecodeSpoolRecord(std::string_view bytes) {
  constexpr std::size_t kFrame = kSpoolRecordHeaderBytes + kSpoolRecordCrcBytes;
  if (bytes.size() < kFrame) {
    return MakeError(ErrorCode::kDataLoss, "truncated: " + std::to_string(bytes.size()) +
                                               " bytes, shorter than a record's " +
                                               std::to_string(kFrame) + "-byte frame");
  }
  if (std::memcmp(bytes.data(), kSpoolRecordMagic, sizeof kSpoolRecordMagic) != 0) {
    return MakeError(ErrorCode::kDataLoss, "bad magic: not a spool record");
  }
  const std::uint32_t head = Le32(bytes, 4);
  const auto version = static_cast<std::uint16_t>(head & 0xffff);
  const auto kind = static_cast<std::uint16_t>(head >> 16);
  if (version != kSpoolRecordVersion) {
    return MakeError(ErrorCode::kDataLoss, "wrong version: record version " +
                                               std::to_string(version) + ", this agent reads " +
                                               std::to_string(kSpoolRecordVersion));
  }
  const std::uint32_t length = Le32(bytes, 8);
  if (length > kMaxSpoolRecordBytes) {
    return MakeError(ErrorCode::kResourceExhausted,
                     "oversized: a payload of " + std::to_string(length) + " bytes, over the " +
                         std::to_string(kMaxSpoolRecordBytes) + "-byte limit");
  }
  const std::uint64_t whole = std::uint64_t{length} + kFrame;
  if (whole > bytes.size()) {
    return MakeError(ErrorCode::kDataLoss, "length past end: the header's " +
                                               std::to_string(length) +
                                               "-byte payload runs past the end of the " +
                                               std::to_string(bytes.size()) + "-byte file");
  }
  if (whole < bytes.size()) {
    return MakeError(ErrorCode::kDataLoss,
                     "trailing bytes: " + std::to_string(bytes.size() - whole) +
                         " bytes after the record's CRC");
  }
  const std::size_t crc_at = kSpoolRecordHeaderBytes + length;
  const std::uint32_t crc =
      mculab_crc32(0, reinterpret_cast<const std::uint8_t*>(bytes.data()), crc_at);
  if (crc != Le32(bytes, crc_at)) return MakeError(ErrorCode::kDataLoss, "bad CRC");
  Reader r(bytes.substr(kSpoolRecordHeaderBytes, length));
  SpoolRecord record;
  switch (static_cast<SpoolRecordKind>(kind)) {
    case SpoolRecordKind::kRunStarted:
      record = GetRunStarted(r);
      break;
    case SpoolRecordKind::kCaseDone:
      record = GetCaseDone(r);
      break;
    case SpoolRecordKind::kSampleBatch:
      record = GetSampleBatch(r);
      break;
    case SpoolRecordKind::kRunFinished: {
      auto f = GetRunFinished(r);
      if (!f) return f.error();
      record = std::move(*f);
      break;
    }
    default:
      return MakeError(ErrorCode::kDataLoss, "unknown kind " + std::to_string(kind));
  }
  if (Status s = r.End(); !s) return s.error();
  return record;
}

RunMessage ToRunMessage(SpoolRecord record) {
  return std::visit([](auto&& r) -> RunMessage { return std::move(r); }, std::move(record));
}

}  // namespace mculab::agent
