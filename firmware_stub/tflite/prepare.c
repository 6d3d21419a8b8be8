/* Preparing a loaded model: each operator's kernel checks its shapes, types and quantization the
 * way TFLite's Prepare functions check them and computes its parameters as TFLite computes them
 * (ops/), then the arena is planned and laid out: the plan (tensors and each operator's scratch,
 * planner.c) from the arena's first aligned byte, then each kernel's persistent data, then the
 * variable tensors. */
#include <stdint.h>

#include "mculab/tflite.h"
#include "ops/ops.h"
#include "tflite_internal.h"

static uint64_t align_up(uint64_t v) {
  return (v + MCULAB_TFL_ALIGN - 1u) & ~(uint64_t)(MCULAB_TFL_ALIGN - 1u);
}

mculab_tfl_status mculab_tfl_prepare(mculab_tfl_model* m, uint8_t* arena, size_t arena_len) {
  m->prepared = 0;
  m->arena = NULL;
  m->arena_len = 0;
  m->planned = NULL;
  m->scratch = NULL;
  if (m->num_ops == 0) {
    return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED, "no model loaded", -1, NULL);
  }
  uint64_t persistent = 0, scratch = 0;
  for (uint32_t i = 0; i < m->num_ops; ++i) {
    mculab_tfl_op* op = &m->ops[i];
    mculab_tfl_ctx c = {m, i, op};
    op->macs = 0;
    op->persistent_bytes = op->scratch_bytes = 0;
    for (uint32_t k = 0; k <= op->num_inputs; ++k) {
      const int16_t t = k < op->num_inputs ? op->inputs[k] : op->output;
      if (t >= 0 && m->tensors[t].elements == 0) {
        return mculab_tfl_bad(&c, MCULAB_TFL_UNSUPPORTED, "an empty tensor (a dimension of 0)");
      }
    }
    const mculab_tfl_status st = op->kernel->prepare(&c);
    if (st != MCULAB_TFL_OK) return st;
    persistent += align_up(op->persistent_bytes);
    if (op->scratch_bytes > scratch) scratch = op->scratch_bytes;
  }
  for (uint32_t i = 0; i < m->num_tensors; ++i) {
    if (m->tensors[i].is_variable) persistent += align_up(m->tensors[i].bytes);
  }
  mculab_tfl_plan_arena(m);
  m->plan.persistent_bytes = persistent > UINT32_MAX ? UINT32_MAX : (uint32_t)persistent;
  m->plan.scratch_bytes = (uint32_t)scratch;
  if (m->plan.naive_bytes >= 0x7FFFFFFFu || persistent >= 0x7FFFFFFFu) {
    return mculab_tfl_fail(m, MCULAB_TFL_TOO_LARGE, "the activations need over 2 GiB", -1, NULL);
  }
  const uintptr_t base = (uintptr_t)arena;
  const uint64_t pad = (MCULAB_TFL_ALIGN - (base % MCULAB_TFL_ALIGN)) % MCULAB_TFL_ALIGN;
  const uint64_t need = pad + (uint64_t)m->plan.arena_bytes + persistent;
  if (arena == NULL || need > (uint64_t)arena_len) {
    return mculab_tfl_fail2(m, MCULAB_TFL_NO_MEMORY, "the arena of ", (int64_t)arena_len,
                            " bytes is smaller than the plan: ", (int64_t)need, " bytes");
  }
  uint8_t* planned = arena + pad;
  uint8_t* at = planned + m->plan.arena_bytes;
  for (uint32_t i = 0; i < m->num_ops; ++i) {
    mculab_tfl_op* op = &m->ops[i];
    if (op->persistent_bytes == 0 || op->kernel->bind == NULL) continue;
    mculab_tfl_ctx c = {m, i, op};
    const mculab_tfl_status st = op->kernel->bind(&c, at);
    if (st != MCULAB_TFL_OK) return st;
    at += align_up(op->persistent_bytes);
  }
  for (uint32_t i = 0; i < m->num_tensors; ++i) {
    mculab_tfl_tensor* t = &m->tensors[i];
    t->data = NULL;
    if (t->is_planned) {
      t->data = planned + t->arena_offset;
    } else if (t->is_variable) {
      t->data = at;
      at += align_up(t->bytes);
    }
  }
  m->planned = planned;
  m->arena = arena;
  m->arena_len = (uint32_t)(arena_len > UINT32_MAX ? UINT32_MAX : arena_len);
  m->prepared = 1;
  return MCULAB_TFL_OK;
}
