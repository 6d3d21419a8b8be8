/* Activations, as TFLite Micro runs them:
 * - LEAKY_RELU, int8 and int16 (reference_ops::QuantizeLeakyRelu: x - zero point rescaled by
 *   input scale / output scale, or by alpha times that below zero; TFLite Micro's
 *   leaky_relu_common.cc computes both factors in float) and float32.
 * - RELU, int8 and int16 (ReluQuantized: x - input zero point rescaled by input scale / output
 *   scale, plus the output zero point, clamped from the output's zero point; int16 symmetric) and
 *   float32.
 * - RELU6, int8 and int16 (Relu6Quantized: x clamped to [zero point, round(6 / scale) + zero
 *   point] of the input; TFLite Micro reads no output quantization) and float32.
 * - HARD_SWISH, int8 (reference_ops::HardSwish with HardSwishParams: 16-bit fixed point, the
 *   multipliers from float scale ratios as HardSwishPrepare computes them) and float32
 *   (x * min(6, max(0, x + 3)) / 6). */
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

/* An elementwise operator's input like its output; int8 and int16 with usable scales (int16
 * symmetric where `symmetric16`), or float32. */
static mculab_tfl_status same_input(mculab_tfl_ctx* c, int allow16, int symmetric16) {
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (c->op->num_inputs != 1 || in == NULL || in->type != out->type ||
      in->elements != out->elements) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs one input like the output");
  }
  c->op->macs = out->elements;
  if (out->type == MCULAB_TFL_FLOAT32) return MCULAB_TFL_OK;
  if ((out->type != MCULAB_TFL_INT8 && (!allow16 || out->type != MCULAB_TFL_INT16)) ||
      !mculab_tfl_quantized(in, in->type) || !mculab_tfl_quantized(out, out->type)) {
    return mculab_tfl_bad(
        c, MCULAB_TFL_UNSUPPORTED,
        allow16 ? "needs int8, int16 or float32 tensors" : "needs int8 or float32 tensors");
  }
  if (out->type == MCULAB_TFL_INT16 && symmetric16 &&
      (in->zero_point != 0 || out->zero_point != 0)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "int16 tensors need zero point 0");
  }
  return MCULAB_TFL_OK;
}

static mculab_tfl_status prepare_relu(mculab_tfl_ctx* c) {
  mculab_tfl_status st = same_input(c, 1, 1);
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (st != MCULAB_TFL_OK || out->type == MCULAB_TFL_FLOAT32) return st;
  /* CalculateReluOpData: the multiplier in double, the range from 0 to the type's top. */
  mculab_tfl_relu_params* p = &c->op->k.relu;
  int shift;
  mculab_quantize_multiplier((double)in->scale / (double)out->scale, &p->mult, &shift);
  if (shift > 30) return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "rescaling by 2^30 or more");
  p->shift = shift;
  p->in_zp = in->zero_point;
  p->out_zp = out->zero_point;
  mculab_tfl_type_range(out->type, &p->lo, &p->hi);
  if (out->zero_point > p->lo) p->lo = out->zero_point;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status prepare_relu6(mculab_tfl_ctx* c) {
  mculab_tfl_status st = same_input(c, 1, 0);
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  if (st != MCULAB_TFL_OK || in->type == MCULAB_TFL_FLOAT32) return st;
  /* Relu6Prepare: zero and FloatToQuantizedType(6.0f), both in the input's quantization. */
  mculab_tfl_relu_params* p = &c->op->k.relu;
  int32_t lo, hi;
  mculab_tfl_type_range(in->type, &lo, &hi);
  const int64_t six = (int64_t)mculab_tfl_round((double)(6.0f / in->scale)) + in->zero_point;
  p->lo = in->zero_point;
  p->hi = six < lo ? lo : six > hi ? hi : (int32_t)six;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke_relu(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const mculab_tfl_tensor* to = &m->tensors[op->output];
  const void* in = mculab_tfl_data(m, op->inputs[0]);
  void* out = mculab_tfl_out_data(m, op);
  const mculab_tfl_relu_params* p = &op->k.relu;
  const int relu6 = op->builtin == MCULAB_TFL_RELU6;
  for (uint32_t k = 0; k < to->elements; ++k) {
    if (to->type == MCULAB_TFL_FLOAT32) {
      const float x = ((const float*)in)[k];
      ((float*)out)[k] = relu6 ? (x > 6.0f ? 6.0f : x < 0.0f ? 0.0f : x) : (x < 0.0f ? 0.0f : x);
      continue;
    }
    const int32_t x =
        to->type == MCULAB_TFL_INT16 ? ((const int16_t*)in)[k] : ((const int8_t*)in)[k];
    const int32_t y = relu6 ? x : p->out_zp + mculab_tfl_mbqm(x - p->in_zp, p->mult, p->shift);
    if (to->type == MCULAB_TFL_INT16) {
      ((int16_t*)out)[k] = (int16_t)mculab_tfl_clamp(y, p->lo, p->hi);
    } else {
      ((int8_t*)out)[k] = (int8_t)mculab_tfl_clamp(y, p->lo, p->hi);
    }
  }
  return MCULAB_TFL_OK;
}

/* gemmlowp's int16 fixed point: SaturatingRoundingDoublingHighMul and RoundingDivideByPOT, and
 * hard_swish.h's SaturatingLeftShift and (truncating) SaturatingDoublingHighMul. */
static int16_t srdhm16(int16_t a, int16_t b) {
  if (a == INT16_MIN && b == INT16_MIN) return INT16_MAX;
  const int32_t ab = (int32_t)a * b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return (int16_t)((ab + nudge) / (1 << 15));
}

static int16_t rdbpot16(int16_t x, int exponent) {
  const int16_t mask = (int16_t)(((int64_t)1 << exponent) - 1);
  const int16_t remainder = (int16_t)(x & mask);
  const int16_t threshold = (int16_t)((mask >> 1) + (x < 0 ? 1 : 0));
  return (int16_t)((x >> exponent) + (remainder > threshold ? 1 : 0));
}

static int16_t saturating_left_shift16(int16_t v, int amount) {
  if (amount >= 31) return v > 0 ? INT16_MAX : v < 0 ? INT16_MIN : 0;
  const int64_t r = (int64_t)v * ((int64_t)1 << amount);
  return (int16_t)(r > INT16_MAX ? INT16_MAX : r < INT16_MIN ? INT16_MIN : r);
}

static int16_t sdhm16(int16_t a, int16_t b) {
  if (a == INT16_MIN && b == INT16_MIN) return INT16_MAX;
  return (int16_t)(((int32_t)a * b) / (1 << 15));
}

/* DownScaleInt32ToInt16Multiplier. */
static int16_t multiplier16(int32_t m) {
  return m >= INT32_MAX - (1 << 15) ? INT16_MAX : (int16_t)((m + (1 << 15)) >> 16);
}

static mculab_tfl_status prepare_hard_swish(mculab_tfl_ctx* c) {
  mculab_tfl_status st = same_input(c, 0, 0);
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (st != MCULAB_TFL_OK || out->type == MCULAB_TFL_FLOAT32) return st;
  /* HardSwishPrepare: the scale ratios in float, then QuantizeMultiplier in double. */
  mculab_tfl_hard_swish_params* p = &c->op->k.hard_swish;
  p->in_zp = (int16_t)in->zero_point;
  p->out_zp = (int16_t)out->zero_point;
  const float hires_input_scale = (1.0f / 128.0f) * in->scale;
  const float reluish_scale = 3.0f / 32768.0f;
  int32_t m;
  int e;
  mculab_quantize_multiplier((double)(hires_input_scale / out->scale), &m, &e);
  if (e > 0) return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "an output multiplier of 1 or more");
  p->out_mult = multiplier16(m);
  p->out_exp = e;
  mculab_quantize_multiplier((double)(hires_input_scale / reluish_scale), &m, &e);
  p->reluish_mult = multiplier16(m);
  p->reluish_exp = e;
  return MCULAB_TFL_OK;
}

