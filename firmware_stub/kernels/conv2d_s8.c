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

/* The operator benchmarks' conv parameters: symmetric padding, no fused activation, the case's
 * requantization; the output size from the (dilated) kernel. */
static mculab_conv_s8_params bench_params(const mculab_case* c, int32_t n, int32_t in_c, int32_t h,
                                          int32_t w, int32_t out_c, const int32_t* k) {
  /* k: kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w */
  mculab_conv_s8_params p;
  p.batches = n;
  p.in_c = in_c;
  p.in_h = h;
  p.in_w = w;
  p.out_c = out_c;
  p.filter_h = k[0];
  p.filter_w = k[1];
  p.pad_h = k[2];
  p.pad_w = k[3];
  p.stride_h = k[4];
  p.stride_w = k[5];
  p.dilation_h = k[6];
  p.dilation_w = k[7];
  p.out_h = (h + 2 * p.pad_h - (p.dilation_h * (p.filter_h - 1) + 1)) / p.stride_h + 1;
  p.out_w = (w + 2 * p.pad_w - (p.dilation_w * (p.filter_w - 1) + 1)) / p.stride_w + 1;
  p.depth_multiplier = 1;
  p.input_offset = c->input_offset;
  p.output_offset = c->output_offset;
  p.act_min = -128;
  p.act_max = 127;
  p.out_multiplier = c->out_multiplier;
  p.out_shift = c->out_shift;
  return p;
}

/* conv2d_s8: no dilation. */
void mculab_conv2d_s8(const mculab_case* c) {
  const int32_t* q = c->params;
  const int32_t k[8] = {q[MCULAB_CONV_KH],
                        q[MCULAB_CONV_KW],
                        q[MCULAB_CONV_PAD_H],
                        q[MCULAB_CONV_PAD_W],
                        q[MCULAB_CONV_STRIDE_H],
                        q[MCULAB_CONV_STRIDE_W],
                        1,
                        1};
  const mculab_conv_s8_params p =
      bench_params(c, q[MCULAB_CONV_N], q[MCULAB_CONV_C], q[MCULAB_CONV_H], q[MCULAB_CONV_W],
                   q[MCULAB_CONV_K], k);
  mculab_conv2d_s8_nhwc(&p, c->input, c->filter, c->bias, c->output);
}

/* depthwise_conv2d_s8: depth multiplier and dilations. */
void mculab_depthwise_conv2d_s8(const mculab_case* c) {
  const int32_t* q = c->params;
  const int32_t k[8] = {q[MCULAB_DW_KH],         q[MCULAB_DW_KW],        q[MCULAB_DW_PAD_H],
                        q[MCULAB_DW_PAD_W],      q[MCULAB_DW_STRIDE_H],  q[MCULAB_DW_STRIDE_W],
                        q[MCULAB_DW_DILATION_H], q[MCULAB_DW_DILATION_W]};
  const int32_t dm = q[MCULAB_DW_DEPTH_MULTIPLIER];
  mculab_conv_s8_params p = bench_params(c, q[MCULAB_DW_N], q[MCULAB_DW_C], q[MCULAB_DW_H],
                                         q[MCULAB_DW_W], q[MCULAB_DW_C] * dm, k);
  p.depth_multiplier = dm;
  mculab_depthwise_conv2d_s8_nhwc(&p, c->input, c->filter, c->bias, c->output);
}
