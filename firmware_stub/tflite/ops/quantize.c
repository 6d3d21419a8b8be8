/* QUANTIZE and DEQUANTIZE with TFLite's reference semantics (TFLite Micro's quantize.cc and
 * dequantize.cc over reference_ops):
 *   QUANTIZE float32 -> int8:  clamp(round(x / scale) + zero_point), the division in float and
 *                              round halves away from zero (AffineQuantize, TfLiteRound);
 *   QUANTIZE float32 -> int16, int32: the same, clamped to the output's type;
 *   QUANTIZE int8, int16, int32 -> int8, int16, int32: clamp(MultiplyByQuantizedMultiplier(x -
 *                              in_zp, in_scale / out_scale) + out_zp) (Requantize);
 *   DEQUANTIZE int8, int16 -> float32: (float)(scale * (x - zero_point)), the product in double
 *                              (reference_ops::Dequantize: DequantizationParams.scale is double).
 */
#include <stdint.h>

#include "kernels.h"
#include "mculab/kernels_s8.h"
#include "ops.h"

/* round(v) halving away from zero for a float, without libm. */
static int32_t round_float(float v) {
  if (v >= 2147483520.0f) return INT32_MAX; /* the largest float below 2^31 */
  if (v <= -2147483520.0f) return -INT32_MAX;
  const int32_t t = (int32_t)v; /* toward zero; v - t is exact */
  const float frac = v - (float)t;
  if (frac >= 0.5f) return t + 1;
  if (frac <= -0.5f) return t - 1;
  return t;
}

static int quantized_type(uint8_t t) {
  return t == MCULAB_TFL_INT8 || t == MCULAB_TFL_INT16 || t == MCULAB_TFL_INT32;
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_model* m = c->m;
  const uint32_t i = c->index;
  mculab_tfl_op* op = c->op;
  const int16_t in_i = op->inputs[0];
  if (op->num_inputs != 1 || in_i < 0) {
    return mculab_tfl_fail(m, MCULAB_TFL_MALFORMED, "operator ", i, ": needs one input");
  }
  const mculab_tfl_tensor* in = &m->tensors[in_i];
  const mculab_tfl_tensor* out = &m->tensors[op->output];
  mculab_tfl_quant_params* p = &op->k.quant;
  if (in->elements != out->elements || in->is_const) {
    return mculab_tfl_fail(m, MCULAB_TFL_BAD_SHAPE, "operator ", i,
                           ": input and output differ in size");
  }
  p->in_type = in->type;
  p->out_type = out->type;
  if (op->builtin == MCULAB_TFL_QUANTIZE) {
    if (!quantized_type(out->type) || out->num_scales != 1 || !mculab_tfl_valid_scale(out->scale)) {
      return mculab_tfl_fail(m, MCULAB_TFL_UNSUPPORTED, "operator ", i,
                             ": QUANTIZE needs an int8, int16 or int32 output with one scale");
    }
    p->out_zp = out->zero_point;
    p->scale = out->scale;
    if (in->type == MCULAB_TFL_FLOAT32) {
      p->mode = MCULAB_TFL_QUANT_FROM_FLOAT;
    } else if (quantized_type(in->type) && in->num_scales == 1 &&
               mculab_tfl_valid_scale(in->scale)) {
      p->mode = MCULAB_TFL_QUANT_REQUANTIZE;
      p->in_zp = in->zero_point;
      int shift = 0;
      mculab_quantize_multiplier((double)in->scale / (double)out->scale, &p->multiplier, &shift);
      if (shift > 30 || shift < -31) {
        return mculab_tfl_fail(m, MCULAB_TFL_UNSUPPORTED, "operator ", i,
                               ": QUANTIZE rescales by 2^30 or more");
      }
      p->shift = shift;
    } else {
      return mculab_tfl_fail(m, MCULAB_TFL_UNSUPPORTED, "operator ", i,
                             ": QUANTIZE needs a float32, int8, int16 or int32 input");
    }
  } else {
    if ((in->type != MCULAB_TFL_INT8 && in->type != MCULAB_TFL_INT16) || in->num_scales != 1 ||
        !mculab_tfl_valid_scale(in->scale) || out->type != MCULAB_TFL_FLOAT32) {
      return mculab_tfl_fail(
          m, MCULAB_TFL_UNSUPPORTED, "operator ", i,
          ": DEQUANTIZE needs an int8 or int16 input with one scale, a float32 output");
    }
    p->mode = MCULAB_TFL_QUANT_TO_FLOAT;
    p->in_zp = in->zero_point;
    p->scale = in->scale;
  }
  op->macs = out->elements;
  return MCULAB_TFL_OK;
}

