#include "common/runner_messages.h"

#include <algorithm>

#include "common/lists.h"

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

int Hello::CounterIndexUnit(std::size_t i) const {
  for (std::size_t u = 0; u < units.size(); ++u) {
    if (units[u].external) continue;
    if (i < units[u].events.size()) return static_cast<int>(u);
    i -= units[u].events.size();
  }
  return -1;
}

Result<Hello> DecodeHello(Payload p) {
  if (auto s = ExpectAtLeast("HELLO", p, MCULAB_HELLO_FIXED_LEN); !s) return s.error();
  Hello m;
  m.runner_major = p[0];
  m.runner_minor = p[1];
  m.runner_patch = p[2];
  m.emulated = (p[3] & MCULAB_HELLO_EMULATED) != 0;
  m.custom_workload = (p[3] & MCULAB_HELLO_CUSTOM_WORKLOAD) != 0;
  m.icache = (p[3] & MCULAB_HELLO_ICACHE) != 0;
  m.dcache = (p[3] & MCULAB_HELLO_DCACHE) != 0;
  switch (p[10]) {
    case MCULAB_MEMORY_UNSPECIFIED:
      break;
    case MCULAB_MEMORY_TCM:
      m.arena_memory = "tcm";
      break;
    case MCULAB_MEMORY_SRAM:
      m.arena_memory = "sram";
      break;
    case MCULAB_MEMORY_AXI_SRAM:
      m.arena_memory = "axi-sram";
      break;
    case MCULAB_MEMORY_DDR:
      m.arena_memory = "ddr";
      break;
    default:
      return MakeError(ErrorCode::kDataLoss,
                       "HELLO arena_memory " + std::to_string(p[10]) + " is not a known memory");
  }
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
  const std::size_t num_units = p[9];
  if (num_units > MCULAB_MAX_UNITS) {
    return MakeError(ErrorCode::kDataLoss, "HELLO num_units " + std::to_string(num_units) +
                                               " exceeds " + std::to_string(MCULAB_MAX_UNITS));
  }
  m.workload_addr = mculab_get_u32(&p[12]);
  m.workload_max = mculab_get_u32(&p[16]);
  m.arena_bytes = mculab_get_u32(&p[20]);
  m.port = FixedString(&p[24], MCULAB_NAME_LEN);
  m.cpu = FixedString(&p[40], MCULAB_NAME_LEN);
  m.runtime = FixedString(&p[56], MCULAB_NAME_LEN);
  std::size_t at = MCULAB_HELLO_FIXED_LEN;
  unsigned slots = 0;
  for (std::size_t u = 0; u < num_units; ++u) {
    const std::string which = "HELLO unit " + std::to_string(u);
    if (p.size() < at + MCULAB_HELLO_UNIT_FIXED_LEN) {
      return LengthError(which.c_str(), p.size() - at,
                         "at least " + std::to_string(MCULAB_HELLO_UNIT_FIXED_LEN));
    }
    CounterUnit unit;
    unit.name = FixedString(&p[at], MCULAB_NAME_LEN);
    unit.max_simultaneous = p[at + 16];
    unit.external = (p[at + 17] & MCULAB_UNIT_EXTERNAL) != 0;
    const std::size_t num_events = p[at + 18];
    const std::size_t names_len = p[at + 19];
    at += MCULAB_HELLO_UNIT_FIXED_LEN;
    if (p.size() < at + names_len) {
      return MakeError(ErrorCode::kDataLoss, which + " names need " + std::to_string(names_len) +
                                                 " bytes, the payload has " +
                                                 std::to_string(p.size() - at));
    }
    unit.events = SplitList(std::string_view(reinterpret_cast<const char*>(&p[at]), names_len));
    at += names_len;
    if (unit.events.size() != num_events) {
      return MakeError(ErrorCode::kDataLoss, which + " (" + unit.name + ") says " +
                                                 std::to_string(num_events) + " events but names " +
                                                 std::to_string(unit.events.size()));
    }
    if (!unit.external) {
      slots += unit.max_simultaneous;
      m.counters.insert(m.counters.end(), unit.events.begin(), unit.events.end());
    }
    m.units.push_back(std::move(unit));
  }
  if (at != p.size()) {
    return LengthError(
        "HELLO", p.size(),
        std::to_string(at) + " for its " + std::to_string(num_units) + " unit records");
  }
  m.max_counters = static_cast<std::uint8_t>(std::min<unsigned>(slots, MCULAB_MAX_COUNTERS));
  return m;
}

