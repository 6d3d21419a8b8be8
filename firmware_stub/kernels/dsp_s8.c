/* The DSP set for the Cortex-M7 (Armv7E-M's DSP extension, ACLE intrinsics from arm_acle.h):
 * CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, the pools, ADD and the matrix-vector products,
 * bit-exact with the reference kernels.
 *
 * Technique (the Armv7-M architecture manual's SXTB16 / SXTAB16 / SMLAD, and the usual q15
 * im2col formulation): an input row is widened once to 16 bits with the input offset added
 * (SXTAB16 takes bytes 0 and 2, or 1 and 3 after a rotation, and adds the offset to both halves),
 * stored as the pairs (x0, x2), (x1, x3) of each group of four so that the filter's bytes,
 * widened in place with SXTB16, meet their inputs; SMLAD then does two multiply-accumulates.
 * Padding is 0 in the widened row (zero point + offset), which contributes nothing, as the
 * reference's skipped taps. Two rows times two filters per pass reuse every widened word twice.
 * Depthwise: four channels per word, SMLABB / SMLATT per channel (a depth multiplier > 1: one
 * channel at a time). The requantization is TFLite's MultiplyByQuantizedMultiplier: the doubling
 * high multiply in 64-bit arithmetic, the rounding division as gemmlowp states it.
 * The sums are the reference's, exactly: no product or partial sum leaves int32 (int64 in the
 * matrix-vector products).
 * Defined only for builds with the DSP extension and without MVE (the M55 has the Helium set). */
#include <stdint.h>
#include <string.h>

#include "kernels.h"
#include "mculab/kernels_s8.h"

#if !(defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)) && defined(__ARM_FEATURE_DSP)
#include <arm_acle.h>

/* [0, depth): the int8 im2col row; then the two widened rows. */
static int16_t scratch[MCULAB_KERNEL_SCRATCH_BYTES / 2] __attribute__((aligned(8)));

/* SXTB16 / SXTAB16 of bytes 1 and 3: the instructions' own rotation (GCC does not fold a
 * separate rotate into them). */
static inline int32_t sxtb16_ror8(uint32_t x) {
  int32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}

static inline int32_t sxtab16_ror8(uint32_t a, uint32_t x) {
  int32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(x));
  return r;
}

static inline uint32_t rd32(const void* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

static inline void wr32(void* p, uint32_t v) { __builtin_memcpy(p, &v, 4); }

/* TFLite's MultiplyByQuantizedMultiplier: SaturatingRoundingDoublingHighMul is
 * floor((x * m + 2^30) / 2^31), saturated when x = m = INT32_MIN; RoundingDivideByPOT rounds
 * halves away from zero. */
static inline int32_t mbqm(int32_t x, int32_t m, int32_t shift) {
  if (shift > 0) x = (int32_t)((uint32_t)x << shift);
  int32_t hi = x == INT32_MIN && m == INT32_MIN
                   ? INT32_MAX
                   : (int32_t)(((int64_t)x * m + ((int64_t)1 << 30)) >> 31);
  if (shift < 0) { /* gemmlowp's own formulation: no 64-bit shift by a variable */
    const int e = -shift;
    const int32_t mask = (int32_t)((1u << e) - 1u);
    const int32_t threshold = (mask >> 1) + (hi < 0 ? 1 : 0);
    hi = (hi >> e) + ((hi & mask) > threshold ? 1 : 0);
  }
  return hi;
}

static inline int8_t requantize(uint32_t acc, const int32_t* bias, int32_t oc, int32_t m,
                                int32_t shift, int32_t offset, int32_t lo, int32_t hi) {
  if (bias != NULL) acc += (uint32_t)bias[oc];
  int32_t v = mbqm((int32_t)acc, m, shift) + offset;
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  return (int8_t)v;
}

/* dst[0, n): src + offset, each group of four stored as (x0, x2), (x1, x3). */
static void widen(int16_t* dst, const int8_t* src, int32_t n, int32_t offset) {
  const uint32_t off2 = ((uint32_t)offset & 0xFFFFu) | ((uint32_t)offset << 16);
  int32_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const uint32_t w = rd32(src + k);
    wr32(dst + k, (uint32_t)__sxtab16(off2, w));
    wr32(dst + k + 2, (uint32_t)sxtab16_ror8(off2, w));
  }
  for (; k < n; ++k) dst[k] = (int16_t)(src[k] + offset);
}

