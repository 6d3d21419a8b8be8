/* RESHAPE: the bytes copied (the shape is the output tensor's). */
#include <stdint.h>

#include "ops.h"

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* shape = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (in == NULL || in->type != MCULAB_TFL_INT8 || out->type != MCULAB_TFL_INT8) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs an int8 input and output");
  }
  if (shape != NULL && !shape->is_const) {
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

/* ReshapeOptions (17) hold new_shape only, which the output tensor's shape already says. */
const mculab_tfl_kernel mculab_tfl_kernel_reshape = {"RESHAPE", 17, NULL, prepare, NULL, invoke};