Bytes EncodeHello(const Hello& m) {
  std::vector<CounterUnit> units = m.units;
  if (units.empty() && !m.counters.empty()) {
    units.push_back(CounterUnit{"counters", m.max_counters, false, m.counters});
  }
  Bytes b(MCULAB_HELLO_FIXED_LEN, 0);
  b[0] = m.runner_major;
  b[1] = m.runner_minor;
  b[2] = m.runner_patch;
  b[3] = static_cast<std::uint8_t>((m.emulated ? MCULAB_HELLO_EMULATED : 0) |
                                   (m.custom_workload ? MCULAB_HELLO_CUSTOM_WORKLOAD : 0) |
                                   (m.icache ? MCULAB_HELLO_ICACHE : 0) |
                                   (m.dcache ? MCULAB_HELLO_DCACHE : 0));
  b[10] = m.arena_memory == "tcm"        ? MCULAB_MEMORY_TCM
          : m.arena_memory == "sram"     ? MCULAB_MEMORY_SRAM
          : m.arena_memory == "axi-sram" ? MCULAB_MEMORY_AXI_SRAM
          : m.arena_memory == "ddr"      ? MCULAB_MEMORY_DDR
                                         : MCULAB_MEMORY_UNSPECIFIED;
  mculab_put_u32(&b[4], m.clock_hz);
  b[8] = m.timer_unit == "ns" ? MCULAB_TIMER_NANOSECONDS : MCULAB_TIMER_CYCLES;
  mculab_put_u32(&b[12], m.workload_addr);
  mculab_put_u32(&b[16], m.workload_max);
  mculab_put_u32(&b[20], m.arena_bytes);
  PutFixedString(&b[24], MCULAB_NAME_LEN, m.port);
  PutFixedString(&b[40], MCULAB_NAME_LEN, m.cpu);
  PutFixedString(&b[56], MCULAB_NAME_LEN, m.runtime);
  std::uint8_t num_units = 0;
  for (const auto& unit : units) {
    if (num_units == MCULAB_MAX_UNITS) break;
    std::string names;
    std::size_t num_events = 0;
    for (const auto& e : unit.events) {
      if (num_events == 255 || names.size() + e.size() + 1 > 255) break;
      if (!names.empty()) names += ',';
      names += e;
      ++num_events;
    }
    if (b.size() + MCULAB_HELLO_UNIT_FIXED_LEN + names.size() > MCULAB_MAX_PAYLOAD) break;
    const std::size_t at = b.size();
    b.resize(at + MCULAB_HELLO_UNIT_FIXED_LEN, 0);
    PutFixedString(&b[at], MCULAB_NAME_LEN, unit.name);
    b[at + 16] = unit.max_simultaneous;
    b[at + 17] = unit.external ? MCULAB_UNIT_EXTERNAL : 0;
    b[at + 18] = static_cast<std::uint8_t>(num_events);
    b[at + 19] = static_cast<std::uint8_t>(names.size());
    b.insert(b.end(), names.begin(), names.end());
    ++num_units;
  }
  b[9] = num_units;
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
  if (p.size() != MCULAB_SAMPLE_FIXED_LEN + 8 * n) {
    return LengthError("SAMPLE", p.size(),
                       std::to_string(MCULAB_SAMPLE_FIXED_LEN + 8 * n) + " for " +
                           std::to_string(n) + " counters");
  }
  SampleMsg m;
  m.case_index = mculab_get_u16(&p[0]);
  m.iteration = mculab_get_u32(&p[4]);
  m.timer = mculab_get_u64(&p[8]);
  for (std::size_t i = 0; i < n; ++i) m.counters.push_back(mculab_get_u64(&p[16 + 8 * i]));
  return m;
}

Bytes EncodeSample(const SampleMsg& m) {
  const std::size_t n = std::min<std::size_t>(m.counters.size(), MCULAB_MAX_COUNTERS);
  Bytes b(MCULAB_SAMPLE_FIXED_LEN + 8 * n, 0);
  mculab_put_u16(&b[0], m.case_index);
  b[2] = static_cast<std::uint8_t>(n);
  mculab_put_u32(&b[4], m.iteration);
  mculab_put_u64(&b[8], m.timer);
  for (std::size_t i = 0; i < n; ++i) mculab_put_u64(&b[16 + 8 * i], m.counters[i]);
  return b;
}

