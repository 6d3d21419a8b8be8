/* Per-operator profiles (mculab_op_begin/mculab_op_end, mculab/runner.h): fixed tables, no heap.
 * An op's figures are its end minus its begin reading of the timer and of each selected counter,
 * so they include half of the profiler's own reads; nested ops are included in their parents. */
#include <stdint.h>

#include "core.h"
#include "mculab/runner.h"
#include "port.h"

#define METRICS (1u + MCULAB_MAX_COUNTERS)

typedef struct {
  uint16_t index;
  uint8_t unclosed;
  char type[MCULAB_NAME_LEN];
  char name[MCULAB_OP_NAME_LEN];
  uint32_t count;
  uint64_t sum[METRICS], min[METRICS], max[METRICS];
} op_entry;

typedef struct {
  op_entry* entry; /* NULL: the op did not fit the table, its end is ignored */
  uint64_t t0;
  uint64_t v0[MCULAB_MAX_COUNTERS];
} open_op;

static struct {
  int enabled;   /* CONFIGURE asked for op profiles */
  int measuring; /* inside a measured iteration */
  int warming;   /* inside a warm-up iteration: ops are entered in the table, not measured */
  unsigned num_counters;
  op_entry ops[MCULAB_MAX_OPS];
  unsigned num_ops;
  open_op stack[MCULAB_MAX_OP_DEPTH];
  unsigned depth;
  unsigned too_deep; /* begins beyond MCULAB_MAX_OP_DEPTH still waiting for their end */
  unsigned dropped;
  unsigned unmatched_ends;
} p;

static void copy_name(char* dst, size_t width, const char* src) {
  size_t i = 0;
  for (; src != NULL && src[i] != 0 && i + 1 < width; ++i) dst[i] = src[i];
  for (; i < width; ++i) dst[i] = 0;
}

static op_entry* find_or_add(uint16_t index, const char* type, const char* name) {
  for (unsigned i = 0; i < p.num_ops; ++i) {
    if (p.ops[i].index == index) return &p.ops[i];
  }
  if (p.num_ops == MCULAB_MAX_OPS) return NULL;
  op_entry* e = &p.ops[p.num_ops++];
  e->index = index;
  e->unclosed = 0;
  copy_name(e->type, sizeof e->type, type);
  copy_name(e->name, sizeof e->name, name);
  e->count = 0;
  for (unsigned m = 0; m < METRICS; ++m) {
    e->sum[m] = 0;
    e->min[m] = UINT64_MAX;
    e->max[m] = 0;
  }
  return e;
}

void mculab_profile_configure(int enabled) { p.enabled = enabled; }

void mculab_profile_case_begin(unsigned num_counters) {
  p.num_counters = num_counters;
  p.num_ops = 0;
  p.depth = 0;
  p.too_deep = 0;
  p.dropped = 0;
  p.unmatched_ends = 0;
  p.measuring = 0;
}

void mculab_profile_iteration_begin(void) { p.measuring = p.enabled; }

void mculab_profile_warmup(int on) { p.warming = on && p.enabled; }

void mculab_profile_iteration_end(void) {
  p.measuring = 0;
  for (unsigned d = 0; d < p.depth; ++d) {
    if (p.stack[d].entry != NULL) p.stack[d].entry->unclosed = 1;
  }
  p.depth = 0;
  p.too_deep = 0;
}

void mculab_op_begin(uint16_t index, const char* type, const char* name) {
  if (!p.measuring) {
    /* Entering the ops during warm-up keeps that first-time cost out of the measured iterations. */
    if (p.warming) (void)find_or_add(index, type, name);
    return;
  }
  if (p.depth == MCULAB_MAX_OP_DEPTH) {
    ++p.too_deep;
    ++p.dropped;
    return;
  }
  open_op* o = &p.stack[p.depth++];
  o->entry = find_or_add(index, type, name);
  if (o->entry == NULL) ++p.dropped;
  mculab_marker_begin(MCULAB_MARKER_OP, index);
  mculab_core_read_counters(o->v0);
  o->t0 = mculab_port_timer_now();
}

void mculab_op_end(void) {
  if (!p.measuring) return;
  const uint64_t t1 = mculab_port_timer_now();
  if (p.too_deep > 0) {
    --p.too_deep;
    return;
  }
  if (p.depth == 0) {
    ++p.unmatched_ends;
    return;
  }
  uint64_t v1[MCULAB_MAX_COUNTERS];
  mculab_core_read_counters(v1);
  open_op* o = &p.stack[--p.depth];
  op_entry* e = o->entry;
  if (e == NULL) return;
  mculab_marker_end(MCULAB_MARKER_OP, e->index);
  ++e->count;
  for (unsigned m = 0; m <= p.num_counters; ++m) {
    const uint64_t v = m == 0 ? t1 - o->t0 : v1[m - 1] - o->v0[m - 1];
    e->sum[m] += v;
    if (v < e->min[m]) e->min[m] = v;
    if (v > e->max[m]) e->max[m] = v;
  }
}

unsigned mculab_profile_num_ops(void) { return p.num_ops; }
unsigned mculab_profile_dropped(void) { return p.dropped; }
unsigned mculab_profile_unmatched_ends(void) { return p.unmatched_ends; }

size_t mculab_profile_op_payload(unsigned i, uint16_t case_index, uint8_t* out) {
  const op_entry* e = &p.ops[i];
  mculab_put_u16(out, case_index);
  mculab_put_u16(out + 2, e->index);
  mculab_put_u32(out + 4, e->count);
  out[8] = (uint8_t)p.num_counters;
  out[9] = e->unclosed ? MCULAB_OP_UNCLOSED : 0;
  mculab_put_u16(out + 10, 0);
  for (unsigned k = 0; k < MCULAB_NAME_LEN; ++k) out[12 + k] = (uint8_t)e->type[k];
  for (unsigned k = 0; k < MCULAB_OP_NAME_LEN; ++k) out[28 + k] = (uint8_t)e->name[k];
  size_t len = MCULAB_OP_SAMPLE_FIXED_LEN;
  for (unsigned m = 0; m <= p.num_counters; ++m) {
    const int none = e->count == 0; /* an op that never closed: no min to report */
    mculab_put_u64(out + len, e->sum[m]);
    mculab_put_u64(out + len + 8, none ? 0 : e->min[m]);
    mculab_put_u64(out + len + 16, e->max[m]);
    len += MCULAB_OP_SAMPLE_METRIC_LEN;
  }
  return len;
}
