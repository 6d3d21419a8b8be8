/* mculab runner protocol: the one header shared by the runner firmware (C11) and the agent (C++).
 *
 * A frame on the wire is COBS([version][type][payload][CRC-32 LE]) followed by 0x00. Payloads are
 * little-endian, fixed layout, packed by hand (mculab_put_u32 & co.), never by struct copy, so the
 * layout is the same on every compiler. CRC-32 is the IEEE 802.3 one (zlib's crc32) over
 * version, type and payload. Spec: docs/runner-protocol.md.
 *
 * Thread-safety: the functions here are pure over caller-owned buffers. */
#ifndef MCULAB_RUNNER_PROTOCOL_H_
#define MCULAB_RUNNER_PROTOCOL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCULAB_PROTOCOL_VERSION 2u
/* Largest payload of one frame; a longer frame is a protocol error. */
#define MCULAB_MAX_PAYLOAD 480u
/* version + type + payload + crc */
#define MCULAB_MAX_RAW_FRAME (2u + MCULAB_MAX_PAYLOAD + 4u)
/* COBS adds one byte per 254 plus one; the delimiter adds one. */
#define MCULAB_MAX_ENCODED_FRAME (MCULAB_MAX_RAW_FRAME + MCULAB_MAX_RAW_FRAME / 254u + 2u)

/* Frame types. Runner -> agent are < 0x80, agent -> runner are >= 0x80. */
typedef enum {
  MCULAB_MSG_HELLO = 0x01,
  MCULAB_MSG_CASE_START = 0x02,
  MCULAB_MSG_SAMPLE = 0x03,
  MCULAB_MSG_OP_SAMPLE = 0x04,
  MCULAB_MSG_MEMORY = 0x05,
  MCULAB_MSG_LOG = 0x06,
  MCULAB_MSG_ERROR = 0x07,
  MCULAB_MSG_DONE = 0x08,
  MCULAB_MSG_CASE_END = 0x09,
  MCULAB_MSG_CONFIGURE = 0x81,
  MCULAB_MSG_RUN = 0x82,
  MCULAB_MSG_ABORT = 0x83,
} mculab_msg_type;

/* What the runner's timer counts. */
typedef enum {
  MCULAB_TIMER_CYCLES = 0,      /* core clock cycles (DWT CYCCNT or SysTick at the core clock) */
  MCULAB_TIMER_NANOSECONDS = 1, /* host port: CLOCK_MONOTONIC */
} mculab_timer_unit;

/* Hello flags */
#define MCULAB_HELLO_EMULATED 0x01u /* the timer and counters are emulated (QEMU), not silicon */
/* The runner runs its own runtime over a blob workload (MCULAB_OP_CUSTOM), not the built-in ops. */
#define MCULAB_HELLO_CUSTOM_WORKLOAD 0x02u
/* The core's instruction / data cache is on (Cortex-M7 ports: a build option; it changes the
 * numbers). */
#define MCULAB_HELLO_ICACHE 0x04u
#define MCULAB_HELLO_DCACHE 0x08u

/* HELLO byte 10: the memory the case arena lives in (it changes the numbers too). */
typedef enum {
  MCULAB_MEMORY_UNSPECIFIED = 0,
  MCULAB_MEMORY_TCM = 1,      /* tightly coupled memory (DTCM) */
  MCULAB_MEMORY_SRAM = 2,     /* on-chip or board SRAM on the system bus */
  MCULAB_MEMORY_AXI_SRAM = 3, /* SRAM behind the Cortex-M7's AXI master (STM32H7 D1) */
  MCULAB_MEMORY_DDR = 4,      /* external DRAM */
} mculab_memory_kind;

/* Counter unit flags (HELLO unit record) */
/* Counted outside the runner by the board backend (the QEMU plugin): never selected in CONFIGURE's
 * counter_mask and never carried in SAMPLE; the runner only calls the region markers. */
#define MCULAB_UNIT_EXTERNAL 0x01u

