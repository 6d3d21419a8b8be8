/* CONV_2D and DEPTHWISE_CONV_2D: int8 (TFLite's per-channel reference_integer_ops::ConvPerChannel
 * and DepthwiseConvPerChannel, in kernels/ through mculab/kernels_s8.h) and 16x8 (int16
 * activations with zero point 0, int8 filters, int64 or int32 bias: the same functions' int16
 * forms, an int64 accumulator requantized by the int64 MultiplyByQuantizedMultiplier) and float32
 * (reference_ops::Conv and DepthwiseConv: float sums in their loop order, bias, clamp). */
#include <stdint.h>
#include <string.h>

#include "mculab/kernels_s8.h"
#include "ops.h"

static void parse_conv(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->padding = fb_u8(r, t, 0, 0);
  op->stride_w = fb_i32(r, t, 1, 0);
  op->stride_h = fb_i32(r, t, 2, 0);
  op->activation = fb_u8(r, t, 3, 0);
  op->dilation_w = fb_i32(r, t, 4, 1);
  op->dilation_h = fb_i32(r, t, 5, 1);
}

static void parse_depthwise(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->padding = fb_u8(r, t, 0, 0);
  op->stride_w = fb_i32(r, t, 1, 0);
  op->stride_h = fb_i32(r, t, 2, 0);
  op->depth_multiplier = fb_i32(r, t, 3, 0);
  op->activation = fb_u8(r, t, 4, 0);
  op->dilation_w = fb_i32(r, t, 5, 1);
  op->dilation_h = fb_i32(r, t, 6, 1);
}

/* The geometry every type shares: shapes, depth multiplier, strides, dilations, padding, the
 * output's size and the MACs. */
