/* Activations: LEAKY_RELU, int8 and int16 (reference_ops::QuantizeLeakyRelu: x - zero point
 * rescaled by input scale / output scale, or by alpha times that below zero; TFLite Micro's
 * leaky_relu_common.cc computes both factors in float) and float32. */
#include <stdint.h>

#include "mculab/kernels_s8.h"
#include "ops.h"

static void parse_leaky(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->alpha = fb_f32(r, t, 0, 0.0f);
}

static mculab_tfl_status prepare_leaky(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (in == NULL || in->type != out->type || in->elements != out->elements) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs an input like the output");
  }
  op->macs = out->elements;
  if (out->type == MCULAB_TFL_FLOAT32) return MCULAB_TFL_OK;
  if ((out->type != MCULAB_TFL_INT8 && out->type != MCULAB_TFL_INT16) ||
      !mculab_tfl_quantized(in, in->type) || !mculab_tfl_quantized(out, out->type)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs int8, int16 or float32 tensors");
  }
  mculab_tfl_leaky_params* p = &op->k.leaky;
  p->in_zp = in->zero_point;
  p->out_zp = out->zero_point;
  int shift;
  mculab_quantize_multiplier((double)(in->scale * op->alpha / out->scale), &p->mult_alpha, &shift);
  p->shift_alpha = shift;
  mculab_quantize_multiplier((double)(in->scale / out->scale), &p->mult_identity, &shift);
  p->shift_identity = shift;
  if (p->shift_alpha > 30 || p->shift_identity > 30) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "rescaling by 2^30 or more");
  }
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke_leaky(mculab_tfl_model* m, const mculab_tfl_op* op,
                                      uint16_t index) {
  (void)index;
  const mculab_tfl_tensor* to = &m->tensors[op->output];
  const void* in = mculab_tfl_data(m, op->inputs[0]);
  void* out = mculab_tfl_out_data(m, op);
  const mculab_tfl_leaky_params* p = &op->k.leaky;
  int32_t lo, hi;
  mculab_tfl_type_range(to->type, &lo, &hi);
  for (uint32_t k = 0; k < to->elements; ++k) {
    if (to->type == MCULAB_TFL_FLOAT32) {
      const float x = ((const float*)in)[k];
      ((float*)out)[k] = x > 0.0f ? x : x * op->alpha;
      continue;
    }
    const int32_t x =
        (to->type == MCULAB_TFL_INT16 ? ((const int16_t*)in)[k] : ((const int8_t*)in)[k]) -
        p->in_zp;
    const int32_t y = p->out_zp + (x >= 0 ? mculab_tfl_mbqm(x, p->mult_identity, p->shift_identity)
                                          : mculab_tfl_mbqm(x, p->mult_alpha, p->shift_alpha));
    if (to->type == MCULAB_TFL_INT16) {
      ((int16_t*)out)[k] = (int16_t)mculab_tfl_clamp(y, lo, hi);
    } else {
      ((int8_t*)out)[k] = (int8_t)mculab_tfl_clamp(y, lo, hi);
    }
  }
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_leaky_relu = {"LEAKY_RELU",  75,   parse_leaky,
                                                        prepare_leaky, NULL, invoke_leaky};
