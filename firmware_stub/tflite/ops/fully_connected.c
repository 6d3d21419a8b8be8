/* FULLY_CONNECTED: int8 (reference_integer_ops::FullyConnected, in kernels/ through
 * mculab/kernels_s8.h), 16x8 (the same function for int16 input: symmetric int16 activations,
 * int8 weights, the accumulator the bias's type (int64, or int32 wrapping), requantized by the
 * matching MultiplyByQuantizedMultiplier; the sums through the kernel set's matrix-vector block)
 * and float32 (reference_ops::FullyConnected: each sum in float in the
 * input's order, then the bias, then the activation clamp). */
#include <stdint.h>

#include "mculab/kernels_s8.h"
#include "ops.h"

static void parse(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->activation = fb_u8(r, t, 0, 0);
  op->weights_format = fb_u8(r, t, 1, 0);
  op->keep_num_dims = fb_u8(r, t, 2, 0);
}

/* The filter [out][depth] against the input's size and the output's: batches. */
static mculab_tfl_status shapes(mculab_tfl_ctx* c, const mculab_tfl_tensor* in,
                                const mculab_tfl_tensor* filter, const mculab_tfl_tensor* out,
                                mculab_fc_s8_params* p) {
  if (filter->num_dims != 2) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "filter must be [out][in]");
  }
  p->kernel_sums = NULL; /* the kernel sums the filter itself */
  p->out_c = filter->dims[0];
  p->depth = filter->dims[1];
  if (p->depth > MCULAB_KERNEL_MAX_DEPTH) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "accumulation depth over 65536");
  }
  if (in->elements % (uint32_t)p->depth != 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE,
                          "input size is not a multiple of the filter's depth");
  }
  p->batches = (int32_t)(in->elements / (uint32_t)p->depth);
  if ((uint64_t)p->batches * (uint64_t)p->out_c != out->elements) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "output size is not batches x output channels");
  }
  c->op->macs = (uint64_t)p->batches * p->out_c * p->depth;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status prepare_float(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* filter = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* bias = mculab_tfl_in(c, 2);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (!mculab_tfl_float_filter(out, filter)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "float32 input needs a constant float32 filter and a float32 output");
  }
  const mculab_tfl_status st = shapes(c, in, filter, out, &op->k.fc);
  if (st != MCULAB_TFL_OK) return st;
  return mculab_tfl_prepare_float_tail(c, bias, (uint32_t)op->k.fc.out_c);
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* filter = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* bias = mculab_tfl_in(c, 2);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (op->weights_format != 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "shuffled fully connected weights");
  }
  if (in != NULL && in->type == MCULAB_TFL_FLOAT32) return prepare_float(c);
  const uint8_t act =
      in != NULL && in->type == MCULAB_TFL_INT16 ? MCULAB_TFL_INT16 : MCULAB_TFL_INT8;
  if (!mculab_tfl_quantized(in, act) || !mculab_tfl_quantized(out, act) || filter == NULL ||
      filter->type != MCULAB_TFL_INT8 || !filter->is_const || filter->num_scales != 1 ||
      !mculab_tfl_valid_scale(filter->scale) || filter->zero_point != 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "needs int8 or int16 input and output of one type and a constant int8 "
                          "filter quantized per tensor");
  }
  if (act == MCULAB_TFL_INT16 && (in->zero_point != 0 || out->zero_point != 0)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "int16 activations with a zero point");
  }
  mculab_fc_s8_params* p = &op->k.fc;
  const mculab_tfl_status st = shapes(c, in, filter, out, p);
  if (st != MCULAB_TFL_OK) return st;
  if (bias != NULL && ((bias->type != MCULAB_TFL_INT32 &&
                        (act == MCULAB_TFL_INT8 || bias->type != MCULAB_TFL_INT64)) ||
                       !bias->is_const || bias->elements != (uint32_t)p->out_c ||
                       ((uintptr_t)bias->const_data & 3u) != 0)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "bias must be constant int32 (int64 for int16) [out channels], aligned");
  }
  /* The 16x8 sums of one batch, as int64 (mculab_mat_vec_s8s16_s64). */
  if (act == MCULAB_TFL_INT16) op->scratch_bytes = 8u * (uint32_t)p->out_c;
  if (!mculab_tfl_activation_range(op->activation, out, &p->act_min, &p->act_max)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "fused activation other than RELU, RELU6, RELU_N1_TO_1");
  }
  /* GetQuantizedConvolutionMultipler: the product of the scales in float, then double. */
  const double effective = (double)(in->scale * filter->scale) / (double)out->scale;
  int s;
  mculab_quantize_multiplier(effective, &p->out_multiplier, &s);
  if (s > 0) return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "requantization scale of 1 or more");
  p->out_shift = s;
  p->input_offset = -in->zero_point;
  p->output_offset = out->zero_point;
  return MCULAB_TFL_OK;
}

