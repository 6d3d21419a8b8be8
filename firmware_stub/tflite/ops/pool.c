/* AVERAGE_POOL_2D and MAX_POOL_2D: int8 (reference_integer_ops::AveragePool and MaxPool, in
 * kernels/ through mculab/kernels_s8.h). */
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
  if (!mculab_tfl_quantized(in, MCULAB_TFL_INT8) || !mculab_tfl_quantized(out, MCULAB_TFL_INT8)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs an int8 input and output");
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
  if (!mculab_tfl_activation_range(op->activation, out, &p->act_min, &p->act_max)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "fused activation other than RELU, RELU6, RELU_N1_TO_1");
  }
  op->macs = (uint64_t)p->batches * p->out_h * p->out_w * p->channels * p->filter_h * p->filter_w;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke_average(mculab_tfl_model* m, const mculab_tfl_op* op,
                                        uint16_t index) {
  if (!mculab_average_pool_s8(&op->k.pool, (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
                              (int8_t*)mculab_tfl_out_data(m, op))) {
    return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED, "operator ", index,
                           ": a pooling window holds no input value");
  }
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke_max(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  mculab_max_pool_s8(&op->k.pool, (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
                     (int8_t*)mculab_tfl_out_data(m, op));
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_average_pool_2d = {
    "AVERAGE_POOL_2D", 5, parse, prepare, NULL, invoke_average};
const mculab_tfl_kernel mculab_tfl_kernel_max_pool_2d = {"MAX_POOL_2D", 5,    parse,
                                                         prepare,       NULL, invoke_max};
