/* SOFTMAX: float32 (reference_ops::Softmax: each row's maximum subtracted, e^((x - max) beta) in
 * float summed in order, each divided by the sum; e^x from mculab_tfl_exp rounded to float, where
 * TFLite calls expf), int16 in and out (TFLite Micro's SoftmaxInt16: tables of e^x and 1 / (1 + x)
 * interpolated, built at prepare as its gen_lut builds them in float), int8 input, int8 output
 * (reference_ops::Softmax with gemmlowp's fixed-point exp, as TFLite Micro; in kernels/ through
 * mculab/kernels_s8.h) or int16 output (the same template with OutputT int16: zero point -32768,
 * scale 1/65536), written out here with gemmlowp's fixed-point functions for int32 raw values
 * (Q5.26 exp input, Q12.19 sum, Q0.31 results). They are those of kernels/softmax_s8.c, private
 * there: once mculab/kernels_s8.h offers an int16 output, this file calls it instead. */
#include <stdint.h>

#include "kernels.h"
#include "mculab/kernels_s8.h"
#include "ops.h"

/* gemmlowp SaturatingRoundingMultiplyByPOT<exponent> for exponent > 0. */
static int32_t sat_shift_left(int32_t x, int exponent) {
  const int32_t threshold = (int32_t)((1u << (31 - exponent)) - 1u);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return (int32_t)((uint32_t)x << exponent);
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out
 * (exp_on_interval_between_negative_one_quarter_and_0_excl). */
static int32_t exp_quarter(int32_t a) {
  const int32_t constant_term = 1895147668;    /* exp(-1/8) */
  const int32_t constant_1_over_3 = 715827883; /* 1/3 */
  const int32_t x = a + (1 << 28);             /* a + 1/8 */
  const int32_t x2 = mculab_srdhm(x, x);
  const int32_t x3 = mculab_srdhm(x2, x);
  const int32_t x4 = mculab_srdhm(x2, x2);
  const int32_t x4_over_4 = mculab_rdbpot(x4, 2);
  const int32_t poly = mculab_rdbpot(mculab_srdhm(x4_over_4 + x3, constant_1_over_3) + x2, 1);
  return constant_term + mculab_srdhm(constant_term, x + poly);
}

/* exp(a) for a <= 0: a is Q5.26, the result Q0.31 (exp_on_negative_values). */
static int32_t exp_negative(int32_t a) {
  const int fractional_bits = 26;
  const int32_t one_quarter = (int32_t)1 << (fractional_bits - 2);
  const int32_t a_mod_quarter_minus_one_quarter = (a & (one_quarter - 1)) - one_quarter;
  int32_t result = exp_quarter(sat_shift_left(a_mod_quarter_minus_one_quarter, 5));
  const int32_t remainder = a_mod_quarter_minus_one_quarter - a;
  static const int32_t kMultipliers[7] = {1672461947, 1302514674, 790015084, 290630308,
                                          39332535,   720401,     242}; /* exp(-2^k), k=-2..4 */
  for (int k = 0; k < 7; ++k) {
    if (remainder & ((int32_t)1 << (fractional_bits + k - 2))) {
      result = mculab_srdhm(result, kMultipliers[k]);
    }
  }
  return a == 0 ? INT32_MAX : result;
}

/* 1 / (1 + x) for x in [0, 1), Q0.31 (one_over_one_plus_x_for_x_in_0_1, three Newton steps). */
static int32_t one_over_one_plus_x(int32_t a) {
  const int64_t sum = (int64_t)a + INT32_MAX;
  const int32_t half_denominator = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
  int32_t x = 1515870810 + mculab_srdhm(half_denominator, -1010580540); /* 48/17 - 32/17 d */
  for (int i = 0; i < 3; ++i) {
    const int32_t one_minus = (1 << 29) - mculab_srdhm(half_denominator, x);
    x = x + sat_shift_left(mculab_srdhm(x, one_minus), 2);
  }
  return sat_shift_left(x, 1);
}

static int32_t rdbpot_wide(int32_t x, int exponent) {
  if (exponent <= 31) return mculab_rdbpot(x, exponent);
  const int64_t mask = ((int64_t)1 << exponent) - 1;
  const int64_t remainder = (int64_t)x & mask;
  const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (int32_t)(((int64_t)x >> exponent) + (remainder > threshold ? 1 : 0));
}

/* reference_ops::Softmax<int8_t, int16_t>. */
static void softmax_s8_s16(const mculab_softmax_s8_params* p, const int8_t* input, int16_t* output,
                           uint32_t outer, uint32_t depth) {
  for (uint32_t i = 0; i < outer; ++i) {
    const int8_t* in = input + i * depth;
    int16_t* out = output + i * depth;
    int32_t max_in_row = -128;
    for (uint32_t c = 0; c < depth; ++c) max_in_row = in[c] > max_in_row ? in[c] : max_in_row;
    int32_t sum_of_exps = 0; /* Q12.19 */
    for (uint32_t c = 0; c < depth; ++c) {
      const int32_t diff = in[c] - max_in_row;
      if (diff >= p->diff_min) {
        const int32_t rescaled =
            mculab_srdhm((int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
        sum_of_exps += mculab_rdbpot(exp_negative(rescaled), 12);
      }
    }
    int headroom_plus_one = 0;
    while (headroom_plus_one < 32 &&
           !((uint32_t)sum_of_exps & (0x80000000u >> headroom_plus_one))) {
      ++headroom_plus_one;
    }
    const int num_bits_over_unit = 12 - headroom_plus_one;
    const int32_t shifted_scale =
        one_over_one_plus_x((int32_t)(((uint32_t)sum_of_exps << headroom_plus_one) - (1u << 31)));
    for (uint32_t c = 0; c < depth; ++c) {
      const int32_t diff = in[c] - max_in_row;
      int32_t v = -32768;
      if (diff >= p->diff_min) {
        const int32_t rescaled =
            mculab_srdhm((int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
        const int32_t unsat = rdbpot_wide(mculab_srdhm(shifted_scale, exp_negative(rescaled)),
                                          num_bits_over_unit + 31 - 16);
        v = mculab_tfl_clamp(unsat - 32768, -32768, 32767);
      }
      out[c] = (int16_t)v;
    }
  }
}

static void parse(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->beta = fb_f32(r, t, 0, 0.0f);
}

/* The rows: the last dimension's size, and how many. */
static mculab_tfl_status rows(mculab_tfl_ctx* c, const mculab_tfl_tensor* in,
                              const mculab_tfl_tensor* out) {
  if (in->num_dims == 0 || in->elements != out->elements) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "input and output differ in size");
  }
  const uint32_t depth = (uint32_t)in->dims[in->num_dims - 1];
  if (depth == 0) return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "a dimension of 0");
  c->op->softmax_depth = depth;
  c->op->softmax_outer = in->elements / depth;
  c->op->macs = in->elements;
  return MCULAB_TFL_OK;
}

#define LUT_SIZE 513

/* TFLite Micro's SOFTMAX for int16 input: an int16 output of zero point 0 and scale 1/32768
 * (within 0.1%), the input symmetric; QuantizeMultiplier(input scale x beta / (10 / 65535)). */
static mculab_tfl_status prepare_s16(mculab_tfl_ctx* c, const mculab_tfl_tensor* in,
                                     const mculab_tfl_tensor* out) {
  const float expected = 1.0f / 32768.0f;
  if (!mculab_tfl_quantized(in, MCULAB_TFL_INT16) || !mculab_tfl_quantized(out, MCULAB_TFL_INT16) ||
      in->zero_point != 0 || out->zero_point != 0 || out->scale < expected * 0.999f ||
      out->scale > expected * 1.001f) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "int16 input needs zero point 0 and an int16 output of zero point 0, "
                          "scale 1/32768");
  }
  const mculab_tfl_status st = rows(c, in, out);
  if (st != MCULAB_TFL_OK) return st;
  int shift;
  mculab_quantize_multiplier((double)in->scale * (double)c->op->beta / (10.0 / 65535.0),
                             &c->op->k.softmax16.multiplier, &shift);
  if (c->op->k.softmax16.multiplier == 0 || shift > 30 || shift < -31) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "beta x input scale out of range");
  }
  c->op->k.softmax16.left_shift = shift;
  c->op->persistent_bytes = 2u * 2u * LUT_SIZE;
  return MCULAB_TFL_OK;
}

