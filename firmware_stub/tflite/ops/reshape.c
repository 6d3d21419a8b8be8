/* RESHAPE, SQUEEZE and EXPAND_DIMS: the bytes copied (the shape is the output tensor's), any
 * element type; the input and output quantized alike. */
#include <stdint.h>

#include "ops.h"

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* shape = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (in == NULL || in->type != out->type || in->zero_point != out->zero_point ||
      in->scale != out->scale) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "needs an input of the output's type and quantization");
  }
  if (c->op->builtin == MCULAB_TFL_RESHAPE && shape != NULL && !shape->is_const) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "a shape computed at run time");
  }
  if (in->elements != out->elements) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "input and output differ in size");
  }
  c->op->macs = 0;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const uint8_t* in = (const uint8_t*)mculab_tfl_data(m, op->inputs[0]);
  uint8_t* out = (uint8_t*)mculab_tfl_out_data(m, op);
  const uint32_t n = m->tensors[op->output].bytes;
  if (out != in) {
    for (uint32_t k = 0; k < n; ++k) out[k] = in[k];
  }
  return MCULAB_TFL_OK;
}

/* Their options (new shape, squeeze dimensions) say what the output tensor's shape says. */
const mculab_tfl_kernel mculab_tfl_kernel_reshape = {"RESHAPE", 17, NULL, prepare, NULL, invoke};
const mculab_tfl_kernel mculab_tfl_kernel_squeeze = {"SQUEEZE", 30, NULL, prepare, NULL, invoke};
const mculab_tfl_kernel mculab_tfl_kernel_expand_dims = {"EXPAND_DIMS", 52,   NULL,
                                                         prepare,       NULL, invoke};
