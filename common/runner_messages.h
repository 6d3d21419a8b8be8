// The runner protocol's messages as C++ values (layouts: firmware_stub/include/mculab/
// runner_protocol.h, spec: docs/runner-protocol.md). Decode*() takes a frame's payload (as
// FrameStream yields it) and checks its length, naming what is wrong; Encode*() gives the payload
// bytes; ToWire() gives the whole frame as it goes on the link (COBS, CRC, 0x00 delimiter), so a
// fake board can speak for a runner and a test can speak for an agent.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "mculab/runner_protocol.h"

namespace mculab {

using Payload = std::span<const std::uint8_t>;
using Bytes = std::vector<std::uint8_t>;

// runner -> agent

// A counter unit of the board: a set of hardware counters that can each be given any of the unit's
// events (the Cortex-M55 PMU, the Ethos-U PMU, the Cortex-M7 DWT), or the emulated events the board
// backend counts outside the runner (`external`: the QEMU plugin).
struct CounterUnit {
  std::string name;                   // "cortex-m55-pmu" (at most 15 characters)
  std::uint8_t max_simultaneous = 0;  // events of this unit countable in one pass
  bool external = false;              // MCULAB_UNIT_EXTERNAL: never in counter_mask nor SAMPLE
  std::vector<std::string> events{};  // catalogue names: "instructions", "npu_active", ...
};

struct Hello {
  static constexpr std::uint8_t kType = MCULAB_MSG_HELLO;
  std::uint8_t runner_major = 0, runner_minor = 0, runner_patch = 0;
  bool emulated = false;         // MCULAB_HELLO_EMULATED: timer/counters are QEMU's, not silicon
  bool custom_workload = false;  // MCULAB_HELLO_CUSTOM_WORKLOAD: runs a blob with its own runtime
  bool icache = false;           // MCULAB_HELLO_ICACHE: the core's instruction cache is on
  bool dcache = false;           // MCULAB_HELLO_DCACHE: the core's data cache is on
  // Where the case arena lives: "" (unspecified), "tcm", "sram", "axi-sram", "ddr".
  std::string arena_memory;
  std::uint32_t clock_hz = 0;  // 0 if unknown
  std::string timer_unit;      // "cycles" or "ns"
  std::uint32_t workload_addr = 0;
  std::uint32_t workload_max = 0;
  std::uint32_t arena_bytes = 0;
  std::string port;     // "an547", "host" (at most 15 characters)
  std::string cpu;      // "cortex-m55" (at most 15 characters)
  std::string runtime;  // "builtin", or the custom runtime's name (at most 15 characters)
  std::vector<CounterUnit> units{};  // what the board counts, per unit (may be empty)

  // Derived from `units` by DecodeHello (the runner's counter index space):
  // the events of the non-external units in counter index order (CONFIGURE counter_mask bit i is
  // counters[i]), and how many of them one pass can hold: the sum of those units'
  // max_simultaneous, at most MCULAB_MAX_COUNTERS. A pass must also respect each unit's own
  // max_simultaneous (CounterIndexUnit() says which unit an index belongs to).
  // EncodeHello() uses them only when `units` is empty: then they become one unit "counters".
  std::uint8_t max_counters = 0;
  std::vector<std::string> counters{};

