/* The arena planner: TFLite Micro's GreedyMemoryPlanner in spirit. Tensors that operators read or
 * write live from the operator that writes them (the graph's input: from the first) to the last
 * that reads them (the output: to the end). Largest first, each goes to the lowest offset where
 * it overlaps no placed tensor whose lifetime overlaps its own. */
#include <stdint.h>

#include "mculab/tflite.h"
#include "tflite_internal.h"

static uint32_t align_up(uint32_t v) {
  return (v + MCULAB_TFL_ALIGN - 1u) & ~(MCULAB_TFL_ALIGN - 1u);
}

static int lifetimes_overlap(const mculab_tfl_tensor* a, const mculab_tfl_tensor* b) {
  return a->first_use <= b->last_use && b->first_use <= a->last_use;
}

void mculab_tfl_plan_arena(mculab_tfl_model* m) {
  uint16_t order[MCULAB_TFL_MAX_TENSORS];
  unsigned n = 0;
  uint64_t naive = 0;
  for (unsigned i = 0; i < m->num_tensors; ++i) {
    if (!m->tensors[i].is_planned) continue;
    naive += align_up(m->tensors[i].bytes);
    /* Insertion by size, largest first; ties keep the tensor order (a stable plan). */
    unsigned at = n++;
    while (at > 0 && m->tensors[order[at - 1]].bytes < m->tensors[i].bytes) {
      order[at] = order[at - 1];
      --at;
    }
    order[at] = (uint16_t)i;
  }
  uint16_t placed[MCULAB_TFL_MAX_TENSORS]; /* by offset */
  unsigned num_placed = 0;
  uint32_t high = 0;
  for (unsigned k = 0; k < n; ++k) {
    mculab_tfl_tensor* t = &m->tensors[order[k]];
    const uint32_t size = align_up(t->bytes);
    uint32_t offset = 0;
    for (unsigned j = 0; j < num_placed; ++j) {
      const mculab_tfl_tensor* o = &m->tensors[placed[j]];
      if (!lifetimes_overlap(t, o)) continue;
      if (o->arena_offset >= offset + size) break; /* the gap before o holds t */
      const uint32_t end = align_up(o->arena_offset + o->bytes);
      if (end > offset) offset = end;
    }
    t->arena_offset = offset;
    if (offset + size > high) high = offset + size;
    unsigned at = num_placed++;
    while (at > 0 && m->tensors[placed[at - 1]].arena_offset > offset) {
      placed[at] = placed[at - 1];
      --at;
    }
    placed[at] = order[k];
  }
  m->plan.arena_bytes = high;
  m->plan.naive_bytes = naive > UINT32_MAX ? UINT32_MAX : (uint32_t)naive;
}
