/* The runner core: one session of the runner protocol (docs/runner-protocol.md) over the port
 * seam (port.h), running the built-in operator benchmarks or a runtime's workload
 * (mculab/runner.h). No heap: every buffer is a fixed-size static below. */
#include "mculab/runner.h"

#include <stdint.h>

#include "core.h"
#include "mculab/kernels_s8.h"
#include "mculab/ops.h"
#include "mculab/runner_protocol.h"
#include "mculab/workload.h"
#include "port.h"

#define MCULAB_OVERHEAD_REGIONS 8u
#define MCULAB_EXIT_LINK_CLOSED 2

typedef enum { RX_NONE, RX_FRAME, RX_CLOSED } rx_result;
typedef mculab_text text;

/* The counters CONFIGURE selected, grouped by unit; SAMPLE values are in counter index order,
 * which is unit order then event order, so each unit's values are contiguous from `first`. */
typedef struct {
  mculab_counter_unit* unit;
  uint8_t n;
  uint8_t first;
  uint16_t ids[MCULAB_MAX_COUNTERS];
} unit_selection;

static struct {
  mculab_port_info info;
  const mculab_workload_ops* ops; /* NULL: the built-in operator benchmarks */
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
  uint32_t iterations, warmup, workload_len, counter_mask, flags;
  unit_selection sel[MCULAB_MAX_UNITS];
  uint8_t num_sel, num_counters;
  int running;
  int in_session;
  uint16_t cases_run;  /* of the RUN in progress, for a fault's DONE */
  uint16_t open_case;  /* the case in progress, MCULAB_NO_CASE outside one */
  mculab_case current; /* built-in ops */
  char error_text[128];
} g;

void mculab_text_str(text* t, const char* s) {
  while (*s && t->n < sizeof t->buf) t->buf[t->n++] = *s++;
}

void mculab_text_u64(text* t, uint64_t v) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v != 0);
  while (n > 0 && t->n < sizeof t->buf) t->buf[t->n++] = digits[--n];
}

#define t_str mculab_text_str
#define t_u64 mculab_text_u64

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

static size_t put_name(uint8_t* p, const char* s, size_t width) {
  size_t i = 0;
  for (; s != NULL && s[i] != 0 && i + 1 < width; ++i) p[i] = (uint8_t)s[i];
  for (size_t k = i; k < width; ++k) p[k] = 0;
  return width;
}

static int unit_external(const mculab_counter_unit* u) {
  return (u->flags & MCULAB_UNIT_EXTERNAL) != 0;
}

/* The kernel set the workload asks for (MCULAB_WORKLOAD_REFERENCE_KERNELS), else the build's
 * fastest; selected before HELLO when the workload is already in place (QEMU's loader, the host
 * runner's file, a probe's write before reset), so HELLO names the set the cases will run, and
 * again at RUN from the workload then read. */
static void select_kernels(uint32_t workload_flags) {
  (void)mculab_kernels_select((workload_flags & MCULAB_WORKLOAD_REFERENCE_KERNELS) != 0
                                  ? MCULAB_KERNELS_REFERENCE
                                  : MCULAB_KERNELS_FAST);
}

static void select_kernels_from_region(void) {
  mculab_workload w;
  if (g.info.workload != NULL && g.info.workload_error == NULL &&
      mculab_workload_parse(g.info.workload, g.info.workload_max, &w) == MCULAB_WORKLOAD_OK) {
    select_kernels(w.flags);
  } else {
    select_kernels(0);
  }
}

/* Set by mculab_runner_names_kernel_set(); outside `g`, which each session clears. */
static int g_runtime_names_kernel_set;

void mculab_runner_names_kernel_set(void) { g_runtime_names_kernel_set = 1; }

/* HELLO's runtime for a runtime on mculab's kernels (the built-in ops, the TFLite runner):
 * `prefix` on the reference kernels, "<prefix>-<set>" on a fast set ("builtin-helium",
 * "tflite-dsp"), so the run's provenance names it. */
