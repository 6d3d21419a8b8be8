/* The Helium (M-profile Vector Extension) set for the Cortex-M55: CONV_2D, DEPTHWISE_CONV_2D,
 * FULLY_CONNECTED, the pools, ADD and the matrix-vector products with GCC's arm_mve.h intrinsics,
 * bit-exact with the reference kernels.
 *
 * Why they match: the accumulators are the same integer sums in another order
 * (sum f * (x + offset) = sum f * x + offset * sum f, exact modulo 2^32 like the reference's
 * wrap-around bias), and the requantization is TFLite's MultiplyByQuantizedMultiplier done four
 * lanes at a time: VQRDMULH is gemmlowp's SaturatingRoundingDoublingHighMul bit for bit (both
 * round (a * b + 2^30) / 2^31 to the floor and saturate only INT32_MIN * INT32_MIN), and
 * RoundingDivideByPOT (halves away from zero) is VRSHL (halves up) applied to x - 1 when x < 0
 * (saturating, which changes nothing at INT32_MIN since it is a multiple of the divisor).
 *
 * Technique (Arm's MVE architecture reference; the usual GEMM formulation of convolution):
 *   conv: output pixels four at a time against one filter row, 16 input channels per VMLADAVA,
 *     the filter row's sum taken once per chunk (VADDVA) for the input offset; a 1x1 unpadded
 *     convolution reads the input rows in place (a matrix product), any other shape goes through
 *     im2col rows in a static scratch buffer, padding written as the input zero point (which
 *     contributes f * (zp - zp) = 0, as the reference's skipped taps do);
 *   depthwise: sixteen channels per tap (four vectors, widening loads, VMUL + VADD), the 3x3
 *     taps unrolled; windows inside the input use the filter's per-channel sums for the input
 *     offset, windows cut by the padding add it per tap; the last channels four at a time,
 *     predicated, and a depth multiplier > 1 with gather loads of each output's input channel;
 *   pooling and add: see each function;
 *   fully connected: four output rows per input chunk, the filter sums from
 *     mculab_fully_connected_s8_prepare when given;
 *   matrix times vector: the fully connected's four rows per chunk (int8 vector), or two rows
 *     per eight int16 values with the weights widened by the load and VMLALDAVA's 64-bit sums.
 * Defined only where __ARM_FEATURE_MVE says the integer MVE is there. */
#include <stdint.h>

#include "kernels.h"
#include "mculab/kernels_s8.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>

/* im2col rows, or the depthwise filter sums. */
static int8_t scratch[MCULAB_KERNEL_SCRATCH_BYTES] __attribute__((aligned(16)));

/* MultiplyByQuantizedMultiplier on four lanes with one multiplier and shift. */
static inline int32x4_t mbqm_n(int32x4_t x, int32_t m, int32_t shift) {
  if (shift > 0) x = vshlq_r_s32(x, shift);
  x = vqrdmulhq_n_s32(x, m);
  if (shift < 0) {
    x = vqaddq_s32(x, vshrq_n_s32(x, 31));
    x = vrshlq_n_s32(x, shift);
  }
  return x;
}

/* The same with a multiplier and a shift per lane. */
static inline int32x4_t mbqm_v(int32x4_t x, int32x4_t m, int32x4_t shift) {
  const int32x4_t zero = vdupq_n_s32(0);
  x = vshlq_s32(x, vmaxq_s32(shift, zero));
  x = vqrdmulhq_s32(x, m);
  const int32x4_t right = vminq_s32(shift, zero);
  x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31));
  return vrshlq_s32(x, right);
}

static inline int32x4_t clamp_out(int32x4_t x, int32_t offset, int32_t lo, int32_t hi) {
  x = vaddq_n_s32(x, offset);
  x = vmaxq_s32(x, vdupq_n_s32(lo));
  return vminq_s32(x, vdupq_n_s32(hi));
}

static inline void copy_bytes(int8_t* dst, const int8_t* src, int32_t n) {
  while (n > 0) {
    const mve_pred16_t p = vctp8q((uint32_t)n);
    vstrbq_p_s8(dst, vldrbq_z_s8(src, p), p);
    dst += 16;
    src += 16;
    n -= 16;
  }
}

