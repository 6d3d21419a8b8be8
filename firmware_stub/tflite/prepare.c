/* Preparing a loaded model: each operator's shapes, types and quantization checked the way
 * TFLite's Prepare functions check them, its kernel parameters computed as TFLite computes them
 * (quantization_util.cc, kernel_util.cc), then the arena planned and laid out. */
#include <stdint.h>

#include "mculab/kernels_s8.h"
#include "mculab/tflite.h"
#include "tflite_internal.h"

#define MAX_STRIDE 65535

/* TFLite's ActivationFunctionType */
enum { ACT_NONE = 0, ACT_RELU = 1, ACT_RELU_N1_TO_1 = 2, ACT_RELU6 = 3 };

static float read_scale(const mculab_tfl_model* m, const mculab_tfl_tensor* t, uint32_t i) {
  const uint8_t* p = m->model + t->scales_pos + 4u * i;
  const uint32_t bits =
      (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
  float f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}

static int valid_scale(float s) { return s > 0.0f && s < 1e30f; } /* also false for NaN */

/* round(v) halves away from zero, as TfLiteRound, for |v| < 2^31. */
static int32_t round_to_i32(double v) {
  if (v > 2147483647.0) return INT32_MAX;
  if (v < -2147483647.0) return -INT32_MAX;
  return v >= 0 ? (int32_t)(v + 0.5) : -(int32_t)(-v + 0.5);
}

/* CalculateActivationRangeQuantized for int8 (f / scale in float, as TFLite). */
static int activation_range(uint8_t act, const mculab_tfl_tensor* out, int32_t* lo, int32_t* hi) {
  const float scale = out->scale;
  const int32_t zp = out->zero_point;
  *lo = -128;
  *hi = 127;
  switch (act) {
    case ACT_NONE:
      return 1;
    case ACT_RELU:
      if (zp > *lo) *lo = zp;
      return 1;
    case ACT_RELU6: {
      const int32_t six = zp + round_to_i32((double)(6.0f / scale));
      if (zp > *lo) *lo = zp;
      if (six < *hi) *hi = six;
      return 1;
    }
    case ACT_RELU_N1_TO_1: {
      const int32_t m1 = zp + round_to_i32((double)(-1.0f / scale));
      const int32_t p1 = zp + round_to_i32((double)(1.0f / scale));
      if (m1 > *lo) *lo = m1;
      if (p1 < *hi) *hi = p1;
      return 1;
    }
  }
  return 0;
}

/* ComputeOutSize and ComputePaddingWithOffset (kernels/padding.h). */
static int32_t out_size(uint8_t padding, int32_t in, int32_t filter, int32_t stride,
                        int32_t dilation) {
  const int64_t effective = (int64_t)(filter - 1) * dilation + 1;
  if (padding == 0) return (int32_t)(((int64_t)in + stride - 1) / stride);
  const int64_t v = ((int64_t)in + stride - effective) / stride;
  return v < 0 ? 0 : (int32_t)v;
}
static int32_t pad_before(int32_t stride, int32_t dilation, int32_t in, int32_t filter,
                          int32_t out) {
  const int64_t effective = (int64_t)(filter - 1) * dilation + 1;
  const int64_t total = ((int64_t)out - 1) * stride + effective - in;
  return total > 0 ? (int32_t)(total / 2) : 0;
}

typedef struct {
  mculab_tfl_model* m;
  uint32_t index;
  const mculab_tfl_op* op;
} ctx;

static mculab_tfl_status bad(ctx* c, mculab_tfl_status st, const char* why) {
  const char* name = mculab_tfl_op_name(c->op->builtin);
  /* "operator 7 (CONV_2D): why" */
  mculab_tfl_fail(c->m, st, "operator ", c->index, " (");
  size_t at = 0;
  while (c->m->error[at] != 0) ++at;
  for (const char* s = name; *s && at + 1 < MCULAB_TFL_ERROR_LEN; ++s) c->m->error[at++] = *s;
  for (const char* s = "): "; *s && at + 1 < MCULAB_TFL_ERROR_LEN; ++s) c->m->error[at++] = *s;
  for (const char* s = why; *s && at + 1 < MCULAB_TFL_ERROR_LEN; ++s) c->m->error[at++] = *s;
  c->m->error[at] = 0;
  return st;
}

static const mculab_tfl_tensor* input(ctx* c, unsigned k) {
  return k < c->op->num_inputs && c->op->inputs[k] >= 0 ? &c->m->tensors[c->op->inputs[k]] : NULL;
}

/* An int8 activation with a usable scale. */
static int quantized_int8(const mculab_tfl_tensor* t) {
  return t != NULL && t->type == MCULAB_TFL_INT8 && t->num_scales >= 1 && valid_scale(t->scale);
}

static mculab_tfl_status prepare_conv(ctx* c, mculab_tfl_op* op, uint64_t* persistent) {
  const int depthwise = op->builtin == MCULAB_TFL_DEPTHWISE_CONV_2D;
  const mculab_tfl_tensor* in = input(c, 0);
  const mculab_tfl_tensor* filter = input(c, 1);
  const mculab_tfl_tensor* bias = input(c, 2);
  const mculab_tfl_tensor* out = &c->m->tensors[op->output];
  if (!quantized_int8(in) || !quantized_int8(out) || filter == NULL ||
      filter->type != MCULAB_TFL_INT8 || !filter->is_const || filter->num_scales == 0) {
    return bad(c, MCULAB_TFL_UNSUPPORTED,
               "needs an int8 input and output and constant int8 filter");
  }
  if (in->num_dims != 4 || filter->num_dims != 4 || out->num_dims != 4) {
    return bad(c, MCULAB_TFL_BAD_SHAPE, "input, filter and output must have 4 dimensions");
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
      return bad(c, MCULAB_TFL_BAD_SHAPE, "filter is not [1][kh][kw][in * depth multiplier]");
    }
    p->depth_multiplier = p->out_c / p->in_c;
  } else {
    if (filter->dims[3] != p->in_c) {
      return bad(c, MCULAB_TFL_BAD_SHAPE, "filter depth differs from the input's");
    }
    p->depth_multiplier = 1;
  }
  if (op->stride_w < 1 || op->stride_h < 1 || op->stride_w > MAX_STRIDE ||
      op->stride_h > MAX_STRIDE || op->dilation_w < 1 || op->dilation_h < 1 ||
      op->dilation_w > MAX_STRIDE || op->dilation_h > MAX_STRIDE || op->padding > 1) {
    return bad(c, MCULAB_TFL_MALFORMED, "stride, dilation or padding out of range");
  }
  const uint64_t depth = (uint64_t)p->filter_h * p->filter_w * (depthwise ? 1u : (uint32_t)p->in_c);
  if (depth > MCULAB_KERNEL_MAX_DEPTH) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "accumulation depth over 65536");
  }
  p->stride_h = op->stride_h;
  p->stride_w = op->stride_w;
  p->dilation_h = op->dilation_h;
  p->dilation_w = op->dilation_w;
  p->out_h = out_size(op->padding, p->in_h, p->filter_h, p->stride_h, p->dilation_h);
  p->out_w = out_size(op->padding, p->in_w, p->filter_w, p->stride_w, p->dilation_w);
  if (out->dims[0] != p->batches || out->dims[1] != p->out_h || out->dims[2] != p->out_w ||
      out->dims[3] != p->out_c) {
    return bad(c, MCULAB_TFL_BAD_SHAPE,
               "output shape differs from what the input, filter, "
               "strides and padding give");
  }
  p->pad_h =
      op->padding == 0 ? pad_before(p->stride_h, p->dilation_h, p->in_h, p->filter_h, p->out_h) : 0;
  p->pad_w =
      op->padding == 0 ? pad_before(p->stride_w, p->dilation_w, p->in_w, p->filter_w, p->out_w) : 0;
  if (bias != NULL &&
      (bias->type != MCULAB_TFL_INT32 || !bias->is_const || bias->elements != (uint32_t)p->out_c ||
       ((uintptr_t)bias->const_data & 3u) != 0)) {
    return bad(c, MCULAB_TFL_UNSUPPORTED,
               "bias must be constant int32 [out channels], 4-byte aligned");
  }
  if (filter->num_scales != 1 && filter->num_scales != (uint32_t)p->out_c) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "filter scales are neither per tensor nor per channel");
  }
  if (filter->num_scales > 1 && filter->quantized_dim != (depthwise ? 3 : 0)) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "filter quantized along another dimension");
  }
  if (filter->zero_point != 0) return bad(c, MCULAB_TFL_UNSUPPORTED, "filter zero point not 0");
  for (uint32_t ch = 0; ch < filter->num_scales; ++ch) {
    if (!valid_scale(read_scale(c->m, filter, ch))) {
      return bad(c, MCULAB_TFL_UNSUPPORTED, "filter scale not positive and finite");
    }
  }
  if (!activation_range(op->activation, out, &p->act_min, &p->act_max)) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "fused activation other than RELU, RELU6, RELU_N1_TO_1");
  }
  p->input_offset = -in->zero_point;
  p->output_offset = out->zero_point;
  *persistent += 8u * (uint64_t)p->out_c + 2u * MCULAB_TFL_ALIGN;
  op->macs = (uint64_t)p->batches * p->out_h * p->out_w * p->out_c * depth;
  return MCULAB_TFL_OK;
}

