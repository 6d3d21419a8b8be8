/* SOFTMAX: int8 (reference_ops::Softmax with gemmlowp's fixed-point exp, as TFLite Micro; in
 * kernels/ through mculab/kernels_s8.h). */
#include <stdint.h>

#include "mculab/kernels_s8.h"
#include "ops.h"

static void parse(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->beta = fb_f32(r, t, 0, 0.0f);
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (!mculab_tfl_quantized(in, MCULAB_TFL_INT8) || !mculab_tfl_quantized(out, MCULAB_TFL_INT8)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs an int8 input and output");
  }
  const float expected = 1.0f / 256.0f;
  if (out->zero_point != -128 || out->scale < expected - 1e-6f || out->scale > expected + 1e-6f) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "int8 output must have zero point -128, scale 1/256");
  }
  if (in->num_dims == 0 || in->elements != out->elements) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "input and output differ in size");
  }
  const uint32_t depth = (uint32_t)in->dims[in->num_dims - 1];
  if (depth > MCULAB_SOFTMAX_MAX_DEPTH) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "rows over 4095 values");
  }
  if (!mculab_softmax_s8_prepare((double)op->beta, (double)in->scale, &op->k.softmax)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "beta x input scale out of range");
  }
  op->softmax_depth = depth;
  op->softmax_outer = in->elements / depth;
  op->macs = in->elements;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  mculab_softmax_s8(&op->k.softmax, (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
                    (int8_t*)mculab_tfl_out_data(m, op), op->softmax_outer, op->softmax_depth);
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_softmax = {"SOFTMAX", 9, parse, prepare, NULL, invoke};
