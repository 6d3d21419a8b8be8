/* AVERAGE_POOL_2D and MAX_POOL_2D: int8 (reference_integer_ops::AveragePool and MaxPool, in
 * kernels/ through mculab/kernels_s8.h), int16 (the same functions for int16: the sum in int32,
 * divided rounding halves away from zero; symmetric) and float32 (reference_ops::AveragePool and
 * MaxPool: the sum in float over the window's taps inside the input, in order, divided by their
 * count; then the activation clamp). Taps outside the input are skipped, never counted. */
#include <stdint.h>

#include "mculab/kernels_s8.h"
#include "ops.h"

static void parse(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->padding = fb_u8(r, t, 0, 0);
  op->stride_w = fb_i32(r, t, 1, 0);
  op->stride_h = fb_i32(r, t, 2, 0);
  op->filter_w = fb_i32(r, t, 3, 0);
  op->filter_h = fb_i32(r, t, 4, 0);
  op->activation = fb_u8(r, t, 5, 0);
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  const uint8_t type = in != NULL ? in->type : MCULAB_TFL_INT8;
  if (type == MCULAB_TFL_FLOAT32) {
    if (out->type != MCULAB_TFL_FLOAT32) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "float32 input needs a float32 output");
    }
  } else if (type == MCULAB_TFL_INT16) {
    if (!mculab_tfl_quantized(in, type) || !mculab_tfl_quantized(out, type)) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "int16 input needs an int16 output");
    }
    /* TFLite's GenericPrepare: int16 zero points 0; the scales equal (its DCHECK: pooling never
     * rescales, so another scale would be a wrong output). */
    if (in->zero_point != 0 || out->zero_point != 0) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "int16 input or output with a zero point");
    }
    if (in->scale - out->scale > 1e-6f || out->scale - in->scale > 1e-6f) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "int16 input and output scales differ");
    }
  } else if (!mculab_tfl_quantized(in, MCULAB_TFL_INT8) ||
             !mculab_tfl_quantized(out, MCULAB_TFL_INT8)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "needs an int8, int16 or float32 input and an output of its type");
  }
  if (in->num_dims != 4 || out->num_dims != 4) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "input and output must have 4 dimensions");
  }
  if (op->stride_w < 1 || op->stride_h < 1 || op->stride_w > MCULAB_TFL_MAX_STRIDE ||
      op->stride_h > MCULAB_TFL_MAX_STRIDE || op->filter_w < 1 || op->filter_h < 1 ||
      op->filter_w > MCULAB_TFL_MAX_STRIDE || op->filter_h > MCULAB_TFL_MAX_STRIDE ||
      op->padding > 1) {
    return mculab_tfl_bad(c, MCULAB_TFL_MALFORMED, "stride, filter or padding out of range");
  }
  if ((uint64_t)op->filter_w * (uint64_t)op->filter_h > MCULAB_KERNEL_MAX_DEPTH) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "pooling window over 65536 values");
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
  p->out_h = mculab_tfl_out_size(op->padding, p->in_h, p->filter_h, p->stride_h, 1);
  p->out_w = mculab_tfl_out_size(op->padding, p->in_w, p->filter_w, p->stride_w, 1);
  if (out->dims[0] != p->batches || out->dims[1] != p->out_h || out->dims[2] != p->out_w ||
      out->dims[3] != p->channels) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE,
                          "output shape differs from what the input, window, "
                          "strides and padding give");
  }
  p->pad_h =
      op->padding == 0 ? mculab_tfl_pad_before(p->stride_h, 1, p->in_h, p->filter_h, p->out_h) : 0;
  p->pad_w =
      op->padding == 0 ? mculab_tfl_pad_before(p->stride_w, 1, p->in_w, p->filter_w, p->out_w) : 0;
  if (type == MCULAB_TFL_FLOAT32
          ? !mculab_tfl_activation_range_f32(op->activation, &op->f_act_min, &op->f_act_max)
          : !mculab_tfl_activation_range(op->activation, out, &p->act_min, &p->act_max)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "fused activation other than RELU, RELU6, RELU_N1_TO_1");
  }
  op->macs = (uint64_t)p->batches * p->out_h * p->out_w * p->channels * p->filter_h * p->filter_w;
  return MCULAB_TFL_OK;
}

/* The window of output element `o` (NHWC order) clamped to the input: `rows` x `cols` taps, the
 * first at input element `first`, the next column `p->channels` on, the next row `row_step`. */
typedef struct {
  int64_t first, row_step;
  int32_t rows, cols;
} taps;