static mculab_tfl_status geometry(mculab_tfl_ctx* c, const mculab_tfl_tensor* in,
                                  const mculab_tfl_tensor* filter, const mculab_tfl_tensor* out) {
  mculab_tfl_op* op = c->op;
  const int depthwise = op->builtin == MCULAB_TFL_DEPTHWISE_CONV_2D;
  if (in->num_dims != 4 || filter->num_dims != 4 || out->num_dims != 4) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE,
                          "input, filter and output must have 4 dimensions");
  }
  mculab_conv_s8_params* p = &op->k.conv;
  p->batches = in->dims[0];
  p->in_h = in->dims[1];
  p->in_w = in->dims[2];
  p->in_c = in->dims[3];
  p->filter_h = filter->dims[1];
  p->filter_w = filter->dims[2];
  p->out_c = depthwise ? filter->dims[3] : filter->dims[0];
  if (depthwise) {
    if (filter->dims[0] != 1 || p->out_c % p->in_c != 0 ||
        (op->depth_multiplier != 0 && op->depth_multiplier != p->out_c / p->in_c)) {
      return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE,
                            "filter is not [1][kh][kw][in * depth multiplier]");
    }
    p->depth_multiplier = p->out_c / p->in_c;
  } else {
    if (filter->dims[3] != p->in_c) {
      return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "filter depth differs from the input's");
    }
    p->depth_multiplier = 1;
  }
  if (op->stride_w < 1 || op->stride_h < 1 || op->stride_w > MCULAB_TFL_MAX_STRIDE ||
      op->stride_h > MCULAB_TFL_MAX_STRIDE || op->dilation_w < 1 || op->dilation_h < 1 ||
      op->dilation_w > MCULAB_TFL_MAX_STRIDE || op->dilation_h > MCULAB_TFL_MAX_STRIDE ||
      op->padding > 1) {
    return mculab_tfl_bad(c, MCULAB_TFL_MALFORMED, "stride, dilation or padding out of range");
  }
  const uint64_t depth = (uint64_t)p->filter_h * p->filter_w * (depthwise ? 1u : (uint32_t)p->in_c);
  if (depth > MCULAB_KERNEL_MAX_DEPTH) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "accumulation depth over 65536");
  }
  p->stride_h = op->stride_h;
  p->stride_w = op->stride_w;
  p->dilation_h = op->dilation_h;
  p->dilation_w = op->dilation_w;
  p->out_h = mculab_tfl_out_size(op->padding, p->in_h, p->filter_h, p->stride_h, p->dilation_h);
  p->out_w = mculab_tfl_out_size(op->padding, p->in_w, p->filter_w, p->stride_w, p->dilation_w);
  if (out->dims[0] != p->batches || out->dims[1] != p->out_h || out->dims[2] != p->out_w ||
      out->dims[3] != p->out_c) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE,
                          "output shape differs from what the input, filter, "
                          "strides and padding give");
  }
  p->pad_h = op->padding == 0
                 ? mculab_tfl_pad_before(p->stride_h, p->dilation_h, p->in_h, p->filter_h, p->out_h)
                 : 0;
  p->pad_w = op->padding == 0
                 ? mculab_tfl_pad_before(p->stride_w, p->dilation_w, p->in_w, p->filter_w, p->out_w)
                 : 0;
  op->macs = (uint64_t)p->batches * p->out_h * p->out_w * p->out_c * depth;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const int depthwise = op->builtin == MCULAB_TFL_DEPTHWISE_CONV_2D;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* filter = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* bias = mculab_tfl_in(c, 2);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (in != NULL && in->type == MCULAB_TFL_FLOAT32) {
    if (!mculab_tfl_float_filter(out, filter)) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                            "float32 input needs a constant float32 filter and a float32 output");
    }
    const mculab_tfl_status st = geometry(c, in, filter, out);
    return st != MCULAB_TFL_OK ? st
                               : mculab_tfl_prepare_float_tail(c, bias, (uint32_t)op->k.conv.out_c);
  }
  const uint8_t act =
      in != NULL && in->type == MCULAB_TFL_INT16 ? MCULAB_TFL_INT16 : MCULAB_TFL_INT8;
  if (!mculab_tfl_quantized(in, act) || !mculab_tfl_quantized(out, act) || filter == NULL ||
      filter->type != MCULAB_TFL_INT8 || !filter->is_const || filter->num_scales == 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "needs int8, int16 or float32 input and output and a constant filter "
                          "of int8 (float32 for float32)");
  }
  if (act == MCULAB_TFL_INT16 && (in->zero_point != 0 || out->zero_point != 0)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "int16 activations with a zero point");
  }
  const mculab_tfl_status st = geometry(c, in, filter, out);
  if (st != MCULAB_TFL_OK) return st;
  mculab_conv_s8_params* p = &op->k.conv;
  if (bias != NULL && ((bias->type != MCULAB_TFL_INT32 &&
                        (act == MCULAB_TFL_INT8 || bias->type != MCULAB_TFL_INT64)) ||
                       !bias->is_const || bias->elements != (uint32_t)p->out_c ||
                       ((uintptr_t)bias->const_data & 3u) != 0)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "bias must be constant int32 (int64 for int16) [out channels], aligned");
  }
  if (filter->num_scales != 1 && filter->num_scales != (uint32_t)p->out_c) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "filter scales are neither per tensor nor per channel");
  }
  if (filter->num_scales > 1 && filter->quantized_dim != (depthwise ? 3 : 0)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "filter quantized along another dimension");
  }
  if (filter->zero_point != 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "filter zero point not 0");
  }
  for (uint32_t ch = 0; ch < filter->num_scales; ++ch) {
    if (!mculab_tfl_valid_scale(mculab_tfl_scale_at(c->m, filter, ch))) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "filter scale not positive and finite");
    }
  }
  if (!mculab_tfl_activation_range(op->activation, out, &p->act_min, &p->act_max)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "fused activation other than RELU, RELU6, RELU_N1_TO_1");
  }
  p->input_offset = -in->zero_point;
  p->output_offset = out->zero_point;
  op->persistent_bytes = mculab_tfl_channel_multiplier_bytes((uint32_t)p->out_c);
  /* The 16x8 CONV_2D's biases, the sums of one output pixel and its input window. */
  if (act == MCULAB_TFL_INT16 && !depthwise) {
    op->scratch_bytes =
        16u * (uint32_t)p->out_c + 2u * (uint32_t)(p->filter_h * p->filter_w * p->in_c);
  }
  return MCULAB_TFL_OK;
}