Result<OpSample> DecodeOpSample(Payload p) {
  if (auto s = ExpectAtLeast("OP_SAMPLE", p, MCULAB_OP_SAMPLE_FIXED_LEN); !s) return s.error();
  const std::size_t n = p[8];
  if (n > MCULAB_MAX_COUNTERS) {
    return MakeError(ErrorCode::kDataLoss, "OP_SAMPLE num_counters " + std::to_string(n) +
                                               " exceeds " + std::to_string(MCULAB_MAX_COUNTERS));
  }
  const std::size_t want = MCULAB_OP_SAMPLE_FIXED_LEN + MCULAB_OP_SAMPLE_METRIC_LEN * (1 + n);
  if (p.size() != want) {
    return LengthError("OP_SAMPLE", p.size(),
                       std::to_string(want) + " for " + std::to_string(n) + " counters");
  }
  auto metric = [&](std::size_t k) {
    const std::uint8_t* q = &p[MCULAB_OP_SAMPLE_FIXED_LEN + MCULAB_OP_SAMPLE_METRIC_LEN * k];
    return OpMetric{mculab_get_u64(q), mculab_get_u64(q + 8), mculab_get_u64(q + 16)};
  };
  OpSample m;
  m.case_index = mculab_get_u16(&p[0]);
  m.op_index = mculab_get_u16(&p[2]);
  m.count = mculab_get_u32(&p[4]);
  m.unclosed = (p[9] & MCULAB_OP_UNCLOSED) != 0;
  m.type = FixedString(&p[12], MCULAB_NAME_LEN);
  m.name = FixedString(&p[28], MCULAB_OP_NAME_LEN);
  m.timer = metric(0);
  for (std::size_t k = 0; k < n; ++k) m.counters.push_back(metric(1 + k));
  return m;
}

Bytes EncodeOpSample(const OpSample& m) {
  const std::size_t n = std::min<std::size_t>(m.counters.size(), MCULAB_MAX_COUNTERS);
  Bytes b(MCULAB_OP_SAMPLE_FIXED_LEN + MCULAB_OP_SAMPLE_METRIC_LEN * (1 + n), 0);
  mculab_put_u16(&b[0], m.case_index);
  mculab_put_u16(&b[2], m.op_index);
  mculab_put_u32(&b[4], m.count);
  b[8] = static_cast<std::uint8_t>(n);
  b[9] = m.unclosed ? MCULAB_OP_UNCLOSED : 0;
  PutFixedString(&b[12], MCULAB_NAME_LEN, m.type);
  PutFixedString(&b[28], MCULAB_OP_NAME_LEN, m.name);
  auto put = [&](std::size_t k, const OpMetric& v) {
    std::uint8_t* q = &b[MCULAB_OP_SAMPLE_FIXED_LEN + MCULAB_OP_SAMPLE_METRIC_LEN * k];
    mculab_put_u64(q, v.sum);
    mculab_put_u64(q + 8, v.min);
    mculab_put_u64(q + 16, v.max);
  };
  put(0, m.timer);
  for (std::size_t k = 0; k < n; ++k) put(1 + k, m.counters[k]);
  return b;
}

Result<MemoryReport> DecodeMemory(Payload p) {
  if (auto s = ExpectAtLeast("MEMORY", p, MCULAB_MEMORY_FIXED_LEN); !s) return s.error();
  const std::size_t n = p[2];
  if (n > MCULAB_MAX_MEMORY_ENTRIES) {
    return MakeError(ErrorCode::kDataLoss, "MEMORY num_entries " + std::to_string(n) + " exceeds " +
                                               std::to_string(MCULAB_MAX_MEMORY_ENTRIES));
  }
  const std::size_t want = MCULAB_MEMORY_FIXED_LEN + MCULAB_MEMORY_ENTRY_LEN * n;
  if (p.size() != want) {
    return LengthError("MEMORY", p.size(),
                       std::to_string(want) + " for " + std::to_string(n) + " entries");
  }
  MemoryReport m;
  m.case_index = mculab_get_u16(&p[0]);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t* q = &p[MCULAB_MEMORY_FIXED_LEN + MCULAB_MEMORY_ENTRY_LEN * i];
    m.entries.push_back(MemoryEntry{FixedString(q, MCULAB_NAME_LEN), mculab_get_u32(q + 16),
                                    mculab_get_u32(q + 20)});
  }
  return m;
}