static const char* runtime_with_kernel_set(const char* prefix) {
  static char name[MCULAB_NAME_LEN];
  const char* set = mculab_kernels_name();
  size_t n = 0;
  while (prefix[n] != 0 && n + 1 < sizeof name) {
    name[n] = prefix[n];
    ++n;
  }
  if (set[0] != 'r' && n + 2 < sizeof name) { /* not "reference" */
    name[n++] = '-';
    for (const char* c = set; *c != 0 && n + 1 < sizeof name; ++c) name[n++] = *c;
  }
  name[n] = 0;
  return name;
}

static void send_hello(void) {
  uint8_t* p = g.tx_payload;
  for (size_t i = 0; i < MCULAB_MAX_PAYLOAD; ++i) p[i] = 0;
  p[0] = MCULAB_RUNNER_VERSION_MAJOR;
  p[1] = MCULAB_RUNNER_VERSION_MINOR;
  p[2] = MCULAB_RUNNER_VERSION_PATCH;
  p[3] = (uint8_t)(g.info.flags | (g.ops != NULL ? MCULAB_HELLO_CUSTOM_WORKLOAD : 0));
  mculab_put_u32(p + 4, g.info.clock_hz);
  p[8] = (uint8_t)g.info.timer_unit;
  mculab_put_u32(p + 12, g.info.workload_addr);
  mculab_put_u32(p + 16, (uint32_t)g.info.workload_max);
  mculab_put_u32(p + 20,
                 g.info.arena_bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)g.info.arena_bytes);
  put_name(p + 24, g.info.port, MCULAB_NAME_LEN);
  put_name(p + 40, g.info.cpu, MCULAB_NAME_LEN);
  const char* runtime = g.ops == NULL                ? runtime_with_kernel_set("builtin")
                        : g_runtime_names_kernel_set ? runtime_with_kernel_set(g.ops->name)
                                                     : g.ops->name;
  put_name(p + 56, runtime, MCULAB_NAME_LEN);
  size_t len = MCULAB_HELLO_FIXED_LEN;
  uint8_t units = 0;
  for (uint8_t u = 0; u < g.info.num_units && u < MCULAB_MAX_UNITS; ++u) {
    const mculab_counter_unit* unit = g.info.units[u];
    size_t names = 0;
    for (uint8_t e = 0; e < unit->num_events; ++e) {
      for (const char* c = unit->events[e].name; *c; ++c) ++names;
      names += e > 0;
    }
    if (names > 255u || len + MCULAB_HELLO_UNIT_FIXED_LEN + names > MCULAB_MAX_PAYLOAD) break;
    put_name(p + len, unit->name, MCULAB_NAME_LEN);
    p[len + 16] = unit->max_simultaneous;
    p[len + 17] = unit->flags;
    p[len + 18] = unit->num_events;
    p[len + 19] = (uint8_t)names;
    len += MCULAB_HELLO_UNIT_FIXED_LEN;
    for (uint8_t e = 0; e < unit->num_events; ++e) {
      if (e > 0) p[len++] = ',';
      for (const char* c = unit->events[e].name; *c; ++c) p[len++] = (uint8_t)*c;
    }
    ++units;
  }
  p[9] = units;
  p[10] = g.info.arena_memory;
  send_frame(MCULAB_MSG_HELLO, p, len);
  /* What HELLO has no field for (clock source, silicon revision, build options): one LOG line. */
  if (g.info.detail != NULL) mculab_core_log(1 /* info */, g.info.detail);
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

void mculab_core_log(uint8_t level, const char* s) {
  text t = {.n = 0};
  t_str(&t, s);
  send_log(level, &t);
}

void mculab_log(uint8_t level, const char* s) {
  if (g.in_session && s != NULL) mculab_core_log(level > 3 ? 3 : level, s);
}

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

/* ---- counters ---- */

/* The unit and event of counter index i (CONFIGURE counter_mask bit i); -1 when there is none. */
static int counter_at(uint32_t i, uint8_t* unit, uint8_t* event) {
  for (uint8_t u = 0; u < g.info.num_units; ++u) {
    const mculab_counter_unit* cu = g.info.units[u];
    if (unit_external(cu)) continue;
    if (i < cu->num_events) {
      *unit = u;
      *event = (uint8_t)i;
      return 0;
    }
    i -= cu->num_events;
  }
  return -1;
}

