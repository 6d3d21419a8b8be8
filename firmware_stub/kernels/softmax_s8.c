/* softmax_s8: TFLite's reference_ops::Softmax for int8 (the one TFLite Micro runs), with
 * gemmlowp's fixed-point exp_on_negative_values and one_over_one_plus_x_for_x_in_0_1 written out
 * for int32 raw values. A FixedPoint<int32_t, I> value v has raw v * 2^(31 - I); the product of
 * two is their SaturatingRoundingDoublingHighMul. */
#include "kernels.h"
#include "mculab/kernels_s8.h"

#define SCALED_DIFF_INTEGER_BITS 5   /* the exp input is Q5.26 */
#define ACCUMULATION_INTEGER_BITS 12 /* the sum of exps is Q12.19 */

static int32_t fx_mul(int32_t a, int32_t b) { return mculab_srdhm(a, b); }

/* gemmlowp SaturatingRoundingMultiplyByPOT<exponent> for exponent > 0. */
static int32_t sat_shift_left(int32_t x, int exponent) {
  const int32_t threshold = (int32_t)((1u << (31 - exponent)) - 1u);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return (int32_t)((uint32_t)x << exponent);
}

/* exp(a) for a in [-1/4, 0), Q0.31 in and out. */
static int32_t exp_quarter(int32_t a) {
  const int32_t constant_term = 1895147668;    /* exp(-1/8) */
  const int32_t constant_1_over_3 = 715827883; /* 1/3 */
  const int32_t x = a + (1 << 28);             /* a + 1/8 */
  const int32_t x2 = fx_mul(x, x);
  const int32_t x3 = fx_mul(x2, x);
  const int32_t x4 = fx_mul(x2, x2);
  const int32_t x4_over_4 = mculab_rdbpot(x4, 2);
  const int32_t poly =
      mculab_rdbpot(fx_mul(x4_over_4 + x3, constant_1_over_3) + x2, 1); /* x4/24 + x3/6 + x2/2 */
  return constant_term + fx_mul(constant_term, x + poly);
}

int32_t mculab_fx_exp_on_negative_values(int32_t a, int integer_bits) {
  const int fractional_bits = 31 - integer_bits;
  const int32_t one_quarter = (int32_t)1 << (fractional_bits - 2);
  const int32_t mask = one_quarter - 1;
  const int32_t a_mod_quarter_minus_one_quarter = (a & mask) - one_quarter;
  int32_t result = exp_quarter(sat_shift_left(a_mod_quarter_minus_one_quarter, integer_bits));
  const int32_t remainder = a_mod_quarter_minus_one_quarter - a;
  /* exp(-2^k) for k = -2 .. 4, Q0.31, each applied when the input has that many integer bits */
  static const int32_t kMultipliers[7] = {1672461947, 1302514674, 790015084, 290630308,
                                          39332535,   720401,     242};
  for (int k = 0; k < 7 && k - 2 < integer_bits; ++k) {
    const int shift = fractional_bits + (k - 2);
    if (remainder & ((int32_t)1 << shift)) result = fx_mul(result, kMultipliers[k]);
  }
  if (a == 0) result = INT32_MAX; /* FixedPoint<int32_t, 0>::One() */
  return result;
}

/* The Newton-Raphson reciprocal of half_denominator (Q0.31) in Q2.29, three steps. */
static int32_t reciprocal_of_half(int32_t half_denominator) {
  const int32_t constant_48_over_17 = 1515870810;      /* Q2.29 */
  const int32_t constant_neg_32_over_17 = -1010580540; /* Q2.29 */
  int32_t x = constant_48_over_17 + fx_mul(half_denominator, constant_neg_32_over_17);
  for (int i = 0; i < 3; ++i) {
    const int32_t half_denominator_times_x = fx_mul(half_denominator, x); /* Q2.29 */
    const int32_t one_minus = (1 << 29) - half_denominator_times_x;       /* Q2.29 */
    /* x * one_minus is Q4.27; Rescale<2> multiplies by 2^2, saturating. */
    x = x + sat_shift_left(fx_mul(x, one_minus), 2);
  }
  return x;
}

