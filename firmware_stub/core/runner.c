/* The runner core: one session of the runner protocol (docs/runner-protocol.md) over the port
 * seam (port.h). No heap: every buffer is a fixed-size static below. */
#include <stdint.h>

#include "mculab/ops.h"
#include "mculab/runner_protocol.h"
#include "mculab/workload.h"
#include "port.h"

#define MCULAB_RUNNER_MAJOR 0u
#define MCULAB_RUNNER_MINOR 1u
#define MCULAB_RUNNER_PATCH 0u
#define MCULAB_OVERHEAD_REGIONS 8u
#define MCULAB_EXIT_LINK_CLOSED 2

typedef enum { RX_NONE, RX_FRAME, RX_CLOSED } rx_result;

/* A short message for LOG and ERROR frames, built without printf. */
typedef struct {
  char buf[160];
  size_t n;
} text;

static struct {
  mculab_port_info info;
  /* receive side: COBS bytes of the frame in flight */
  uint8_t rx[MCULAB_MAX_ENCODED_FRAME];
  size_t rx_len;
  int rx_discarding; /* an oversized frame: drop bytes up to the next delimiter */
  uint8_t rx_type;
  uint8_t rx_payload[MCULAB_MAX_PAYLOAD];
  size_t rx_payload_len;
  /* transmit side */
  uint8_t tx[MCULAB_MAX_ENCODED_FRAME];
  uint8_t tx_payload[MCULAB_MAX_PAYLOAD];
  /* CONFIGURE */
  int configured;
  uint32_t iterations, warmup, workload_len, counter_mask;
  int running;
  mculab_case current;
} g;

static void t_str(text* t, const char* s) {
  while (*s && t->n < sizeof t->buf) t->buf[t->n++] = *s++;
}

static void t_u64(text* t, uint64_t v) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v != 0);
  while (n > 0 && t->n < sizeof t->buf) t->buf[t->n++] = digits[--n];
}

static void t_i64(text* t, int64_t v) {
  if (v < 0) {
    t_str(t, "-");
    t_u64(t, (uint64_t)0 - (uint64_t)v);
  } else {
    t_u64(t, (uint64_t)v);
  }
}

static void t_hex8(text* t, uint8_t v) {
  static const char kHex[] = "0123456789abcdef";
  char s[5] = {'0', 'x', kHex[v >> 4], kHex[v & 15u], 0};
  t_str(t, s);
}

static void send_frame(uint8_t type, const uint8_t* payload, size_t len) {
  const size_t n = mculab_frame_encode(type, payload, len, g.tx, sizeof g.tx);
  if (n > 0) (void)mculab_port_write(g.tx, n);
}

static void send_hello(void) {
  uint8_t* p = g.tx_payload;
  for (size_t i = 0; i < MCULAB_MAX_PAYLOAD; ++i) p[i] = 0;
  p[0] = MCULAB_RUNNER_MAJOR;
  p[1] = MCULAB_RUNNER_MINOR;
  p[2] = MCULAB_RUNNER_PATCH;
  p[3] = g.info.flags;
  mculab_put_u32(p + 4, g.info.clock_hz);
  p[8] = (uint8_t)g.info.timer_unit;
  p[9] = g.info.max_counters;
  mculab_put_u32(p + 12, g.info.workload_addr);
  mculab_put_u32(p + 16, (uint32_t)g.info.workload_max);
  mculab_put_u32(p + 20,
                 g.info.arena_bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)g.info.arena_bytes);
  for (size_t i = 0; i < 15 && g.info.port[i]; ++i) p[24 + i] = (uint8_t)g.info.port[i];
  for (size_t i = 0; i < 15 && g.info.cpu[i]; ++i) p[40 + i] = (uint8_t)g.info.cpu[i];
  size_t len = MCULAB_HELLO_FIXED_LEN;
  for (const char* c = g.info.counters; *c && len < MCULAB_MAX_PAYLOAD; ++c) p[len++] = (uint8_t)*c;
  send_frame(MCULAB_MSG_HELLO, p, len);
}

static void send_text(uint8_t type, const uint8_t* fixed, size_t fixed_len, const text* t) {
  uint8_t* p = g.tx_payload;
  size_t len = 0;
  for (; len < fixed_len; ++len) p[len] = fixed[len];
  for (size_t i = 0; i < t->n && len < MCULAB_MAX_PAYLOAD; ++i) p[len++] = (uint8_t)t->buf[i];
  send_frame(type, p, len);
}

