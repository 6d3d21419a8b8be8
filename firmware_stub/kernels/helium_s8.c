/* Helium (M-profile Vector Extension) variants of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED
 * for the Cortex-M55, with GCC's arm_mve.h intrinsics. Bit-exact with the reference kernels
 * (conv2d_s8.c, fully_connected_s8.c): the accumulators are the same integer sums in another
 * order (sum f * (x + offset) = sum f * x + offset * sum f, exact in int32 as the reference's
 * contract on the depth keeps it), and the requantization is the reference's own
 * (mculab_conv_requantize, mculab_mbqm), per output.
 *   conv and fully connected: the input channels 16 at a time (VMLADAVA, VADDVA), the tail
 *     predicated (VCTP8);
 *   depthwise (depth multiplier 1): 4 output channels at a time, widening loads (VLDRB.S32) and
 *     VMUL + VADD; other depth multipliers run the reference kernel.
 * Built only where __ARM_FEATURE_MVE says the integer MVE is there (mculab_tflite_helium). */
#include <stdint.h>

#include "kernels.h"
#include "mculab/kernels_s8.h"

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#include <arm_mve.h>

/* sum a[i] * b[i] and sum a[i] over n int8 values. */
static int32_t dot_s8(const int8_t* a, const int8_t* b, int32_t n, int32_t* sum_a) {
  int32_t acc = 0, sa = 0;
  while (n > 0) {
    const mve_pred16_t p = vctp8q((uint32_t)n);
    const int8x16_t va = vldrbq_z_s8(a, p);
    const int8x16_t vb = vldrbq_z_s8(b, p);
    acc = vmladavaq_s8(acc, va, vb);
    sa = vaddvaq_s8(sa, va);
    a += 16;
    b += 16;
    n -= 16;
  }
  *sum_a = sa;
  return acc;
}

void mculab_conv2d_s8_nhwc_mve(const mculab_conv_s8_params* p, const int8_t* input,
                               const int8_t* filter, const int32_t* bias, int8_t* output) {
  const int32_t in_h = p->in_h, in_w = p->in_w, in_c = p->in_c, out_c = p->out_c;
  const int32_t kh = p->filter_h, kw = p->filter_w;
  const int32_t input_offset = p->input_offset;
  int8_t* out = output;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      const int32_t in_y0 = oy * p->stride_h - p->pad_h;
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int32_t in_x0 = ox * p->stride_w - p->pad_w;
        for (int32_t oc = 0; oc < out_c; ++oc) {
          int32_t acc = 0;
          for (int32_t fy = 0; fy < kh; ++fy) {
            const int32_t iy = in_y0 + p->dilation_h * fy;
            if (iy < 0 || iy >= in_h) continue;
            for (int32_t fx = 0; fx < kw; ++fx) {
              const int32_t ix = in_x0 + p->dilation_w * fx;
              if (ix < 0 || ix >= in_w) continue;
              const int8_t* in = input + (((uint32_t)b * in_h + iy) * in_w + ix) * in_c;
              const int8_t* f = filter + (((uint32_t)oc * kh + fy) * kw + fx) * in_c;
              int32_t sum_f = 0;
              acc += dot_s8(f, in, in_c, &sum_f);
              acc += input_offset * sum_f;
            }
          }
          *out++ =
              mculab_conv_requantize(acc, bias, oc, p->out_multiplier[oc], p->out_shift[oc], p);
        }
      }
    }
  }
}

void mculab_depthwise_conv2d_s8_nhwc_mve(const mculab_conv_s8_params* p, const int8_t* input,
                                         const int8_t* filter, const int32_t* bias,
                                         int8_t* output) {
  if (p->depth_multiplier != 1) {
    mculab_depthwise_conv2d_s8_nhwc(p, input, filter, bias, output);
    return;
  }
  const int32_t in_h = p->in_h, in_w = p->in_w, ch = p->out_c;
  const int32_t kh = p->filter_h, kw = p->filter_w;
  const int32_t input_offset = p->input_offset;
  int32_t acc_out[4];
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      const int32_t in_y0 = oy * p->stride_h - p->pad_h;
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int32_t in_x0 = ox * p->stride_w - p->pad_w;
        int8_t* out = output + (((uint32_t)b * p->out_h + oy) * p->out_w + ox) * ch;
        for (int32_t c0 = 0; c0 < ch; c0 += 4) {
          const mve_pred16_t pr = vctp32q((uint32_t)(ch - c0));
          int32x4_t acc = vdupq_n_s32(0);
          for (int32_t fy = 0; fy < kh; ++fy) {
            const int32_t iy = in_y0 + p->dilation_h * fy;
            if (iy < 0 || iy >= in_h) continue;
            for (int32_t fx = 0; fx < kw; ++fx) {
              const int32_t ix = in_x0 + p->dilation_w * fx;
              if (ix < 0 || ix >= in_w) continue;
              const int8_t* in = input + (((uint32_t)b * in_h + iy) * in_w + ix) * ch + c0;
              const int8_t* f = filter + ((uint32_t)fy * kw + fx) * ch + c0;
              const int32x4_t vx = vaddq_n_s32(vldrbq_z_s32(in, pr), input_offset);
              const int32x4_t vf = vldrbq_z_s32(f, pr);
              acc = vaddq_s32(acc, vmulq_s32(vf, vx));
            }
          }
          vst1q_s32(acc_out, acc);
          const int32_t n = ch - c0 < 4 ? ch - c0 : 4;
          for (int32_t k = 0; k < n; ++k) {
            const int32_t oc = c0 + k;
            out[oc] = mculab_conv_requantize(acc_out[k], bias, oc, p->out_multiplier[oc],
                                             p->out_shift[oc], p);
          }
        }
      }
    }
  }
}

void mculab_fully_connected_s8_run_mve(const mculab_fc_s8_params* p, const int8_t* input,
                                       const int8_t* filter, const int32_t* bias, int8_t* output) {
  const int32_t depth = p->depth, out_c = p->out_c;
  for (int32_t b = 0; b < p->batches; ++b) {
    const int8_t* in = input + (uint32_t)b * depth;
    for (int32_t oc = 0; oc < out_c; ++oc) {
      const int8_t* f = filter + (uint32_t)oc * depth;
      int32_t sum_f = 0;
      int32_t acc = dot_s8(f, in, depth, &sum_f);
      acc += p->input_offset * sum_f;
      /* Wrap-around, as the reference. */
      if (bias != NULL) acc = (int32_t)((uint32_t)acc + (uint32_t)bias[oc]);
      acc = mculab_mbqm(acc, p->out_multiplier, p->out_shift);
      acc += p->output_offset;
      if (acc < p->act_min) acc = p->act_min;
      if (acc > p->act_max) acc = p->act_max;
      output[(uint32_t)b * out_c + oc] = (int8_t)acc;
    }
  }
}

#endif