  std::string version() const;  // "1.2.3"
  // The unit that counter index i belongs to (an index into `units`), or -1.
  int CounterIndexUnit(std::size_t i) const;
};

struct CaseStart {
  static constexpr std::uint8_t kType = MCULAB_MSG_CASE_START;
  std::uint16_t case_index = 0;
  std::int64_t case_id = 0;
};

struct SampleMsg {
  static constexpr std::uint8_t kType = MCULAB_MSG_SAMPLE;
  std::uint16_t case_index = 0;
  std::uint32_t iteration = 0;            // 0-based, warm-up excluded
  std::uint64_t timer = 0;                // timer units (Hello::timer_unit) for one invocation
  std::vector<std::uint64_t> counters{};  // selected counters, index order; <= MCULAB_MAX_COUNTERS
};

// sum, min and max of one metric over an operator's invocations.
struct OpMetric {
  std::uint64_t sum = 0, min = 0, max = 0;
  bool operator==(const OpMetric&) const = default;
};

// One operator's profile over a case's measured iterations (runtime-neutral: TFLite Micro and
// ExecuTorch runners report the same shape).
struct OpSample {
  static constexpr std::uint8_t kType = MCULAB_MSG_OP_SAMPLE;
  std::uint16_t case_index = 0;
  std::uint16_t op_index = 0;        // the runtime's operator index
  std::uint32_t count = 0;           // invocations aggregated
  bool unclosed = false;             // MCULAB_OP_UNCLOSED: some begin had no end (not in count)
  std::string type;                  // "CONV_2D" (at most 15 characters)
  std::string name;                  // the operator's name (at most 31 characters)
  OpMetric timer;                    // Hello::timer_unit
  std::vector<OpMetric> counters{};  // as SampleMsg::counters; <= MCULAB_MAX_COUNTERS
};

struct MemoryEntry {
  std::string category;  // "arena", "stack", or the runtime's own (at most 15 characters)
  std::uint32_t used = 0;
  std::uint32_t reserved = 0;
  bool operator==(const MemoryEntry&) const = default;
};

struct MemoryReport {
  static constexpr std::uint8_t kType = MCULAB_MSG_MEMORY;
  std::uint16_t case_index = 0;
  std::vector<MemoryEntry> entries{};  // at most MCULAB_MAX_MEMORY_ENTRIES
};

struct CaseEnd {
  static constexpr std::uint8_t kType = MCULAB_MSG_CASE_END;
  std::uint16_t case_index = 0;
  std::uint32_t checksum = 0;  // CRC-32 of the output tensor
  std::uint64_t overhead = 0;  // timer reading of an empty measured region (lower median of 8)
  std::vector<std::uint64_t> counter_overhead{};  // the counters over that region, as SampleMsg
};

struct LogMsg {
  static constexpr std::uint8_t kType = MCULAB_MSG_LOG;
  std::uint8_t level = 1;  // 0 debug, 1 info, 2 warn, 3 error
  std::string text;
};

struct ErrorMsg {
  static constexpr std::uint8_t kType = MCULAB_MSG_ERROR;
  std::uint16_t code = 0;                     // mculab_error_code
  std::uint16_t case_index = MCULAB_NO_CASE;  // MCULAB_NO_CASE when no case is concerned
  std::string text;
  const char* code_name() const { return mculab_error_name(code); }
};

struct Done {
  static constexpr std::uint8_t kType = MCULAB_MSG_DONE;
  std::uint16_t cases_run = 0;
  std::uint16_t status = 0;  // 0 ok, else the mculab_error_code that stopped the run
};

// agent -> runner
struct Configure {
  static constexpr std::uint8_t kType = MCULAB_MSG_CONFIGURE;
  std::uint32_t iterations = 1;
  std::uint32_t warmup = 0;
  std::uint32_t workload_len = 0;  // 0 = take the workload header's length
  std::uint32_t counter_mask = 0;  // bit i = counter i of Hello::counters
  std::uint32_t flags = 0;         // MCULAB_CONFIGURE_OP_PROFILE | MCULAB_CONFIGURE_MEMORY
};

struct RunMsg {
  static constexpr std::uint8_t kType = MCULAB_MSG_RUN;
};

struct AbortMsg {
  static constexpr std::uint8_t kType = MCULAB_MSG_ABORT;
};

Result<Hello> DecodeHello(Payload p);
Result<CaseStart> DecodeCaseStart(Payload p);
Result<SampleMsg> DecodeSample(Payload p);
Result<OpSample> DecodeOpSample(Payload p);
Result<MemoryReport> DecodeMemory(Payload p);
Result<CaseEnd> DecodeCaseEnd(Payload p);
Result<LogMsg> DecodeLog(Payload p);
Result<ErrorMsg> DecodeError(Payload p);
Result<Done> DecodeDone(Payload p);
Result<Configure> DecodeConfigure(Payload p);
Result<RunMsg> DecodeRun(Payload p);
Result<AbortMsg> DecodeAbort(Payload p);

// Payload bytes. Strings longer than their field are cut; LOG/ERROR text is cut to fit
// MCULAB_MAX_PAYLOAD; more than MCULAB_MAX_COUNTERS counters, MCULAB_MAX_UNITS units or
// MCULAB_MAX_MEMORY_ENTRIES entries are cut, and HELLO's unit records stop where the payload is
// full.
Bytes EncodeHello(const Hello& m);
Bytes EncodeCaseStart(const CaseStart& m);
Bytes EncodeSample(const SampleMsg& m);
Bytes EncodeOpSample(const OpSample& m);
Bytes EncodeMemory(const MemoryReport& m);
Bytes EncodeCaseEnd(const CaseEnd& m);
Bytes EncodeLog(const LogMsg& m);
Bytes EncodeError(const ErrorMsg& m);
Bytes EncodeDone(const Done& m);
Bytes EncodeConfigure(const Configure& m);
Bytes EncodeRun(const RunMsg& m);
Bytes EncodeAbort(const AbortMsg& m);

// A whole frame as it goes on the link: COBS([version][type][payload][CRC-32]) 0x00.
Bytes EncodeFrame(std::uint8_t type, Payload payload);
Bytes ToWire(const Hello& m);
Bytes ToWire(const CaseStart& m);
Bytes ToWire(const SampleMsg& m);
Bytes ToWire(const OpSample& m);
Bytes ToWire(const MemoryReport& m);
Bytes ToWire(const CaseEnd& m);
Bytes ToWire(const LogMsg& m);
Bytes ToWire(const ErrorMsg& m);
Bytes ToWire(const Done& m);
Bytes ToWire(const Configure& m);
Bytes ToWire(const RunMsg& m);
Bytes ToWire(const AbortMsg& m);

}  // namespace mculab