static void send_error(uint16_t code, uint16_t case_index, const text* t) {
  uint8_t fixed[MCULAB_ERROR_FIXED_LEN];
  mculab_put_u16(fixed, code);
  mculab_put_u16(fixed + 2, case_index);
  send_text(MCULAB_MSG_ERROR, fixed, sizeof fixed, t);
}

static void send_error_str(uint16_t code, uint16_t case_index, const char* s) {
  text t = {.n = 0};
  t_str(&t, s);
  send_error(code, case_index, &t);
}

static void send_log(uint8_t level, const text* t) { send_text(MCULAB_MSG_LOG, &level, 1, t); }

static void send_done(uint16_t cases_run, uint16_t status) {
  uint8_t p[MCULAB_DONE_LEN];
  mculab_put_u16(p, cases_run);
  mculab_put_u16(p + 2, status);
  send_frame(MCULAB_MSG_DONE, p, sizeof p);
}

/* Reports a frame the runner could not use: an ERROR while idle (the agent waits for an answer),
 * a LOG warning during a run (the run goes on; only DONE's status says how it ended). */
static void report_bad_frame(const text* t) {
  if (g.running) {
    send_log(2, t);
  } else {
    send_error(MCULAB_ERR_BAD_FRAME, MCULAB_NO_CASE, t);
  }
}

/* Feeds one byte of the link; RX_FRAME when it completes a good agent -> runner frame (in
 * g.rx_type / g.rx_payload). */
static rx_result feed_byte(uint8_t b) {
  if (b != 0) {
    if (g.rx_discarding) return RX_NONE;
    if (g.rx_len == sizeof g.rx - 1) { /* no room left for a frame plus its delimiter */
      g.rx_discarding = 1;
      g.rx_len = 0;
      return RX_NONE;
    }
    g.rx[g.rx_len++] = b;
    return RX_NONE;
  }
  text t = {.n = 0};
  if (g.rx_discarding) {
    g.rx_discarding = 0;
    t_str(&t, "oversized frame from the agent dropped");
    report_bad_frame(&t);
    return RX_NONE;
  }
  if (g.rx_len == 0) return RX_NONE; /* a lone delimiter: allowed, resynchronises */
  const mculab_frame_status st =
      mculab_frame_decode(g.rx, g.rx_len, &g.rx_type, g.rx_payload, &g.rx_payload_len);
  g.rx_len = 0;
  if (st != MCULAB_FRAME_OK) {
    t_str(&t, "frame from the agent dropped: ");
    t_str(&t, mculab_frame_status_name(st));
    report_bad_frame(&t);
    return RX_NONE;
  }
  if (!mculab_msg_type_known(g.rx_type, 0)) {
    t_str(&t, "unknown frame type ");
    t_hex8(&t, g.rx_type);
    report_bad_frame(&t);
    return RX_NONE;
  }
  return RX_FRAME;
}

/* Blocks until a good frame arrives or the link closes. */
static rx_result receive_blocking(void) {
  for (;;) {
    const int b = mculab_port_read_byte();
    if (b < 0) return RX_CLOSED;
    if (feed_byte((uint8_t)b) == RX_FRAME) return RX_FRAME;
  }
}

/* Reads what is already there; RX_FRAME as soon as a frame completes. */
static rx_result receive_poll(void) {
  for (;;) {
    const int b = mculab_port_poll_byte();
    if (b < 0) return RX_NONE;
    if (feed_byte((uint8_t)b) == RX_FRAME) return RX_FRAME;
  }
}

/* Between iterations: 1 when the agent asked to abort. Other frames are ignored with a LOG. */
static int abort_requested(void) {
  while (receive_poll() == RX_FRAME) {
    if (g.rx_type == MCULAB_MSG_ABORT) return 1;
    text t = {.n = 0};
    t_str(&t, "ignored ");
    t_str(&t, mculab_msg_type_name(g.rx_type));
    t_str(&t, " during a run");
    send_log(2, &t);
  }
  return 0;
}