/* RoundingHalfSum(a, One): (a + INT32_MAX) / 2 rounded. */
static int32_t half_of_one_plus(int32_t a) {
  const int64_t sum = (int64_t)a + INT32_MAX;
  return (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
}

int32_t mculab_fx_one_over_one_plus_x(int32_t a) {
  /* ExactMulByPot<-1> relabels Q2.29 as Q1.30; Rescale<0> multiplies by 2, saturating. */
  return sat_shift_left(reciprocal_of_half(half_of_one_plus(a)), 1);
}

int32_t mculab_fx_one_minus_x_over_one_plus_x(int32_t a) {
  /* 1 / half_denominator - 1 = (1 - a) / (1 + a), Q2.29; Rescale<0> multiplies by 4. */
  return sat_shift_left(reciprocal_of_half(half_of_one_plus(a)) - (1 << 29), 2);
}

/* RoundingDivideByPOT for exponents up to 62 (the last division reaches 34 for rows of more than
 * 256 values; gemmlowp's int32 version stops at 31). */
static int32_t rdbpot_wide(int32_t x, int exponent) {
  if (exponent <= 31) return mculab_rdbpot(x, exponent);
  const int64_t mask = ((int64_t)1 << exponent) - 1;
  const int64_t remainder = (int64_t)x & mask;
  const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (int32_t)(((int64_t)x >> exponent) + (remainder > threshold ? 1 : 0));
}

static int count_leading_zeros(uint32_t x) {
  int n = 0;
  if (x == 0) return 32;
  while (!(x & 0x80000000u)) {
    x <<= 1;
    ++n;
  }
  return n;
}

/* depth <= MCULAB_SOFTMAX_MAX_DEPTH keeps the sum of exps (each <= 2^19) within int32. */
void mculab_softmax_s8(const mculab_softmax_s8_params* p, const int8_t* input, int8_t* output,
                       uint32_t outer, uint32_t depth) {
  for (uint32_t i = 0; i < outer; ++i) {
    const int8_t* in = input + i * depth;
    int8_t* out = output + i * depth;
    int32_t max_in_row = -128;
    for (uint32_t c = 0; c < depth; ++c) {
      if (in[c] > max_in_row) max_in_row = in[c];
    }
    int32_t sum_of_exps = 0; /* Q12.19 */
    for (uint32_t c = 0; c < depth; ++c) {
      const int32_t diff = in[c] - max_in_row;
      if (diff >= p->diff_min) {
        const int32_t rescaled =
            mculab_srdhm((int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
        sum_of_exps +=
            mculab_rdbpot(mculab_fx_exp_on_negative_values(rescaled, SCALED_DIFF_INTEGER_BITS),
                          ACCUMULATION_INTEGER_BITS);
      }
    }
    /* GetReciprocal */
    const int headroom_plus_one = count_leading_zeros((uint32_t)sum_of_exps);
    const int num_bits_over_unit = ACCUMULATION_INTEGER_BITS - headroom_plus_one;
    const int32_t shifted_sum_minus_one =
        (int32_t)(((uint32_t)sum_of_exps << headroom_plus_one) - (1u << 31));
    const int32_t shifted_scale = mculab_fx_one_over_one_plus_x(shifted_sum_minus_one);

    for (uint32_t c = 0; c < depth; ++c) {
      const int32_t diff = in[c] - max_in_row;
      if (diff >= p->diff_min) {
        const int32_t rescaled =
            mculab_srdhm((int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
        const int32_t exp_in_0 =
            mculab_fx_exp_on_negative_values(rescaled, SCALED_DIFF_INTEGER_BITS);
        const int32_t unsat =
            rdbpot_wide(fx_mul(shifted_scale, exp_in_0), num_bits_over_unit + 31 - 8);
        int32_t v = unsat - 128;
        if (v < -128) v = -128;
        if (v > 127) v = 127;
        out[c] = (int8_t)v;
      } else {
        out[c] = -128;
      }
    }
  }
}