/* "cortex-m55-pmu (4 at once): instructions, loads, ...; ..." for error texts. */
static void t_catalogue(text* t) {
  int any = 0;
  for (uint8_t u = 0; u < g.info.num_units; ++u) {
    const mculab_counter_unit* cu = g.info.units[u];
    if (unit_external(cu)) continue;
    if (any) t_str(t, "; ");
    any = 1;
    t_str(t, cu->name);
    t_str(t, " (");
    t_u64(t, cu->max_simultaneous);
    t_str(t, " at once): ");
    for (uint8_t e = 0; e < cu->num_events; ++e) {
      if (e > 0) t_str(t, ", ");
      t_str(t, cu->events[e].name);
    }
  }
  if (!any) t_str(t, "the timer only");
}

/* Turns counter_mask into per-unit selections; 0, or an ERROR sent and -1. */
static int select_counters(uint32_t mask) {
  unit_selection sel[MCULAB_MAX_UNITS];
  uint8_t num_sel = 0, total = 0;
  for (uint32_t i = 0; i < 32; ++i) {
    if (!(mask & (1u << i))) continue;
    uint8_t u, e;
    if (counter_at(i, &u, &e) != 0) {
      text t = {.n = 0};
      t_str(&t, "CONFIGURE: counter ");
      t_u64(&t, i);
      t_str(&t, " does not exist; this runner counts: ");
      t_catalogue(&t);
      send_error(MCULAB_ERR_UNSUPPORTED_EVENT, MCULAB_NO_CASE, &t);
      return -1;
    }
    mculab_counter_unit* cu = g.info.units[u];
    unit_selection* s = num_sel > 0 && sel[num_sel - 1].unit == cu ? &sel[num_sel - 1] : NULL;
    if (s == NULL) {
      s = &sel[num_sel++];
      s->unit = cu;
      s->n = 0;
      s->first = total;
    }
    if (s->n == cu->max_simultaneous || total == MCULAB_MAX_COUNTERS) {
      text t = {.n = 0};
      t_str(&t, "CONFIGURE: ");
      t_str(&t, cu->name);
      t_str(&t, " counts at most ");
      t_u64(&t, total == MCULAB_MAX_COUNTERS ? MCULAB_MAX_COUNTERS : cu->max_simultaneous);
      t_str(&t, total == MCULAB_MAX_COUNTERS ? " counters in one pass" : " events at once");
      t_str(&t, ": split the events into passes");
      send_error(MCULAB_ERR_UNSUPPORTED_EVENT, MCULAB_NO_CASE, &t);
      return -1;
    }
    s->ids[s->n++] = cu->events[e].id;
    ++total;
  }
  for (uint8_t k = 0; k < num_sel; ++k) {
    if (sel[k].unit->select(sel[k].unit, sel[k].ids, sel[k].n) != 0) {
      text t = {.n = 0};
      t_str(&t, "CONFIGURE: ");
      t_str(&t, sel[k].unit->name);
      t_str(&t, " cannot count this selection");
      send_error(MCULAB_ERR_UNSUPPORTED_EVENT, MCULAB_NO_CASE, &t);
      return -1;
    }
  }
  for (uint8_t k = 0; k < num_sel; ++k) g.sel[k] = sel[k];
  g.num_sel = num_sel;
  g.num_counters = total;
  return 0;
}

static void counters_start(void) {
  for (uint8_t k = 0; k < g.num_sel; ++k) g.sel[k].unit->start(g.sel[k].unit);
}

static void counters_stop(void) {
  for (uint8_t k = g.num_sel; k > 0; --k) g.sel[k - 1].unit->stop(g.sel[k - 1].unit);
}

void mculab_core_read_counters(uint64_t* values) {
  for (uint8_t k = 0; k < g.num_sel; ++k) {
    g.sel[k].unit->read(g.sel[k].unit, values + g.sel[k].first);
  }
}

unsigned mculab_core_num_counters(void) { return g.num_counters; }

/* ---- CONFIGURE ---- */