static void handle_configure(void) {
  if (g.rx_payload_len != MCULAB_CONFIGURE_LEN) {
    text t = {.n = 0};
    t_str(&t, "CONFIGURE payload is ");
    t_u64(&t, g.rx_payload_len);
    t_str(&t, " bytes, expected 16");
    send_error(MCULAB_ERR_BAD_FRAME, MCULAB_NO_CASE, &t);
    return;
  }
  const uint32_t iterations = mculab_get_u32(g.rx_payload);
  const uint32_t warmup = mculab_get_u32(g.rx_payload + 4);
  const uint32_t workload_len = mculab_get_u32(g.rx_payload + 8);
  const uint32_t counter_mask = mculab_get_u32(g.rx_payload + 12);
  g.configured = 0;
  if (iterations == 0) {
    send_error_str(MCULAB_ERR_BAD_PARAMS, MCULAB_NO_CASE, "CONFIGURE: iterations must be >= 1");
    return;
  }
  if (counter_mask != 0) {
    /* No port reads counters beyond the timer yet (port.h has no counter seam): any counter bit
     * asks for something this runner cannot count, and a made-up zero is never sent. */
    text t = {.n = 0};
    t_str(&t, "CONFIGURE: this runner cannot count the requested counters (mask ");
    t_u64(&t, counter_mask);
    t_str(&t, "); it has: ");
    t_str(&t, g.info.counters[0] ? g.info.counters : "the timer only");
    send_error(MCULAB_ERR_UNSUPPORTED_EVENT, MCULAB_NO_CASE, &t);
    return;
  }
  if (workload_len > g.info.workload_max) {
    text t = {.n = 0};
    t_str(&t, "CONFIGURE: workload of ");
    t_u64(&t, workload_len);
    t_str(&t, " bytes exceeds the workload region of ");
    t_u64(&t, g.info.workload_max);
    send_error(MCULAB_ERR_BAD_WORKLOAD, MCULAB_NO_CASE, &t);
    return;
  }
  g.iterations = iterations;
  g.warmup = warmup;
  g.workload_len = workload_len;
  g.counter_mask = counter_mask;
  g.configured = 1;
}

static uint64_t median_overhead(void) {
  uint64_t d[MCULAB_OVERHEAD_REGIONS];
  for (unsigned k = 0; k < MCULAB_OVERHEAD_REGIONS; ++k) {
    mculab_port_timer_align();
    const uint64_t t0 = mculab_port_timer_now();
    const uint64_t t1 = mculab_port_timer_now();
    d[k] = t1 - t0;
  }
  for (unsigned i = 1; i < MCULAB_OVERHEAD_REGIONS; ++i) { /* insertion sort */
    const uint64_t v = d[i];
    unsigned j = i;
    for (; j > 0 && d[j - 1] > v; --j) d[j] = d[j - 1];
    d[j] = v;
  }
  return d[MCULAB_OVERHEAD_REGIONS / 2 - 1]; /* the lower median: a reading that occurred */
}

static uint16_t workload_error_code(mculab_workload_status st) {
  return st == MCULAB_WORKLOAD_UNKNOWN_OP ? MCULAB_ERR_UNKNOWN_OP : MCULAB_ERR_BAD_WORKLOAD;
}