/* The per-channel multipliers, once the persistent area is known. */
static mculab_tfl_status fill_conv_multipliers(ctx* c, mculab_tfl_op* op, int32_t* mult,
                                               int32_t* shift) {
  const mculab_tfl_tensor* in = input(c, 0);
  const mculab_tfl_tensor* filter = input(c, 1);
  const mculab_tfl_tensor* out = &c->m->tensors[op->output];
  for (int32_t ch = 0; ch < op->k.conv.out_c; ++ch) {
    const float fs = read_scale(c->m, filter, filter->num_scales > 1 ? (uint32_t)ch : 0u);
    const double effective = (double)in->scale * (double)fs / (double)out->scale;
    int s;
    mculab_quantize_multiplier(effective, &mult[ch], &s);
    if (s > 0) return bad(c, MCULAB_TFL_UNSUPPORTED, "requantization scale of 1 or more");
    shift[ch] = s;
  }
  op->k.conv.out_multiplier = mult;
  op->k.conv.out_shift = shift;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status prepare_fc(ctx* c, mculab_tfl_op* op) {
  const mculab_tfl_tensor* in = input(c, 0);
  const mculab_tfl_tensor* filter = input(c, 1);
  const mculab_tfl_tensor* bias = input(c, 2);
  const mculab_tfl_tensor* out = &c->m->tensors[op->output];
  if (!quantized_int8(in) || !quantized_int8(out) || filter == NULL ||
      filter->type != MCULAB_TFL_INT8 || !filter->is_const || filter->num_scales != 1 ||
      !valid_scale(filter->scale) || filter->zero_point != 0) {
    return bad(c, MCULAB_TFL_UNSUPPORTED,
               "needs int8 input and output and a constant int8 filter quantized per tensor");
  }
  if (filter->num_dims != 2) return bad(c, MCULAB_TFL_BAD_SHAPE, "filter must be [out][in]");
  mculab_fc_s8_params* p = &op->k.fc;
  p->kernel_sums = NULL; /* the kernel sums the filter itself */
  p->out_c = filter->dims[0];
  p->depth = filter->dims[1];
  if (p->depth > MCULAB_KERNEL_MAX_DEPTH) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "accumulation depth over 65536");
  }
  if (in->elements % (uint32_t)p->depth != 0) {
    return bad(c, MCULAB_TFL_BAD_SHAPE, "input size is not a multiple of the filter's depth");
  }
  p->batches = (int32_t)(in->elements / (uint32_t)p->depth);
  if ((uint64_t)p->batches * (uint64_t)p->out_c != out->elements) {
    return bad(c, MCULAB_TFL_BAD_SHAPE, "output size is not batches x output channels");
  }
  if (bias != NULL &&
      (bias->type != MCULAB_TFL_INT32 || !bias->is_const || bias->elements != (uint32_t)p->out_c ||
       ((uintptr_t)bias->const_data & 3u) != 0)) {
    return bad(c, MCULAB_TFL_UNSUPPORTED,
               "bias must be constant int32 [out channels], 4-byte aligned");
  }
  if (!activation_range(op->activation, out, &p->act_min, &p->act_max)) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "fused activation other than RELU, RELU6, RELU_N1_TO_1");
  }
  /* GetQuantizedConvolutionMultipler: the product of the scales in float, then double. */
  const double effective = (double)(in->scale * filter->scale) / (double)out->scale;
  int s;
  mculab_quantize_multiplier(effective, &p->out_multiplier, &s);
  if (s > 0) return bad(c, MCULAB_TFL_UNSUPPORTED, "requantization scale of 1 or more");
  p->out_shift = s;
  p->input_offset = -in->zero_point;
  p->output_offset = out->zero_point;
  op->macs = (uint64_t)p->batches * p->out_c * p->depth;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status prepare_pool(ctx* c, mculab_tfl_op* op) {
  const mculab_tfl_tensor* in = input(c, 0);
  const mculab_tfl_tensor* out = &c->m->tensors[op->output];
  if (!quantized_int8(in) || !quantized_int8(out)) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "needs an int8 input and output");
  }
  if (in->num_dims != 4 || out->num_dims != 4) {
    return bad(c, MCULAB_TFL_BAD_SHAPE, "input and output must have 4 dimensions");
  }
  if (op->stride_w < 1 || op->stride_h < 1 || op->stride_w > MAX_STRIDE ||
      op->stride_h > MAX_STRIDE || op->filter_w < 1 || op->filter_h < 1 ||
      op->filter_w > MAX_STRIDE || op->filter_h > MAX_STRIDE || op->padding > 1) {
    return bad(c, MCULAB_TFL_MALFORMED, "stride, filter or padding out of range");
  }
  if ((uint64_t)op->filter_w * (uint64_t)op->filter_h > MCULAB_KERNEL_MAX_DEPTH) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "pooling window over 65536 values");
  }
  mculab_pool_s8_params* p = &op->k.pool;
  p->batches = in->dims[0];
  p->in_h = in->dims[1];
  p->in_w = in->dims[2];
  p->channels = in->dims[3];
  p->filter_h = op->filter_h;
  p->filter_w = op->filter_w;
  p->stride_h = op->stride_h;
  p->stride_w = op->stride_w;
  p->out_h = out_size(op->padding, p->in_h, p->filter_h, p->stride_h, 1);
  p->out_w = out_size(op->padding, p->in_w, p->filter_w, p->stride_w, 1);
  if (out->dims[0] != p->batches || out->dims[1] != p->out_h || out->dims[2] != p->out_w ||
      out->dims[3] != p->channels) {
    return bad(c, MCULAB_TFL_BAD_SHAPE,
               "output shape differs from what the input, window, "
               "strides and padding give");
  }
  p->pad_h = op->padding == 0 ? pad_before(p->stride_h, 1, p->in_h, p->filter_h, p->out_h) : 0;
  p->pad_w = op->padding == 0 ? pad_before(p->stride_w, 1, p->in_w, p->filter_w, p->out_w) : 0;
  if (!activation_range(op->activation, out, &p->act_min, &p->act_max)) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "fused activation other than RELU, RELU6, RELU_N1_TO_1");
  }
  op->macs = (uint64_t)p->batches * p->out_h * p->out_w * p->channels * p->filter_h * p->filter_w;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status quantize_below_one(ctx* c, double real, int32_t* mult, int32_t* shift) {
  int s;
  mculab_quantize_multiplier(real, mult, &s);
  if (s > 0) return bad(c, MCULAB_TFL_UNSUPPORTED, "a rescaling factor of 1 or more");
  *shift = s;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status prepare_add(ctx* c, mculab_tfl_op* op) {
  const mculab_tfl_tensor* a = input(c, 0);
  const mculab_tfl_tensor* b = input(c, 1);
  const mculab_tfl_tensor* out = &c->m->tensors[op->output];
  if (op->num_inputs != 2 || !quantized_int8(a) || !quantized_int8(b) || !quantized_int8(out)) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "needs two int8 inputs and an int8 output");
  }
  if (a->num_dims != b->num_dims || a->num_dims != out->num_dims) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "broadcasting (inputs of different shapes)");
  }
  for (unsigned d = 0; d < a->num_dims; ++d) {
    if (a->dims[d] != b->dims[d] || a->dims[d] != out->dims[d]) {
      return bad(c, MCULAB_TFL_UNSUPPORTED, "broadcasting (inputs of different shapes)");
    }
  }
  mculab_add_s8_params* p = &op->k.add;
  p->input1_offset = -a->zero_point;
  p->input2_offset = -b->zero_point;
  p->output_offset = out->zero_point;
  p->left_shift = 20;
  const double twice_max = 2.0 * (double)(a->scale > b->scale ? a->scale : b->scale);
  mculab_tfl_status st =
      quantize_below_one(c, (double)a->scale / twice_max, &p->input1_multiplier, &p->input1_shift);
  if (st == MCULAB_TFL_OK) {
    st = quantize_below_one(c, (double)b->scale / twice_max, &p->input2_multiplier,
                            &p->input2_shift);
  }
  if (st == MCULAB_TFL_OK) {
    st = quantize_below_one(c, twice_max / ((double)(1 << 20) * (double)out->scale),
                            &p->output_multiplier, &p->output_shift);
  }
  if (st != MCULAB_TFL_OK) return st;
  if (!activation_range(op->activation, out, &p->act_min, &p->act_max)) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "fused activation other than RELU, RELU6, RELU_N1_TO_1");
  }
  op->macs = out->elements;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status prepare_reshape(ctx* c, mculab_tfl_op* op) {
  const mculab_tfl_tensor* in = input(c, 0);
  const mculab_tfl_tensor* shape = input(c, 1);
  const mculab_tfl_tensor* out = &c->m->tensors[op->output];
  if (in == NULL || in->type != MCULAB_TFL_INT8 || out->type != MCULAB_TFL_INT8) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "needs an int8 input and output");
  }
  if (shape != NULL && !shape->is_const) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "a shape computed at run time");
  }
  if (in->elements != out->elements) {
    return bad(c, MCULAB_TFL_BAD_SHAPE, "input and output differ in size");
  }
  op->macs = 0;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status prepare_softmax(ctx* c, mculab_tfl_op* op) {
  const mculab_tfl_tensor* in = input(c, 0);
  const mculab_tfl_tensor* out = &c->m->tensors[op->output];
  if (!quantized_int8(in) || !quantized_int8(out)) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "needs an int8 input and output");
  }
  const float expected = 1.0f / 256.0f;
  if (out->zero_point != -128 || out->scale < expected - 1e-6f || out->scale > expected + 1e-6f) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "int8 output must have zero point -128, scale 1/256");
  }
  if (in->num_dims == 0 || in->elements != out->elements) {
    return bad(c, MCULAB_TFL_BAD_SHAPE, "input and output differ in size");
  }
  const uint32_t depth = (uint32_t)in->dims[in->num_dims - 1];
  if (depth > MCULAB_SOFTMAX_MAX_DEPTH) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "rows over 4095 values");
  }
  if (!mculab_softmax_s8_prepare((double)op->beta, (double)in->scale, &op->k.softmax)) {
    return bad(c, MCULAB_TFL_UNSUPPORTED, "beta x input scale out of range");
  }
  op->softmax_depth = depth;
  op->softmax_outer = in->elements / depth;
  op->macs = in->elements;
  return MCULAB_TFL_OK;
}

