#include "common/runner_messages.h"

#include <algorithm>

namespace mculab {
namespace {

Error LengthError(const char* what, std::size_t got, const std::string& want) {
  return MakeError(ErrorCode::kDataLoss, std::string(what) + " payload is " + std::to_string(got) +
                                             " bytes, expected " + want);
}

Status ExpectExactly(const char* what, Payload p, std::size_t n) {
  if (p.size() != n) return LengthError(what, p.size(), std::to_string(n));
  return {};
}

Status ExpectAtLeast(const char* what, Payload p, std::size_t n) {
  if (p.size() < n) return LengthError(what, p.size(), "at least " + std::to_string(n));
  return {};
}

// A NUL-padded fixed-width string field.
std::string FixedString(const std::uint8_t* p, std::size_t width) {
  std::size_t n = 0;
  while (n < width && p[n] != 0) ++n;
  return std::string(reinterpret_cast<const char*>(p), n);
}

void PutFixedString(std::uint8_t* p, std::size_t width, const std::string& s) {
  const std::size_t n = std::min(s.size(), width - 1);  // keep one NUL
  std::copy_n(s.data(), n, p);
  std::fill(p + n, p + width, 0);
}

std::vector<std::string> SplitCounters(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Bytes WithText(Bytes fixed, const std::string& text) {
  const std::size_t room = MCULAB_MAX_PAYLOAD - fixed.size();
  fixed.insert(fixed.end(), text.begin(), text.begin() + std::min(text.size(), room));
  return fixed;
}

}  // namespace

std::string Hello::version() const {
  return std::to_string(runner_major) + "." + std::to_string(runner_minor) + "." +
         std::to_string(runner_patch);
}

Result<Hello> DecodeHello(Payload p) {
  if (auto s = ExpectAtLeast("HELLO", p, MCULAB_HELLO_FIXED_LEN); !s) return s.error();
  Hello m;
  m.runner_major = p[0];
  m.runner_minor = p[1];
  m.runner_patch = p[2];
  m.emulated = (p[3] & MCULAB_HELLO_EMULATED) != 0;
  m.clock_hz = mculab_get_u32(&p[4]);
  switch (p[8]) {
    case MCULAB_TIMER_CYCLES:
      m.timer_unit = "cycles";
      break;
    case MCULAB_TIMER_NANOSECONDS:
      m.timer_unit = "ns";
      break;
    default:
      return MakeError(ErrorCode::kDataLoss,
                       "HELLO timer_unit " + std::to_string(p[8]) + " is not cycles (0) or ns (1)");
  }
  m.max_counters = p[9];
  m.workload_addr = mculab_get_u32(&p[12]);
  m.workload_max = mculab_get_u32(&p[16]);
  m.arena_bytes = mculab_get_u32(&p[20]);
  m.port = FixedString(&p[24], 16);
  m.cpu = FixedString(&p[40], 16);
  m.counters = SplitCounters(
      FixedString(p.data() + MCULAB_HELLO_FIXED_LEN, p.size() - MCULAB_HELLO_FIXED_LEN));
  return m;
}

Bytes EncodeHello(const Hello& m) {
  std::string counters;
  for (const auto& c : m.counters) {
    if (!counters.empty()) counters += ',';
    counters += c;
  }
  counters.resize(
      std::min<std::size_t>(counters.size(), MCULAB_MAX_PAYLOAD - MCULAB_HELLO_FIXED_LEN));
  Bytes b(MCULAB_HELLO_FIXED_LEN + counters.size(), 0);
  b[0] = m.runner_major;
  b[1] = m.runner_minor;
  b[2] = m.runner_patch;
  b[3] = m.emulated ? MCULAB_HELLO_EMULATED : 0;
  mculab_put_u32(&b[4], m.clock_hz);
  b[8] = m.timer_unit == "ns" ? MCULAB_TIMER_NANOSECONDS : MCULAB_TIMER_CYCLES;
  b[9] = m.max_counters;
  mculab_put_u32(&b[12], m.workload_addr);
  mculab_put_u32(&b[16], m.workload_max);
  mculab_put_u32(&b[20], m.arena_bytes);
  PutFixedString(&b[24], 16, m.port);
  PutFixedString(&b[40], 16, m.cpu);
  std::copy(counters.begin(), counters.end(), b.begin() + MCULAB_HELLO_FIXED_LEN);
  return b;
}

Result<CaseStart> DecodeCaseStart(Payload p) {
  if (auto s = ExpectExactly("CASE_START", p, MCULAB_CASE_START_LEN); !s) return s.error();
  CaseStart m;
  m.case_index = mculab_get_u16(&p[0]);
  m.case_id = static_cast<std::int64_t>(mculab_get_u64(&p[4]));
  return m;
}

Bytes EncodeCaseStart(const CaseStart& m) {
  Bytes b(MCULAB_CASE_START_LEN, 0);
  mculab_put_u16(&b[0], m.case_index);
  mculab_put_u64(&b[4], static_cast<std::uint64_t>(m.case_id));
  return b;
}

Result<SampleMsg> DecodeSample(Payload p) {
  if (auto s = ExpectAtLeast("SAMPLE", p, MCULAB_SAMPLE_FIXED_LEN); !s) return s.error();
  const std::size_t n = p[2];
  if (n > MCULAB_MAX_COUNTERS) {
    return MakeError(ErrorCode::kDataLoss, "SAMPLE num_counters " + std::to_string(n) +
                                               " exceeds " + std::to_string(MCULAB_MAX_COUNTERS));
  }
  if (p.size() != MCULAB_SAMPLE_FIXED_LEN + 4 * n) {
    return LengthError("SAMPLE", p.size(),
                       std::to_string(MCULAB_SAMPLE_FIXED_LEN + 4 * n) + " for " +
                           std::to_string(n) + " counters");
  }
  SampleMsg m;
  m.case_index = mculab_get_u16(&p[0]);
  m.iteration = mculab_get_u32(&p[4]);
  m.timer = mculab_get_u64(&p[8]);
  for (std::size_t i = 0; i < n; ++i) m.counters.push_back(mculab_get_u32(&p[16 + 4 * i]));
  return m;
}

Bytes EncodeSample(const SampleMsg& m) {
  const std::size_t n = std::min<std::size_t>(m.counters.size(), MCULAB_MAX_COUNTERS);
  Bytes b(MCULAB_SAMPLE_FIXED_LEN + 4 * n, 0);
  mculab_put_u16(&b[0], m.case_index);
  b[2] = static_cast<std::uint8_t>(n);
  mculab_put_u32(&b[4], m.iteration);
  mculab_put_u64(&b[8], m.timer);
  for (std::size_t i = 0; i < n; ++i) mculab_put_u32(&b[16 + 4 * i], m.counters[i]);
  return b;
}

Result<CaseEnd> DecodeCaseEnd(Payload p) {
  if (auto s = ExpectExactly("CASE_END", p, MCULAB_CASE_END_LEN); !s) return s.error();
  CaseEnd m;
  m.case_index = mculab_get_u16(&p[0]);
  m.checksum = mculab_get_u32(&p[4]);
  m.overhead = mculab_get_u64(&p[8]);
  return m;
}

Bytes EncodeCaseEnd(const CaseEnd& m) {
  Bytes b(MCULAB_CASE_END_LEN, 0);
  mculab_put_u16(&b[0], m.case_index);
  mculab_put_u32(&b[4], m.checksum);
  mculab_put_u64(&b[8], m.overhead);
  return b;
}

Result<LogMsg> DecodeLog(Payload p) {
  if (auto s = ExpectAtLeast("LOG", p, 1); !s) return s.error();
  LogMsg m;
  m.level = p[0];
  m.text.assign(reinterpret_cast<const char*>(p.data()) + 1, p.size() - 1);
  return m;
}

Bytes EncodeLog(const LogMsg& m) { return WithText(Bytes{m.level}, m.text); }

Result<ErrorMsg> DecodeError(Payload p) {
  if (auto s = ExpectAtLeast("ERROR", p, MCULAB_ERROR_FIXED_LEN); !s) return s.error();
  ErrorMsg m;
  m.code = mculab_get_u16(&p[0]);
  m.case_index = mculab_get_u16(&p[2]);
  m.text.assign(reinterpret_cast<const char*>(p.data()) + MCULAB_ERROR_FIXED_LEN,
                p.size() - MCULAB_ERROR_FIXED_LEN);
  return m;
}

Bytes EncodeError(const ErrorMsg& m) {
  Bytes b(MCULAB_ERROR_FIXED_LEN, 0);
  mculab_put_u16(&b[0], m.code);
  mculab_put_u16(&b[2], m.case_index);
  return WithText(std::move(b), m.text);
}

Result<Done> DecodeDone(Payload p) {
  if (auto s = ExpectExactly("DONE", p, MCULAB_DONE_LEN); !s) return s.error();
  Done m;
  m.cases_run = mculab_get_u16(&p[0]);
  m.status = mculab_get_u16(&p[2]);
  return m;
}

Bytes EncodeDone(const Done& m) {
  Bytes b(MCULAB_DONE_LEN, 0);
  mculab_put_u16(&b[0], m.cases_run);
  mculab_put_u16(&b[2], m.status);
  return b;
}

Result<Configure> DecodeConfigure(Payload p) {
  if (auto s = ExpectExactly("CONFIGURE", p, MCULAB_CONFIGURE_LEN); !s) return s.error();
  Configure m;
  m.iterations = mculab_get_u32(&p[0]);
  m.warmup = mculab_get_u32(&p[4]);
  m.workload_len = mculab_get_u32(&p[8]);
  m.counter_mask = mculab_get_u32(&p[12]);
  return m;
}

Bytes EncodeConfigure(const Configure& m) {
  Bytes b(MCULAB_CONFIGURE_LEN, 0);
  mculab_put_u32(&b[0], m.iterations);
  mculab_put_u32(&b[4], m.warmup);
  mculab_put_u32(&b[8], m.workload_len);
  mculab_put_u32(&b[12], m.counter_mask);
  return b;
}

Result<RunMsg> DecodeRun(Payload p) {
  if (auto s = ExpectExactly("RUN", p, 0); !s) return s.error();
  return RunMsg{};
}
Bytes EncodeRun(const RunMsg&) { return {}; }

Result<AbortMsg> DecodeAbort(Payload p) {
  if (auto s = ExpectExactly("ABORT", p, 0); !s) return s.error();
  return AbortMsg{};
}
Bytes EncodeAbort(const AbortMsg&) { return {}; }

Bytes EncodeFrame(std::uint8_t type, Payload payload) {
  Bytes out(MCULAB_MAX_ENCODED_FRAME);
  const std::size_t n =
      mculab_frame_encode(type, payload.data(), payload.size(), out.data(), out.size());
  out.resize(n);  // 0 only for a payload over MCULAB_MAX_PAYLOAD, which Encode*() never makes
  return out;
}

Bytes ToWire(const Hello& m) { return EncodeFrame(m.kType, EncodeHello(m)); }
Bytes ToWire(const CaseStart& m) { return EncodeFrame(m.kType, EncodeCaseStart(m)); }
Bytes ToWire(const SampleMsg& m) { return EncodeFrame(m.kType, EncodeSample(m)); }
Bytes ToWire(const CaseEnd& m) { return EncodeFrame(m.kType, EncodeCaseEnd(m)); }
Bytes ToWire(const LogMsg& m) { return EncodeFrame(m.kType, EncodeLog(m)); }
Bytes ToWire(const ErrorMsg& m) { return EncodeFrame(m.kType, EncodeError(m)); }
Bytes ToWire(const Done& m) { return EncodeFrame(m.kType, EncodeDone(m)); }
Bytes ToWire(const Configure& m) { return EncodeFrame(m.kType, EncodeConfigure(m)); }
Bytes ToWire(const RunMsg& m) { return EncodeFrame(m.kType, EncodeRun(m)); }
Bytes ToWire(const AbortMsg& m) { return EncodeFrame(m.kType, EncodeAbort(m)); }

}  // namespace mculab