static inline void fill_bytes(int8_t* dst, int8_t v, int32_t n) {
  const int8x16_t vv = vdupq_n_s8(v);
  while (n > 0) {
    vstrbq_p_s8(dst, vv, vctp8q((uint32_t)n));
    dst += 16;
    n -= 16;
  }
}

/* out[r * out_c + oc] for the n (1 to 4) rows of `depth` values at rows[]. */
static void conv_rows(const int8_t* const rows[4], int32_t n, int32_t depth,
                      const mculab_conv_s8_params* p, const int8_t* filter, const int32_t* bias,
                      int8_t* out) {
  const int32_t out_c = p->out_c, input_offset = p->input_offset;
  const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0u, 1), (uint32_t)out_c);
  const mve_pred16_t store = vctp32q((uint32_t)n);
  const int8_t* r0 = rows[0];
  const int8_t* r1 = rows[n > 1 ? 1 : 0];
  const int8_t* r2 = rows[n > 2 ? 2 : 0];
  const int8_t* r3 = rows[n > 3 ? 3 : 0];
  const int32_t chunks = depth >> 4, tail = depth & 15;
  const mve_pred16_t tp = vctp8q((uint32_t)tail);
  const int8_t* f = filter;
  for (int32_t oc = 0; oc < out_c; ++oc) {
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, sf = 0;
    const int8_t *x0 = r0, *x1 = r1, *x2 = r2, *x3 = r3;
    for (int32_t k = 0; k < chunks; ++k) {
      const int8x16_t vf = vld1q_s8(f);
      sf = vaddvaq_s8(sf, vf);
      a0 = vmladavaq_s8(a0, vld1q_s8(x0), vf);
      a1 = vmladavaq_s8(a1, vld1q_s8(x1), vf);
      a2 = vmladavaq_s8(a2, vld1q_s8(x2), vf);
      a3 = vmladavaq_s8(a3, vld1q_s8(x3), vf);
      f += 16;
      x0 += 16;
      x1 += 16;
      x2 += 16;
      x3 += 16;
    }
    if (tail != 0) {
      const int8x16_t vf = vldrbq_z_s8(f, tp);
      sf = vaddvaq_s8(sf, vf);
      a0 = vmladavaq_s8(a0, vldrbq_z_s8(x0, tp), vf);
      a1 = vmladavaq_s8(a1, vldrbq_z_s8(x1, tp), vf);
      a2 = vmladavaq_s8(a2, vldrbq_z_s8(x2, tp), vf);
      a3 = vmladavaq_s8(a3, vldrbq_z_s8(x3, tp), vf);
      f += tail;
    }
    int32x4_t acc = vdupq_n_s32(a0);
    acc = vsetq_lane_s32(a1, acc, 1);
    acc = vsetq_lane_s32(a2, acc, 2);
    acc = vsetq_lane_s32(a3, acc, 3);
    /* Modulo 2^32, as the reference adds its bias. */
    uint32_t add = (uint32_t)sf * (uint32_t)input_offset;
    if (bias != NULL) add += (uint32_t)bias[oc];
    acc = vaddq_n_s32(acc, (int32_t)add);
    acc = mbqm_n(acc, p->out_multiplier[oc], p->out_shift[oc]);
    acc = clamp_out(acc, p->output_offset, p->act_min, p->act_max);
    vstrbq_scatter_offset_p_s32(out + oc, offsets, acc, store);
  }
}