Bytes EncodeMemory(const MemoryReport& m) {
  const std::size_t n = std::min<std::size_t>(m.entries.size(), MCULAB_MAX_MEMORY_ENTRIES);
  Bytes b(MCULAB_MEMORY_FIXED_LEN + MCULAB_MEMORY_ENTRY_LEN * n, 0);
  mculab_put_u16(&b[0], m.case_index);
  b[2] = static_cast<std::uint8_t>(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint8_t* q = &b[MCULAB_MEMORY_FIXED_LEN + MCULAB_MEMORY_ENTRY_LEN * i];
    PutFixedString(q, MCULAB_NAME_LEN, m.entries[i].category);
    mculab_put_u32(q + 16, m.entries[i].used);
    mculab_put_u32(q + 20, m.entries[i].reserved);
  }
  return b;
}

Result<CaseEnd> DecodeCaseEnd(Payload p) {
  if (auto s = ExpectAtLeast("CASE_END", p, MCULAB_CASE_END_FIXED_LEN); !s) return s.error();
  const std::size_t n = p[2];
  if (n > MCULAB_MAX_COUNTERS) {
    return MakeError(ErrorCode::kDataLoss, "CASE_END num_counters " + std::to_string(n) +
                                               " exceeds " + std::to_string(MCULAB_MAX_COUNTERS));
  }
  if (p.size() != MCULAB_CASE_END_FIXED_LEN + 8 * n) {
    return LengthError("CASE_END", p.size(),
                       std::to_string(MCULAB_CASE_END_FIXED_LEN + 8 * n) + " for " +
                           std::to_string(n) + " counters");
  }
  CaseEnd m;
  m.case_index = mculab_get_u16(&p[0]);
  m.checksum = mculab_get_u32(&p[4]);
  m.overhead = mculab_get_u64(&p[8]);
  for (std::size_t i = 0; i < n; ++i) {
    m.counter_overhead.push_back(mculab_get_u64(&p[MCULAB_CASE_END_FIXED_LEN + 8 * i]));
  }
  return m;
}

Bytes EncodeCaseEnd(const CaseEnd& m) {
  const std::size_t n = std::min<std::size_t>(m.counter_overhead.size(), MCULAB_MAX_COUNTERS);
  Bytes b(MCULAB_CASE_END_FIXED_LEN + 8 * n, 0);
  mculab_put_u16(&b[0], m.case_index);
  b[2] = static_cast<std::uint8_t>(n);
  mculab_put_u32(&b[4], m.checksum);
  mculab_put_u64(&b[8], m.overhead);
  for (std::size_t i = 0; i < n; ++i) {
    mculab_put_u64(&b[MCULAB_CASE_END_FIXED_LEN + 8 * i], m.counter_overhead[i]);
  }
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
  m.flags = mculab_get_u32(&p[16]);
  return m;
}

Bytes EncodeConfigure(const Configure& m) {
  Bytes b(MCULAB_CONFIGURE_LEN, 0);
  mculab_put_u32(&b[0], m.iterations);
  mculab_put_u32(&b[4], m.warmup);
  mculab_put_u32(&b[8], m.workload_len);
  mculab_put_u32(&b[12], m.counter_mask);
  mculab_put_u32(&b[16], m.flags);
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
Bytes ToWire(const OpSample& m) { return EncodeFrame(m.kType, EncodeOpSample(m)); }
Bytes ToWire(const MemoryReport& m) { return EncodeFrame(m.kType, EncodeMemory(m)); }
Bytes ToWire(const CaseEnd& m) { return EncodeFrame(m.kType, EncodeCaseEnd(m)); }
Bytes ToWire(const LogMsg& m) { return EncodeFrame(m.kType, EncodeLog(m)); }
Bytes ToWire(const ErrorMsg& m) { return EncodeFrame(m.kType, EncodeError(m)); }
Bytes ToWire(const Done& m) { return EncodeFrame(m.kType, EncodeDone(m)); }
Bytes ToWire(const Configure& m) { return EncodeFrame(m.kType, EncodeConfigure(m)); }
Bytes ToWire(const RunMsg& m) { return EncodeFrame(m.kType, EncodeRun(m)); }
Bytes ToWire(const AbortMsg& m) { return EncodeFrame(m.kType, EncodeAbort(m)); }

}  // namespace mculab