/* The requantization of one layer: per channel (conv) or per tensor (fully connected). */
typedef struct {
  const int32_t* multiplier;
  const int32_t* shift;
  int32_t per_channel;
  int32_t offset, lo, hi;
} requant;

/* out[r * out_c + oc] for n (1 or 2) widened rows a0, a1 of `depth` against every filter row.
 * Inlined into rows_x_filter_1 and _2, where n is a constant: one row computes no second. */
static inline __attribute__((always_inline)) void rows_x_filter(
    const int16_t* a0, const int16_t* a1, int32_t n, int32_t depth, int32_t out_c,
    const int8_t* filter, const int32_t* bias, const requant* q, int8_t* out) {
  if (n < 2) a1 = a0;
  const int32_t groups = depth >> 2;
  for (int32_t oc = 0; oc < out_c; oc += 2) {
    const int32_t m = out_c - oc < 2 ? 1 : 2;
    const int8_t* f0 = filter + (uint32_t)oc * (uint32_t)depth;
    const int8_t* f1 = m > 1 ? f0 + depth : f0;
    int32_t c00 = 0, c01 = 0, c10 = 0, c11 = 0;
    const int8_t *p0 = f0, *p1 = f1;
    const int16_t *x0 = a0, *x1 = a1;
    for (int32_t g = 0; g < groups; ++g) {
      const uint32_t w0 = rd32(p0), w1 = rd32(p1);
      const int32_t f0a = __sxtb16(w0), f0b = sxtb16_ror8(w0);
      const int32_t f1a = __sxtb16(w1), f1b = sxtb16_ror8(w1);
      const int32_t x0a = (int32_t)rd32(x0), x0b = (int32_t)rd32(x0 + 2);
      const int32_t x1a = n > 1 ? (int32_t)rd32(x1) : 0;
      const int32_t x1b = n > 1 ? (int32_t)rd32(x1 + 2) : 0;
      c00 = __smlad(x0a, f0a, c00);
      c00 = __smlad(x0b, f0b, c00);
      c01 = __smlad(x0a, f1a, c01);
      c01 = __smlad(x0b, f1b, c01);
      if (n > 1) {
        c10 = __smlad(x1a, f0a, c10);
        c10 = __smlad(x1b, f0b, c10);
        c11 = __smlad(x1a, f1a, c11);
        c11 = __smlad(x1b, f1b, c11);
      }
      p0 += 4;
      p1 += 4;
      x0 += 4;
      x1 += 4;
    }
    for (int32_t k = groups << 2; k < depth; ++k) {
      c00 += a0[k] * f0[k];
      c01 += a0[k] * f1[k];
      c10 += a1[k] * f0[k];
      c11 += a1[k] * f1[k];
    }
    for (int32_t j = 0; j < m; ++j) {
      const int32_t i = q->per_channel ? oc + j : 0;
      const int32_t mult = q->multiplier[i], sh = q->shift[i];
      out[oc + j] =
          requantize((uint32_t)(j ? c01 : c00), bias, oc + j, mult, sh, q->offset, q->lo, q->hi);
      if (n > 1) {
        out[out_c + oc + j] =
            requantize((uint32_t)(j ? c11 : c10), bias, oc + j, mult, sh, q->offset, q->lo, q->hi);
      }
    }
  }
}

static void rows_x_filter_1(const int16_t* a0, int32_t depth, int32_t out_c, const int8_t* filter,
                            const int32_t* bias, const requant* q, int8_t* out) {
  rows_x_filter(a0, a0, 1, depth, out_c, filter, bias, q, out);
}

static void rows_x_filter_2(const int16_t* a0, const int16_t* a1, int32_t depth, int32_t out_c,
                            const int8_t* filter, const int32_t* bias, const requant* q,
                            int8_t* out) {
  rows_x_filter(a0, a1, 2, depth, out_c, filter, bias, q, out);
}