/* The im2col row of output pixel (b, oy, ox): kh * kw * in_c values, padding as the zero point. */
static void im2col_row(const mculab_conv_s8_params* p, const int8_t* input, int32_t b, int32_t oy,
                       int32_t ox, int8_t pad, int8_t* dst) {
  const int32_t in_c = p->in_c, kw = p->filter_w;
  const int32_t y0 = oy * p->stride_h - p->pad_h, x0 = ox * p->stride_w - p->pad_w;
  const int32_t span = kw * in_c;
  for (int32_t fy = 0; fy < p->filter_h; ++fy) {
    const int32_t iy = y0 + p->dilation_h * fy;
    if (iy < 0 || iy >= p->in_h) {
      fill_bytes(dst, pad, span);
      dst += span;
      continue;
    }
    const int8_t* row = input + ((uint32_t)b * p->in_h + iy) * (uint32_t)p->in_w * in_c;
    if (p->dilation_w == 1 && x0 >= 0 && x0 + kw <= p->in_w) {
      copy_bytes(dst, row + x0 * in_c, span);
      dst += span;
      continue;
    }
    for (int32_t fx = 0; fx < kw; ++fx) {
      const int32_t ix = x0 + p->dilation_w * fx;
      if (ix < 0 || ix >= p->in_w) {
        fill_bytes(dst, pad, in_c);
      } else {
        copy_bytes(dst, row + ix * in_c, in_c);
      }
      dst += in_c;
    }
  }
}

void mculab_conv2d_s8_nhwc_mve(const mculab_conv_s8_params* p, const int8_t* input,
                               const int8_t* filter, const int32_t* bias, int8_t* output) {
  const int32_t depth = p->filter_h * p->filter_w * p->in_c;
  /* A 1x1 convolution whose every output reads an input pixel (no padding, not even a SAME
   * padding's extra row or column) is a matrix product over the input in place. */
  const int direct = p->filter_h == 1 && p->filter_w == 1 && p->pad_h == 0 && p->pad_w == 0 &&
                     (p->out_h - 1) * p->stride_h < p->in_h &&
                     (p->out_w - 1) * p->stride_w < p->in_w;
  const int32_t pad_value = -p->input_offset;
  int32_t rows_cap = direct ? 4 : (int32_t)(MCULAB_KERNEL_SCRATCH_BYTES / (uint32_t)depth);
  if (rows_cap > 4) rows_cap = 4;
  if (rows_cap == 0 || (!direct && (pad_value < -128 || pad_value > 127))) {
    mculab_conv2d_s8_nhwc_ref(p, input, filter, bias, output);
    return;
  }
  const int8_t* rows[4];
  int32_t n = 0;
  int8_t* out = output;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        if (direct) {
          const int32_t iy = oy * p->stride_h, ix = ox * p->stride_w;
          rows[n] = input + (((uint32_t)b * p->in_h + iy) * p->in_w + ix) * p->in_c;
        } else {
          int8_t* dst = scratch + (uint32_t)n * (uint32_t)depth;
          im2col_row(p, input, b, oy, ox, (int8_t)pad_value, dst);
          rows[n] = dst;
        }
        if (++n == rows_cap) {
          conv_rows(rows, n, depth, p, filter, bias, out);
          out += n * p->out_c;
          n = 0;
        }
      }
    }
  }
  if (n > 0) conv_rows(rows, n, depth, p, filter, bias, out);
}

/* One output pixel of a depthwise conv with depth multiplier 1: channels c0..c0+3 (pred). */
static inline int32x4_t dw_block(const mculab_conv_s8_params* p, const int8_t* in_px,
                                 const int8_t* filter, int32_t c0, int32_t fy0, int32_t fy1,
                                 int32_t fx0, int32_t fx1, int offset_per_tap, mve_pred16_t pr,
                                 const uint32_t* in_channel) {
  /* in_channel (depth multiplier > 1): each output channel's input channel, for a gather load;
   * NULL: output channel c reads input channel c. */
  const int32_t in_c = p->in_c, ch = p->out_c, kw = p->filter_w;
  const int32_t row_step = p->dilation_h * p->in_w * in_c, col_step = p->dilation_w * in_c;
  const int32_t off = p->input_offset;
  const uint32x4_t idx = in_channel != NULL ? vldrwq_z_u32(in_channel + c0, pr) : vdupq_n_u32(0);
  int32x4_t acc = vdupq_n_s32(0);
  const int8_t* in_row = in_px + fy0 * row_step + fx0 * col_step + (in_channel != NULL ? 0 : c0);
  const int8_t* f_row = filter + (fy0 * kw + fx0) * ch + c0;
  for (int32_t fy = fy0; fy < fy1; ++fy) {
    const int8_t* x = in_row;
    const int8_t* f = f_row;
    for (int32_t fx = fx0; fx < fx1; ++fx) {
      int32x4_t vx =
          in_channel != NULL ? vldrbq_gather_offset_z_s32(x, idx, pr) : vldrbq_z_s32(x, pr);
      if (offset_per_tap) vx = vaddq_n_s32(vx, off);
      acc = vaddq_s32(acc, vmulq_s32(vx, vldrbq_z_s32(f, pr)));
      x += col_step;
      f += ch;
    }
    in_row += row_step;
    f_row += kw * ch;
  }
  return acc;
}

