/* SVDF, integer (TFLite Micro's svdf_common.cc, EvalIntegerSvdfReference): int8 input and output,
 * int8 feature weights, state and time weights both int16 (the state symmetric) or both int8
 * (the state with a zero point), int32 bias; the state is a variable tensor. Each inference shifts
 * the state left by one, writes the feature matmul (rescaled to the state, clamped to its type)
 * into the newest column, takes the time dot products into int32 scratch, sums them by rank onto
 * the bias and rescales to the output. The feature matmul is the kernel set's matrix-vector
 * product (mculab/kernels_s8.h).
 * Float32 (svdf_common.cc, EvalFloatSvdfReference): every tensor float32, the same steps in
 * float, each sum in TFLite Micro's order; the fused activation NONE, RELU, RELU6 or
 * RELU_N1_TO_1 as its ActivationValFloat applies it. */
#include <stdint.h>
#include <string.h>

#include "mculab/kernels_s8.h"
#include "ops.h"

enum { IN = 0, W_FEATURE = 1, W_TIME = 2, BIAS = 3, STATE = 4 };

static void parse(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->rank = fb_i32(r, t, 0, 0);
  op->activation = fb_u8(r, t, 1, 0);
}

static int is_f32(const mculab_tfl_tensor* t) { return t != NULL && t->type == MCULAB_TFL_FLOAT32; }

/* The sizes from the 2-D input and weights and the rank (>= 1) into op->k.svdf; 0 unless the
 * feature weights' depth is the input's, the time weights have a row per filter, the rank divides
 * the filters and the output has a value per unit and batch. */
static int fill_dims(mculab_tfl_op* op, const mculab_tfl_tensor* in, const mculab_tfl_tensor* wf,
                     const mculab_tfl_tensor* wt, const mculab_tfl_tensor* out) {
  mculab_tfl_svdf_params* p = &op->k.svdf;
  p->rank = op->rank;
  p->batches = in->dims[0];
  p->input_size = in->dims[1];
  p->filters = wf->dims[0];
  p->memory = wt->dims[1];
  p->units = p->filters / p->rank;
  return wf->dims[1] == p->input_size && wt->dims[0] == p->filters && p->filters % p->rank == 0 &&
         out->elements == (uint32_t)(p->batches * p->units);
}

/* PrepareSvdf for float32: every tensor float32 (the weights constant and 4-byte aligned), the
 * state [batches][memory * filters], the scratch a float per filter and batch. */
