/* Private to mculab_kernels: the kernels over a prepared case, and TFLite's fixed-point
 * requantization helpers (tensorflow/lite/kernels/internal/common.h, reference semantics). */
#ifndef MCULAB_KERNELS_KERNELS_H_
#define MCULAB_KERNELS_KERNELS_H_

#include <stdint.h>

#include "mculab/kernels_s8.h"
#include "mculab/ops.h"

/* gemmlowp SaturatingRoundingDoublingHighMul: (a * b * 2) >> 32, rounded, INT32_MIN*INT32_MIN
 * saturates to INT32_MAX. */
int32_t mculab_srdhm(int32_t a, int32_t b);
/* gemmlowp RoundingDivideByPOT: x / 2^exponent rounded half away from zero (0 <= exponent <= 31).
 */
int32_t mculab_rdbpot(int32_t x, int exponent);
/* TFLite MultiplyByQuantizedMultiplier: x * multiplier / 2^31 * 2^shift, with the rounding above.
 * shift > 0 shifts left first (the caller keeps x << shift within int32). */
int32_t mculab_mbqm(int32_t x, int32_t multiplier, int shift);

/* gemmlowp's fixed-point functions on int32 raw values (FixedPoint<int32_t, I>: raw v * 2^(31-I)),
 * shared by softmax and the int8 LOGISTIC and TANH: exp(a) for a <= 0 with `integer_bits`
 * (1..5) integer bits, the result Q0.31; 1 / (1 + x) and (1 - x) / (1 + x) for x in [0, 1), Q0.31
 * in and out (Newton-Raphson, three steps). */
int32_t mculab_fx_exp_on_negative_values(int32_t a, int integer_bits);
int32_t mculab_fx_one_over_one_plus_x(int32_t a);
int32_t mculab_fx_one_minus_x_over_one_plus_x(int32_t a);

/* A conv or depthwise conv accumulator to its int8 output: the bias (wrap-around), TFLite's
 * MultiplyByQuantizedMultiplier, the output offset and the activation clamp. Shared by the
 * reference kernels and the Helium variants (helium_s8.c), so both requantize alike. */
int8_t mculab_conv_requantize(int32_t acc, const int32_t* bias, int32_t oc, int32_t multiplier,
                              int32_t shift, const mculab_conv_s8_params* p);

/* The taps [*lo, *hi) of a window starting at `start` (stride and padding applied) with `taps`
 * taps `dilation` apart that fall inside [0, size): the fast depthwise kernels' loop bounds. */
static inline void mculab_taps_inside(int32_t start, int32_t dilation, int32_t taps, int32_t size,
                                      int32_t* lo, int32_t* hi) {
  /* ceil(-start / dilation) for start < 0; ceil((size - start) / dilation) (size - start may be
   * negative: the window is then past the input and hi <= lo). */
  *lo = start < 0 ? (-start + dilation - 1) / dilation : 0;
  const int32_t room = size - start;
  *hi = room > 0 ? (room + dilation - 1) / dilation : -(-room / dilation);
  if (*hi > taps) *hi = taps;
}

/* The taps of a pooling window inside the input, for output pixel (b, oy, ox): `rows` x `cols`
 * values from `first` (channel 0), rows `row_step` bytes apart, values `channels` apart. */
typedef struct {
  const int8_t* first;
  int32_t rows, cols, row_step;
} mculab_pool_window;

static inline mculab_pool_window mculab_pool_window_at(const mculab_pool_s8_params* p,
                                                       const int8_t* input, int32_t b, int32_t oy,
                                                       int32_t ox) {
  const int32_t y0 = oy * p->stride_h - p->pad_h, x0 = ox * p->stride_w - p->pad_w;
  int32_t fy0, fy1, fx0, fx1;
  mculab_taps_inside(y0, 1, p->filter_h, p->in_h, &fy0, &fy1);
  mculab_taps_inside(x0, 1, p->filter_w, p->in_w, &fx0, &fx1);
  mculab_pool_window w;
  w.rows = fy1 > fy0 ? fy1 - fy0 : 0;
  w.cols = fx1 > fx0 ? fx1 - fx0 : 0;
  w.row_step = p->in_w * p->channels;
  w.first = input + ((b * p->in_h + y0 + fy0) * p->in_w + x0 + fx0) * p->channels;
  return w;
}

void mculab_conv2d_s8(const mculab_case* c);
void mculab_depthwise_conv2d_s8(const mculab_case* c);
void mculab_fully_connected_s8(const mculab_case* c);
/* The calibration loops (ops.h); they work on the case's output, MCULAB_CAL_OUTPUT_BYTES. */
#define MCULAB_CAL_OUTPUT_BYTES 64u
void mculab_calibrate(const mculab_case* c);

#endif /* MCULAB_KERNELS_KERNELS_H_ */
