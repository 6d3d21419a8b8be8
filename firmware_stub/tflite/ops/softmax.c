/* SOFTMAX: float32 (reference_ops::Softmax: each row's maximum subtracted, e^((x - max) beta) in
 * float summed in order, each divided by the sum; e^x from mculab_tfl_exp rounded to float, where
 * TFLite calls expf), int8 input, int8 output (reference_ops::Softmax with gemmlowp's fixed-point
 * exp, as TFLite Micro; in kernels/ through mculab/kernels_s8.h) or int16 output (the same template
 * with OutputT int16: zero point -32768, scale 1/65536), written out here with gemmlowp's
 * fixed-point functions for int32 raw values (Q5.26 exp input, Q12.19 sum, Q0.31 results). They are
 * those of kernels/softmax_s8.c, private there: once mculab/kernels_s8.h offers an int16 output,
 * this file calls it instead. */
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
  if (m->tensors[op->output].type == MCULAB_TFL_INT16) {
    softmax_s8_s16(&op->k.softmax, (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
                   (int16_t*)mculab_tfl_out_data(m, op), op->softmax_outer, op->softmax_depth);
    return MCULAB_TFL_OK;
  }
  mculab_softmax_s8(&op->k.softmax, (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
                    (int8_t*)mculab_tfl_out_data(m, op), op->softmax_outer, op->softmax_depth);
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_softmax = {"SOFTMAX", 9, parse, prepare, NULL, invoke};
