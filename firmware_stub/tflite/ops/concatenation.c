/* CONCATENATION (reference_ops::Concatenation): the inputs joined along `axis` (negative counts
 * from the end), any element type; quantized inputs must share the output's scale and zero point
 * (TFLite Micro's int8 form copies bytes). */
#include <stdint.h>

#include "ops.h"

static void parse(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->rank = fb_i32(r, t, 0, 0); /* axis */
  op->activation = fb_u8(r, t, 1, 0);
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  const int32_t axis = op->rank < 0 ? op->rank + out->num_dims : op->rank;
  if (axis < 0 || axis >= out->num_dims || op->activation != MCULAB_ACT_NONE) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "axis out of range or a fused activation");
  }
  int64_t along = 0;
  for (unsigned k = 0; k < op->num_inputs; ++k) {
    const mculab_tfl_tensor* in = mculab_tfl_in(c, k);
    if (in == NULL || in->type != out->type || in->num_dims != out->num_dims ||
        in->zero_point != out->zero_point || in->scale != out->scale) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                            "inputs must have the output's type, rank and quantization");
    }
    for (unsigned d = 0; d < out->num_dims; ++d) {
      if ((int32_t)d != axis && in->dims[d] != out->dims[d]) {
        return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "inputs differ off the axis");
      }
    }
    along += in->dims[axis];
  }
  if (along != out->dims[axis]) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "the inputs do not add up to the output");
  }
  op->k.box.start[0] = axis;
  op->macs = 0;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const mculab_tfl_tensor* to = &m->tensors[op->output];
  const int32_t axis = op->k.box.start[0];
  const uint64_t size = to->bytes / to->elements;
  uint64_t outer = 1, inner = size;
  for (int32_t d = 0; d < axis; ++d) outer *= (uint64_t)to->dims[d];
  for (unsigned d = (unsigned)axis + 1; d < to->num_dims; ++d) inner *= (uint64_t)to->dims[d];
  uint8_t* out = (uint8_t*)mculab_tfl_out_data(m, op);
  for (uint64_t o = 0; o < outer; ++o) {
    for (unsigned k = 0; k < op->num_inputs; ++k) {
      const uint64_t n = inner * (uint64_t)m->tensors[op->inputs[k]].dims[axis];
      const uint8_t* in = (const uint8_t*)mculab_tfl_data(m, op->inputs[k]) + o * n;
      for (uint64_t b = 0; b < n; ++b) *out++ = in[b];
    }
  }
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_concatenation = {"CONCATENATION", 10,   parse,
                                                           prepare,         NULL, invoke};