/* One row of a 3x3 window, dilation 1, accumulated into acc. */
static inline int32x4_t dw_row3(int32x4_t acc, const int8_t* x, const int8_t* f, int32_t in_c,
                                mve_pred16_t pr) {
  acc = vaddq_s32(acc, vmulq_s32(vldrbq_z_s32(x, pr), vldrbq_z_s32(f, pr)));
  acc = vaddq_s32(acc, vmulq_s32(vldrbq_z_s32(x + in_c, pr), vldrbq_z_s32(f + in_c, pr)));
  return vaddq_s32(acc, vmulq_s32(vldrbq_z_s32(x + 2 * in_c, pr), vldrbq_z_s32(f + 2 * in_c, pr)));
}

/* A 3x3 window inside the input, dilation 1: the taps unrolled. */
static inline int32x4_t dw_block_3x3(const int8_t* in_px, int32_t row_step, int32_t in_c,
                                     const int8_t* f, mve_pred16_t pr) {
  int32x4_t acc = dw_row3(vdupq_n_s32(0), in_px, f, in_c, pr);
  acc = dw_row3(acc, in_px + row_step, f + 3 * in_c, in_c, pr);
  return dw_row3(acc, in_px + 2 * row_step, f + 6 * in_c, in_c, pr);
}

/* What a depthwise output block needs after its accumulation. */
typedef struct {
  const int32_t *bias, *multiplier, *shift, *sums;
  int32_t input_offset, output_offset, act_min, act_max;
} dw_out;

/* Channels c..c+3: the input offset through the filter sums (sums != NULL), the bias, the
 * requantization, the clamp, the store; all four lanes real (full) or those of pr. */
static inline void dw_store(int32x4_t acc, const dw_out* o, int32_t c, int8_t* out, int full,
                            mve_pred16_t pr) {
  if (full) {
    if (o->sums != NULL) acc = vmlaq_n_s32(acc, vld1q_s32(o->sums + c), o->input_offset);
    if (o->bias != NULL) acc = vaddq_s32(acc, vld1q_s32(o->bias + c));
    acc = mbqm_v(acc, vld1q_s32(o->multiplier + c), vld1q_s32(o->shift + c));
    vstrbq_s32(out + c, clamp_out(acc, o->output_offset, o->act_min, o->act_max));
  } else {
    if (o->sums != NULL) acc = vmlaq_n_s32(acc, vldrwq_z_s32(o->sums + c, pr), o->input_offset);
    if (o->bias != NULL) acc = vaddq_s32(acc, vldrwq_z_s32(o->bias + c, pr));
    acc = mbqm_v(acc, vldrwq_z_s32(o->multiplier + c, pr), vldrwq_z_s32(o->shift + c, pr));
    vstrbq_p_s32(out + c, clamp_out(acc, o->output_offset, o->act_min, o->act_max), pr);
  }
}

/* Sixteen channels c..c+15 of one output pixel: the ny x nx taps inside the input from x (the
 * first such tap, channel c) and f (its filter tap, channel c), four vectors of four channels
 * sharing each tap's address arithmetic; the input offset through the filter sums (o->sums) or,
 * for a window cut by the padding, per tap (f * offset). */
static inline int32x4_t dw_tap(int32x4_t acc, const int8_t* x, const int8_t* f, int per_tap,
                               int32_t offset) {
  const int32x4_t vf = vldrbq_s32(f);
  acc = vaddq_s32(acc, vmulq_s32(vldrbq_s32(x), vf));
  return per_tap ? vmlaq_n_s32(acc, vf, offset) : acc;
}