/* The int8 im2col row of output pixel (b, oy, ox), padding as the zero point. */
static void im2col_row(const mculab_conv_s8_params* p, const int8_t* input, int32_t b, int32_t oy,
                       int32_t ox, int8_t pad, int8_t* dst) {
  const int32_t in_c = p->in_c, kw = p->filter_w;
  const int32_t y0 = oy * p->stride_h - p->pad_h, x0 = ox * p->stride_w - p->pad_w;
  for (int32_t fy = 0; fy < p->filter_h; ++fy) {
    const int32_t iy = y0 + p->dilation_h * fy;
    if (iy < 0 || iy >= p->in_h) {
      memset(dst, pad, (size_t)(kw * in_c));
      dst += kw * in_c;
      continue;
    }
    const int8_t* row = input + ((uint32_t)b * p->in_h + iy) * (uint32_t)p->in_w * in_c;
    for (int32_t fx = 0; fx < kw; ++fx) {
      const int32_t ix = x0 + p->dilation_w * fx;
      if (ix < 0 || ix >= p->in_w) {
        memset(dst, pad, (size_t)in_c);
      } else if (in_c == 1) {
        *dst = row[ix];
      } else {
        memcpy(dst, row + ix * in_c, (size_t)in_c);
      }
      dst += in_c;
    }
  }
}

static int offset_fits(int32_t input_offset) {
  return input_offset >= -128 && input_offset <= 128; /* a zero point, -offset, is int8 */
}

void mculab_conv2d_s8_nhwc_dsp(const mculab_conv_s8_params* p, const int8_t* input,
                               const int8_t* filter, const int32_t* bias, int8_t* output) {
  const int32_t depth = p->filter_h * p->filter_w * p->in_c;
  const int32_t stride = (depth + 3) & ~3; /* widened rows start 8-byte aligned */
  /* A 1x1 convolution whose every output reads an input pixel (no padding, not even a SAME
   * padding's extra row or column) is a matrix product over the input in place. */
  const int direct = p->filter_h == 1 && p->filter_w == 1 && p->pad_h == 0 && p->pad_w == 0 &&
                     (p->out_h - 1) * p->stride_h < p->in_h &&
                     (p->out_w - 1) * p->stride_w < p->in_w;
  if (!offset_fits(p->input_offset) ||
      (uint32_t)(2 * stride) * 2u + (uint32_t)stride > MCULAB_KERNEL_SCRATCH_BYTES) {
    mculab_conv2d_s8_nhwc_ref(p, input, filter, bias, output);
    return;
  }
  int8_t* row8 = (int8_t*)scratch;
  int16_t* wide[2] = {scratch + stride, scratch + 2 * stride};
  const requant q = {p->out_multiplier, p->out_shift, 1, p->output_offset, p->act_min, p->act_max};
  int32_t n = 0;
  int8_t* out = output;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int8_t* src;
        if (direct) {
          src = input +
                (((uint32_t)b * p->in_h + oy * p->stride_h) * p->in_w + ox * p->stride_w) * p->in_c;
        } else {
          im2col_row(p, input, b, oy, ox, (int8_t)(-p->input_offset), row8);
          src = row8;
        }
        widen(wide[n], src, depth, p->input_offset);
        if (++n == 2) {
          rows_x_filter_2(wide[0], wide[1], depth, p->out_c, filter, bias, &q, out);
          out += 2 * p->out_c;
          n = 0;
        }
      }
    }
  }
  if (n > 0) rows_x_filter_1(wide[0], depth, p->out_c, filter, bias, &q, out);
}

void mculab_fully_connected_s8_run_dsp(const mculab_fc_s8_params* p, const int8_t* input,
                                       const int8_t* filter, const int32_t* bias, int8_t* output) {
  const int32_t depth = p->depth;
  const int32_t stride = (depth + 3) & ~3;
  if (!offset_fits(p->input_offset) || (uint32_t)(2 * stride) * 2u > MCULAB_KERNEL_SCRATCH_BYTES) {
    mculab_fully_connected_s8_run_ref(p, input, filter, bias, output);
    return;
  }
  int16_t* wide[2] = {scratch, scratch + stride};
  const requant q = {&p->out_multiplier, &p->out_shift, 0,
                     p->output_offset,   p->act_min,    p->act_max};
  for (int32_t b = 0; b < p->batches; b += 2) {
    const int32_t n = p->batches - b < 2 ? 1 : 2;
    for (int32_t r = 0; r < n; ++r) {
      widen(wide[r], input + (uint32_t)(b + r) * (uint32_t)depth, depth, p->input_offset);
    }
    int8_t* out = output + (uint32_t)b * (uint32_t)p->out_c;
    if (n == 2) {
      rows_x_filter_2(wide[0], wide[1], depth, p->out_c, filter, bias, &q, out);
    } else {
      rows_x_filter_1(wide[0], depth, p->out_c, filter, bias, &q, out);
    }
  }
}

