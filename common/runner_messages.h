// The runner protocol's messages as C++ values (layouts: firmware_stub/include/mculab/
// runner_protocol.h, spec: docs/runner-protocol.md). Decode*() takes a frame's payload (as
// FrameStream yields it) and checks its length, naming what is wrong; Encode*() gives the payload
// bytes; ToWire() gives the whole frame as it goes on the link (COBS, CRC, 0x00 delimiter), so a
// fake board can speak for a runner and a test can speak for an agent.
//
// Thread-safety: plain values and pure functions.
#pragma once

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
struct Hello {
  static constexpr std::uint8_t kType = MCULAB_MSG_HELLO;
  std::uint8_t runner_major = 0, runner_minor = 0, runner_patch = 0;
  bool emulated = false;          // MCULAB_HELLO_EMULATED: timer/counters are QEMU's, not silicon
  std::uint32_t clock_hz = 0;     // 0 if unknown
  std::string timer_unit;         // "cycles" or "ns"
  std::uint8_t max_counters = 0;  // counters readable at once, beyond the timer
  std::uint32_t workload_addr = 0;
  std::uint32_t workload_max = 0;
  std::uint32_t arena_bytes = 0;
  std::string port;                   // "an547", "host" (at most 15 characters)
  std::string cpu;                    // "cortex-m55" (at most 15 characters)
  std::vector<std::string> counters;  // names the port can count (may be empty)
  std::string version() const;        // "1.2.3"
};

struct CaseStart {
  static constexpr std::uint8_t kType = MCULAB_MSG_CASE_START;
  std::uint16_t case_index = 0;
  std::int64_t case_id = 0;
};

struct SampleMsg {
  static constexpr std::uint8_t kType = MCULAB_MSG_SAMPLE;
  std::uint16_t case_index = 0;
  std::uint32_t iteration = 0;          // 0-based, warm-up excluded
  std::uint64_t timer = 0;              // timer units (Hello::timer_unit) for one invocation
  std::vector<std::uint32_t> counters;  // at most MCULAB_MAX_COUNTERS
};

struct CaseEnd {
  static constexpr std::uint8_t kType = MCULAB_MSG_CASE_END;
  std::uint16_t case_index = 0;
  std::uint32_t checksum = 0;  // CRC-32 of the output tensor
  std::uint64_t overhead = 0;  // timer reading of an empty measured region (median of 8)
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
Result<CaseEnd> DecodeCaseEnd(Payload p);
Result<LogMsg> DecodeLog(Payload p);
Result<ErrorMsg> DecodeError(Payload p);
Result<Done> DecodeDone(Payload p);
Result<Configure> DecodeConfigure(Payload p);
Result<RunMsg> DecodeRun(Payload p);
Result<AbortMsg> DecodeAbort(Payload p);

// Payload bytes. Strings longer than their field are cut; LOG/ERROR text is cut to fit
// MCULAB_MAX_PAYLOAD; more than MCULAB_MAX_COUNTERS sample counters are cut.
Bytes EncodeHello(const Hello& m);
Bytes EncodeCaseStart(const CaseStart& m);
Bytes EncodeSample(const SampleMsg& m);
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
Bytes ToWire(const CaseEnd& m);
Bytes ToWire(const LogMsg& m);
Bytes ToWire(const ErrorMsg& m);
Bytes ToWire(const Done& m);
Bytes ToWire(const Configure& m);
Bytes ToWire(const RunMsg& m);
Bytes ToWire(const AbortMsg& m);

}  // namespace mculab