static void invoke_float(mculab_tfl_model* m, const mculab_tfl_op* op) {
  const mculab_fc_s8_params* p = &op->k.fc;
  const float* in = (const float*)mculab_tfl_data(m, op->inputs[0]);
  const float* w = (const float*)mculab_tfl_data(m, op->inputs[1]);
  const float* bias = op->num_inputs < 3 ? NULL : (const float*)mculab_tfl_data(m, op->inputs[2]);
  float* out = (float*)mculab_tfl_out_data(m, op);
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oc = 0; oc < p->out_c; ++oc) {
      float total = 0.0f;
      for (int32_t d = 0; d < p->depth; ++d) {
        total += in[(int64_t)b * p->depth + d] * w[(int64_t)oc * p->depth + d];
      }
      const float v = total + (bias != NULL ? bias[oc] : 0.0f);
      out[(int64_t)b * p->out_c + oc] = mculab_tfl_clamp_f32(v, op->f_act_min, op->f_act_max);
    }
  }
}

/* reference_integer_ops::FullyConnected for int16 input: per batch, the bias (or 0) plus the
 * filter times the input row, in int64; with an int32 bias (or none) TFLite's accumulator is
 * int32, whose wrapped sum is the int64 sum's low 32 bits. */
static void invoke_16x8(mculab_tfl_model* m, const mculab_tfl_op* op) {
  const mculab_fc_s8_params* p = &op->k.fc;
  const int16_t* in = (const int16_t*)mculab_tfl_data(m, op->inputs[0]);
  const int8_t* w = (const int8_t*)mculab_tfl_data(m, op->inputs[1]);
  const mculab_tfl_tensor* bias =
      op->num_inputs < 3 || op->inputs[2] < 0 ? NULL : &m->tensors[op->inputs[2]];
  const int wide = bias != NULL && bias->type == MCULAB_TFL_INT64;
  int16_t* out = (int16_t*)mculab_tfl_out_data(m, op);
  int64_t* acc = (int64_t*)(void*)m->scratch;
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t oc = 0; oc < p->out_c; ++oc) {
      acc[oc] = bias != NULL ? mculab_tfl_const_int(bias, (uint32_t)oc) : 0;
    }
    mculab_mat_vec_s8s16_s64(w, p->depth, in + (int64_t)b * p->depth, p->out_c, p->depth, acc);
    for (int32_t oc = 0; oc < p->out_c; ++oc) {
      const int32_t v = wide ? mculab_tfl_mbqm64(acc[oc], p->out_multiplier, p->out_shift)
                             : mculab_tfl_mbqm((int32_t)(uint32_t)(uint64_t)acc[oc],
                                               p->out_multiplier, p->out_shift);
      out[(int64_t)b * p->out_c + oc] = (int16_t)mculab_tfl_clamp(v, p->act_min, p->act_max);
    }
  }
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  if (m->tensors[op->output].type == MCULAB_TFL_FLOAT32) {
    invoke_float(m, op);
    return MCULAB_TFL_OK;
  }
  if (m->tensors[op->output].type == MCULAB_TFL_INT16) {
    invoke_16x8(m, op);
    return MCULAB_TFL_OK;
  }
  const int32_t* bias =
      op->num_inputs < 3 ? NULL : (const int32_t*)mculab_tfl_data(m, op->inputs[2]);
  mculab_fully_connected_s8_run(&op->k.fc, (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
                                (const int8_t*)mculab_tfl_data(m, op->inputs[1]), bias,
                                (int8_t*)mculab_tfl_out_data(m, op));
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_fully_connected = {"FULLY_CONNECTED", 8,    parse,
                                                             prepare,           NULL, invoke};
