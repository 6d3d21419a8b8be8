/* ADD: int8 of one shape (reference_integer_ops::AddElementwise, in kernels/ through
 * mculab/kernels_s8.h). */
#include <stdint.h>

#include "mculab/kernels_s8.h"
#include "ops.h"

static void parse(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->activation = fb_u8(r, t, 0, 0);
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* a = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* b = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (op->num_inputs != 2 || !mculab_tfl_quantized(a, MCULAB_TFL_INT8) ||
      !mculab_tfl_quantized(b, MCULAB_TFL_INT8) || !mculab_tfl_quantized(out, MCULAB_TFL_INT8)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs two int8 inputs and an int8 output");
  }
  if (!mculab_tfl_same_shape(a, b) || !mculab_tfl_same_shape(a, out)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "broadcasting (inputs of different shapes)");
  }
  mculab_add_s8_params* p = &op->k.add;
  p->input1_offset = -a->zero_point;
  p->input2_offset = -b->zero_point;
  p->output_offset = out->zero_point;
  p->left_shift = 20;
  const double twice_max = 2.0 * (double)(a->scale > b->scale ? a->scale : b->scale);
  mculab_tfl_status st = mculab_tfl_multiplier_below_one(c, (double)a->scale / twice_max,
                                                         &p->input1_multiplier, &p->input1_shift);
  if (st == MCULAB_TFL_OK) {
    st = mculab_tfl_multiplier_below_one(c, (double)b->scale / twice_max, &p->input2_multiplier,
                                         &p->input2_shift);
  }
  if (st == MCULAB_TFL_OK) {
    st = mculab_tfl_multiplier_below_one(c, twice_max / ((double)(1 << 20) * (double)out->scale),
                                         &p->output_multiplier, &p->output_shift);
  }
  if (st != MCULAB_TFL_OK) return st;
  if (!mculab_tfl_activation_range(op->activation, out, &p->act_min, &p->act_max)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "fused activation other than RELU, RELU6, RELU_N1_TO_1");
  }
  op->macs = out->elements;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  mculab_add_s8(&op->k.add, (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
                (const int8_t*)mculab_tfl_data(m, op->inputs[1]),
                (int8_t*)mculab_tfl_out_data(m, op), m->tensors[op->output].elements);
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_add = {"ADD", 11, parse, prepare, NULL, invoke};