/* TfLiteRound for float (std::round: halves away from zero), for |v| < 2^31; the fraction
 * v - trunc(v) is exact in float. */
static float round_f(float v) {
  const float t = (float)(int32_t)v;
  return v - t >= 0.5f ? t + 1.0f : v - t <= -0.5f ? t - 1.0f : t;
}

static float exp_f(float x) { return (float)mculab_tfl_exp((double)x); }
static float one_over_one_plus_x_f(float x) { return 1.0f / (1.0f + x); }

/* gen_lut<float, int16_t, int16_t>(func, in_min, in_max, -1, 1): 512 steps, each entry the sample
 * biased by half the interpolation's error at the step's midpoint, then func(in_max). */
static void gen_lut(float (*func)(float), float in_min, float in_max, int16_t* lut) {
  const int steps = LUT_SIZE - 1;
  const float step = (in_max - in_min) / (float)steps;
  const float half_step = step / 2.0f;
  const float scaling = 65536.0f / 2.0f;
  for (int i = 0; i < steps; ++i) {
    const float val = func(in_min + (float)i * step);
    const float val_mid = func(in_min + (float)i * step + half_step);
    const float val_next = func(in_min + (float)(i + 1) * step);
    const float sample = round_f(val * scaling);
    const float interp = round_f((val_next * scaling + round_f(val * scaling)) / 2.0f);
    const float mid = round_f(val_mid * scaling);
    const float bias = round_f((interp - mid) / 2.0f);
    const float v = sample - bias;
    lut[i] = (int16_t)(v < -32768.0f ? -32768.0f : v > 32767.0f ? 32767.0f : v);
  }
  const float last = round_f(func(in_max) * scaling);
  lut[steps] = (int16_t)(last < -32768.0f ? -32768.0f : last > 32767.0f ? 32767.0f : last);
}

