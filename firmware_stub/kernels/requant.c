#include <stdint.h>

#include "kernels.h"
#include "mculab/kernels_s8.h"

int32_t mculab_srdhm(int32_t a, int32_t b) {
  const int overflow = a == b && a == INT32_MIN;
  const int64_t ab_64 = (int64_t)a * (int64_t)b;
  const int32_t nudge = ab_64 >= 0 ? (1 << 30) : (1 - (1 << 30));
  /* Division truncates toward zero, as in gemmlowp (not an arithmetic shift). */
  const int32_t ab_x2_high32 = (int32_t)((ab_64 + nudge) / ((int64_t)1 << 31));
  return overflow ? INT32_MAX : ab_x2_high32;
}

int32_t mculab_rdbpot(int32_t x, int exponent) {
  const int32_t mask = (int32_t)((1u << exponent) - 1u);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  /* >> of a negative int is arithmetic with GCC and Clang, as gemmlowp assumes. */
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

int32_t mculab_mbqm(int32_t x, int32_t multiplier, int shift) {
  const int left_shift = shift > 0 ? shift : 0;
  const int right_shift = shift > 0 ? 0 : -shift;
  return mculab_rdbpot(mculab_srdhm(x * (1 << left_shift), multiplier), right_shift);
}

/* frexp for a finite positive double, by its bits: m = q * 2^e with q in [0.5, 1). */
static double split_pow2(double m, int* e) {
  *e = 0;
  while (m >= 1.0) {
    m *= 0.5;
    ++*e;
  }
  while (m < 0.5) {
    m *= 2.0;
    --*e;
  }
  return m;
}

void mculab_quantize_multiplier(double m, int32_t* multiplier, int* shift) {
  if (!(m > 0.0) || m > 1e30) { /* 0, negative, NaN or absurd: no multiplier */
    *multiplier = 0;
    *shift = 0;
    return;
  }
  const double q = split_pow2(m, shift); /* exact: only powers of two are applied */
  /* round(q * 2^31), halves away from zero; q * 2^31 has at most 22 fraction bits, so + 0.5 is
   * exact. */
  int64_t q_fixed = (int64_t)(q * 2147483648.0 + 0.5);
  if (q_fixed == ((int64_t)1 << 31)) {
    q_fixed /= 2;
    ++*shift;
  }
  if (*shift < -31) {
    *shift = 0;
    q_fixed = 0;
  }
  *multiplier = (int32_t)q_fixed;
}

int mculab_softmax_s8_prepare(double beta, double input_scale, mculab_softmax_s8_params* p) {
  const int input_integer_bits = 5;
  double real = beta * input_scale * (double)(1u << (31 - input_integer_bits));
  const double max_real = 2147483647.0; /* (1 << 31) - 1 */
  if (real > max_real) real = max_real;
  if (!(real > 1.0)) return 0; /* QuantizeMultiplierGreaterThanOne requires > 1 */
  int shift;
  mculab_quantize_multiplier(real, &p->input_multiplier, &shift);
  if (shift < 0 || shift > 31) return 0;
  p->input_left_shift = shift;
  /* CalculateInputRadius(5, shift, 31): floor(31 * 2^26 / 2^shift) */
  const double radius = 31.0 * (double)(1u << 26) / (double)((uint64_t)1 << shift);
  p->diff_min = -(int32_t)radius; /* radius >= 0: the cast floors */
  return 1;
}
