/* conv2d_s8: TFLite's reference_integer_ops::ConvPerChannel (no dilation, filter offset 0,
 * activation range [-128, 127]). Input NHWC, filter [K][kh][kw][C], output NHWC. */
#include "kernels.h"

void mculab_conv2d_s8(const mculab_case* c) {
  const int32_t* p = c->params;
  const int32_t batches = p[MCULAB_CONV_N], in_c = p[MCULAB_CONV_C];
  const int32_t in_h = p[MCULAB_CONV_H], in_w = p[MCULAB_CONV_W], out_c = p[MCULAB_CONV_K];
  const int32_t kh = p[MCULAB_CONV_KH], kw = p[MCULAB_CONV_KW];
  const int32_t pad_h = p[MCULAB_CONV_PAD_H], pad_w = p[MCULAB_CONV_PAD_W];
  const int32_t stride_h = p[MCULAB_CONV_STRIDE_H], stride_w = p[MCULAB_CONV_STRIDE_W];
  const int32_t out_h = (in_h + 2 * pad_h - kh) / stride_h + 1;
  const int32_t out_w = (in_w + 2 * pad_w - kw) / stride_w + 1;
  const int32_t input_offset = c->input_offset, output_offset = c->output_offset;

  int8_t* out = c->output;
  for (int32_t b = 0; b < batches; ++b) {
    for (int32_t oy = 0; oy < out_h; ++oy) {
      const int32_t in_y0 = oy * stride_h - pad_h;
      for (int32_t ox = 0; ox < out_w; ++ox) {
        const int32_t in_x0 = ox * stride_w - pad_w;
        for (int32_t oc = 0; oc < out_c; ++oc) {
          int32_t acc = 0;
          for (int32_t fy = 0; fy < kh; ++fy) {
            const int32_t iy = in_y0 + fy;
            if (iy < 0 || iy >= in_h) continue;
            for (int32_t fx = 0; fx < kw; ++fx) {
              const int32_t ix = in_x0 + fx;
              if (ix < 0 || ix >= in_w) continue;
              const int8_t* in = c->input + (((uint32_t)b * in_h + iy) * in_w + ix) * in_c;
              const int8_t* f = c->filter + (((uint32_t)oc * kh + fy) * kw + fx) * in_c;
              for (int32_t ic = 0; ic < in_c; ++ic) acc += f[ic] * (in[ic] + input_offset);
            }
          }
          acc += c->bias[oc];
          acc = mculab_mbqm(acc, c->out_multiplier[oc], c->out_shift[oc]);
          acc += output_offset;
          if (acc < -128) acc = -128;
          if (acc > 127) acc = 127;
          *out++ = (int8_t)acc;
        }
      }
    }
  }
}