static int32_t load(const void* v, uint8_t type, uint32_t k) {
  switch (type) {
    case MCULAB_TFL_INT8:
      return ((const int8_t*)v)[k];
    case MCULAB_TFL_INT16:
      return ((const int16_t*)v)[k];
  }
  return ((const int32_t*)v)[k];
}

static void store(void* v, uint8_t type, uint32_t k, int32_t x) {
  switch (type) {
    case MCULAB_TFL_INT8:
      ((int8_t*)v)[k] = (int8_t)x;
      return;
    case MCULAB_TFL_INT16:
      ((int16_t*)v)[k] = (int16_t)x;
      return;
  }
  ((int32_t*)v)[k] = x;
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const mculab_tfl_quant_params* p = &op->k.quant;
  const void* in = mculab_tfl_data(m, op->inputs[0]);
  void* out = mculab_tfl_out_data(m, op);
  const uint32_t n = m->tensors[op->output].elements;
  int32_t lo, hi;
  mculab_tfl_type_range(p->out_type, &lo, &hi);
  switch (p->mode) {
    case MCULAB_TFL_QUANT_FROM_FLOAT: {
      const float* x = (const float*)in;
      for (uint32_t k = 0; k < n; ++k) {
        const float v = x[k] / p->scale;
        int32_t q = v != v ? 0 : round_float(v); /* NaN: 0, as a cast would give on Arm */
        q = q > INT32_MAX - 65535 ? INT32_MAX - 65535 : q;
        q = q < INT32_MIN + 65535 ? INT32_MIN + 65535 : q;
        q += p->out_zp;
        store(out, p->out_type, k, mculab_tfl_clamp(q, lo, hi));
      }
      break;
    }
    case MCULAB_TFL_QUANT_REQUANTIZE: {
      /* reference_ops::Requantize: the difference in int32 (wrapping as TFLite's would). */
      for (uint32_t k = 0; k < n; ++k) {
        const int32_t x = (int32_t)((uint32_t)load(in, p->in_type, k) - (uint32_t)p->in_zp);
        const int32_t q =
            (int32_t)((uint32_t)mculab_tfl_mbqm(x, p->multiplier, p->shift) + (uint32_t)p->out_zp);
        store(out, p->out_type, k, mculab_tfl_clamp(q, lo, hi));
      }
      break;
    }
    case MCULAB_TFL_QUANT_TO_FLOAT: {
      float* y = (float*)out;
      for (uint32_t k = 0; k < n; ++k) {
        y[k] = (float)((double)p->scale * (double)(load(in, p->in_type, k) - p->in_zp));
      }
      break;
    }
  }
  return MCULAB_TFL_OK;
}

/* QUANTIZE's and DEQUANTIZE's options tables are empty: whatever their type, nothing to read. */
const mculab_tfl_kernel mculab_tfl_kernel_quantize = {"QUANTIZE", 0, NULL, prepare, NULL, invoke};
const mculab_tfl_kernel mculab_tfl_kernel_dequantize = {"DEQUANTIZE", 0,    NULL,
                                                        prepare,      NULL, invoke};
