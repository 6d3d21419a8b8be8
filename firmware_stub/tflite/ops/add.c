/* MUL: int8 and int16 (reference_integer_ops::MulElementwise: (x + offset1) * (y + offset2)
 * rescaled by input1 scale x input2 scale / output scale, in double; int16 symmetric, as TFLite
 * Micro requires) and float32, broadcasting alike.
 * ADD and SUB: int8 and int16 (TFLite's quantized Add/Sub: both inputs rescaled to twice the
 * larger input scale after a left shift of 20 for int8 or 15 for int16, summed, rescaled to the
 * output; TFLite Micro's add.cc and sub.cc), float32 (reference_ops::Add/Sub with the fused
 * activation). Inputs broadcast as TFLite's BroadcastAdd6DSlow / BroadcastSubSlow do; int8 ADD of
 * one shape runs mculab_add_s8 (kernels/). */
#include <stdint.h>

#include "mculab/kernels_s8.h"
#include "ops.h"

static void parse(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->activation = fb_u8(r, t, 0, 0);
}

/* Each input's shape aligned to the output's from the right, dimensions of 1 broadcast. */
static int broadcastable(const mculab_tfl_tensor* in, const mculab_tfl_tensor* out) {
  if (in->num_dims > out->num_dims) return 0;
  const unsigned lead = out->num_dims - in->num_dims;
  for (unsigned d = 0; d < in->num_dims; ++d) {
    if (in->dims[d] != 1 && in->dims[d] != out->dims[lead + d]) return 0;
  }
  return 1;
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* a = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* b = mculab_tfl_in(c, 1);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  const int is_sub = op->builtin == MCULAB_TFL_SUB;
  const int is_mul = op->builtin == MCULAB_TFL_MUL;
  if (op->num_inputs != 2 || a == NULL || b == NULL || a->type != out->type ||
      b->type != out->type) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs two inputs of the output's type");
  }
  if (!broadcastable(a, out) || !broadcastable(b, out)) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "inputs do not broadcast to the output");
  }
  op->macs = out->elements;
  if (out->type == MCULAB_TFL_FLOAT32) {
    if (!mculab_tfl_activation_range_f32(op->activation, &op->f_act_min, &op->f_act_max)) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "fused activation");
    }
    return MCULAB_TFL_OK;
  }
  if ((out->type != MCULAB_TFL_INT8 && out->type != MCULAB_TFL_INT16) ||
      !mculab_tfl_quantized(a, out->type) || !mculab_tfl_quantized(b, out->type) ||
      !mculab_tfl_quantized(out, out->type)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs int8, int16 or float32 tensors");
  }
  mculab_tfl_arith_params* p = &op->k.arith;
  if (is_mul) {
    /* 16x8: TFLite Micro's int16 MUL is symmetric. */
    if (out->type == MCULAB_TFL_INT16 &&
        (a->zero_point != 0 || b->zero_point != 0 || out->zero_point != 0)) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "int16 tensors need zero point 0");
    }
    p->in1_offset = -a->zero_point;
    p->in2_offset = -b->zero_point;
    p->out_offset = out->zero_point;
    int s;
    mculab_quantize_multiplier((double)a->scale * (double)b->scale / (double)out->scale,
                               &p->out_mult, &s);
    p->out_shift = s;
    if (s > 30) return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "rescaling by 2^30 or more");
    if (!mculab_tfl_activation_range(op->activation, out, &p->act_min, &p->act_max)) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                            "fused activation other than RELU, RELU6, RELU_N1_TO_1");
    }
    return MCULAB_TFL_OK;
  }
  p->in1_offset = -a->zero_point;
  p->in2_offset = -b->zero_point;
  p->out_offset = out->zero_point;
  p->left_shift = out->type == MCULAB_TFL_INT16 ? 15 : 20;
  double m1, m2, mo;
  if (is_sub) {
    /* sub_common.cc takes twice the larger scale in float, the factors in double. */
    const float twice_max = 2.0f * (a->scale > b->scale ? a->scale : b->scale);
    m1 = (double)a->scale / (double)twice_max;
    m2 = (double)b->scale / (double)twice_max;
    mo = (double)twice_max / ((double)(1 << p->left_shift) * (double)out->scale);
  } else {
    const double twice_max = 2.0 * (double)(a->scale > b->scale ? a->scale : b->scale);
    m1 = (double)a->scale / twice_max;
    m2 = (double)b->scale / twice_max;
    mo = twice_max / ((double)(1 << p->left_shift) * (double)out->scale);
  }
  mculab_tfl_status st = mculab_tfl_multiplier_below_one(c, m1, &p->in1_mult, &p->in1_shift);
  if (st == MCULAB_TFL_OK) st = mculab_tfl_multiplier_below_one(c, m2, &p->in2_mult, &p->in2_shift);
  if (st == MCULAB_TFL_OK) st = mculab_tfl_multiplier_below_one(c, mo, &p->out_mult, &p->out_shift);
  if (st != MCULAB_TFL_OK) return st;
  if (!mculab_tfl_activation_range(op->activation, out, &p->act_min, &p->act_max)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "fused activation other than RELU, RELU6, RELU_N1_TO_1");
  }
  return MCULAB_TFL_OK;
}