/* One tap of four channels: (x + offset) * f into a[0..3] (SMLABB / SMLATT per channel). */
static inline __attribute__((always_inline)) void dw_tap4(const int8_t* x, const int8_t* f,
                                                          uint32_t off2, int32_t a[4]) {
  const uint32_t xw = rd32(x), fw = rd32(f);
  const int32_t xa = __sxtab16(off2, xw), xb = sxtab16_ror8(off2, xw);
  const int32_t fa = __sxtb16(fw), fb = sxtb16_ror8(fw);
  a[0] = __smlabb(xa, fa, a[0]);
  a[2] = __smlatt(xa, fa, a[2]);
  a[1] = __smlabb(xb, fb, a[1]);
  a[3] = __smlatt(xb, fb, a[3]);
}

/* The 3x3 fast path: a window inside the input, dilation 1, the nine taps unrolled. */
static inline __attribute__((always_inline)) void dw_group3(const int8_t* x, const int8_t* f,
                                                            int32_t row_step, int32_t ch,
                                                            uint32_t off2, int32_t acc[4]) {
  acc[0] = acc[1] = acc[2] = acc[3] = 0;
  for (int32_t r = 0; r < 3; ++r) {
    dw_tap4(x, f, off2, acc);
    dw_tap4(x + ch, f + ch, off2, acc);
    dw_tap4(x + 2 * ch, f + 2 * ch, off2, acc);
    x += row_step;
    f += 3 * ch;
  }
}

/* Four channels of one output pixel: the ny x nx taps from x and f (the first tap inside the
 * input, at the group's first channel), each channel's sum in acc[]. */
static inline void dw_group(const int8_t* x, const int8_t* f, int32_t ny, int32_t nx,
                            int32_t row_step, int32_t col_step, int32_t filter_row, int32_t ch,
                            uint32_t off2, int32_t acc[4]) {
  acc[0] = acc[1] = acc[2] = acc[3] = 0;
  for (int32_t fy = 0; fy < ny; ++fy) {
    const int8_t* xr = x + fy * row_step;
    const int8_t* fr = f + fy * filter_row;
    for (int32_t fx = 0; fx < nx; ++fx) {
      dw_tap4(xr, fr, off2, acc);
      xr += col_step;
      fr += ch;
    }
  }
}

/* A depth multiplier > 1: output channel c reads input channel c / multiplier, so no two
 * neighbouring channels share an input word; one channel at a time, over the taps inside the
 * input, with the requantization above. */
static void depthwise_multiplier(const mculab_conv_s8_params* p, const int8_t* input,
                                 const int8_t* filter, const int32_t* bias, int8_t* output) {
  const int32_t in_c = p->in_c, ch = p->out_c, kw = p->filter_w, dm = p->depth_multiplier;
  const int32_t row_step = p->dilation_h * p->in_w * in_c, col_step = p->dilation_w * in_c;
  const int32_t off = p->input_offset;
  int8_t* out = output;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      const int32_t y0 = oy * p->stride_h - p->pad_h;
      int32_t fy0, fy1;
      mculab_taps_inside(y0, p->dilation_h, p->filter_h, p->in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < p->out_w; ++ox, out += ch) {
        const int32_t x0 = ox * p->stride_w - p->pad_w;
        int32_t fx0, fx1;
        mculab_taps_inside(x0, p->dilation_w, kw, p->in_w, &fx0, &fx1);
        const int8_t* in0 =
            input + ((b * p->in_h + y0) * p->in_w + x0) * in_c + fy0 * row_step + fx0 * col_step;
        const int8_t* f0 = filter + (fy0 * kw + fx0) * ch;
        for (int32_t oc = 0; oc < ch; ++oc) {
          const int8_t* x_ch = in0 + oc / dm;
          int32_t acc = 0;
          for (int32_t fy = 0; fy < fy1 - fy0; ++fy) {
            const int8_t* x = x_ch + fy * row_step;
            const int8_t* f = f0 + fy * kw * ch + oc;
            for (int32_t fx = fx0; fx < fx1; ++fx, x += col_step, f += ch) {
              acc += *f * (*x + off);
            }
          }
          out[oc] = requantize((uint32_t)acc, bias, oc, p->out_multiplier[oc], p->out_shift[oc],
                               p->output_offset, p->act_min, p->act_max);
        }
      }
    }
  }
}