/* CONFIGURE flags: OP_PROFILE aggregates mculab_op_begin/end into OP_SAMPLE frames per op and
 * case; MEMORY sends a MEMORY report per case (arena, stack, the runtime's own categories). */
#define MCULAB_CONFIGURE_OP_PROFILE 0x01u
#define MCULAB_CONFIGURE_MEMORY 0x02u
#define MCULAB_CONFIGURE_KNOWN_FLAGS 0x03u

/* Memory categories: names the runner uses itself (a runtime adds its own, up to 15 characters). */
#define MCULAB_MEMORY_ARENA "arena" /* the case's tensors / the runtime's arena */
#define MCULAB_MEMORY_STACK "stack" /* the stack's high-water mark during the case (painting) */
/* the fast kernels' static scratch buffer (mculab/kernels_s8.h MCULAB_KERNEL_SCRATCH_BYTES) */
#define MCULAB_MEMORY_SCRATCH "scratch"

/* Error codes (ERROR frame) */
typedef enum {
  MCULAB_ERR_NONE = 0,
  MCULAB_ERR_BAD_FRAME = 1,    /* the runner could not decode a frame from the agent */
  MCULAB_ERR_BAD_WORKLOAD = 2, /* missing, corrupt (magic/CRC) or oversized workload */
  MCULAB_ERR_UNKNOWN_OP = 3,
  MCULAB_ERR_BAD_PARAMS = 4, /* parameters out of range for the kernel */
  MCULAB_ERR_NO_MEMORY = 5,  /* the case's tensors do not fit the runner's arena */
  MCULAB_ERR_UNSUPPORTED_EVENT = 6,
  MCULAB_ERR_ABORTED = 7,
  MCULAB_ERR_BAD_STATE = 8, /* e.g. RUN before CONFIGURE */
  MCULAB_ERR_FAULT = 9,     /* the core took a fault (HardFault, UsageFault, ...) and stopped */
} mculab_error_code;

