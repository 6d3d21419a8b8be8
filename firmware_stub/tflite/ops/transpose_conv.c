/* TRANSPOSE_CONV, 16x8 and int8 (reference_integer_ops::TransposeConv: every input value times
 * every filter tap scattered into an int64 scratch of the output's size, the bias added and each
 * channel requantized; int8 through the same loop with int32 sums and bias and the int32
 * MultiplyByQuantizedMultiplier, as TFLite's int8 form). The scratch starts as the biases (the
 * integer sums do not depend on the order); the products are the kernel set's matrix-vector
 * products (mculab/kernels_s8.h). Inputs: the output shape (int32, its values the output
 * tensor's shape), the filter [out][kh][kw][in], the input, the bias. float32:
 * reference_ops::TransposeConv's scatter in float into the output, then the bias and the clamp. */
#include <stdint.h>
#include <string.h>

#include "mculab/kernels_s8.h"
#include "ops.h"

static void parse(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->padding = fb_u8(r, t, 0, 0);
  op->stride_w = fb_i32(r, t, 1, 0);
  op->stride_h = fb_i32(r, t, 2, 0);
  op->activation = fb_u8(r, t, 3, 0);
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* filter = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 2);
  const mculab_tfl_tensor* bias = mculab_tfl_in(c, 3);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  const int is_float = in != NULL && in->type == MCULAB_TFL_FLOAT32;
  const uint8_t act =
      in != NULL && in->type == MCULAB_TFL_INT16 ? MCULAB_TFL_INT16 : MCULAB_TFL_INT8;
  if (is_float && !mculab_tfl_float_filter(out, filter)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "float32 input needs a constant float32 filter and a float32 output");
  }
  if (!is_float && (!mculab_tfl_quantized(in, act) || !mculab_tfl_quantized(out, act) ||
                    filter == NULL || filter->type != MCULAB_TFL_INT8 || !filter->is_const ||
                    filter->num_scales == 0 || filter->zero_point != 0)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "needs int8, int16 or float32 input and output and a constant filter "
                          "of int8 (float32 for float32)");
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
  p->out_c = filter->dims[0];
  p->filter_h = filter->dims[1];
  p->filter_w = filter->dims[2];
  p->out_h = out->dims[1];
  p->out_w = out->dims[2];
  p->depth_multiplier = 1;
  p->dilation_h = p->dilation_w = 1;
  if (filter->dims[3] != p->in_c || out->dims[0] != p->batches || out->dims[3] != p->out_c) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "filter, input and output do not fit");
  }
  if (op->stride_w < 1 || op->stride_h < 1 || op->stride_w > MCULAB_TFL_MAX_STRIDE ||
      op->stride_h > MCULAB_TFL_MAX_STRIDE || op->padding > 1) {
    return mculab_tfl_bad(c, MCULAB_TFL_MALFORMED, "stride or padding out of range");
  }
  p->stride_h = op->stride_h;
  p->stride_w = op->stride_w;
  /* The padding of the convolution this one transposes: output -> input. */
  p->pad_h = mculab_tfl_pad_before(
      p->stride_h, 1, p->out_h, p->filter_h,
      mculab_tfl_out_size(op->padding, p->out_h, p->filter_h, p->stride_h, 1));
  p->pad_w = mculab_tfl_pad_before(
      p->stride_w, 1, p->out_w, p->filter_w,
      mculab_tfl_out_size(op->padding, p->out_w, p->filter_w, p->stride_w, 1));
  op->macs = (uint64_t)in->elements * (uint64_t)p->out_c * p->filter_h * p->filter_w;
  if (is_float) {
    return mculab_tfl_prepare_float_tail(c, bias, (uint32_t)p->out_c);
  }
  if (bias != NULL && ((bias->type != MCULAB_TFL_INT32 && bias->type != MCULAB_TFL_INT64) ||
                       !bias->is_const || bias->elements != (uint32_t)p->out_c)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "bias must be constant [out channels]");
  }
  if (filter->num_scales != 1 &&
      (filter->num_scales != (uint32_t)p->out_c || filter->quantized_dim != 0)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "filter scales are neither per tensor nor per output channel");
  }
  if (act == MCULAB_TFL_INT16 && (in->zero_point != 0 || out->zero_point != 0)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "int16 activations with a zero point");
  }
  if (!mculab_tfl_activation_range(op->activation, out, &p->act_min, &p->act_max)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "fused activation other than RELU, RELU6, RELU_N1_TO_1");
  }
  p->input_offset = -in->zero_point;
  p->output_offset = out->zero_point;
  op->persistent_bytes = mculab_tfl_channel_multiplier_bytes((uint32_t)p->out_c);
  op->scratch_bytes = 8u * out->elements;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status bind(mculab_tfl_ctx* c, uint8_t* persistent) {
  mculab_conv_s8_params* p = &c->op->k.conv;
  if (mculab_tfl_out(c)->type == MCULAB_TFL_FLOAT32) return MCULAB_TFL_OK;
  return mculab_tfl_channel_multipliers(c, mculab_tfl_in(c, 2), mculab_tfl_in(c, 1),
                                        (uint32_t)p->out_c, persistent, &p->out_multiplier,
                                        &p->out_shift);
}