static void handle_configure(void) {
  if (g.rx_payload_len != MCULAB_CONFIGURE_LEN) {
    text t = {.n = 0};
    t_str(&t, "CONFIGURE payload is ");
    t_u64(&t, g.rx_payload_len);
    t_str(&t, " bytes, expected ");
    t_u64(&t, MCULAB_CONFIGURE_LEN);
    send_error(MCULAB_ERR_BAD_FRAME, MCULAB_NO_CASE, &t);
    return;
  }
  const uint32_t iterations = mculab_get_u32(g.rx_payload);
  const uint32_t warmup = mculab_get_u32(g.rx_payload + 4);
  const uint32_t workload_len = mculab_get_u32(g.rx_payload + 8);
  const uint32_t counter_mask = mculab_get_u32(g.rx_payload + 12);
  const uint32_t flags = mculab_get_u32(g.rx_payload + 16);
  g.configured = 0;
  g.num_sel = 0;
  g.num_counters = 0;
  if (iterations == 0) {
    send_error_str(MCULAB_ERR_BAD_PARAMS, MCULAB_NO_CASE, "CONFIGURE: iterations must be >= 1");
    return;
  }
  if (flags & ~(uint32_t)MCULAB_CONFIGURE_KNOWN_FLAGS) {
    text t = {.n = 0};
    t_str(&t, "CONFIGURE: unknown flags ");
    t_u64(&t, flags & ~(uint32_t)MCULAB_CONFIGURE_KNOWN_FLAGS);
    send_error(MCULAB_ERR_BAD_PARAMS, MCULAB_NO_CASE, &t);
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
  if (select_counters(counter_mask) != 0) return;
  g.iterations = iterations;
  g.warmup = warmup;
  g.workload_len = workload_len;
  g.counter_mask = counter_mask;
  g.flags = flags;
  g.configured = 1;
}

/* ---- measuring ---- */

/* The built-in kernels report themselves as one operator each (index 0) in op profiles. */
static void builtin_op_names(uint16_t op, const char** type, const char** name) {
  switch (op) {
    case MCULAB_OP_CONV2D_S8:
      *type = "CONV_2D";
      *name = "conv2d_s8";
      return;
    case MCULAB_OP_FULLY_CONNECTED_S8:
      *type = "FULLY_CONNECTED";
      *name = "fully_connected_s8";
      return;
    case MCULAB_OP_DEPTHWISE_CONV2D_S8:
      *type = "DEPTHWISE_CONV_2D";
      *name = "depthwise_conv2d_s8";
      return;
    default:
      *type = "CALIBRATE";
      *name = "calibrate";
      return;
  }
}

static void reload_current(void) {
  if (g.ops != NULL && g.ops->reload != NULL) g.ops->reload(g.ops->user);
}

static void invoke_current(void) {
  if (g.ops != NULL) {
    g.ops->invoke(g.ops->user);
  } else if (g.flags & MCULAB_CONFIGURE_OP_PROFILE) {
    const char *type, *name;
    builtin_op_names(g.current.op, &type, &name);
    mculab_op_begin(0, type, name);
    mculab_case_invoke(&g.current);
    mculab_op_end();
  } else {
    mculab_case_invoke(&g.current);
  }
}

/* One measured region: the timer and the selected counters around `body` (NULL: the empty
 * region), between the QEMU plugin's markers. */
static uint64_t measure(uint32_t kind, uint16_t case_index, void (*body)(void),
                        uint64_t* counters) {
  mculab_port_timer_align();
  mculab_marker_begin(kind, case_index);
  counters_start();
  const uint64_t t0 = mculab_port_timer_now();
  if (body != NULL) body();
  const uint64_t t1 = mculab_port_timer_now();
  counters_stop();
  mculab_marker_end(kind, case_index);
  mculab_core_read_counters(counters);
  return t1 - t0;
}

/* The empty region, 8 times; the lower median of the timer (a reading that occurred) and the
 * counters of that same region. */
static uint64_t measure_overhead(uint16_t case_index, uint64_t* counters) {
  uint64_t d[MCULAB_OVERHEAD_REGIONS];
  uint64_t c[MCULAB_OVERHEAD_REGIONS][MCULAB_MAX_COUNTERS];
  unsigned order[MCULAB_OVERHEAD_REGIONS];
  for (unsigned k = 0; k < MCULAB_OVERHEAD_REGIONS; ++k) {
    d[k] = measure(MCULAB_MARKER_EMPTY, case_index, NULL, c[k]);
    order[k] = k;
  }
  for (unsigned i = 1; i < MCULAB_OVERHEAD_REGIONS; ++i) { /* insertion sort of the indices */
    const unsigned v = order[i];
    unsigned j = i;
    for (; j > 0 && d[order[j - 1]] > d[v]; --j) order[j] = order[j - 1];
    order[j] = v;
  }
  const unsigned median = order[MCULAB_OVERHEAD_REGIONS / 2 - 1];
  for (unsigned i = 0; i < g.num_counters; ++i) counters[i] = c[median][i];
  return d[median];
}

/* ---- cases ---- */

static uint16_t workload_error_code(mculab_workload_status st) {
  return st == MCULAB_WORKLOAD_UNKNOWN_OP ? MCULAB_ERR_UNKNOWN_OP : MCULAB_ERR_BAD_WORKLOAD;
}

/* Prepares case i: 0, or an error code with its text in t. */
static uint16_t prepare_case(const mculab_workload* w, uint16_t i, int64_t* case_id, text* t) {
  int32_t params[MCULAB_MAX_PARAMS] = {0};
  mculab_workload_case(w, i, case_id, params);
  if (g.ops != NULL) {
    g.error_text[0] = 0;
    mculab_case_info info = {
        .case_index = i,
        .case_id = *case_id,
        .seed = w->seed,
        .op = w->op,
        .params = NULL,
        .num_params = 0,
        .blob = w->blob,
        .blob_len = w->blob_len,
        .arena = g.info.arena,
        .arena_bytes = g.info.arena_bytes,
        .error_text = g.error_text,
        .error_text_len = sizeof g.error_text,
    };
    const uint16_t code = g.ops->prepare(g.ops->user, &info);
    if (code != MCULAB_ERR_NONE) {
      g.error_text[sizeof g.error_text - 1] = 0;
      t_str(t, "case ");
      t_i64(t, *case_id);
      t_str(t, ": ");
      t_str(t, g.error_text[0] ? g.error_text : mculab_error_name(code));
    }
    return code;
  }
  mculab_case* c = &g.current;
  const mculab_case_status cs =
      mculab_case_prepare(w->op, params, w->seed, g.info.arena, g.info.arena_bytes, c);
  if (cs == MCULAB_CASE_OK) {
    mculab_memory_report(
        MCULAB_MEMORY_ARENA, c->arena_used > UINT32_MAX ? UINT32_MAX : (uint32_t)c->arena_used,
        g.info.arena_bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)g.info.arena_bytes);
    /* The fast conv kernels' static scratch (im2col rows, widened inputs, filter sums): the
     * reference kernels use none. */
    if (mculab_kernels_name()[0] != 'r' &&
        (w->op == MCULAB_OP_CONV2D_S8 || w->op == MCULAB_OP_DEPTHWISE_CONV2D_S8 ||
         w->op == MCULAB_OP_FULLY_CONNECTED_S8)) {
      mculab_memory_report(MCULAB_MEMORY_SCRATCH, MCULAB_KERNEL_SCRATCH_BYTES,
                           MCULAB_KERNEL_SCRATCH_BYTES);
    }
    return MCULAB_ERR_NONE;
  }
  t_str(t, "case ");
  t_i64(t, *case_id);
  if (cs == MCULAB_CASE_NO_MEMORY) {
    t_str(t, ": tensors need ");
    t_u64(t, mculab_case_arena_bytes(w->op, params));
    t_str(t, " bytes, the arena has ");
    t_u64(t, g.info.arena_bytes);
    return MCULAB_ERR_NO_MEMORY;
  }
  if (cs == MCULAB_CASE_UNKNOWN_OP) {
    t_str(t, ": unknown op");
    return MCULAB_ERR_UNKNOWN_OP;
  }
  t_str(t, ": parameters out of range for the kernel");
  return MCULAB_ERR_BAD_PARAMS;
}