static taps taps_of(const mculab_pool_s8_params* p, int64_t o) {
  const int32_t ch = (int32_t)(o % p->channels);
  o /= p->channels;
  const int32_t ox = (int32_t)(o % p->out_w);
  o /= p->out_w;
  const int32_t oy = (int32_t)(o % p->out_h);
  const int64_t b = o / p->out_h;
  const int32_t iy = oy * p->stride_h - p->pad_h, ix = ox * p->stride_w - p->pad_w;
  const int32_t y0 = iy < 0 ? 0 : iy, x0 = ix < 0 ? 0 : ix;
  const int32_t y1 = iy + p->filter_h < p->in_h ? iy + p->filter_h : p->in_h;
  const int32_t x1 = ix + p->filter_w < p->in_w ? ix + p->filter_w : p->in_w;
  taps t;
  t.row_step = (int64_t)p->in_w * p->channels;
  t.first = (b * p->in_h + y0) * t.row_step + (int64_t)x0 * p->channels + ch;
  t.rows = y1 > y0 ? y1 - y0 : 0;
  t.cols = x1 > x0 ? x1 - x0 : 0;
  return t;
}

/* acc summed with (average) or maximised over the taps `t` of `in`, row by row, in acc's type. */
#define REDUCE_TAPS(p, t, in, average, acc)                                         \
  for (int32_t r = 0; r < (t).rows; ++r) {                                          \
    for (int32_t k = 0; k < (t).cols; ++k) {                                        \
      const int64_t at = (t).first + r * (t).row_step + (int64_t)k * (p)->channels; \
      acc = (average) ? acc + (in)[at] : (in)[at] > acc ? (in)[at] : acc;           \
    }                                                                               \
  }

static int64_t outputs(const mculab_pool_s8_params* p) {
  return (int64_t)p->batches * p->out_h * p->out_w * p->channels;
}

/* reference_integer_ops::AveragePool (int16) or MaxPool (int16); 0 when a window is empty. */
static int pool_s16(const mculab_pool_s8_params* p, int average, const int16_t* in, int16_t* out) {
  for (int64_t o = 0; o < outputs(p); ++o) {
    const taps t = taps_of(p, o);
    int32_t acc = average ? 0 : -32768;
    REDUCE_TAPS(p, t, in, average, acc);
    const int32_t count = t.rows * t.cols;
    if (average && count == 0) return 0;
    if (average) acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
    out[o] = (int16_t)mculab_tfl_clamp(acc, p->act_min, p->act_max);
  }
  return 1;
}

/* reference_ops::AveragePool (float) or MaxPool (float); 0 when a window is empty. */
static int pool_f32(const mculab_pool_s8_params* p, int average, float lo, float hi,
                    const float* in, float* out) {
  for (int64_t o = 0; o < outputs(p); ++o) {
    const taps t = taps_of(p, o);
    float acc = average ? 0.0f : -3.402823466e38f; /* numeric_limits<float>::lowest() */
    REDUCE_TAPS(p, t, in, average, acc);
    const int32_t count = t.rows * t.cols;
    if (average && count == 0) return 0;
    if (average) acc /= (float)count;
    out[o] = acc < lo ? lo : acc > hi ? hi : acc;
  }
  return 1;
}

static mculab_tfl_status run(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index,
                             int average) {
  const void* in = mculab_tfl_data(m, op->inputs[0]);
  void* out = mculab_tfl_out_data(m, op);
  int ok = 1;
  switch (m->tensors[op->output].type) {
    case MCULAB_TFL_FLOAT32:
      ok = pool_f32(&op->k.pool, average, op->f_act_min, op->f_act_max, (const float*)in,
                    (float*)out);
      break;
    case MCULAB_TFL_INT16:
      ok = pool_s16(&op->k.pool, average, (const int16_t*)in, (int16_t*)out);
      break;
    default:
      if (average) {
        ok = mculab_average_pool_s8(&op->k.pool, (const int8_t*)in, (int8_t*)out);
      } else {
        mculab_max_pool_s8(&op->k.pool, (const int8_t*)in, (int8_t*)out);
      }
  }
  if (!ok) {
    return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED, "operator ", index,
                           ": a pooling window holds no input value");
  }
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke_average(mculab_tfl_model* m, const mculab_tfl_op* op,
                                        uint16_t index) {
  return run(m, op, index, 1);
}

static mculab_tfl_status invoke_max(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  return run(m, op, index, 0);
}

const mculab_tfl_kernel mculab_tfl_kernel_average_pool_2d = {
    "AVERAGE_POOL_2D", 5, parse, prepare, NULL, invoke_average};
const mculab_tfl_kernel mculab_tfl_kernel_max_pool_2d = {"MAX_POOL_2D", 5,    parse,
                                                         prepare,       NULL, invoke_max};
