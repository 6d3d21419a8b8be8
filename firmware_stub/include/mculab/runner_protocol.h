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

#define MCULAB_PROTOCOL_VERSION 1u
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
} mculab_error_code;

/* ---- payload layouts (offsets in bytes, little-endian) ----
 *
 * HELLO (runner -> agent)
 *   0  u8  runner_major, 1 u8 runner_minor, 2 u8 runner_patch, 3 u8 flags (MCULAB_HELLO_*)
 *   4  u32 clock_hz          core clock (0 if unknown)
 *   8  u8  timer_unit        mculab_timer_unit
 *   9  u8  max_counters      how many counters can be read at once (beyond the timer)
 *   10 u16 reserved (0)
 *   12 u32 workload_addr     where the board backend must place the workload (0 on host)
 *   16 u32 workload_max      the most bytes the workload region holds
 *   20 u32 arena_bytes       scratch memory for a case's tensors
 *   24 char port[16]         NUL padded, e.g. "an547", "host"
 *   40 char cpu[16]          e.g. "cortex-m55"
 *   56 char counters[..]     comma-separated counter names this port can count, NUL padded to the
 *                            end of the payload (may be empty)
 *   (payload length 56 + strlen(counters))
 *
 * CONFIGURE (agent -> runner)
 *   0  u32 iterations        measured iterations per case (>= 1)
 *   4  u32 warmup            iterations run before measuring, not reported
 *   8  u32 workload_len      the length the agent wrote (header included); 0 = use the header's
 *   12 u32 counter_mask      bit i = counter i of the Hello list (0 = timer only)
 *
 * A valid CONFIGURE is not acknowledged; an invalid one gets an ERROR and leaves the runner
 * unconfigured.
 * RUN (agent -> runner): empty. The runner answers CASE_START/SAMPLE/CASE_END per case, then DONE,
 *   and exits (RUN always ends the session, with ERROR + DONE when something failed).
 * ABORT (agent -> runner): empty. The runner stops after the current iteration and sends
 *   ERROR(MCULAB_ERR_ABORTED) then DONE.
 *
 * CASE_START
 *   0  u16 case_index, 2 u16 reserved, 4 u32 case_id_lo, 8 i32 case_id_hi
 *
 * SAMPLE
 *   0  u16 case_index, 2 u8 num_counters, 3 u8 reserved
 *   4  u32 iteration (0-based, warm-up excluded)
 *   8  u64 timer              elapsed timer units for one invocation of the kernel
 *   16 u32 counters[num_counters]
 *
 * CASE_END
 *   0  u16 case_index, 2 u16 reserved
 *   4  u32 checksum          mculab_case_checksum(): CRC-32 of the output tensor
 *   8  u64 overhead          the timer's reading for an empty measured region (median of 8)
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

#define MCULAB_HELLO_FIXED_LEN 56u
#define MCULAB_CONFIGURE_LEN 16u
#define MCULAB_CASE_START_LEN 12u
#define MCULAB_SAMPLE_FIXED_LEN 16u
#define MCULAB_CASE_END_LEN 16u
#define MCULAB_ERROR_FIXED_LEN 4u
#define MCULAB_DONE_LEN 4u
#define MCULAB_MAX_COUNTERS 8u
#define MCULAB_NO_CASE 0xFFFFu

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