static int8_t hard_swish_s8(const mculab_tfl_hard_swish_params* p, int8_t x) {
  const int16_t value = (int16_t)(x - p->in_zp);
  const int16_t hires = (int16_t)(value * (1 << 7));
  const int16_t preshift_output_scale = srdhm16(hires, p->out_mult);
  /* The "relu-ish" multiplier: x on a scale where 3 is 32768, saturated, then [-1, 1] to [0, 1]. */
  int16_t reluish = hires;
  if (p->reluish_exp > 0) reluish = saturating_left_shift16(reluish, p->reluish_exp - 1);
  reluish = srdhm16(reluish, p->reluish_mult);
  if (p->reluish_exp > 0) reluish = saturating_left_shift16(reluish, 1);
  if (p->reluish_exp < 0) reluish = rdbpot16(reluish, -p->reluish_exp);
  reluish = (int16_t)((reluish + (1 << 15)) >> 1);
  const int16_t preshift_output = sdhm16(reluish, preshift_output_scale);
  /* The zero point is added in int16, as TFLite does (wrapping), then clamped to int8. */
  int16_t y = rdbpot16(preshift_output, -p->out_exp);
  y = (int16_t)(y + p->out_zp);
  return (int8_t)(y > 127 ? 127 : y < -128 ? -128 : y);
}

static mculab_tfl_status invoke_hard_swish(mculab_tfl_model* m, const mculab_tfl_op* op,
                                           uint16_t index) {
  (void)index;
  const mculab_tfl_tensor* to = &m->tensors[op->output];
  const void* in = mculab_tfl_data(m, op->inputs[0]);
  void* out = mculab_tfl_out_data(m, op);
  for (uint32_t k = 0; k < to->elements; ++k) {
    if (to->type == MCULAB_TFL_FLOAT32) {
      /* std::min(6, std::max(0, x + 3)), in that order (NaN gives 0). */
      const float x = ((const float*)in)[k];
      const float up = x + 3.0f;
      const float relu = 0.0f < up ? up : 0.0f;
      const float relu6 = relu < 6.0f ? relu : 6.0f;
      ((float*)out)[k] = x * relu6 / 6.0f;
    } else {
      ((int8_t*)out)[k] = hard_swish_s8(&op->k.hard_swish, ((const int8_t*)in)[k]);
    }
  }
  return MCULAB_TFL_OK;
}

/* RELU, RELU6 and HARD_SWISH have no options. */
const mculab_tfl_kernel mculab_tfl_kernel_relu = {"RELU", 0, NULL, prepare_relu, NULL, invoke_relu};
const mculab_tfl_kernel mculab_tfl_kernel_relu6 = {"RELU6",       0,    NULL,
                                                   prepare_relu6, NULL, invoke_relu};
const mculab_tfl_kernel mculab_tfl_kernel_hard_swish = {
    "HARD_SWISH", 0, NULL, prepare_hard_swish, NULL, invoke_hard_swish};

const mculab_tfl_kernel mculab_tfl_kernel_leaky_relu = {"LEAKY_RELU",  75,   parse_leaky,
                                                        prepare_leaky, NULL, invoke_leaky};