/* ---- payload layouts (offsets in bytes, little-endian); docs/runner-protocol.md has the tables
 * ----
 *
 * HELLO (runner -> agent): 72 bytes + one record per counter unit
 *   0  u8  runner_major, 1 u8 runner_minor, 2 u8 runner_patch, 3 u8 flags (MCULAB_HELLO_*)
 *   4  u32 clock_hz          core clock (0 if unknown)
 *   8  u8  timer_unit        mculab_timer_unit
 *   9  u8  num_units         counter units (records below), at most MCULAB_MAX_UNITS
 *   10 u8  arena_memory      mculab_memory_kind: where the case arena lives
 *   11 u8  reserved (0)
 *   12 u32 workload_addr     where the board backend must place the workload (0 on host)
 *   16 u32 workload_max      the most bytes the workload region holds
 *   20 u32 arena_bytes       scratch memory for a case's tensors
 *   24 char port[16]         NUL padded, e.g. "an547", "host"
 *   40 char cpu[16]          e.g. "cortex-m55"
 *   56 char runtime[16]      "builtin" (the operator benchmarks), or the custom runtime's name
 *   72 unit records, each 20 + names_len bytes:
 *      0  char name[16]      e.g. "cortex-m55-pmu", "ethos-u-pmu", "qemu-plugin"
 *      16 u8 max_simultaneous  events of this unit countable in one pass
 *      17 u8 flags           MCULAB_UNIT_*
 *      18 u8 num_events
 *      19 u8 names_len
 *      20 char names[names_len]  the events' names, comma separated, no NUL
 *   Counter index i (CONFIGURE's counter_mask bit i) is the i-th event of the units without
 *   MCULAB_UNIT_EXTERNAL, in record order then name order.
 *
 * CONFIGURE (agent -> runner): 20 bytes
 *   0  u32 iterations        measured iterations per case (>= 1)
 *   4  u32 warmup            iterations run before measuring, not reported
 *   8  u32 workload_len      the length the agent wrote (header included); 0 = use the header's
 *   12 u32 counter_mask      bit i = counter index i (0 = timer only); per unit at most
 *                            max_simultaneous bits, at most MCULAB_MAX_COUNTERS in all
 *   16 u32 flags             MCULAB_CONFIGURE_*
 *
 * A valid CONFIGURE is not acknowledged; an invalid one gets an ERROR and leaves the runner
 * unconfigured.
 * RUN (agent -> runner): empty. The runner answers CASE_START/SAMPLE/[OP_SAMPLE][MEMORY]/CASE_END
 *   per case, then DONE, and stops (RUN always ends the session, with ERROR + DONE when something
 *   failed): the host runner exits, an embedded port parks the core until the agent stops the
 *   board. A fault on the core is reported the same way: ERROR(MCULAB_ERR_FAULT) + DONE.
 * ABORT (agent -> runner): empty. The runner stops after the current iteration and sends
 *   ERROR(MCULAB_ERR_ABORTED) then DONE.
 *
 * CASE_START: 12 bytes
 *   0  u16 case_index, 2 u16 reserved, 4 u32 case_id_lo, 8 i32 case_id_hi
 *
 * SAMPLE: 16 + 8 n bytes
 *   0  u16 case_index, 2 u8 num_counters (n), 3 u8 reserved
 *   4  u32 iteration (0-based, warm-up excluded)
 *   8  u64 timer              elapsed timer units for one invocation of the kernel
 *   16 u64 counters[n]        the selected counters' events over the same region, in counter
 *                             index order (64-bit: the drivers extend every hardware counter)
 *
 * OP_SAMPLE: one per operator and case, before CASE_END. 60 + 24 (1 + n) bytes
 *   0  u16 case_index, 2 u16 op_index (the runtime's, e.g. the model's operator index)
 *   4  u32 count              invocations aggregated (measured iterations x calls per iteration)
 *   8  u8  num_counters (n)   the same counters as SAMPLE
 *   9  u8  flags              MCULAB_OP_*
 *   10 u16 reserved
 *   12 char type[16]          the operator type, e.g. "CONV_2D", NUL padded (cut to 15)
 *   28 char name[32]          the operator's name, NUL padded (cut to 31)
 *   60 metrics[1 + n], 24 bytes each: u64 sum, u64 min, u64 max
 *                             metric 0 is the timer, metric 1 + k is counter k
 *
 * MEMORY: one per case, before CASE_END. 4 + 24 m bytes
 *   0  u16 case_index, 2 u8 num_entries (m <= MCULAB_MAX_MEMORY_ENTRIES), 3 u8 reserved
 *   4  entries, 24 bytes each: char category[16] (NUL padded), u32 used, u32 reserved
 *
 * CASE_END: 16 + 8 n bytes
 *   0  u16 case_index, 2 u8 num_counters (n, as SAMPLE), 3 u8 reserved
 *   4  u32 checksum          mculab_case_checksum(): CRC-32 of the output tensor
 *   8  u64 overhead          the timer's reading for an empty measured region (lower median of 8)
 *   16 u64 counter_overhead[n]  the counters over that same empty region
 *
 * LOG
 *   0  u8 level (0 debug, 1 info, 2 warn, 3 error), 1.. text (not NUL terminated)
 *
 * ERROR
 *   0  u16 code (mculab_error_code), 2 u16 case_index (0xFFFF = none), 4.. text
 *
 * DONE
 *   0  u16 cases_run, 2 u16 status (0 ok, else the mculab_error_code that stopped the run)
 */

