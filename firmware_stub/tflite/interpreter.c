/* Running a prepared model: the operators in the model's order, each its kernel's invoke (ops/)
 * inside an op region (mculab_tfl_hooks: the runner passes mculab_op_begin/mculab_op_end); the
 * graph's inputs and outputs. */
#include <stdint.h>

#include "mculab/runner_protocol.h"
#include "mculab/tflite.h"
#include "ops/ops.h"
#include "tflite_internal.h"

mculab_tfl_status mculab_tfl_invoke(mculab_tfl_model* m, const mculab_tfl_hooks* hooks) {
  if (!m->prepared) return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED, "not prepared", -1, NULL);
  /* Every inference starts from reset state (TFLite Micro's ResetVariableTensors: an int8
   * variable's bytes set to its zero point, any other's to 0), so the same input always gives the
   * same output, however many inferences ran before. */
  for (uint32_t t = 0; t < m->num_tensors; ++t) {
    const mculab_tfl_tensor* x = &m->tensors[t];
    if (!x->is_variable) continue;
    const uint8_t fill = x->type == MCULAB_TFL_INT8 ? (uint8_t)x->zero_point : 0u;
    uint8_t* d = x->data;
    const uint32_t n = x->bytes;
    for (uint32_t k = 0; k < n; ++k) d[k] = fill; /* a memset to the compiler */
  }
  for (uint16_t i = 0; i < m->num_ops; ++i) {
    const mculab_tfl_op* op = &m->ops[i];
    if (hooks != NULL && hooks->op_begin != NULL) {
      hooks->op_begin(i, op->kernel->name, op->name);
    }
    m->scratch = op->scratch_bytes != 0 ? m->planned + op->scratch_offset : NULL;
    const mculab_tfl_status st = op->kernel->invoke(m, op, i);
    m->scratch = NULL;
    if (hooks != NULL && hooks->op_end != NULL) hooks->op_end();
    if (st != MCULAB_TFL_OK) return st;
  }
  return MCULAB_TFL_OK;
}

void* mculab_tfl_input_at(mculab_tfl_model* m, uint32_t k, uint32_t* bytes) {
  if (!m->prepared || k >= m->num_inputs) return NULL;
  if (bytes != NULL) *bytes = m->tensors[m->inputs[k]].bytes;
  return m->tensors[m->inputs[k]].data;
}

const void* mculab_tfl_output_at(const mculab_tfl_model* m, uint32_t k, uint32_t* bytes) {
  if (!m->prepared || k >= m->num_outputs) return NULL;
  if (bytes != NULL) *bytes = m->tensors[m->outputs[k]].bytes;
  return m->tensors[m->outputs[k]].data;
}

int8_t* mculab_tfl_input(mculab_tfl_model* m, uint32_t* bytes) {
  return (int8_t*)mculab_tfl_input_at(m, 0, bytes);
}

const int8_t* mculab_tfl_output(const mculab_tfl_model* m, uint32_t* bytes) {
  return (const int8_t*)mculab_tfl_output_at(m, 0, bytes);
}

uint32_t mculab_tfl_inputs_bytes(const mculab_tfl_model* m) {
  uint32_t n = 0;
  for (uint32_t k = 0; k < m->num_inputs; ++k) n += m->tensors[m->inputs[k]].bytes;
  return n;
}

uint32_t mculab_tfl_output_crc32(const mculab_tfl_model* m) {
  if (!m->prepared) return 0;
  uint32_t crc = 0;
  for (uint32_t k = 0; k < m->num_outputs; ++k) {
    const mculab_tfl_tensor* t = &m->tensors[m->outputs[k]];
    crc = mculab_crc32(crc, t->data, t->bytes);
  }
  return crc;
}

void mculab_tfl_seed_input(mculab_tfl_model* m, uint32_t seed) {
  uint32_t x = seed != 0 ? seed : 0x6D2B79F5u; /* xorshift32 must not start at 0 */
  for (uint32_t k = 0; m->prepared && k < m->num_inputs; ++k) {
    mculab_tfl_tensor* t = &m->tensors[m->inputs[k]];
    const uint32_t size = t->elements == 0 ? 1u : t->bytes / t->elements;
    for (uint32_t i = 0; i < t->elements; ++i) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      const int8_t v = (int8_t)(x >> 24);
      /* Wider inputs take the same int8 steps: float32 over 128 (a model that quantizes its
       * input), int16 and int32 scaled to their range's top byte. */
      switch (t->type) {
        case MCULAB_TFL_FLOAT32:
          ((float*)(void*)t->data)[i] = (float)v / 128.0f;
          break;
        case MCULAB_TFL_INT16:
          ((int16_t*)(void*)t->data)[i] = (int16_t)(x >> 16);
          break;
        case MCULAB_TFL_INT32:
          ((int32_t*)(void*)t->data)[i] = (int32_t)x;
          break;
        default:
          if (size == 1) ((int8_t*)t->data)[i] = v;
          break;
      }
    }
  }
}