static inline void dw_16(const int8_t* x, const int8_t* f, int32_t ny, int32_t nx, int32_t row_step,
                         int32_t col_step, int32_t ch, int32_t kw, const dw_out* o, int32_t c,
                         int8_t* out) {
  const int per_tap = o->sums == NULL;
  const int32_t off = o->input_offset;
  int32x4_t a0 = vdupq_n_s32(0), a1 = a0, a2 = a0, a3 = a0;
  for (int32_t fy = 0; fy < ny; ++fy) {
    const int8_t* xr = x + fy * row_step;
    const int8_t* fr = f + fy * kw * ch;
    for (int32_t fx = 0; fx < nx; ++fx) {
      a0 = dw_tap(a0, xr, fr, per_tap, off);
      a1 = dw_tap(a1, xr + 4, fr + 4, per_tap, off);
      a2 = dw_tap(a2, xr + 8, fr + 8, per_tap, off);
      a3 = dw_tap(a3, xr + 12, fr + 12, per_tap, off);
      xr += col_step;
      fr += ch;
    }
  }
  dw_store(a0, o, c, out, 1, 0);
  dw_store(a1, o, c + 4, out, 1, 0);
  dw_store(a2, o, c + 8, out, 1, 0);
  dw_store(a3, o, c + 12, out, 1, 0);
}

void mculab_depthwise_conv2d_s8_nhwc_mve(const mculab_conv_s8_params* p, const int8_t* input,
                                         const int8_t* filter, const int32_t* bias,
                                         int8_t* output) {
  const int32_t in_h = p->in_h, in_w = p->in_w, in_c = p->in_c, ch = p->out_c;
  const int32_t kh = p->filter_h, kw = p->filter_w, taps = kh * kw, dm = p->depth_multiplier;
  /* Each channel's filter sum, for the windows inside the input; with a depth multiplier, each
   * output channel's input channel after them. */
  int32_t* sums = (int32_t*)(void*)scratch;
  uint32_t* in_channel = dm != 1 ? (uint32_t*)(void*)(scratch + 4u * (uint32_t)ch) : NULL;
  const uint32_t need = (uint32_t)ch * (dm != 1 ? 8u : 4u);
  if (dm != 1 && need > MCULAB_KERNEL_SCRATCH_BYTES) {
    mculab_depthwise_conv2d_s8_nhwc_ref(p, input, filter, bias, output);
    return;
  }
  for (int32_t c = 0; dm != 1 && c < ch; ++c) in_channel[c] = (uint32_t)(c / dm);
  const int have_sums = need <= MCULAB_KERNEL_SCRATCH_BYTES;
  if (have_sums) {
    for (int32_t c = 0; c < ch; ++c) sums[c] = 0;
    for (int32_t t = 0; t < taps; ++t) {
      const int8_t* f = filter + t * ch;
      for (int32_t c = 0; c < ch; ++c) sums[c] += f[c];
    }
  }
  const dw_out with_sums = {bias,       p->out_multiplier, p->out_shift,
                            sums,       p->input_offset,   p->output_offset,
                            p->act_min, p->act_max};
  dw_out per_tap = with_sums;
  per_tap.sums = NULL;
  /* The 16-channel and 3x3 paths read the input channel of each output channel in place. */
  const int wide = dm == 1;
  const int fast3 = wide && kh == 3 && kw == 3 && p->dilation_h == 1 && p->dilation_w == 1;
  const int32_t row_step = p->dilation_h * in_w * in_c, col_step = p->dilation_w * in_c;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      const int32_t y0 = oy * p->stride_h - p->pad_h;
      int32_t fy0, fy1;
      mculab_taps_inside(y0, p->dilation_h, kh, in_h, &fy0, &fy1);
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int32_t x0 = ox * p->stride_w - p->pad_w;
        int32_t fx0, fx1;
        mculab_taps_inside(x0, p->dilation_w, kw, in_w, &fx0, &fx1);
        const int inside = have_sums && fy0 == 0 && fy1 == kh && fx0 == 0 && fx1 == kw;
        const int8_t* in_px = input + (((int32_t)b * in_h + y0) * in_w + x0) * in_c;
        int8_t* out = output + (((uint32_t)b * p->out_h + oy) * p->out_w + ox) * ch;
        int32_t c0 = 0;
        if (wide && inside) {
          for (; c0 + 16 <= ch; c0 += 16) {
            if (fast3) {
              dw_16(in_px + c0, filter + c0, 3, 3, row_step, ch, ch, 3, &with_sums, c0, out);
            } else {
              dw_16(in_px + c0, filter + c0, kh, kw, row_step, col_step, ch, kw, &with_sums, c0,
                    out);
            }
          }
        } else if (wide && fy0 < fy1 && fx0 < fx1) {
          const int8_t* x = in_px + fy0 * row_step + fx0 * col_step;
          const int8_t* f = filter + (fy0 * kw + fx0) * ch;
          for (; c0 + 16 <= ch; c0 += 16) {
            dw_16(x + c0, f + c0, fy1 - fy0, fx1 - fx0, row_step, col_step, ch, kw, &per_tap, c0,
                  out);
          }
        }
        for (; c0 < ch; c0 += 4) {
          const mve_pred16_t pr = vctp32q((uint32_t)(ch - c0));
          if (inside) {
            const int32x4_t acc =
                fast3 ? dw_block_3x3(in_px + c0, row_step, ch, filter + c0, pr)
                      : dw_block(p, in_px, filter, c0, 0, kh, 0, kw, 0, pr, in_channel);
            dw_store(acc, &with_sums, c0, out, 0, pr);
          } else if (fy0 < fy1 && fx0 < fx1) {
            dw_store(dw_block(p, in_px, filter, c0, fy0, fy1, fx0, fx1, 1, pr, in_channel),
                     &per_tap, c0, out, 0, pr);
          } else {
            dw_store(vdupq_n_s32(0), &per_tap, c0, out, 0, pr);
          }
        }
      }
    }
  }
}