static uint32_t case_checksum(void) {
  if (g.ops != NULL) return g.ops->checksum != NULL ? g.ops->checksum(g.ops->user) : 0;
  return mculab_case_checksum(&g.current);
}

/* OP_SAMPLE per op and the profiler's complaints, before CASE_END. */
static void send_op_samples(uint16_t case_index) {
  for (unsigned i = 0; i < mculab_profile_num_ops(); ++i) {
    const size_t len = mculab_profile_op_payload(i, case_index, g.tx_payload);
    send_frame(MCULAB_MSG_OP_SAMPLE, g.tx_payload, len);
  }
  if (mculab_profile_dropped() > 0 || mculab_profile_unmatched_ends() > 0) {
    text t = {.n = 0};
    t_str(&t, "op profile: ");
    t_u64(&t, mculab_profile_dropped());
    t_str(&t, " op calls beyond ");
    t_u64(&t, MCULAB_MAX_OPS);
    t_str(&t, " ops or 4 levels not reported, ");
    t_u64(&t, mculab_profile_unmatched_ends());
    t_str(&t, " mculab_op_end() without a begin");
    send_log(2, &t);
  }
}

static void send_memory(uint16_t case_index) {
  if (g.info.stack_low != NULL) {
    mculab_memory_report(MCULAB_MEMORY_STACK,
                         mculab_memory_stack_used(g.info.stack_low, g.info.stack_bytes),
                         (uint32_t)g.info.stack_bytes);
  }
  const size_t len = mculab_memory_payload(case_index, g.tx_payload);
  send_frame(MCULAB_MSG_MEMORY, g.tx_payload, len);
  if (mculab_memory_dropped() > 0) {
    text t = {.n = 0};
    t_str(&t, "memory report: ");
    t_u64(&t, mculab_memory_dropped());
    t_str(&t, " reports of categories beyond 16 dropped");
    send_log(2, &t);
  }
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
  if ((w.op == MCULAB_OP_CUSTOM) != (g.ops != NULL)) {
    text t = {.n = 0};
    if (g.ops != NULL) {
      t_str(&t, "this runner runs its own runtime (");
      t_str(&t, g.ops->name);
      t_str(&t, ") and takes a custom workload (op 65535), not op ");
      t_u64(&t, w.op);
    } else {
      t_str(&t,
            "a custom workload (op 65535) needs a runner built with its runtime; this is the "
            "generic runner (built-in ops)");
    }
    send_error(MCULAB_ERR_UNKNOWN_OP, MCULAB_NO_CASE, &t);
    send_done(0, MCULAB_ERR_UNKNOWN_OP);
    return;
  }

  select_kernels(w.flags);
  g.running = 1;
  g.cases_run = 0;
  mculab_profile_configure((g.flags & MCULAB_CONFIGURE_OP_PROFILE) != 0);
  uint16_t cases_run = 0;
  uint16_t status = MCULAB_ERR_NONE;
  uint64_t counters[MCULAB_MAX_COUNTERS];
  for (uint16_t i = 0; i < w.num_cases && status == MCULAB_ERR_NONE; ++i) {
    if (g.flags & MCULAB_CONFIGURE_MEMORY) {
      mculab_memory_stack_paint(g.info.stack_low, g.info.stack_bytes);
    }
    mculab_profile_case_begin(g.num_counters);
    g.open_case = i;
    int64_t case_id = 0;
    text why = {.n = 0};
    status = prepare_case(&w, i, &case_id, &why);
    if (status != MCULAB_ERR_NONE) {
      send_error(status, i, &why);
      break;
    }
    uint8_t p[MCULAB_CASE_START_LEN];
    mculab_put_u16(p, i);
    mculab_put_u16(p + 2, 0);
    mculab_put_u64(p + 4, (uint64_t)case_id);
    send_frame(MCULAB_MSG_CASE_START, p, MCULAB_CASE_START_LEN);

    for (uint32_t k = 0; k < g.warmup && status == MCULAB_ERR_NONE; ++k) {
      reload_current();
      mculab_profile_warmup(1);
      invoke_current();
      mculab_profile_warmup(0);
      if (abort_requested()) status = MCULAB_ERR_ABORTED;
    }
    for (uint32_t k = 0; k < g.iterations && status == MCULAB_ERR_NONE; ++k) {
      reload_current();
      mculab_profile_iteration_begin();
      const uint64_t elapsed = measure(MCULAB_MARKER_ITERATION, i, invoke_current, counters);
      mculab_profile_iteration_end();
      uint8_t* s = g.tx_payload;
      mculab_put_u16(s, i);
      s[2] = g.num_counters;
      s[3] = 0;
      mculab_put_u32(s + 4, k);
      mculab_put_u64(s + 8, elapsed);
      for (uint8_t c = 0; c < g.num_counters; ++c) mculab_put_u64(s + 16 + 8 * c, counters[c]);
      send_frame(MCULAB_MSG_SAMPLE, s, MCULAB_SAMPLE_FIXED_LEN + 8u * g.num_counters);
      if (abort_requested()) status = MCULAB_ERR_ABORTED;
    }
    if (status == MCULAB_ERR_ABORTED) {
      send_error_str(MCULAB_ERR_ABORTED, i, "aborted by the agent");
      break;
    }
    const uint32_t checksum = case_checksum();
    const uint64_t overhead = measure_overhead(i, counters);
    if (g.flags & MCULAB_CONFIGURE_OP_PROFILE) send_op_samples(i);
    if (g.flags & MCULAB_CONFIGURE_MEMORY) send_memory(i);
    uint8_t* e = g.tx_payload;
    mculab_put_u16(e, i);
    e[2] = g.num_counters;
    e[3] = 0;
    mculab_put_u32(e + 4, checksum);
    mculab_put_u64(e + 8, overhead);
    for (uint8_t c = 0; c < g.num_counters; ++c) {
      mculab_put_u64(e + MCULAB_CASE_END_FIXED_LEN + 8 * c, counters[c]);
    }
    send_frame(MCULAB_MSG_CASE_END, e, MCULAB_CASE_END_FIXED_LEN + 8u * g.num_counters);
    ++cases_run;
    g.cases_run = cases_run;
    g.open_case = MCULAB_NO_CASE;
  }
  g.running = 0;
  g.open_case = MCULAB_NO_CASE;
  send_done(cases_run, status);
}