mculab_tfl_status mculab_tfl_prepare(mculab_tfl_model* m, uint8_t* arena, size_t arena_len) {
  m->prepared = 0;
  m->arena = NULL;
  m->arena_len = 0;
  if (m->num_ops == 0) {
    return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED, "no model loaded", -1, NULL);
  }
  uint64_t persistent = 0;
  for (uint32_t i = 0; i < m->num_ops; ++i) {
    mculab_tfl_op* op = &m->ops[i];
    ctx c = {m, i, op};
    mculab_tfl_status st = MCULAB_TFL_UNSUPPORTED_OP;
    op->macs = 0;
    switch (op->builtin) {
      case MCULAB_TFL_CONV_2D:
      case MCULAB_TFL_DEPTHWISE_CONV_2D:
        st = prepare_conv(&c, op, &persistent);
        break;
      case MCULAB_TFL_FULLY_CONNECTED:
        st = prepare_fc(&c, op);
        break;
      case MCULAB_TFL_AVERAGE_POOL_2D:
      case MCULAB_TFL_MAX_POOL_2D:
        st = prepare_pool(&c, op);
        break;
      case MCULAB_TFL_ADD:
        st = prepare_add(&c, op);
        break;
      case MCULAB_TFL_RESHAPE:
        st = prepare_reshape(&c, op);
        break;
      case MCULAB_TFL_SOFTMAX:
        st = prepare_softmax(&c, op);
        break;
      case MCULAB_TFL_QUANTIZE:
      case MCULAB_TFL_DEQUANTIZE:
        st = mculab_tfl_prepare_quantize(m, i, op);
        break;
    }
    if (st != MCULAB_TFL_OK) return st;
  }
  for (uint32_t i = 0; i < m->num_tensors; ++i) {
    /* float32 activations only where QUANTIZE reads or DEQUANTIZE writes them (each operator
     * checked its own tensors' types above). */
    if (m->tensors[i].is_planned && m->tensors[i].type != MCULAB_TFL_INT8 &&
        m->tensors[i].type != MCULAB_TFL_FLOAT32) {
      return mculab_tfl_fail(m, MCULAB_TFL_UNSUPPORTED, "tensor ", i,
                             ": an activation of a type other than int8 or float32");
    }
  }
  mculab_tfl_plan_arena(m);
  m->plan.persistent_bytes = persistent > UINT32_MAX ? UINT32_MAX : (uint32_t)persistent;
  m->plan.scratch_bytes = 0;
  if (m->plan.naive_bytes >= 0x7FFFFFFFu || persistent >= 0x7FFFFFFFu) {
    return mculab_tfl_fail(m, MCULAB_TFL_TOO_LARGE, "the activations need over 2 GiB", -1, NULL);
  }
  /* Layout: planned tensors from the first aligned byte, persistent data after them. */
  const uintptr_t base = (uintptr_t)arena;
  const uint64_t pad = (MCULAB_TFL_ALIGN - (base % MCULAB_TFL_ALIGN)) % MCULAB_TFL_ALIGN;
  const uint64_t need = pad + (uint64_t)m->plan.arena_bytes + persistent;
  if (arena == NULL || need > (uint64_t)arena_len) {
    return mculab_tfl_fail2(m, MCULAB_TFL_NO_MEMORY, "the arena of ", (int64_t)arena_len,
                            " bytes is smaller than the plan: ", (int64_t)need, " bytes");
  }
  uint8_t* planned = arena + pad;
  uint8_t* at = planned + m->plan.arena_bytes;
  for (uint32_t i = 0; i < m->num_ops; ++i) {
    mculab_tfl_op* op = &m->ops[i];
    if (op->builtin != MCULAB_TFL_CONV_2D && op->builtin != MCULAB_TFL_DEPTHWISE_CONV_2D) continue;
    ctx c = {m, i, op};
    int32_t* mult = (int32_t*)(void*)at;
    at += (4u * (uint32_t)op->k.conv.out_c + MCULAB_TFL_ALIGN - 1u) & ~(MCULAB_TFL_ALIGN - 1u);
    int32_t* shift = (int32_t*)(void*)at;
    at += (4u * (uint32_t)op->k.conv.out_c + MCULAB_TFL_ALIGN - 1u) & ~(MCULAB_TFL_ALIGN - 1u);
    const mculab_tfl_status st = fill_conv_multipliers(&c, op, mult, shift);
    if (st != MCULAB_TFL_OK) return st;
  }
  for (uint32_t i = 0; i < m->num_tensors; ++i) {
    mculab_tfl_tensor* t = &m->tensors[i];
    t->data = t->is_planned ? planned + t->arena_offset : NULL;
  }
  m->arena = arena;
  m->arena_len = (uint32_t)(arena_len > UINT32_MAX ? UINT32_MAX : arena_len);
  m->prepared = 1;
  return MCULAB_TFL_OK;
}