/* The dot products (and, with_sums, the filter sums) of four filter rows, accumulated. */
typedef struct {
  int32_t acc[4], sum[4];
} fc_acc;

static inline void fc_step(fc_acc* a, int8x16_t vx, int8x16_t v0, int8x16_t v1, int8x16_t v2,
                           int8x16_t v3, int with_sums) {
  a->acc[0] = vmladavaq_s8(a->acc[0], v0, vx);
  a->acc[1] = vmladavaq_s8(a->acc[1], v1, vx);
  a->acc[2] = vmladavaq_s8(a->acc[2], v2, vx);
  a->acc[3] = vmladavaq_s8(a->acc[3], v3, vx);
  if (with_sums) {
    a->sum[0] = vaddvaq_s8(a->sum[0], v0);
    a->sum[1] = vaddvaq_s8(a->sum[1], v1);
    a->sum[2] = vaddvaq_s8(a->sum[2], v2);
    a->sum[3] = vaddvaq_s8(a->sum[3], v3);
  }
}

/* Four filter rows `stride` apart (n of them real) against one input row of `depth`. */
static inline void fc_rows(const int8_t* in, const int8_t* f0, int32_t stride, int32_t depth,
                           int32_t n, int with_sums, fc_acc* a) {
  const int8_t* f1 = n > 1 ? f0 + stride : f0;
  const int8_t* f2 = n > 2 ? f0 + 2 * stride : f0;
  const int8_t* f3 = n > 3 ? f0 + 3 * stride : f0;
  for (int i = 0; i < 4; ++i) a->acc[i] = a->sum[i] = 0;
  int32_t left = depth;
  while (left >= 16) {
    fc_step(a, vld1q_s8(in), vld1q_s8(f0), vld1q_s8(f1), vld1q_s8(f2), vld1q_s8(f3), with_sums);
    in += 16;
    f0 += 16;
    f1 += 16;
    f2 += 16;
    f3 += 16;
    left -= 16;
  }
  if (left > 0) {
    const mve_pred16_t tp = vctp8q((uint32_t)left);
    fc_step(a, vldrbq_z_s8(in, tp), vldrbq_z_s8(f0, tp), vldrbq_z_s8(f1, tp), vldrbq_z_s8(f2, tp),
            vldrbq_z_s8(f3, tp), with_sums);
  }
}