/* A float matrix [rows][stride] times x, each row's products added to acc[row] in x's order. */
static void mat_vec_f32(const float* w, int32_t stride, const float* x, int32_t rows, int32_t cols,
                        float* acc) {
  for (int32_t r = 0; r < rows; ++r) {
    const float* f = w + (int64_t)r * stride;
    for (int32_t k = 0; k < cols; ++k) acc[r] += x[k] * f[k];
  }
}

/* Each input pixel times each filter tap landing inside the output, added into `acc` (the output's
 * sums, of the output's type: int64 for 16x8, int32 for int8, float32): a matrix (the tap's
 * [out][in] slice of the filter) times the pixel's channels, one call of the kernel set for the
 * integer types. For float32 this adds into every output value in reference_ops::TransposeConv's
 * order (input y, x, channel): one input pixel reaches an output through one tap only. */
static void scatter(mculab_tfl_model* m, const mculab_tfl_op* op, uint8_t type, void* acc) {
  const mculab_conv_s8_params* p = &op->k.conv;
  const void* in = mculab_tfl_data(m, op->inputs[2]);
  const void* w = mculab_tfl_data(m, op->inputs[1]);
  const int32_t w_stride = p->filter_h * p->filter_w * p->in_c;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t iy = 0; iy < p->in_h; ++iy) {
      for (int32_t ix = 0; ix < p->in_w; ++ix) {
        const int64_t at = (((int64_t)b * p->in_h + iy) * p->in_w + ix) * p->in_c;
        for (int32_t fy = 0; fy < p->filter_h; ++fy) {
          const int32_t oy = iy * p->stride_h - p->pad_h + fy;
          if (oy < 0 || oy >= p->out_h) continue;
          for (int32_t fx = 0; fx < p->filter_w; ++fx) {
            const int32_t ox = ix * p->stride_w - p->pad_w + fx;
            if (ox < 0 || ox >= p->out_w) continue;
            const int64_t tap = ((int64_t)fy * p->filter_w + fx) * p->in_c;
            const int64_t o = (((int64_t)b * p->out_h + oy) * p->out_w + ox) * p->out_c;
            if (type == MCULAB_TFL_FLOAT32) {
              mat_vec_f32((const float*)w + tap, w_stride, (const float*)in + at, p->out_c, p->in_c,
                          (float*)acc + o);
            } else if (type == MCULAB_TFL_INT16) {
              mculab_mat_vec_s8s16_s64((const int8_t*)w + tap, w_stride, (const int16_t*)in + at,
                                       p->out_c, p->in_c, (int64_t*)acc + o);
            } else {
              mculab_mat_vec_s8s8_s32((const int8_t*)w + tap, w_stride, (const int8_t*)in + at,
                                      p->input_offset, p->out_c, p->in_c, (int32_t*)acc + o);
            }
          }
        }
      }
    }
  }
}