static mculab_tfl_status bind(mculab_tfl_ctx* c, uint8_t* persistent) {
  mculab_conv_s8_params* p = &c->op->k.conv;
  if (mculab_tfl_out(c)->type == MCULAB_TFL_FLOAT32) return MCULAB_TFL_OK;
  return mculab_tfl_channel_multipliers(c, mculab_tfl_in(c, 0), mculab_tfl_in(c, 1),
                                        (uint32_t)p->out_c, persistent, &p->out_multiplier,
                                        &p->out_shift);
}

static const int32_t* bias_of(const mculab_tfl_model* m, const mculab_tfl_op* op) {
  return op->num_inputs < 3 ? NULL : (const int32_t*)mculab_tfl_data(m, op->inputs[2]);
}

/* A 16x8 accumulator, its bias added, to its int16 output: TFLite's accumulator type (the bias's:
 * int64 when `wide`, else int32, also without a bias), the requantization and the clamp. */
static int16_t requantize_16x8(int64_t acc, int wide, int32_t oc, const mculab_conv_s8_params* p) {
  const int32_t v = wide ? mculab_tfl_mbqm64(acc, p->out_multiplier[oc], p->out_shift[oc])
                         : mculab_tfl_mbqm((int32_t)(uint32_t)(uint64_t)acc, p->out_multiplier[oc],
                                           p->out_shift[oc]);
  return (int16_t)mculab_tfl_clamp(v + p->output_offset, p->act_min, p->act_max);
}

static int64_t bias_at(const mculab_tfl_tensor* bias, int32_t oc) {
  return bias != NULL ? mculab_tfl_const_int(bias, (uint32_t)oc) : 0;
}

static int wide_bias(const mculab_tfl_tensor* bias) {
  return bias != NULL && bias->type == MCULAB_TFL_INT64;
}

static const mculab_tfl_tensor* bias_tensor(const mculab_tfl_model* m, const mculab_tfl_op* op) {
  return op->num_inputs < 3 || op->inputs[2] < 0 ? NULL : &m->tensors[op->inputs[2]];
}

/* The input window of output pixel (b, oy, ox) of a 16x8 CONV_2D as one row of
 * filter_h * filter_w * in_c values, the filter's order: in place where the window is one run of
 * the input (a 1-row filter inside it, undilated), else copied into `col`, taps outside the input
 * as 0 (the zero point, which contributes nothing, as TFLite's skipped taps). */
static const int16_t* window_16(const mculab_conv_s8_params* p, const int16_t* in, int32_t b,
                                int32_t oy, int32_t ox, int16_t* col) {
  const int32_t iy0 = oy * p->stride_h - p->pad_h, ix0 = ox * p->stride_w - p->pad_w;
  const int32_t run = p->filter_w * p->in_c;
  const int16_t* image = in + (int64_t)b * p->in_h * p->in_w * p->in_c;
  if (p->filter_h == 1 && p->dilation_w == 1 && iy0 >= 0 && iy0 < p->in_h && ix0 >= 0 &&
      ix0 + p->filter_w <= p->in_w) {
    return image + ((int64_t)iy0 * p->in_w + ix0) * p->in_c;
  }
  int16_t* dst = col;
  for (int32_t fy = 0; fy < p->filter_h; ++fy, dst += run) {
    const int32_t iy = iy0 + fy * p->dilation_h;
    if (iy < 0 || iy >= p->in_h) {
      memset(dst, 0, 2u * (uint32_t)run);
      continue;
    }
    const int16_t* row = image + (int64_t)iy * p->in_w * p->in_c;
    if (p->dilation_w != 1) {
      for (int32_t fx = 0; fx < p->filter_w; ++fx) {
        const int32_t ix = ix0 + fx * p->dilation_w;
        int16_t* d = dst + fx * p->in_c;
        if (ix < 0 || ix >= p->in_w) {
          memset(d, 0, 2u * (uint32_t)p->in_c);
        } else {
          memcpy(d, row + (int64_t)ix * p->in_c, 2u * (uint32_t)p->in_c);
        }
      }
      continue;
    }
    /* Undilated: the taps [lo, hi) inside the input, one copy. */
    const int32_t lo = ix0 < 0 ? (-ix0 < p->filter_w ? -ix0 : p->filter_w) : 0;
    int32_t hi = p->in_w - ix0 < p->filter_w ? p->in_w - ix0 : p->filter_w;
    if (hi < lo) hi = lo;
    if (lo > 0) memset(dst, 0, 2u * (uint32_t)(lo * p->in_c));
    if (hi > lo) {
      memcpy(dst + lo * p->in_c, row + (int64_t)(ix0 + lo) * p->in_c,
             2u * (uint32_t)((hi - lo) * p->in_c));
    }
    if (hi < p->filter_w)
      memset(dst + hi * p->in_c, 0, 2u * (uint32_t)((p->filter_w - hi) * p->in_c));
  }
  return col;
}

