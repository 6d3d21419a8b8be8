/* conv2d_s8 and depthwise_conv2d_s8: TFLite's reference_integer_ops::ConvPerChannel and
 * DepthwiseConvPerChannel (filter offset 0). Input NHWC, filter [K][kh][kw][C] (depthwise:
 * [1][kh][kw][K]), output NHWC. */
#include "kernels.h"
#include "mculab/kernels_s8.h"

int8_t mculab_conv_requantize(int32_t acc, const int32_t* bias, int32_t oc, int32_t multiplier,
                              int32_t shift, const mculab_conv_s8_params* p) {
  /* The bias is added with wrap-around (what TFLite's int32 addition does in practice), so a
   * hostile bias cannot make the arithmetic undefined. */
  if (bias != NULL) acc = (int32_t)((uint32_t)acc + (uint32_t)bias[oc]);
  acc = mculab_mbqm(acc, multiplier, shift);
  acc += p->output_offset;
  if (acc < p->act_min) acc = p->act_min;
  if (acc > p->act_max) acc = p->act_max;
  return (int8_t)acc;
}

void mculab_conv2d_s8_nhwc_ref(const mculab_conv_s8_params* p, const int8_t* input,
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
              for (int32_t ic = 0; ic < in_c; ++ic) acc += f[ic] * (in[ic] + input_offset);
            }
          }
          *out++ =
              mculab_conv_requantize(acc, bias, oc, p->out_multiplier[oc], p->out_shift[oc], p);
        }
      }
    }
  }
}

void mculab_depthwise_conv2d_s8_nhwc_ref(const mculab_conv_s8_params* p, const int8_t* input,
                                         const int8_t* filter, const int32_t* bias,
                                         int8_t* output) {
  const int32_t in_h = p->in_h, in_w = p->in_w, in_c = p->in_c, out_c = p->out_c;
  const int32_t kh = p->filter_h, kw = p->filter_w, dm = p->depth_multiplier;
  const int32_t input_offset = p->input_offset;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      const int32_t in_y0 = oy * p->stride_h - p->pad_h;
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        const int32_t in_x0 = ox * p->stride_w - p->pad_w;
        int8_t* out = output + (((uint32_t)b * p->out_h + oy) * p->out_w + ox) * out_c;
        for (int32_t ic = 0; ic < in_c; ++ic) {
          for (int32_t m = 0; m < dm; ++m) {
            const int32_t oc = m + ic * dm;
            int32_t acc = 0;
            for (int32_t fy = 0; fy < kh; ++fy) {
              const int32_t iy = in_y0 + p->dilation_h * fy;
              if (iy < 0 || iy >= in_h) continue;
              for (int32_t fx = 0; fx < kw; ++fx) {
                const int32_t ix = in_x0 + p->dilation_w * fx;
                if (ix < 0 || ix >= in_w) continue;
                const int32_t v = input[(((uint32_t)b * in_h + iy) * in_w + ix) * in_c + ic];
                acc += filter[((uint32_t)fy * kw + fx) * out_c + oc] * (v + input_offset);
              }
            }
            out[oc] =
                mculab_conv_requantize(acc, bias, oc, p->out_multiplier[oc], p->out_shift[oc], p);
          }
        }
      }
    }
  }
}

/* The operator benchmark: symmetric padding, no dilation, no fused activation. */
void mculab_conv2d_s8(const mculab_case* c) {
  const int32_t* q = c->params;
  mculab_conv_s8_params p;
  p.batches = q[MCULAB_CONV_N];
  p.in_c = q[MCULAB_CONV_C];
  p.in_h = q[MCULAB_CONV_H];
  p.in_w = q[MCULAB_CONV_W];
  p.out_c = q[MCULAB_CONV_K];
  p.filter_h = q[MCULAB_CONV_KH];
  p.filter_w = q[MCULAB_CONV_KW];
  p.pad_h = q[MCULAB_CONV_PAD_H];
  p.pad_w = q[MCULAB_CONV_PAD_W];
  p.stride_h = q[MCULAB_CONV_STRIDE_H];
  p.stride_w = q[MCULAB_CONV_STRIDE_W];
  p.out_h = (p.in_h + 2 * p.pad_h - p.filter_h) / p.stride_h + 1;
  p.out_w = (p.in_w + 2 * p.pad_w - p.filter_w) / p.stride_w + 1;
  p.dilation_h = 1;
  p.dilation_w = 1;
  p.depth_multiplier = 1;
  p.input_offset = c->input_offset;
  p.output_offset = c->output_offset;
  p.act_min = -128;
  p.act_max = 127;
  p.out_multiplier = c->out_multiplier;
  p.out_shift = c->out_shift;
  mculab_conv2d_s8_nhwc(&p, c->input, c->filter, c->bias, c->output);
}