void mculab_core_fault(const char* what) {
  if (!g.in_session) return; /* before HELLO nobody listens: the agent's HELLO timeout reports it */
  g.in_session = 0;          /* a fault while reporting this one must not report again */
  /* A lone delimiter ends whatever frame the fault interrupted, as one bad frame. */
  static const uint8_t kDelimiter = 0;
  (void)mculab_port_write(&kDelimiter, 1);
  send_error_str(MCULAB_ERR_FAULT, g.running ? g.open_case : MCULAB_NO_CASE, what);
  send_done(g.cases_run, MCULAB_ERR_FAULT);
}

int mculab_core_run(const mculab_workload_ops* ops) {
  for (size_t i = 0; i < sizeof g; ++i) ((volatile uint8_t*)&g)[i] = 0;
  g.ops = ops;
  g.open_case = MCULAB_NO_CASE;
  mculab_port_init(&g.info);
  mculab_memory_session_begin();
  mculab_memory_stack_paint(g.info.stack_low, g.info.stack_bytes);
  g.in_session = 1;
  /* A lone delimiter first: whatever the link carried before (boot noise) ends there as one bad
   * frame instead of running into HELLO. */
  static const uint8_t kDelimiter = 0;
  (void)mculab_port_write(&kDelimiter, 1);
  select_kernels_from_region();
  send_hello();
  for (;;) {
    if (receive_blocking() == RX_CLOSED) {
      g.in_session = 0;
      return MCULAB_EXIT_LINK_CLOSED;
    }
    switch (g.rx_type) {
      case MCULAB_MSG_CONFIGURE:
        handle_configure();
        break;
      case MCULAB_MSG_RUN:
        run_workload();
        g.in_session = 0;
        return 0;
      case MCULAB_MSG_ABORT:
        send_error_str(MCULAB_ERR_ABORTED, MCULAB_NO_CASE, "aborted by the agent before RUN");
        send_done(0, MCULAB_ERR_ABORTED);
        g.in_session = 0;
        return 0;
      default:
        break;
    }
  }
}