static mculab_tfl_status bind(mculab_tfl_ctx* c, uint8_t* persistent) {
  int16_t* exp_lut = (int16_t*)(void*)persistent;
  int16_t* recip_lut = exp_lut + LUT_SIZE;
  gen_lut(exp_f, -10.0f, 0.0f, exp_lut);
  gen_lut(one_over_one_plus_x_f, 0.0f, 1.0f, recip_lut);
  c->op->k.softmax16.exp_lut = exp_lut;
  c->op->k.softmax16.one_over_one_plus_x_lut = recip_lut;
  return MCULAB_TFL_OK;
}

/* generic_int16_table_lookup: entry 256 + value / 128 and the next, interpolated. */
static int16_t lut_lookup(int16_t value, const int16_t* lut) {
  const int32_t index = 256 + (value >> 7);
  const int32_t offset = value & 0x7f;
  const int32_t slope = lut[index + 1] - lut[index];
  return (int16_t)(lut[index] + ((slope * offset + 64) >> 7));
}

/* reference_ops::SoftmaxInt16. */
static void softmax_s16(const mculab_tfl_softmax16_params* p, const int16_t* input, int16_t* output,
                        uint32_t outer, uint32_t depth) {
  for (uint32_t i = 0; i < outer; ++i) {
    const int16_t* in = input + (uint64_t)i * depth;
    int16_t* out = output + (uint64_t)i * depth;
    int16_t max = -32768;
    for (uint32_t c = 0; c < depth; ++c) max = in[c] > max ? in[c] : max;
    int32_t sum = 0; /* Q16.15 */
    for (uint32_t c = 0; c < depth; ++c) {
      const int32_t scaled = mculab_tfl_mbqm(in[c] - max, p->multiplier, p->left_shift);
      out[c] = lut_lookup((int16_t)mculab_tfl_clamp(scaled + 32767, -32768, 32767), p->exp_lut);
      sum += out[c];
    }
    const int headroom_plus_one = __builtin_clz((uint32_t)sum);
    const int32_t shifted_sum =
        (int32_t)((((int64_t)sum << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
    const int16_t reciprocal =
        lut_lookup((int16_t)mculab_tfl_clamp(shifted_sum - ((1 << 15) + (1 << 16)), -32768, 32767),
                   p->one_over_one_plus_x_lut);
    const int right_shift = 31 - headroom_plus_one;
    for (uint32_t c = 0; c < depth; ++c) {
      const int32_t v =
          (int32_t)(((int64_t)out[c] * reciprocal + ((int64_t)1 << (right_shift - 1))) >>
                    right_shift);
      out[c] = (int16_t)mculab_tfl_clamp(v, 0, 32767);
    }
  }
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (in != NULL && in->type == MCULAB_TFL_FLOAT32) {
    if (out->type != MCULAB_TFL_FLOAT32) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "float32 input needs a float32 output");
    }
    return rows(c, in, out);
  }
  if (in != NULL && in->type == MCULAB_TFL_INT16) return prepare_s16(c, in, out);
  const int wide = out->type == MCULAB_TFL_INT16;
  if (!mculab_tfl_quantized(in, MCULAB_TFL_INT8) ||
      !mculab_tfl_quantized(out, wide ? MCULAB_TFL_INT16 : MCULAB_TFL_INT8)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "needs an int8 input, an int8 or int16 output");
  }
  const float expected = wide ? 1.0f / 65536.0f : 1.0f / 256.0f;
  const float tolerance = wide ? 1e-8f : 1e-6f;
  if (out->zero_point != (wide ? -32768 : -128) || out->scale < expected - tolerance ||
      out->scale > expected + tolerance) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          wide ? "int16 output must have zero point -32768, scale 1/65536"
                               : "int8 output must have zero point -128, scale 1/256");
  }
  const mculab_tfl_status st = rows(c, in, out);
  if (st != MCULAB_TFL_OK) return st;
  if (op->softmax_depth > MCULAB_SOFTMAX_MAX_DEPTH) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "int8 rows over 4095 values");
  }
  if (!mculab_softmax_s8_prepare((double)op->beta, (double)in->scale, &op->k.softmax)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "beta x input scale out of range");
  }
  return MCULAB_TFL_OK;
}

