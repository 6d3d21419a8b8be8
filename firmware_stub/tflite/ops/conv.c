/* CONV_2D and DEPTHWISE_CONV_2D: int8 (TFLite's per-channel reference_integer_ops::ConvPerChannel
 * and DepthwiseConvPerChannel, in kernels/ through mculab/kernels_s8.h). */
#include <stdint.h>

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

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const int depthwise = op->builtin == MCULAB_TFL_DEPTHWISE_CONV_2D;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* filter = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* bias = mculab_tfl_in(c, 2);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (!mculab_tfl_quantized(in, MCULAB_TFL_INT8) || !mculab_tfl_quantized(out, MCULAB_TFL_INT8) ||
      filter == NULL || filter->type != MCULAB_TFL_INT8 || !filter->is_const ||
      filter->num_scales == 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "needs an int8 input and output and constant int8 filter");
  }
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
  if (bias != NULL &&
      (bias->type != MCULAB_TFL_INT32 || !bias->is_const || bias->elements != (uint32_t)p->out_c ||
       ((uintptr_t)bias->const_data & 3u) != 0)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "bias must be constant int32 [out channels], 4-byte aligned");
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
  /* The per-channel multipliers and shifts, each array aligned. */
  op->persistent_bytes =
      2u * ((4u * (uint32_t)p->out_c + MCULAB_TFL_ALIGN - 1u) & ~(MCULAB_TFL_ALIGN - 1u));
  op->macs = (uint64_t)p->batches * p->out_h * p->out_w * p->out_c * depth;
  return MCULAB_TFL_OK;
}

/* The per-channel multipliers (input scale x filter scale / output scale, in double). */
static mculab_tfl_status bind(mculab_tfl_ctx* c, uint8_t* persistent) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* filter = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  int32_t* mult = (int32_t*)(void*)persistent;
  int32_t* shift = (int32_t*)(void*)(persistent + op->persistent_bytes / 2u);
  for (int32_t ch = 0; ch < op->k.conv.out_c; ++ch) {
    const float fs = mculab_tfl_scale_at(c->m, filter, filter->num_scales > 1 ? (uint32_t)ch : 0u);
    const double effective = (double)in->scale * (double)fs / (double)out->scale;
    int s;
    mculab_quantize_multiplier(effective, &mult[ch], &s);
    if (s > 0) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "requantization scale of 1 or more");
    }
    shift[ch] = s;
  }
  op->k.conv.out_multiplier = mult;
  op->k.conv.out_shift = shift;
  return MCULAB_TFL_OK;
}

static const int32_t* bias_of(const mculab_tfl_model* m, const mculab_tfl_op* op) {
  return op->num_inputs < 3 ? NULL : (const int32_t*)mculab_tfl_data(m, op->inputs[2]);
}

static mculab_tfl_status invoke_conv(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  mculab_conv2d_s8_nhwc(&op->k.conv, (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
                        (const int8_t*)mculab_tfl_data(m, op->inputs[1]), bias_of(m, op),
                        (int8_t*)mculab_tfl_out_data(m, op));
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke_depthwise(mculab_tfl_model* m, const mculab_tfl_op* op,
                                          uint16_t index) {
  (void)index;
  mculab_depthwise_conv2d_s8_nhwc(&op->k.conv, (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
                                  (const int8_t*)mculab_tfl_data(m, op->inputs[1]), bias_of(m, op),
                                  (int8_t*)mculab_tfl_out_data(m, op));
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_conv_2d = {"CONV_2D", 1,    parse_conv,
                                                     prepare,   bind, invoke_conv};
const mculab_tfl_kernel mculab_tfl_kernel_depthwise_conv_2d = {
    "DEPTHWISE_CONV_2D", 2, parse_depthwise, prepare, bind, invoke_depthwise};