/* The 16x8 CONV_2D (reference_integer_ops::ConvPerChannel for int16 input): per output pixel, its
 * input window as one row (window_16) times the filter, one matrix-vector product of the kernel
 * set into int64 sums in the scratch. */
static mculab_tfl_status invoke_conv_16x8(mculab_tfl_model* m, const mculab_tfl_op* op) {
  const mculab_conv_s8_params* p = &op->k.conv;
  const int16_t* in = (const int16_t*)mculab_tfl_data(m, op->inputs[0]);
  const int8_t* w = (const int8_t*)mculab_tfl_data(m, op->inputs[1]);
  const mculab_tfl_tensor* bias = bias_tensor(m, op);
  int16_t* out = (int16_t*)mculab_tfl_out_data(m, op);
  /* The scratch: the biases, then one pixel's sums (starting as the biases), then its window. */
  int64_t* biases = (int64_t*)(void*)m->scratch;
  int64_t* acc = biases + p->out_c;
  int16_t* col = (int16_t*)(void*)(acc + p->out_c);
  const int32_t depth = p->filter_h * p->filter_w * p->in_c;
  const int wide = wide_bias(bias);
  for (int32_t oc = 0; oc < p->out_c; ++oc) biases[oc] = bias_at(bias, oc);
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        memcpy(acc, biases, 8u * (uint32_t)p->out_c);
        mculab_mat_vec_s8s16_s64(w, depth, window_16(p, in, b, oy, ox, col), p->out_c, depth, acc);
        int16_t* o = out + (((int64_t)b * p->out_h + oy) * p->out_w + ox) * p->out_c;
        for (int32_t oc = 0; oc < p->out_c; ++oc) o[oc] = requantize_16x8(acc[oc], wide, oc, p);
      }
    }
  }
  return MCULAB_TFL_OK;
}

/* The 16x8 DEPTHWISE_CONV_2D: reference_integer_ops::DepthwiseConvPerChannel for int16 input,
 * out-of-image taps skipped. */
static mculab_tfl_status invoke_depthwise_16x8(mculab_tfl_model* m, const mculab_tfl_op* op) {
  const mculab_conv_s8_params* p = &op->k.conv;
  const int16_t* in = (const int16_t*)mculab_tfl_data(m, op->inputs[0]);
  const int8_t* w = (const int8_t*)mculab_tfl_data(m, op->inputs[1]);
  const mculab_tfl_tensor* bias = bias_tensor(m, op);
  int16_t* out = (int16_t*)mculab_tfl_out_data(m, op);
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        for (int32_t oc = 0; oc < p->out_c; ++oc) {
          const int32_t ic = oc / p->depth_multiplier;
          int64_t acc = bias_at(bias, oc);
          for (int32_t fy = 0; fy < p->filter_h; ++fy) {
            const int32_t iy = oy * p->stride_h - p->pad_h + fy * p->dilation_h;
            if (iy < 0 || iy >= p->in_h) continue;
            for (int32_t fx = 0; fx < p->filter_w; ++fx) {
              const int32_t ix = ox * p->stride_w - p->pad_w + fx * p->dilation_w;
              if (ix < 0 || ix >= p->in_w) continue;
              const int16_t* x = in + (((int64_t)b * p->in_h + iy) * p->in_w + ix) * p->in_c;
              acc += (int64_t)w[((int64_t)fy * p->filter_w + fx) * p->out_c + oc] * x[ic];
            }
          }
          out[(((int64_t)b * p->out_h + oy) * p->out_w + ox) * p->out_c + oc] =
              requantize_16x8(acc, wide_bias(bias), oc, p);
        }
      }
    }
  }
  return MCULAB_TFL_OK;
}