static mculab_tfl_status prepare_float(mculab_tfl_ctx* c, const mculab_tfl_tensor* in,
                                       const mculab_tfl_tensor* wf, const mculab_tfl_tensor* wt,
                                       const mculab_tfl_tensor* bias,
                                       const mculab_tfl_tensor* state,
                                       const mculab_tfl_tensor* out) {
  mculab_tfl_op* op = c->op;
  if (!mculab_tfl_float_filter(out, wf) || !mculab_tfl_float_filter(out, wt) || !is_f32(state)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "float32 input needs constant float32 feature and time weights, a "
                          "float32 state and a float32 output");
  }
  if (in->num_dims != 2 || wf->num_dims != 2 || wt->num_dims != 2 || state->num_dims != 2 ||
      op->rank < 1) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE,
                          "input, feature and time weights and state must be 2-D and rank >= 1");
  }
  const mculab_tfl_svdf_params* p = &op->k.svdf;
  if (!fill_dims(op, in, wf, wt, out) || state->dims[0] != p->batches ||
      (int64_t)state->dims[1] != (int64_t)p->memory * p->filters) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE,
                          "weights, state and output do not fit the input and rank");
  }
  const mculab_tfl_status st = mculab_tfl_prepare_float_tail(c, bias, (uint32_t)p->units);
  if (st != MCULAB_TFL_OK) return st;
  op->scratch_bytes = 4u * (uint32_t)(p->batches * p->filters);
  op->macs = (uint64_t)p->batches * p->filters * (uint64_t)(p->input_size + p->memory);
  return MCULAB_TFL_OK;
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
  if (is_f32(in)) return prepare_float(c, in, wf, wt, bias, state, out);
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
  if (!fill_dims(op, in, wf, wt, out) ||
      state->elements != (uint32_t)(p->batches * p->filters * p->memory) ||
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

/* ActivationValFloat (TFLite Micro's activation_utils.h): std::max(0, x), std::max(-1,
 * std::min(x, 1)), std::max(0, std::min(x, 6)); unlike a clamp to the activation range, RELU
 * keeps +infinity and gives +0 for -0. */
static float activation(uint8_t act, float x) {
  switch (act) {
    case MCULAB_ACT_RELU:
      return 0.0f < x ? x : 0.0f;
    case MCULAB_ACT_RELU_N1_TO_1: {
      const float m = 1.0f < x ? 1.0f : x;
      return -1.0f < m ? m : -1.0f;
    }
    case MCULAB_ACT_RELU6: {
      const float m = 6.0f < x ? 6.0f : x;
      return 0.0f < m ? m : 0.0f;
    }
    default:
      return x;
  }
}

/* EvalFloatSvdfReference and ApplyTimeWeightsBiasAndActivation, in their order. */
static void invoke_float(mculab_tfl_model* m, const mculab_tfl_op* op) {
  const mculab_tfl_svdf_params* p = &op->k.svdf;
  const float* in = (const float*)mculab_tfl_data(m, op->inputs[IN]);
  const float* wf = (const float*)mculab_tfl_data(m, op->inputs[W_FEATURE]);
  const float* wt = (const float*)mculab_tfl_data(m, op->inputs[W_TIME]);
  const float* bias =
      op->inputs[BIAS] < 0 ? NULL : (const float*)mculab_tfl_data(m, op->inputs[BIAS]);
  float* state = (float*)(void*)m->tensors[op->inputs[STATE]].data;
  float* out = (float*)mculab_tfl_out_data(m, op);
  float* scratch = (float*)(void*)m->scratch;
  const int64_t n_state = (int64_t)p->batches * p->filters * p->memory;
  /* Shift the state left by one value (the oldest column dropped). */
  memmove(state, state + 1, (size_t)(n_state - 1) * sizeof(float));
  /* Feature matmul into the newest column: weights row times the batch's input, in order. */
  for (int32_t b = 0; b < p->batches; ++b) {
    const float* x = in + (int64_t)b * p->input_size;
    for (int32_t f = 0; f < p->filters; ++f) {
      const float* w = wf + (int64_t)f * p->input_size;
      float dot = 0.0f;
      for (int32_t k = 0; k < p->input_size; ++k) dot += w[k] * x[k];
      state[((int64_t)b * p->filters + f) * p->memory + p->memory - 1] = dot;
    }
  }
  /* Time: each filter's state row against its time weights. */
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t f = 0; f < p->filters; ++f) {
      const float* t = wt + (int64_t)f * p->memory;
      const float* s = state + ((int64_t)b * p->filters + f) * p->memory;
      float sum = 0.0f;
      for (int32_t j = 0; j < p->memory; ++j) sum += t[j] * s[j];
      scratch[b * p->filters + f] = sum;
    }
  }
  /* The bias (or 0), then each rank's sum added in turn, then the activation. */
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t u = 0; u < p->units; ++u) {
      float acc = bias != NULL ? bias[u] : 0.0f;
      for (int32_t k = 0; k < p->rank; ++k) acc += scratch[b * p->filters + u * p->rank + k];
      out[b * p->units + u] = activation(op->activation, acc);
    }
  }
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const mculab_tfl_svdf_params* p = &op->k.svdf;
  const mculab_tfl_tensor* state_t = &m->tensors[op->inputs[STATE]];
  if (state_t->type == MCULAB_TFL_FLOAT32) {
    invoke_float(m, op);
    return MCULAB_TFL_OK;
  }
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