/* Element strides of `in` over the output's dimensions (0 where it broadcasts). */
static void strides_of(const mculab_tfl_tensor* in, const mculab_tfl_tensor* out,
                       uint32_t* stride) {
  const unsigned lead = out->num_dims - in->num_dims;
  uint32_t s = 1;
  for (int d = (int)out->num_dims - 1; d >= 0; --d) {
    const int k = d - (int)lead;
    if (k < 0 || in->dims[k] == 1) {
      stride[d] = 0;
    } else {
      stride[d] = s;
      s *= (uint32_t)in->dims[k];
    }
  }
}

enum { OP_ADD, OP_SUB, OP_MUL };

static int32_t quantized(const mculab_tfl_arith_params* p, int kind, int32_t x, int32_t y) {
  if (kind == OP_MUL) {
    const int32_t v = p->out_offset + mculab_tfl_mbqm((p->in1_offset + x) * (p->in2_offset + y),
                                                      p->out_mult, p->out_shift);
    return mculab_tfl_clamp(v, p->act_min, p->act_max);
  }
  const int sub = kind == OP_SUB;
  const int32_t a = (p->in1_offset + x) * (1 << p->left_shift);
  const int32_t b = (p->in2_offset + y) * (1 << p->left_shift);
  const int32_t sa = mculab_tfl_mbqm(a, p->in1_mult, p->in1_shift);
  const int32_t sb = mculab_tfl_mbqm(b, p->in2_mult, p->in2_shift);
  const int32_t raw = mculab_tfl_mbqm(sub ? sa - sb : sa + sb, p->out_mult, p->out_shift);
  return mculab_tfl_clamp(raw + p->out_offset, p->act_min, p->act_max);
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const mculab_tfl_tensor* ta = &m->tensors[op->inputs[0]];
  const mculab_tfl_tensor* tb = &m->tensors[op->inputs[1]];
  const mculab_tfl_tensor* to = &m->tensors[op->output];
  const void* a = mculab_tfl_data(m, op->inputs[0]);
  const void* b = mculab_tfl_data(m, op->inputs[1]);
  void* out = mculab_tfl_out_data(m, op);
  const int kind = op->builtin == MCULAB_TFL_SUB   ? OP_SUB
                   : op->builtin == MCULAB_TFL_MUL ? OP_MUL
                                                   : OP_ADD;
  if (kind == OP_ADD && to->type == MCULAB_TFL_INT8 && mculab_tfl_same_shape(ta, to) &&
      mculab_tfl_same_shape(tb, to)) {
    const mculab_tfl_arith_params* p = &op->k.arith;
    const mculab_add_s8_params k = {p->in1_offset, p->in2_offset, p->out_offset, p->left_shift,
                                    p->in1_mult,   p->in1_shift,  p->in2_mult,   p->in2_shift,
                                    p->out_mult,   p->out_shift,  p->act_min,    p->act_max};
    mculab_add_s8(&k, (const int8_t*)a, (const int8_t*)b, (int8_t*)out, to->elements);
    return MCULAB_TFL_OK;
  }
  uint32_t sa[MCULAB_TFL_MAX_DIMS], sb[MCULAB_TFL_MAX_DIMS];
  uint32_t idx[MCULAB_TFL_MAX_DIMS] = {0};
  strides_of(ta, to, sa);
  strides_of(tb, to, sb);
  uint32_t ia = 0, ib = 0;
  for (uint32_t k = 0; k < to->elements; ++k) {
    switch (to->type) {
      case MCULAB_TFL_FLOAT32: {
        const float x = ((const float*)a)[ia], y = ((const float*)b)[ib];
        const float v = kind == OP_SUB ? x - y : kind == OP_MUL ? x * y : x + y;
        ((float*)out)[k] = mculab_tfl_clamp_f32(v, op->f_act_min, op->f_act_max);
        break;
      }
      case MCULAB_TFL_INT16:
        ((int16_t*)out)[k] = (int16_t)quantized(&op->k.arith, kind, ((const int16_t*)a)[ia],
                                                ((const int16_t*)b)[ib]);
        break;
      default:
        ((int8_t*)out)[k] =
            (int8_t)quantized(&op->k.arith, kind, ((const int8_t*)a)[ia], ((const int8_t*)b)[ib]);
        break;
    }
    /* The next output index, last dimension fastest. */
    for (int d = (int)to->num_dims - 1; d >= 0; --d) {
      ia += sa[d];
      ib += sb[d];
      if (++idx[d] < (uint32_t)to->dims[d]) break;
      ia -= sa[d] * idx[d];
      ib -= sb[d] * idx[d];
      idx[d] = 0;
    }
  }
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_add = {"ADD", 11, parse, prepare, NULL, invoke};
/* SubOptions (28): the fused activation first, as AddOptions. */
const mculab_tfl_kernel mculab_tfl_kernel_sub = {"SUB", 28, parse, prepare, NULL, invoke};
/* MulOptions (21): the fused activation first. */
const mculab_tfl_kernel mculab_tfl_kernel_mul = {"MUL", 21, parse, prepare, NULL, invoke};
