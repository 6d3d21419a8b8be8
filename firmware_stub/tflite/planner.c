/* The arena planner: TFLite Micro's GreedyMemoryPlanner with its lifetime rules
 * (micro_allocation_info.cc), so a model's arena here is the "head" TFLite Micro plans for it.
 * The buffers: every tensor an operator writes or reads that is neither a constant nor a variable
 * (variables live with the persistent data, as TFLite Micro keeps them in its tail), from the
 * operator that writes it (the graph's inputs: from the start) to the last that reads it (the
 * graph's outputs: to the end), and each operator's scratch for that operator alone. Each buffer's
 * size is rounded up to MCULAB_TFL_ALIGN (16, TFLite Micro's buffer alignment). Largest first
 * (ties in tensor order, the scratch buffers after the tensors), each goes to the lowest offset
 * where it overlaps no placed buffer whose lifetime overlaps its own. */
#include <stdint.h>

#include "mculab/tflite.h"
#include "tflite_internal.h"

#define MAX_BUFFERS (MCULAB_TFL_MAX_TENSORS + MCULAB_TFL_MAX_OPERATORS)

static uint32_t align_up(uint32_t v) {
  return (v + MCULAB_TFL_ALIGN - 1u) & ~(MCULAB_TFL_ALIGN - 1u);
}

/* Buffer b: a tensor for b < num_tensors, else operator b - num_tensors's scratch. */
typedef struct {
  uint32_t size;
  int16_t first, last;
  uint32_t* offset;
} buffer;

static buffer buffer_at(mculab_tfl_model* m, unsigned b) {
  buffer out;
  if (b < m->num_tensors) {
    mculab_tfl_tensor* t = &m->tensors[b];
    out.size = align_up(t->bytes);
    out.first = t->first_use;
    out.last = t->last_use;
    out.offset = &t->arena_offset;
  } else {
    mculab_tfl_op* op = &m->ops[b - m->num_tensors];
    out.size = align_up(op->scratch_bytes);
    out.first = out.last = (int16_t)(b - m->num_tensors);
    out.offset = &op->scratch_offset;
  }
  return out;
}

static int planned(const mculab_tfl_model* m, unsigned b) {
  if (b < m->num_tensors) return m->tensors[b].is_planned;
  return m->ops[b - m->num_tensors].scratch_bytes != 0;
}

void mculab_tfl_plan_arena(mculab_tfl_model* m) {
  uint16_t order[MAX_BUFFERS]; /* by size, largest first */
  unsigned n = 0;
  uint64_t naive = 0;
  const unsigned count = m->num_tensors + m->num_ops;
  for (unsigned b = 0; b < count; ++b) {
    if (!planned(m, b)) continue;
    const uint32_t size = buffer_at(m, b).size;
    naive += size;
    unsigned at = n++;
    while (at > 0 && buffer_at(m, order[at - 1]).size < size) {
      order[at] = order[at - 1];
      --at;
    }
    order[at] = (uint16_t)b;
  }
  uint16_t placed[MAX_BUFFERS]; /* by offset */
  unsigned num_placed = 0;
  uint32_t high = 0;
  for (unsigned k = 0; k < n; ++k) {
    const buffer t = buffer_at(m, order[k]);
    uint32_t offset = 0;
    for (unsigned j = 0; j < num_placed; ++j) {
      const buffer o = buffer_at(m, placed[j]);
      if (o.first > t.last || t.first > o.last) continue; /* never live together */
      if (*o.offset >= offset + t.size) break;            /* the gap before o holds t */
      if (*o.offset + o.size > offset) offset = *o.offset + o.size;
    }
    *t.offset = offset;
    if (offset + t.size > high) high = offset + t.size;
    unsigned at = num_placed++;
    while (at > 0 && *buffer_at(m, placed[at - 1]).offset > offset) {
      placed[at] = placed[at - 1];
      --at;
    }
    placed[at] = order[k];
  }
  m->plan.arena_bytes = high;
  m->plan.naive_bytes = naive > UINT32_MAX ? UINT32_MAX : (uint32_t)naive;
}
