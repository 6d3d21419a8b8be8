#include <stdint.h>

#include "kernels.h"

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