void mculab_depthwise_conv2d_s8_nhwc_dsp(const mculab_conv_s8_params* p, const int8_t* input,
                                         const int8_t* filter, const int32_t* bias,
                                         int8_t* output) {
  if (p->input_offset < -32000 || p->input_offset > 32000) {
    mculab_depthwise_conv2d_s8_nhwc_ref(p, input, filter, bias, output);
    return;
  }
  if (p->depth_multiplier != 1) {
    depthwise_multiplier(p, input, filter, bias, output);
    return;
  }
  const int32_t in_h = p->in_h, in_w = p->in_w, ch = p->out_c;
  const int32_t kh = p->filter_h, kw = p->filter_w;
  const int32_t off = p->input_offset;
  const uint32_t off2 = ((uint32_t)off & 0xFFFFu) | ((uint32_t)off << 16);
  const int32_t row_step = p->dilation_h * in_w * ch, col_step = p->dilation_w * ch;
  const int32_t groups = ch >> 2;
  const int fast3 = kh == 3 && kw == 3 && p->dilation_h == 1 && p->dilation_w == 1;
  /* Locals, not p->: the int8 output stores may alias anything, so p would be read again. */
  const int32_t* mult = p->out_multiplier;
  const int32_t* shift = p->out_shift;
  const int32_t out_off = p->output_offset, lo = p->act_min, hi = p->act_max;
  const int32_t out_h = p->out_h, out_w = p->out_w;
  const int32_t stride_h = p->stride_h, stride_w = p->stride_w, pad_h = p->pad_h;
  const int32_t pad_w = p->pad_w, dil_h = p->dilation_h, dil_w = p->dilation_w;
  int8_t* out = output;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < out_h; ++oy) {
      const int32_t y0 = oy * stride_h - pad_h;
      int32_t fy0, fy1;
      mculab_taps_inside(y0, dil_h, kh, in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < out_w; ++ox, out += ch) {
        const int32_t x0 = ox * stride_w - pad_w;
        int32_t fx0, fx1;
        mculab_taps_inside(x0, dil_w, kw, in_w, &fx0, &fx1);
        const int8_t* in_px = input + (((int32_t)b * in_h + y0) * in_w + x0) * ch;
        const int8_t* in0 = in_px + fy0 * row_step + fx0 * col_step;
        const int8_t* f00 = filter + (fy0 * kw + fx0) * ch;
        const int full3 = fast3 && fy0 == 0 && fy1 == 3 && fx0 == 0 && fx1 == 3;
        for (int32_t g = 0; g < groups; ++g) {
          const int32_t c0 = g << 2;
          int32_t acc[4];
          if (full3) {
            dw_group3(in0 + c0, f00 + c0, row_step, ch, off2, acc);
          } else {
            dw_group(in0 + c0, f00 + c0, fy1 - fy0, fx1 - fx0, row_step, col_step, kw * ch, ch,
                     off2, acc);
          }
          for (int32_t j = 0; j < 4; ++j) {
            const int32_t oc = c0 + j;
            out[oc] = requantize((uint32_t)acc[j], bias, oc, mult[oc], shift[oc], out_off, lo, hi);
          }
        }
        for (int32_t oc = groups << 2; oc < ch; ++oc) {
          int32_t a = 0;
          for (int32_t fy = 0; fy < fy1 - fy0; ++fy) {
            for (int32_t fx = 0; fx < fx1 - fx0; ++fx) {
              a += f00[fy * kw * ch + fx * ch + oc] *
                   (in0[fy * row_step + fx * col_step + oc] + off);
            }
          }
          out[oc] = requantize((uint32_t)a, bias, oc, mult[oc], shift[oc], out_off, lo, hi);
        }
      }
    }
  }
}

/* MAX_POOL_2D: four channels per word, SSUB8 setting the GE flags per byte and SEL keeping the
 * larger; the channels past the last whole word one at a time. */
