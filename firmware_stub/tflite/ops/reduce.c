/* MEAN over constant int32 axes (negative from the end, repeats ignored), keep_dims or not: the
 * output's elements are the input's with the axes taken out, in the same order.
 * - int8 and int16: TFLite Micro's reference (reduce_common.cc, QuantizedMeanOrSum): the int32
 *   sums of the raw values, less zero point x count, rescaled by input scale / output scale with
 *   1 / count folded into the multiplier (its shift by floor(log2(count)), at most 32 and 31 +
 *   the shift), plus the output zero point, clamped; the sums in the shared scratch.
 * - float32: reference_ops::Mean: each output's sum in the input's order, from 0, divided by the
 *   count in float (the 4D [1, 2] case of TFLite Micro gives the same bits). */
#include <stdint.h>

#include "mculab/kernels_s8.h"
#include "ops.h"

static void parse(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->keep_dims = fb_u8(r, t, 0, 0);
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* axes = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (op->num_inputs != 2 || in == NULL || in->type != out->type || in->elements == 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs an input of the output's type");
  }
  if (axes == NULL || !axes->is_const || axes->type != MCULAB_TFL_INT32 || axes->num_dims > 1) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "the axes must be a constant int32 vector");
  }
  mculab_tfl_mean_params* p = &op->k.mean;
  uint8_t reduced[MCULAB_TFL_MAX_DIMS] = {0};
  for (uint32_t i = 0; i < axes->elements; ++i) {
    int64_t a = mculab_tfl_const_int(axes, i);
    if (a < 0) a += in->num_dims;
    if (a < 0 || a >= in->num_dims) {
      return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "an axis outside the input's dimensions");
    }
    reduced[a] = 1;
  }
  uint32_t count = 1, stride = 1;
  for (int d = (int)in->num_dims - 1; d >= 0; --d) {
    if (reduced[d]) {
      count *= (uint32_t)in->dims[d];
      p->out_stride[d] = 0;
    } else {
      p->out_stride[d] = stride;
      stride *= (uint32_t)in->dims[d];
    }
  }
  if (stride != out->elements) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE,
                          "the output's size is not the input's without the axes");
  }
  p->count = count;
  op->macs = in->elements;
  if (out->type == MCULAB_TFL_FLOAT32) return MCULAB_TFL_OK;
  if ((out->type != MCULAB_TFL_INT8 && out->type != MCULAB_TFL_INT16) ||
      !mculab_tfl_quantized(in, in->type) || !mculab_tfl_quantized(out, out->type)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs int8, int16 or float32 tensors");
  }
  p->in_zp = in->zero_point;
  p->out_zp = out->zero_point;
  int shift;
  mculab_quantize_multiplier((double)in->scale / (double)out->scale, &p->mult, &shift);
  /* 1 / count folded in: shift by floor(log2(count)), kept to 32 and to 31 + shift. */
  int fold = 31 - __builtin_clz(count);
  if (fold > 31 + shift) fold = 31 + shift;
  p->mult = (int32_t)(((int64_t)p->mult << fold) / count);
  p->shift = shift - fold;
  if (p->shift > 30) return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "rescaling by 2^30 or more");
  op->scratch_bytes = 4u * out->elements;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const mculab_tfl_tensor* ti = &m->tensors[op->inputs[0]];
  const mculab_tfl_tensor* to = &m->tensors[op->output];
  const void* in = mculab_tfl_data(m, op->inputs[0]);
  void* out = mculab_tfl_out_data(m, op);
  const mculab_tfl_mean_params* p = &op->k.mean;
  const int is_float = to->type == MCULAB_TFL_FLOAT32;
  float* fsum = (float*)out;
  uint32_t* sum = (uint32_t*)(void*)m->scratch; /* int32 sums, wrapping as TFLite's do */
  for (uint32_t o = 0; o < to->elements; ++o) {
    if (is_float) {
      fsum[o] = 0.0f;
    } else {
      sum[o] = 0;
    }
  }
  uint32_t idx[MCULAB_TFL_MAX_DIMS] = {0};
  uint32_t o = 0;
  for (uint32_t k = 0; k < ti->elements; ++k) {
    switch (ti->type) {
      case MCULAB_TFL_FLOAT32:
        fsum[o] = fsum[o] + ((const float*)in)[k];
        break;
      case MCULAB_TFL_INT16:
        sum[o] += (uint32_t)(int32_t)((const int16_t*)in)[k];
        break;
      default:
        sum[o] += (uint32_t)(int32_t)((const int8_t*)in)[k];
        break;
    }
    for (int d = (int)ti->num_dims - 1; d >= 0; --d) {
      o += p->out_stride[d];
      if (++idx[d] < (uint32_t)ti->dims[d]) break;
      o -= p->out_stride[d] * idx[d];
      idx[d] = 0;
    }
  }
  if (is_float) {
    for (uint32_t i = 0; i < to->elements; ++i) fsum[i] = fsum[i] / (float)p->count;
    return MCULAB_TFL_OK;
  }
  int32_t lo, hi;
  mculab_tfl_type_range(to->type, &lo, &hi);
  for (uint32_t i = 0; i < to->elements; ++i) {
    const int32_t shifted = (int32_t)(sum[i] - (uint32_t)((int64_t)p->in_zp * p->count));
    const int32_t y =
        mculab_tfl_clamp(mculab_tfl_mbqm(shifted, p->mult, p->shift) + p->out_zp, lo, hi);
    if (to->type == MCULAB_TFL_INT16) {
      ((int16_t*)out)[i] = (int16_t)y;
    } else {
      ((int8_t*)out)[i] = (int8_t)y;
    }
  }
  return MCULAB_TFL_OK;
}

/* ReducerOptions (27): keep_dims, which the output tensor's shape already says. */
const mculab_tfl_kernel mculab_tfl_kernel_mean = {"MEAN", 27, parse, prepare, NULL, invoke};