/* reference_ops::Softmax for float. */
static void softmax_f32(float beta, const float* input, float* output, uint32_t outer,
                        uint32_t depth) {
  for (uint32_t i = 0; i < outer; ++i) {
    const float* in = input + (uint64_t)i * depth;
    float* out = output + (uint64_t)i * depth;
    float max = -3.402823466e38f; /* numeric_limits<float>::lowest() */
    for (uint32_t c = 0; c < depth; ++c) max = in[c] > max ? in[c] : max;
    float sum = 0.0f;
    for (uint32_t c = 0; c < depth; ++c) {
      out[c] = (float)mculab_tfl_exp((double)((in[c] - max) * beta));
      sum += out[c];
    }
    for (uint32_t c = 0; c < depth; ++c) out[c] = out[c] / sum;
  }
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  if (m->tensors[op->output].type == MCULAB_TFL_FLOAT32) {
    softmax_f32(op->beta, (const float*)mculab_tfl_data(m, op->inputs[0]),
                (float*)mculab_tfl_out_data(m, op), op->softmax_outer, op->softmax_depth);
    return MCULAB_TFL_OK;
  }
  if (m->tensors[op->inputs[0]].type == MCULAB_TFL_INT16) {
    softmax_s16(&op->k.softmax16, (const int16_t*)mculab_tfl_data(m, op->inputs[0]),
                (int16_t*)mculab_tfl_out_data(m, op), op->softmax_outer, op->softmax_depth);
    return MCULAB_TFL_OK;
  }
  if (m->tensors[op->output].type == MCULAB_TFL_INT16) {
    softmax_s8_s16(&op->k.softmax, (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
                   (int16_t*)mculab_tfl_out_data(m, op), op->softmax_outer, op->softmax_depth);
    return MCULAB_TFL_OK;
  }
  mculab_softmax_s8(&op->k.softmax, (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
                    (int8_t*)mculab_tfl_out_data(m, op), op->softmax_outer, op->softmax_depth);
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_softmax = {"SOFTMAX", 9, parse, prepare, bind, invoke};