/* float32 (reference_ops::TransposeConv): the output from 0, the products added in place, then
 * the bias (when there is one), then the clamp. */
static void invoke_float(mculab_tfl_model* m, const mculab_tfl_op* op) {
  const float* bias = (const float*)mculab_tfl_data(m, op->num_inputs < 4 ? -1 : op->inputs[3]);
  float* out = (float*)mculab_tfl_out_data(m, op);
  const uint32_t elements = m->tensors[op->output].elements;
  const uint32_t out_c = (uint32_t)op->k.conv.out_c;
  for (uint32_t k = 0; k < elements; ++k) out[k] = 0.0f;
  scatter(m, op, MCULAB_TFL_FLOAT32, out);
  for (uint32_t k = 0; k < elements; ++k) {
    const float v = bias != NULL ? out[k] + bias[k % out_c] : out[k];
    out[k] = mculab_tfl_clamp_f32(v, op->f_act_min, op->f_act_max);
  }
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  if (m->tensors[op->output].type == MCULAB_TFL_FLOAT32) {
    invoke_float(m, op);
    return MCULAB_TFL_OK;
  }
  const mculab_conv_s8_params* p = &op->k.conv;
  const mculab_tfl_tensor* ti = &m->tensors[op->inputs[2]];
  const mculab_tfl_tensor* to = &m->tensors[op->output];
  const int wide = ti->type == MCULAB_TFL_INT16;
  const mculab_tfl_tensor* bias =
      op->num_inputs < 4 || op->inputs[3] < 0 ? NULL : &m->tensors[op->inputs[3]];
  /* The sums, starting as the biases: int64 for 16x8; int32 for int8, which keeps only their low
   * 32 bits. The first pixel's read from the bias tensor, the others copied from it. */
  int64_t* acc64 = (int64_t*)(void*)m->scratch;
  int32_t* acc32 = (int32_t*)(void*)m->scratch;
  for (int32_t oc = 0; oc < p->out_c; ++oc) {
    const int64_t v = bias != NULL ? mculab_tfl_const_int(bias, (uint32_t)oc) : 0;
    if (wide) {
      acc64[oc] = v;
    } else {
      acc32[oc] = (int32_t)(uint32_t)(uint64_t)v;
    }
  }
  const uint32_t row_bytes = (wide ? 8u : 4u) * (uint32_t)p->out_c;
  for (uint32_t k = (uint32_t)p->out_c; k < to->elements; k += (uint32_t)p->out_c) {
    memcpy(m->scratch + (wide ? 8u : 4u) * k, m->scratch, row_bytes);
  }
  scatter(m, op, ti->type, m->scratch);
  void* out = mculab_tfl_out_data(m, op);
  for (uint32_t k = 0; k < to->elements; k += (uint32_t)p->out_c) {
    for (int32_t oc = 0; oc < p->out_c; ++oc) {
      int32_t v = wide ? mculab_tfl_mbqm64(acc64[k + oc], p->out_multiplier[oc], p->out_shift[oc])
                       : mculab_tfl_mbqm(acc32[k + oc], p->out_multiplier[oc], p->out_shift[oc]);
      v = mculab_tfl_clamp(v + p->output_offset, p->act_min, p->act_max);
      if (wide) {
        ((int16_t*)out)[k + oc] = (int16_t)v;
      } else {
        ((int8_t*)out)[k + oc] = (int8_t)v;
      }
    }
  }
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_transpose_conv = {"TRANSPOSE_CONV", 49,   parse,
                                                            prepare,          bind, invoke};