#define MCULAB_HELLO_FIXED_LEN 72u
#define MCULAB_HELLO_UNIT_FIXED_LEN 20u
#define MCULAB_CONFIGURE_LEN 20u
#define MCULAB_CASE_START_LEN 12u
#define MCULAB_SAMPLE_FIXED_LEN 16u
#define MCULAB_OP_SAMPLE_FIXED_LEN 60u
#define MCULAB_OP_SAMPLE_METRIC_LEN 24u
#define MCULAB_MEMORY_FIXED_LEN 4u
#define MCULAB_MEMORY_ENTRY_LEN 24u
#define MCULAB_CASE_END_FIXED_LEN 16u
#define MCULAB_ERROR_FIXED_LEN 4u
#define MCULAB_DONE_LEN 4u
#define MCULAB_MAX_COUNTERS 8u /* counters in one SAMPLE */
#define MCULAB_MAX_UNITS 8u    /* counter units in HELLO */
#define MCULAB_MAX_MEMORY_ENTRIES 16u
#define MCULAB_NAME_LEN 16u /* port, cpu, runtime, unit, op type, memory category fields */
#define MCULAB_OP_NAME_LEN 32u
#define MCULAB_NO_CASE 0xFFFFu

/* OP_SAMPLE flags. UNCLOSED: an mculab_op_begin() of this op had no mculab_op_end() by the end
 * of its iteration; those invocations are not in count. */
#define MCULAB_OP_UNCLOSED 0x01u

/* ---- byte helpers ---- */
static inline void mculab_put_u16(uint8_t* p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static inline void mculab_put_u32(uint8_t* p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}
static inline void mculab_put_u64(uint8_t* p, uint64_t v) {
  mculab_put_u32(p, (uint32_t)v);
  mculab_put_u32(p + 4, (uint32_t)(v >> 32));
}
static inline uint16_t mculab_get_u16(const uint8_t* p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t mculab_get_u32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t mculab_get_u64(const uint8_t* p) {
  return (uint64_t)mculab_get_u32(p) | ((uint64_t)mculab_get_u32(p + 4) << 32);
}

/* CRC-32 (IEEE, reflected, init and xorout 0xFFFFFFFF), the same as zlib's crc32(). Pass 0 as
 * crc to start; feed the previous result to continue. */
uint32_t mculab_crc32(uint32_t crc, const uint8_t* data, size_t len);

/* Encodes one frame of `type` with `payload` into out (capacity out_cap, at least
 * MCULAB_MAX_ENCODED_FRAME is always enough), terminating 0x00 included.
 * Returns the encoded length, or 0 when the payload is too long or out too small. */
size_t mculab_frame_encode(uint8_t type, const uint8_t* payload, size_t payload_len, uint8_t* out,
                           size_t out_cap);

typedef enum {
  MCULAB_FRAME_OK = 0,
  MCULAB_FRAME_EMPTY = 1,     /* zero-length frame (two delimiters in a row) */
  MCULAB_FRAME_BAD_COBS = 2,  /* a COBS code byte points past the end */
  MCULAB_FRAME_TOO_SHORT = 3, /* fewer than version + type + CRC bytes */
  MCULAB_FRAME_TOO_LONG = 4,  /* longer than MCULAB_MAX_RAW_FRAME */
  MCULAB_FRAME_BAD_CRC = 5,
  MCULAB_FRAME_BAD_VERSION = 6,
} mculab_frame_status;

/* Decodes one COBS frame `in` (without its 0x00 delimiter). On success writes the type and the
 * payload (into payload, capacity MCULAB_MAX_PAYLOAD) and its length. The frame type is not
 * checked here: unknown types are the receiver's to reject. */
mculab_frame_status mculab_frame_decode(const uint8_t* in, size_t in_len, uint8_t* type,
                                        uint8_t* payload, size_t* payload_len);

const char* mculab_frame_status_name(mculab_frame_status s);

/* "HELLO", "CONFIGURE", ...; NULL for a type this version does not define. */
const char* mculab_msg_type_name(uint8_t type);

/* 1 when `type` is defined and travels in the given direction (from_runner != 0: runner -> agent,
 * else agent -> runner), 0 otherwise. */
int mculab_msg_type_known(uint8_t type, int from_runner);

/* "bad workload", "aborted", ... for a mculab_error_code (any value: unknown ones get a name). */
const char* mculab_error_name(uint16_t code);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_RUNNER_PROTOCOL_H_ */