/* RUN: every case of the workload, then DONE. */
static void run_workload(void) {
  if (!g.configured) {
    send_error_str(MCULAB_ERR_BAD_STATE, MCULAB_NO_CASE, "RUN before a valid CONFIGURE");
    send_done(0, MCULAB_ERR_BAD_STATE);
    return;
  }
  if (g.info.workload_error != NULL || g.info.workload == NULL) {
    text t = {.n = 0};
    t_str(&t, "no workload: ");
    t_str(&t, g.info.workload_error ? g.info.workload_error : "this port has no workload region");
    send_error(MCULAB_ERR_BAD_WORKLOAD, MCULAB_NO_CASE, &t);
    send_done(0, MCULAB_ERR_BAD_WORKLOAD);
    return;
  }
  const size_t region = g.workload_len != 0 ? g.workload_len : g.info.workload_max;
  mculab_workload w;
  const mculab_workload_status ws = mculab_workload_parse(g.info.workload, region, &w);
  if (ws != MCULAB_WORKLOAD_OK) {
    text t = {.n = 0};
    t_str(&t, "workload rejected: ");
    t_str(&t, mculab_workload_status_name(ws));
    send_error(workload_error_code(ws), MCULAB_NO_CASE, &t);
    send_done(0, workload_error_code(ws));
    return;
  }
  const uint32_t total_len = mculab_get_u32(g.info.workload + 8);
  if (g.workload_len != 0 && total_len != g.workload_len) {
    text t = {.n = 0};
    t_str(&t, "workload header says ");
    t_u64(&t, total_len);
    t_str(&t, " bytes, CONFIGURE says ");
    t_u64(&t, g.workload_len);
    send_error(MCULAB_ERR_BAD_WORKLOAD, MCULAB_NO_CASE, &t);
    send_done(0, MCULAB_ERR_BAD_WORKLOAD);
    return;
  }

  g.running = 1;
  uint16_t cases_run = 0;
  uint16_t status = MCULAB_ERR_NONE;
  for (uint16_t i = 0; i < w.num_cases && status == MCULAB_ERR_NONE; ++i) {
    int64_t case_id = 0;
    int32_t params[MCULAB_MAX_PARAMS] = {0};
    mculab_workload_case(&w, i, &case_id, params);
    mculab_case* c = &g.current;
    const mculab_case_status cs =
        mculab_case_prepare(w.op, params, w.seed, g.info.arena, g.info.arena_bytes, c);
    if (cs != MCULAB_CASE_OK) {
      text t = {.n = 0};
      t_str(&t, "case ");
      t_i64(&t, case_id);
      if (cs == MCULAB_CASE_NO_MEMORY) {
        t_str(&t, ": tensors need ");
        t_u64(&t, mculab_case_arena_bytes(w.op, params));
        t_str(&t, " bytes, the arena has ");
        t_u64(&t, g.info.arena_bytes);
        status = MCULAB_ERR_NO_MEMORY;
      } else if (cs == MCULAB_CASE_UNKNOWN_OP) {
        t_str(&t, ": unknown op");
        status = MCULAB_ERR_UNKNOWN_OP;
      } else {
        t_str(&t, ": parameters out of range for the kernel");
        status = MCULAB_ERR_BAD_PARAMS;
      }
      send_error(status, i, &t);
      break;
    }
    uint8_t p[MCULAB_CASE_END_LEN];
    mculab_put_u16(p, i);
    mculab_put_u16(p + 2, 0);
    mculab_put_u64(p + 4, (uint64_t)case_id);
    send_frame(MCULAB_MSG_CASE_START, p, MCULAB_CASE_START_LEN);

    for (uint32_t k = 0; k < g.warmup && status == MCULAB_ERR_NONE; ++k) {
      mculab_case_invoke(c);
      if (abort_requested()) status = MCULAB_ERR_ABORTED;
    }
    for (uint32_t k = 0; k < g.iterations && status == MCULAB_ERR_NONE; ++k) {
      mculab_port_timer_align();
      const uint64_t t0 = mculab_port_timer_now();
      mculab_case_invoke(c);
      const uint64_t t1 = mculab_port_timer_now();
      uint8_t s[MCULAB_SAMPLE_FIXED_LEN];
      mculab_put_u16(s, i);
      s[2] = 0; /* num_counters */
      s[3] = 0;
      mculab_put_u32(s + 4, k);
      mculab_put_u64(s + 8, t1 - t0);
      send_frame(MCULAB_MSG_SAMPLE, s, sizeof s);
      if (abort_requested()) status = MCULAB_ERR_ABORTED;
    }
    if (status == MCULAB_ERR_ABORTED) {
      send_error_str(MCULAB_ERR_ABORTED, i, "aborted by the agent");
      break;
    }
    const uint64_t overhead = median_overhead();
    mculab_put_u16(p, i);
    mculab_put_u16(p + 2, 0);
    mculab_put_u32(p + 4, mculab_case_checksum(c));
    mculab_put_u64(p + 8, overhead);
    send_frame(MCULAB_MSG_CASE_END, p, MCULAB_CASE_END_LEN);
    ++cases_run;
  }
  g.running = 0;
  send_done(cases_run, status);
}

int mculab_runner_main(void) {
  for (size_t i = 0; i < sizeof g; ++i) ((volatile uint8_t*)&g)[i] = 0;
  mculab_port_init(&g.info);
  /* A lone delimiter first: whatever the link carried before (boot noise) ends there as one bad
   * frame instead of running into HELLO. */
  static const uint8_t kDelimiter = 0;
  (void)mculab_port_write(&kDelimiter, 1);
  send_hello();
  for (;;) {
    if (receive_blocking() == RX_CLOSED) return MCULAB_EXIT_LINK_CLOSED;
    switch (g.rx_type) {
      case MCULAB_MSG_CONFIGURE:
        handle_configure();
        break;
      case MCULAB_MSG_RUN:
        run_workload();
        return 0;
      case MCULAB_MSG_ABORT:
        send_error_str(MCULAB_ERR_ABORTED, MCULAB_NO_CASE, "aborted by the agent before RUN");
        send_done(0, MCULAB_ERR_ABORTED);
        return 0;
      default:
        break;
    }
  }
}