void mculab_fully_connected_s8_run_mve(const mculab_fc_s8_params* p, const int8_t* input,
                                       const int8_t* filter, const int32_t* bias, int8_t* output) {
  const int32_t depth = p->depth, out_c = p->out_c;
  for (int32_t b = 0; b < p->batches; ++b) {
    const int8_t* in = input + (uint32_t)b * depth;
    int8_t* out = output + (uint32_t)b * out_c;
    for (int32_t oc = 0; oc < out_c; oc += 4) {
      const int32_t n = out_c - oc < 4 ? out_c - oc : 4;
      const mve_pred16_t pr = vctp32q((uint32_t)n);
      const int8_t* f = filter + (uint32_t)oc * depth;
      fc_acc a;
      int32x4_t sums;
      if (p->kernel_sums != NULL) {
        fc_rows(in, f, depth, depth, n, 0, &a);
        sums = vldrwq_z_s32(p->kernel_sums + oc, pr);
      } else {
        fc_rows(in, f, depth, depth, n, 1, &a);
        sums = vld1q_s32(a.sum);
      }
      int32x4_t acc = vld1q_s32(a.acc);
      acc = vmlaq_n_s32(acc, sums, p->input_offset);
      if (bias != NULL) acc = vaddq_s32(acc, vldrwq_z_s32(bias + oc, pr));
      acc = mbqm_n(acc, p->out_multiplier, p->out_shift);
      acc = clamp_out(acc, p->output_offset, p->act_min, p->act_max);
      vstrbq_p_s32(out + oc, acc, pr);
    }
  }
}

/* Matrix times int8 vector: the fully connected's four rows per input chunk; the row sums (for
 * the offset) only when there is an offset. */
void mculab_mat_vec_s8s8_s32_mve(const int8_t* w, int32_t w_stride, const int8_t* x,
                                 int32_t x_offset, int32_t rows, int32_t depth, int32_t* acc) {
  for (int32_t r = 0; r < rows; r += 4) {
    const int32_t n = rows - r < 4 ? rows - r : 4;
    const mve_pred16_t pr = vctp32q((uint32_t)n);
    fc_acc a;
    fc_rows(x, w + (int64_t)r * w_stride, w_stride, depth, n, x_offset != 0, &a);
    int32x4_t v = vaddq_s32(vldrwq_z_s32(acc + r, pr), vld1q_s32(a.acc));
    v = vmlaq_n_s32(v, vld1q_s32(a.sum), x_offset);
    vstrwq_p_s32(acc + r, v, pr);
  }
}

/* Matrix times int16 vector: two rows per chunk of eight (four 64-bit sums would not fit the
 * registers beside the pointers), the weights widened by the load (VLDRB.S16), VMLALDAVA into
 * 64-bit sums. */
void mculab_mat_vec_s8s16_s64_mve(const int8_t* w, int32_t w_stride, const int16_t* x, int32_t rows,
                                  int32_t depth, int64_t* acc) {
  for (int32_t r = 0; r < rows; r += 2) {
    const int8_t* f0 = w + (int64_t)r * w_stride;
    const int8_t* f1 = r + 1 < rows ? f0 + w_stride : f0;
    const int16_t* xp = x;
    int64_t a0 = 0, a1 = 0;
    int32_t left = depth;
    for (; left >= 8; left -= 8) {
      const int16x8_t vx = vld1q_s16(xp);
      a0 = vmlaldavaq_s16(a0, vx, vldrbq_s16(f0));
      a1 = vmlaldavaq_s16(a1, vx, vldrbq_s16(f1));
      xp += 8;
      f0 += 8;
      f1 += 8;
    }
    if (left > 0) {
      const mve_pred16_t tp = vctp16q((uint32_t)left);
      const int16x8_t vx = vldrhq_z_s16(xp, tp);
      a0 = vmlaldavaq_s16(a0, vx, vldrbq_z_s16(f0, tp));
      a1 = vmlaldavaq_s16(a1, vx, vldrbq_z_s16(f1, tp));
    }
    acc[r] += a0;
    if (r + 1 < rows) acc[r + 1] += a1;
  }
}