void mculab_max_pool_s8_dsp(const mculab_pool_s8_params* p, const int8_t* input, int8_t* output) {
  const int32_t ch = p->channels, words = ch >> 2;
  const uint32_t lo = 0x01010101u * (uint8_t)p->act_min, hi = 0x01010101u * (uint8_t)p->act_max;
  int8_t* out = output;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox, out += ch) {
        const mculab_pool_window win = mculab_pool_window_at(p, input, b, oy, ox);
        for (int32_t w = 0; w < words; ++w) {
          uint32_t m = 0x80808080u;
          for (int32_t fy = 0; fy < win.rows; ++fy) {
            const int8_t* x = win.first + fy * win.row_step + 4 * w;
            for (int32_t fx = 0; fx < win.cols; ++fx, x += ch) {
              const uint32_t v = rd32(x);
              (void)__ssub8(v, m);
              m = __sel(v, m);
            }
          }
          (void)__ssub8(m, lo);
          m = __sel(m, lo);
          (void)__ssub8(m, hi);
          m = __sel(hi, m);
          wr32(out + 4 * w, m);
        }
        for (int32_t c = words << 2; c < ch; ++c) {
          int32_t m = -128;
          for (int32_t fy = 0; fy < win.rows; ++fy) {
            const int8_t* x = win.first + fy * win.row_step + c;
            for (int32_t fx = 0; fx < win.cols; ++fx, x += ch) m = *x > m ? *x : m;
          }
          m = m < p->act_min ? p->act_min : m;
          out[c] = (int8_t)(m > p->act_max ? p->act_max : m);
        }
      }
    }
  }
}

/* AVERAGE_POOL_2D: the window sums of four channels in two words of 16-bit halves (SXTAB16,
 * exact for windows of at most 256 values), then the reference's rounded division per value. */
int mculab_average_pool_s8_dsp(const mculab_pool_s8_params* p, const int8_t* input,
                               int8_t* output) {
  if ((int64_t)p->filter_h * p->filter_w > 256) return mculab_average_pool_s8_ref(p, input, output);
  const int32_t ch = p->channels, words = ch >> 2;
  int8_t* out = output;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox, out += ch) {
        const mculab_pool_window win = mculab_pool_window_at(p, input, b, oy, ox);
        if (win.rows == 0 || win.cols == 0) return 0;
        const int32_t count = win.rows * win.cols;
        for (int32_t c = 0; c < ch; ++c) {
          int32_t sum[4];
          int32_t n = 1;
          if (c < words << 2) {
            uint32_t even = 0, odd = 0; /* channels c, c + 2 and c + 1, c + 3 */
            for (int32_t fy = 0; fy < win.rows; ++fy) {
              const int8_t* x = win.first + fy * win.row_step + c;
              for (int32_t fx = 0; fx < win.cols; ++fx, x += ch) {
                const uint32_t v = rd32(x);
                even = (uint32_t)__sxtab16(even, v);
                odd = (uint32_t)sxtab16_ror8(odd, v);
              }
            }
            sum[0] = (int16_t)even;
            sum[1] = (int16_t)odd;
            sum[2] = (int16_t)(even >> 16);
            sum[3] = (int16_t)(odd >> 16);
            n = 4;
          } else {
            sum[0] = 0;
            for (int32_t fy = 0; fy < win.rows; ++fy) {
              const int8_t* x = win.first + fy * win.row_step + c;
              for (int32_t fx = 0; fx < win.cols; ++fx, x += ch) sum[0] += *x;
            }
          }
          for (int32_t k = 0; k < n; ++k) {
            int32_t v = sum[k];
            v = v > 0 ? (v + count / 2) / count : (v - count / 2) / count;
            v = v < p->act_min ? p->act_min : v;
            out[c + k] = (int8_t)(v > p->act_max ? p->act_max : v);
          }
          c += n - 1;
        }
      }
    }
  }
  return 1;
}

/* ADD: the reference's arithmetic with the 32-bit requantization above. */
void mculab_add_s8_dsp(const mculab_add_s8_params* p, const int8_t* input1, const int8_t* input2,
                       int8_t* output, uint32_t n) {
  const int32_t off1 = p->input1_offset, off2 = p->input2_offset, ls = p->left_shift;
  const int32_t m1 = p->input1_multiplier, s1 = p->input1_shift;
  const int32_t m2 = p->input2_multiplier, s2 = p->input2_shift;
  const int32_t mo = p->output_multiplier, so = p->output_shift, oo = p->output_offset;
  const int32_t lo = p->act_min, hi = p->act_max;
  for (uint32_t i = 0; i < n; ++i) {
    const int32_t v1 = mbqm((int32_t)((uint32_t)(input1[i] + off1) << ls), m1, s1);
    const int32_t v2 = mbqm((int32_t)((uint32_t)(input2[i] + off2) << ls), m2, s2);
    int32_t v = mbqm(v1 + v2, mo, so) + oo;
    v = v < lo ? lo : v;
    output[i] = (int8_t)(v > hi ? hi : v);
  }
}