/* float32 CONV_2D and DEPTHWISE_CONV_2D (reference_ops::Conv and DepthwiseConv): each output's
 * sum in float from 0 over filter y, filter x and input channel (depthwise: input channel
 * oc / depth multiplier alone), taps outside the input skipped, then the bias, then the clamp. */
static void invoke_float(mculab_tfl_model* m, const mculab_tfl_op* op) {
  const mculab_conv_s8_params* p = &op->k.conv;
  const int depthwise = op->builtin == MCULAB_TFL_DEPTHWISE_CONV_2D;
  const float* in = (const float*)mculab_tfl_data(m, op->inputs[0]);
  const float* w = (const float*)mculab_tfl_data(m, op->inputs[1]);
  const float* bias = (const float*)mculab_tfl_data(m, op->num_inputs < 3 ? -1 : op->inputs[2]);
  float* out = (float*)mculab_tfl_out_data(m, op);
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oy = 0; oy < p->out_h; ++oy) {
      for (int32_t ox = 0; ox < p->out_w; ++ox) {
        for (int32_t oc = 0; oc < p->out_c; ++oc) {
          float total = 0.0f;
          for (int32_t fy = 0; fy < p->filter_h; ++fy) {
            const int32_t iy = oy * p->stride_h - p->pad_h + fy * p->dilation_h;
            if (iy < 0 || iy >= p->in_h) continue;
            for (int32_t fx = 0; fx < p->filter_w; ++fx) {
              const int32_t ix = ox * p->stride_w - p->pad_w + fx * p->dilation_w;
              if (ix < 0 || ix >= p->in_w) continue;
              const float* x = in + (((int64_t)b * p->in_h + iy) * p->in_w + ix) * p->in_c;
              if (depthwise) {
                total += x[oc / p->depth_multiplier] *
                         w[((int64_t)fy * p->filter_w + fx) * p->out_c + oc];
                continue;
              }
              const float* f = w + (((int64_t)oc * p->filter_h + fy) * p->filter_w + fx) * p->in_c;
              for (int32_t ic = 0; ic < p->in_c; ++ic) total += x[ic] * f[ic];
            }
          }
          out[(((int64_t)b * p->out_h + oy) * p->out_w + ox) * p->out_c + oc] =
              mculab_tfl_clamp_f32(total + (bias != NULL ? bias[oc] : 0.0f), op->f_act_min,
                                   op->f_act_max);
        }
      }
    }
  }
}

static mculab_tfl_status invoke_conv(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  if (m->tensors[op->output].type == MCULAB_TFL_FLOAT32) {
    invoke_float(m, op);
    return MCULAB_TFL_OK;
  }
  if (m->tensors[op->output].type == MCULAB_TFL_INT16) return invoke_conv_16x8(m, op);
  mculab_conv2d_s8_nhwc(&op->k.conv, (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
                        (const int8_t*)mculab_tfl_data(m, op->inputs[1]), bias_of(m, op),
                        (int8_t*)mculab_tfl_out_data(m, op));
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke_depthwise(mculab_tfl_model* m, const mculab_tfl_op* op,
                                          uint16_t index) {
  (void)index;
  if (m->tensors[op->output].type == MCULAB_TFL_FLOAT32) {
    invoke_float(m, op);
    return MCULAB_TFL_OK;
  }
  if (m->tensors[op->output].type == MCULAB_TFL_INT16) return invoke_depthwise_16x8(m, op);
  mculab_depthwise_conv2d_s8_nhwc(&op->k.conv, (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
                                  (const int8_t*)mculab_tfl_data(m, op->inputs[1]), bias_of(m, op),
                                  (int8_t*)mculab_tfl_out_data(m, op));
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_conv_2d = {"CONV_2D", 1,    parse_conv,
                                                     prepare,   bind, invoke_conv};
const mculab_tfl_kernel mculab_tfl_kernel_depthwise_conv_2d = {
    "DEPTHWISE_CONV_2D", 2, parse_depthwise, prepare, bind, invoke_depthwise};