/* MAX_POOL_2D: 16 channels per vector, VMAX over the window's taps inside the input. */
void mculab_max_pool_s8_mve(const mculab_pool_s8_params* p, const int8_t* input, int8_t* output) {
  const int32_t ch = p->channels;
  const int8x16_t lo = vdupq_n_s8((int8_t)p->act_min), hi = vdupq_n_s8((int8_t)p->act_max);
  int8_t* out = output;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox, out += ch) {
        const mculab_pool_window win = mculab_pool_window_at(p, input, b, oy, ox);
        for (int32_t c = 0; c < ch; c += 16) {
          const mve_pred16_t pr = vctp8q((uint32_t)(ch - c));
          int8x16_t m = vdupq_n_s8(-128);
          for (int32_t fy = 0; fy < win.rows; ++fy) {
            const int8_t* x = win.first + fy * win.row_step + c;
            for (int32_t fx = 0; fx < win.cols; ++fx, x += ch) m = vmaxq_s8(m, vldrbq_z_s8(x, pr));
          }
          m = vminq_s8(vmaxq_s8(m, lo), hi);
          vstrbq_p_s8(out + c, m, pr);
        }
      }
    }
  }
}

/* AVERAGE_POOL_2D: the window sums 4 channels per vector; the rounded division per value, as the
 * reference does it (no vector divide). */
int mculab_average_pool_s8_mve(const mculab_pool_s8_params* p, const int8_t* input,
                               int8_t* output) {
  const int32_t ch = p->channels;
  int32_t sums[4] __attribute__((aligned(16)));
  int8_t* out = output;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox, out += ch) {
        const mculab_pool_window win = mculab_pool_window_at(p, input, b, oy, ox);
        if (win.rows == 0 || win.cols == 0) return 0;
        const int32_t count = win.rows * win.cols;
        for (int32_t c = 0; c < ch; c += 4) {
          const mve_pred16_t pr = vctp32q((uint32_t)(ch - c));
          int32x4_t acc = vdupq_n_s32(0);
          for (int32_t fy = 0; fy < win.rows; ++fy) {
            const int8_t* x = win.first + fy * win.row_step + c;
            for (int32_t fx = 0; fx < win.cols; ++fx, x += ch) {
              acc = vaddq_s32(acc, vldrbq_z_s32(x, pr));
            }
          }
          vst1q_s32(sums, acc);
          const int32_t n = ch - c < 4 ? ch - c : 4;
          for (int32_t k = 0; k < n; ++k) {
            int32_t v = sums[k];
            v = v > 0 ? (v + count / 2) / count : (v - count / 2) / count;
            if (v < p->act_min) v = p->act_min;
            if (v > p->act_max) v = p->act_max;
            out[c + k] = (int8_t)v;
          }
        }
      }
    }
  }
  return 1;
}

/* ADD: each input rescaled to the common scale, summed, rescaled to the output's: four values a
 * vector, MultiplyByQuantizedMultiplier as in the convolutions. */
void mculab_add_s8_mve(const mculab_add_s8_params* p, const int8_t* input1, const int8_t* input2,
                       int8_t* output, uint32_t n) {
  for (uint32_t i = 0; i < n; i += 4) {
    const mve_pred16_t pr = vctp32q(n - i);
    int32x4_t v1 = vaddq_n_s32(vldrbq_z_s32(input1 + i, pr), p->input1_offset);
    int32x4_t v2 = vaddq_n_s32(vldrbq_z_s32(input2 + i, pr), p->input2_offset);
    v1 = mbqm_n(vshlq_r_s32(v1, p->left_shift), p->input1_multiplier, p->input1_shift);
    v2 = mbqm_n(vshlq_r_s32(v2, p->left_shift), p->input2_multiplier, p->input2_shift);
    int32x4_t sum = mbqm_n(vaddq_s32(v1, v2), p->output_multiplier, p->output_shift);
    sum = clamp_out(sum, p->output_offset, p->act_min, p->act_max);
    vstrbq_p_s32(output + i, sum, pr);
  }
}

#endif
