/* SVDF, integer (TFLite Micro's svdf_common.cc, EvalIntegerSvdfReference): int8 input and output,
 * int8 feature weights, state and time weights both int16 (the state symmetric) or both int8
 * (the state with a zero point), int32 bias; the state is a variable tensor. Each inference shifts
 * the state left by one, writes the feature matmul (rescaled to the state, clamped to its type)
 * into the newest column, takes the time dot products into int32 scratch, sums them by rank onto
 * the bias and rescales to the output. The feature matmul is the kernel set's matrix-vector
 * product (mculab/kernels_s8.h). */
#include <stdint.h>
#include <string.h>

#include "mculab/kernels_s8.h"
#include "ops.h"

enum { IN = 0, W_FEATURE = 1, W_TIME = 2, BIAS = 3, STATE = 4 };

static void parse(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->rank = fb_i32(r, t, 0, 0);
  op->activation = fb_u8(r, t, 1, 0);
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, IN);
  const mculab_tfl_tensor* wf = mculab_tfl_in(c, W_FEATURE);
  const mculab_tfl_tensor* wt = mculab_tfl_in(c, W_TIME);
  const mculab_tfl_tensor* bias = mculab_tfl_in(c, BIAS);
  const mculab_tfl_tensor* state = mculab_tfl_in(c, STATE);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (op->num_inputs != 5 || state == NULL || !state->is_variable) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs 5 inputs, the last a variable state");
  }
  if (!mculab_tfl_quantized(in, MCULAB_TFL_INT8) || !mculab_tfl_quantized(out, MCULAB_TFL_INT8) ||
      wf == NULL || !wf->is_const || !mculab_tfl_quantized(wf, MCULAB_TFL_INT8) || wt == NULL ||
      !wt->is_const || !mculab_tfl_quantized(wt, state->type) ||
      !mculab_tfl_quantized(state, state->type) ||
      (state->type != MCULAB_TFL_INT16 && state->type != MCULAB_TFL_INT8) ||
      (state->type == MCULAB_TFL_INT16 && state->zero_point != 0) || wf->num_scales != 1 ||
      wt->num_scales != 1) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "needs int8 input, output and feature weights, state and time weights "
                          "both int16 (symmetric) or int8, per tensor");
  }
  if (op->activation != MCULAB_ACT_NONE && op->activation != MCULAB_ACT_RELU) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "fused activation other than RELU");
  }
  if (in->num_dims != 2 || wf->num_dims != 2 || wt->num_dims != 2 || op->rank < 1) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE,
                          "input, feature and time weights must be 2-D and rank >= 1");
  }
  mculab_tfl_svdf_params* p = &op->k.svdf;
  p->rank = op->rank;
  p->batches = in->dims[0];
  p->input_size = in->dims[1];
  p->filters = wf->dims[0];
  p->memory = wt->dims[1];
  p->units = p->filters / p->rank;
  if (wf->dims[1] != p->input_size || wt->dims[0] != p->filters || p->filters % p->rank != 0 ||
      state->elements != (uint32_t)(p->batches * p->filters * p->memory) ||
      out->elements != (uint32_t)(p->batches * p->units) ||
      (bias != NULL &&
       (!bias->is_const || bias->type != MCULAB_TFL_INT32 || bias->elements != (uint32_t)p->units ||
        ((uintptr_t)bias->const_data & 3u) != 0))) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE,
                          "weights, state, bias and output do not fit the input and rank");
  }
  if (p->input_size > MCULAB_KERNEL_MAX_DEPTH || p->memory > MCULAB_KERNEL_MAX_DEPTH) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "accumulation depth over 65536");
  }
  p->input_zp = in->zero_point;
  p->state_zp = state->zero_point;
  p->output_zp = out->zero_point;
  /* PrepareSvdf: the scales' products in float, then double. */
  int s;
  mculab_quantize_multiplier((double)(in->scale * wf->scale / state->scale), &p->mult1, &s);
  p->shift1 = s;
  mculab_quantize_multiplier((double)(state->scale * wt->scale / out->scale), &p->mult2, &s);
  p->shift2 = s;
  if (p->shift1 > 30 || p->shift2 > 30) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "rescaling by 2^30 or more");
  }
  op->scratch_bytes = 4u * (uint32_t)(p->batches * (p->filters + p->units));
  op->macs = (uint64_t)p->batches * p->filters * (uint64_t)(p->input_size + p->memory);
  return MCULAB_TFL_OK;
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const mculab_tfl_svdf_params* p = &op->k.svdf;
  const mculab_tfl_tensor* state_t = &m->tensors[op->inputs[STATE]];
  const int wide = state_t->type == MCULAB_TFL_INT16;
  const int8_t* in = (const int8_t*)mculab_tfl_data(m, op->inputs[IN]);
  const int8_t* wf = (const int8_t*)mculab_tfl_data(m, op->inputs[W_FEATURE]);
  const void* wt = mculab_tfl_data(m, op->inputs[W_TIME]);
  const int32_t* bias =
      op->inputs[BIAS] < 0 ? NULL : (const int32_t*)mculab_tfl_data(m, op->inputs[BIAS]);
  uint8_t* state = state_t->data;
  int8_t* out = (int8_t*)mculab_tfl_out_data(m, op);
  int32_t* scratch = (int32_t*)(void*)m->scratch;
  int32_t* scratch_out = scratch + p->batches * p->filters;
  const int64_t n_state = (int64_t)p->batches * p->filters * p->memory;
  int32_t lo, hi;
  mculab_tfl_type_range(state_t->type, &lo, &hi);
  /* Shift the state left by one value. */
  memmove(state, state + (wide ? 2 : 1), (size_t)(n_state - 1) * (wide ? 2u : 1u));
  /* Feature matmul into the newest column: the kernel set's matrix times the batch's input, its
   * int32 sums wrapping as TFLite Micro's do on the target. */
  for (int32_t b = 0; b < p->batches; ++b) {
    int32_t* dots = scratch + b * p->filters;
    for (int32_t r = 0; r < p->filters; ++r) dots[r] = 0;
    mculab_mat_vec_s8s8_s32(wf, p->input_size, in + (int64_t)b * p->input_size, -p->input_zp,
                            p->filters, p->input_size, dots);
    for (int32_t r = 0; r < p->filters; ++r) {
      int32_t dot = mculab_tfl_clamp(mculab_tfl_mbqm(dots[r], p->mult1, p->shift1), lo, hi);
      /* The int8 state's zero point added after the clamp, as TFLite Micro does. */
      dot += p->state_zp;
      const int64_t at = ((int64_t)b * p->filters + r) * p->memory + p->memory - 1;
      if (wide) {
        ((int16_t*)(void*)state)[at] = (int16_t)dot;
      } else {
        ((int8_t*)state)[at] = (int8_t)dot;
      }
    }
  }
  /* Time: each filter's weights against its own memory, a dot product per filter of `memory`
   * values (a handful): here, since a call of the kernel set per filter costs more than it does;
   * the type's branch outside the loop. */
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t r = 0; r < p->filters; ++r) {
      uint32_t sum = 0;
      const int64_t s0 = ((int64_t)b * p->filters + r) * p->memory, w0 = (int64_t)r * p->memory;
      if (wide) {
        const int16_t* t = (const int16_t*)wt + w0;
        const int16_t* s = (const int16_t*)(const void*)state + s0;
        for (int32_t j = 0; j < p->memory; ++j) sum += (uint32_t)(t[j] * s[j]);
      } else {
        const int8_t* t = (const int8_t*)wt + w0;
        const int8_t* s = (const int8_t*)state + s0;
        for (int32_t j = 0; j < p->memory; ++j) sum += (uint32_t)(t[j] * (s[j] - p->state_zp));
      }
      scratch[b * p->filters + r] = (int32_t)sum;
    }
  }
  /* Bias, reduction by rank, rescale, activation. */
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t u = 0; u < p->units; ++u) {
      uint32_t acc = bias != NULL ? (uint32_t)bias[u] : 0;
      for (int32_t k = 0; k < p->rank; ++k) {
        acc += (uint32_t)scratch[b * p->filters + u * p->rank + k];
      }
      scratch_out[b * p->units + u] = (int32_t)acc;
    }
  }
  const int32_t out_lo =
      op->activation == MCULAB_ACT_RELU && p->output_zp > -128 ? p->output_zp : -128;
  for (int32_t i = 0; i < p->batches * p->units; ++i) {
    const int32_t v = mculab_tfl_mbqm(scratch_out[i], p->mult2, p->shift2) + p->output_zp;
    out[i] = (int8_t)mculab_tfl_clamp(v, out_lo, 127);
  }
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_svdf = {"SVDF", 6, parse, prepare, NULL, invoke};