/* The matrices times vectors: x widened (int8, offset added) or reordered (int16) into the
 * scratch a chunk at a time, as the pairs (x0, x2), (x1, x3) of each group of four, then two
 * weight rows per pass against it, SXTB16 and SMLALD into 64-bit sums (whose low 32 bits are the
 * int8 form's wrapping int32 sums: SMLALD costs what SMLAD does). */
enum { kMatVecChunk = MCULAB_KERNEL_SCRATCH_BYTES / 2 }; /* a multiple of 4 */

static void pair_up_s16(int16_t* dst, const int16_t* src, int32_t n) {
  int32_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const uint32_t a = rd32(src + k), b = rd32(src + k + 2);
    wr32(dst + k, (a & 0xFFFFu) | (b << 16));
    wr32(dst + k + 2, (a >> 16) | (b & 0xFFFF0000u));
  }
  for (; k < n; ++k) dst[k] = src[k];
}

/* Both forms: x8 with x_offset into acc32, or x16 into acc64. */
static void mat_vec(const int8_t* w, int32_t w_stride, const int8_t* x8, const int16_t* x16,
                    int32_t x_offset, int32_t rows, int32_t depth, int32_t* acc32, int64_t* acc64) {
  for (int32_t k0 = 0; k0 < depth; k0 += kMatVecChunk) {
    const int32_t n = depth - k0 < kMatVecChunk ? depth - k0 : kMatVecChunk;
    if (x16 != NULL) {
      pair_up_s16(scratch, x16 + k0, n);
    } else {
      widen(scratch, x8 + k0, n, x_offset);
    }
    for (int32_t r = 0; r < rows; r += 2) {
      const int32_t m = rows - r < 2 ? 1 : 2;
      const int8_t* p0 = w + (int64_t)r * w_stride + k0;
      const int8_t* p1 = m > 1 ? p0 + w_stride : p0;
      const int16_t* xs = scratch;
      int64_t c0 = 0, c1 = 0; /* scalars: an array would live on the stack */
      for (int32_t g = n >> 2; g > 0; --g) {
        const uint32_t w0 = rd32(p0), w1 = rd32(p1);
        const int32_t xa = (int32_t)rd32(xs), xb = (int32_t)rd32(xs + 2);
        c0 = __smlald(xa, __sxtb16(w0), c0);
        c0 = __smlald(xb, sxtb16_ror8(w0), c0);
        c1 = __smlald(xa, __sxtb16(w1), c1);
        c1 = __smlald(xb, sxtb16_ror8(w1), c1);
        p0 += 4;
        p1 += 4;
        xs += 4;
      }
      for (int32_t j = 0; j < (n & 3); ++j) {
        c0 += (int64_t)xs[j] * p0[j];
        c1 += (int64_t)xs[j] * p1[j];
      }
      for (int32_t i = 0; i < m; ++i) {
        const int64_t c = i == 0 ? c0 : c1;
        if (acc64 != NULL) {
          acc64[r + i] += c;
        } else {
          acc32[r + i] = (int32_t)((uint32_t)acc32[r + i] + (uint32_t)(uint64_t)c);
        }
      }
    }
  }
}

void mculab_mat_vec_s8s8_s32_dsp(const int8_t* w, int32_t w_stride, const int8_t* x,
                                 int32_t x_offset, int32_t rows, int32_t depth, int32_t* acc) {
  mat_vec(w, w_stride, x, NULL, x_offset, rows, depth, acc, NULL);
}

void mculab_mat_vec_s8s16_s64_dsp(const int8_t* w, int32_t w_stride, const int16_t* x, int32_t rows,
                                  int32_t depth, int64_t* acc) {
  mat_vec(w, w_stride, NULL, x, 0, rows, depth, NULL, acc);
}

#endif
