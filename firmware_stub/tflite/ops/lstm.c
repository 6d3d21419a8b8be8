/* UNIDIRECTIONAL_SEQUENCE_LSTM, integer (TFLite Micro's unidirectional_sequence_lstm.cc,
 * lstm_eval_common.cc and lstm_eval.h: the "standard" LSTM of Keras, no peephole, projection,
 * layer norm or CIFG): int8 input, output and hidden state (asymmetric), int8 weights
 * (symmetric, per tensor), int32 biases, int16 cell state with a power-of-two scale. Hidden and
 * cell state are variable tensors (inputs 18 and 19), reset before every inference.
 *
 * Each step, per gate: the input and the hidden state through their fully connected weights
 * into Q3.12 (scale 2^-12, int16, the input's bias added, the recurrent one none), summed with
 * int16 saturation, then the int16 sigmoid (tanh for the cell gate) into Q0.15. The cell state
 * becomes forget x cell + input x cell gate (each product rescaled to the cell's scale, the sum
 * saturated, clipped by cell_clip), the hidden state tanh(cell) x output gate rescaled to the
 * hidden state's scale and zero point; the output at that step is the hidden state. TFLite
 * Micro derives its scales from the fixed Q3.12 and Q0.15 and the tensors' own: it reads no
 * intermediate tensors, and neither do we. Time-major runs all batches at each step; batch-major
 * runs each batch through time with its own slice of the state. */
#include <stdint.h>

#include "mculab/kernels_s8.h"
#include "ops.h"

enum {
  IN = 0,
  W_IN_I = 1, /* input to input gate; 2 forget, 3 cell, 4 output */
  W_IN_F = 2,
  W_IN_C = 3,
  W_IN_O = 4,
  W_REC_I = 5, /* recurrent to input gate; 6 forget, 7 cell, 8 output */
  W_REC_F = 6,
  W_REC_C = 7,
  W_REC_O = 8,
  PEEPHOLE_FIRST = 9, /* 9..11 cell to gate */
  BIAS_I = 12,        /* 13 forget, 14 cell, 15 output */
  BIAS_F = 13,
  BIAS_C = 14,
  BIAS_O = 15,
  PROJECTION_W = 16,
  PROJECTION_B = 17,
  HIDDEN = 18,
  CELL = 19,
  LAYER_NORM_FIRST = 20, /* 20..23 */
  NUM_INPUTS = 24
};

/* Gates in the order of mculab_tfl_lstm_params: forget, input, cell, output. */
static const uint8_t kGateInputWeights[4] = {W_IN_F, W_IN_I, W_IN_C, W_IN_O};
static const uint8_t kGateRecurrentWeights[4] = {W_REC_F, W_REC_I, W_REC_C, W_REC_O};
static const uint8_t kGateBias[4] = {BIAS_F, BIAS_I, BIAS_C, BIAS_O};
enum { GATE_FORGET = 0, GATE_INPUT = 1, GATE_CELL = 2, GATE_OUTPUT = 3 };

/* TfLiteFusedActivation's sigmoid; the schema's TANH is 4 in both. */
enum { ACT_TANH = 4, ACT_SIGMOID = 6 };

static void parse(fb_reader* r, const fb_table* t, mculab_tfl_op* op) {
  op->activation = fb_u8(r, t, 0, 0);
  op->cell_clip = fb_f32(r, t, 1, 0.0f);
  op->proj_clip = fb_f32(r, t, 2, 0.0f);
  op->time_major = fb_u8(r, t, 3, 0);
  /* 4 asymmetric_quantize_inputs (hybrid only), 5 diagonal_recurrent_tensors: checked below. */
  op->diagonal_recurrent = fb_u8(r, t, 5, 0);
}

static int weights(const mculab_tfl_tensor* w, int32_t rows, int32_t cols) {
  return w != NULL && w->is_const && w->num_dims == 2 && w->dims[0] == rows && w->dims[1] == cols &&
         mculab_tfl_quantized(w, MCULAB_TFL_INT8) && w->num_scales == 1 && w->zero_point == 0;
}

/* QuantizeMultiplier of a product of scales, as TFLite Micro's prepare computes it. */
static mculab_tfl_status multiplier(mculab_tfl_ctx* c, double real, int32_t* mult, int32_t* shift) {
  int s;
  mculab_quantize_multiplier(real, mult, &s);
  if (s > 30 || s < -31) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "a rescaling factor out of 2^-31..2^30");
  }
  *shift = s;
  return MCULAB_TFL_OK;
}

static mculab_tfl_status prepare(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, IN);
  const mculab_tfl_tensor* hidden = mculab_tfl_in(c, HIDDEN);
  const mculab_tfl_tensor* cell = mculab_tfl_in(c, CELL);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (op->num_inputs != NUM_INPUTS || in == NULL || hidden == NULL || cell == NULL) {
    return mculab_tfl_bad(c, MCULAB_TFL_MALFORMED,
                          "needs 24 inputs with the input, hidden state and cell state");
  }
  if (!hidden->is_variable || !cell->is_variable) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "the hidden and cell states must be variable tensors");
  }
  for (unsigned k = PEEPHOLE_FIRST; k < PEEPHOLE_FIRST + 3; ++k) {
    if (mculab_tfl_in(c, k) != NULL) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "peephole weights are not implemented");
    }
  }
  if (mculab_tfl_in(c, PROJECTION_W) != NULL || mculab_tfl_in(c, PROJECTION_B) != NULL) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "projection is not implemented");
  }
  for (unsigned k = LAYER_NORM_FIRST; k < NUM_INPUTS; ++k) {
    if (mculab_tfl_in(c, k) != NULL) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "layer normalization is not implemented");
    }
  }
  if (mculab_tfl_in(c, W_IN_I) == NULL || mculab_tfl_in(c, W_REC_I) == NULL ||
      mculab_tfl_in(c, BIAS_I) == NULL) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "CIFG (no input gate weights) is not implemented");
  }
  if (op->diagonal_recurrent != 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "diagonal recurrent weights are not implemented");
  }
  if (in->type == MCULAB_TFL_FLOAT32) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "float32 is not implemented (int8 is)");
  }
  if (!mculab_tfl_quantized(in, MCULAB_TFL_INT8) || !mculab_tfl_quantized(out, MCULAB_TFL_INT8) ||
      !mculab_tfl_quantized(hidden, MCULAB_TFL_INT8) ||
      !mculab_tfl_quantized(cell, MCULAB_TFL_INT16) || cell->zero_point != 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "needs int8 input, output and hidden state and a symmetric int16 cell "
                          "state (16-bit activations are not implemented)");
  }
  if (op->activation != ACT_TANH && op->activation != ACT_SIGMOID) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "the cell gate's activation must be TANH or SIGMOID");
  }
  if (!(op->cell_clip >= 0.0f)) {
    return mculab_tfl_bad(c, MCULAB_TFL_MALFORMED, "a negative cell_clip");
  }
  /* CreateLstmSizeInfo: [time, batch, input] or [batch, time, input]; the state's last
   * dimension is the number of units. */
  if (in->num_dims != 3 || hidden->num_dims < 1 || out->num_dims != 3) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "the input and output must be 3-D");
  }
  mculab_tfl_lstm_params* p = &op->k.lstm;
  p->time_major = op->time_major != 0;
  p->cell_act = op->activation;
  p->batches = p->time_major ? in->dims[1] : in->dims[0];
  p->steps = p->time_major ? in->dims[0] : in->dims[1];
  p->input_size = in->dims[2];
  p->units = hidden->dims[hidden->num_dims - 1];
  if (p->batches < 1 || p->steps < 1 || p->input_size < 1 || p->units < 1) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "a dimension of 0");
  }
  /* ValidateTensorSize. */
  for (int g = 0; g < 4; ++g) {
    const mculab_tfl_tensor* b = mculab_tfl_in(c, kGateBias[g]);
    if (!weights(mculab_tfl_in(c, kGateInputWeights[g]), p->units, p->input_size) ||
        !weights(mculab_tfl_in(c, kGateRecurrentWeights[g]), p->units, p->units)) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                            "gate weights must be constant int8 [units, input] and [units, units], "
                            "symmetric, one scale each");
    }
    if (b == NULL || !b->is_const || b->type != MCULAB_TFL_INT32 || b->num_dims != 1 ||
        b->dims[0] != p->units || ((uintptr_t)b->const_data & 3u) != 0) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                            "gate biases must be constant int32 of [units]");
    }
  }
  const uint32_t state = (uint32_t)p->batches * (uint32_t)p->units;
  if (hidden->elements != state || cell->elements != state || out->dims[0] != in->dims[0] ||
      out->dims[1] != in->dims[1] || out->dims[2] != p->units) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE,
                          "the states hold batches x units and the output [.., .., units]");
  }
  if (p->input_size > MCULAB_KERNEL_MAX_DEPTH || p->units > MCULAB_KERNEL_MAX_DEPTH) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "accumulation depth over 65536");
  }
  p->input_zp = in->zero_point;
  p->hidden_zp = hidden->zero_point;
  /* PrepareGateParametersInteger: each fully connected rescales into Q3.12 (its multiplier
   * GetQuantizedConvolutionMultipler: the scales' product in float, then double). */
  const double gate_scale = 1.0 / 4096.0;
  mculab_tfl_status st;
  for (int g = 0; g < 4; ++g) {
    const mculab_tfl_tensor* wi = mculab_tfl_in(c, kGateInputWeights[g]);
    const mculab_tfl_tensor* wr = mculab_tfl_in(c, kGateRecurrentWeights[g]);
    st = multiplier(c, (double)(in->scale * wi->scale) / gate_scale, &p->in_mult[g],
                    &p->in_shift[g]);
    if (st != MCULAB_TFL_OK) return st;
    st = multiplier(c, (double)(hidden->scale * wr->scale) / gate_scale, &p->rec_mult[g],
                    &p->rec_shift[g]);
    if (st != MCULAB_TFL_OK) return st;
  }
  /* CreateInterGateMulParams: the gates' outputs are Q0.15 (2^-15); products in double. */
  const double q15 = 1.0 / 32768.0;
  st = multiplier(c, q15 * (double)cell->scale / (double)cell->scale, &p->forget_mult,
                  &p->forget_shift);
  if (st != MCULAB_TFL_OK) return st;
  st = multiplier(c, q15 * q15 / (double)cell->scale, &p->input_mult, &p->input_shift);
  if (st != MCULAB_TFL_OK) return st;
  st = multiplier(c, q15 * q15 / (double)hidden->scale, &p->hidden_mult, &p->hidden_shift);
  if (st != MCULAB_TFL_OK) return st;
  /* CreateLstmCellStateInfo: CheckedLog2 of the cell's scale, its result used even when the
   * scale is not a power of two (TFLite Micro ignores the check). */
  int power;
  (void)mculab_tfl_checked_log2(cell->scale, &power);
  if (power > 3 || power < -40) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "a cell state scale outside 2^-40..2^3");
  }
  p->cell_scale_power = power;
  double clip = (double)op->cell_clip / (double)cell->scale;
  if (clip > 32767.0) clip = 32767.0;
  p->cell_clip = op->cell_clip > 0.0f ? (int32_t)clip : -1;
  /* Four int16 buffers of batches x units (TFLite Micro's four scratch buffers). */
  op->scratch_bytes = 4u * 2u * state;
  op->macs = (uint64_t)p->steps * p->batches * 4u * (uint64_t)p->units *
             (uint64_t)(p->input_size + p->units);
  return MCULAB_TFL_OK;
}

/* One fully connected into Q3.12: rows x depth int8 weights against n vectors of depth, the
 * input's zero point subtracted, the bias (may be NULL) added; the sums wrap in 32 bits as TFLite
 * Micro's int32 sums do on the target (unsigned here, so that the wrap is defined C). */
static void fc_q12(const int8_t* x, int32_t zp, const int8_t* w, const int32_t* bias, int32_t n,
                   int32_t depth, int32_t rows, int32_t mult, int32_t shift, int16_t* out) {
  for (int32_t b = 0; b < n; ++b) {
    for (int32_t r = 0; r < rows; ++r) {
      uint32_t acc = 0;
      for (int32_t k = 0; k < depth; ++k) {
        acc += (uint32_t)(w[(int64_t)r * depth + k] * (x[(int64_t)b * depth + k] - zp));
      }
      if (bias != NULL) acc += (uint32_t)bias[r];
      const int32_t v = mculab_tfl_mbqm((int32_t)acc, mult, shift);
      out[(int64_t)b * rows + r] = (int16_t)mculab_tfl_clamp(v, -32768, 32767);
    }
  }
}

static int16_t sat16(int32_t v) { return (int16_t)mculab_tfl_clamp(v, -32768, 32767); }

static void gate(const mculab_tfl_model* m, const mculab_tfl_op* op, int g, const int8_t* x,
                 const int8_t* h, int32_t n, int16_t* out, int16_t* tmp, uint8_t act) {
  const mculab_tfl_lstm_params* p = &op->k.lstm;
  const int32_t count = n * p->units;
  fc_q12(x, p->input_zp, (const int8_t*)mculab_tfl_data(m, op->inputs[kGateInputWeights[g]]),
         (const int32_t*)mculab_tfl_data(m, op->inputs[kGateBias[g]]), n, p->input_size, p->units,
         p->in_mult[g], p->in_shift[g], out);
  fc_q12(h, p->hidden_zp, (const int8_t*)mculab_tfl_data(m, op->inputs[kGateRecurrentWeights[g]]),
         NULL, n, p->units, p->units, p->rec_mult[g], p->rec_shift[g], tmp);
  for (int32_t i = 0; i < count; ++i) out[i] = sat16(out[i] + tmp[i]);
  if (act == ACT_SIGMOID) {
    mculab_tfl_logistic_s16(0, 0, (uint32_t)count, out, out);
  } else {
    /* tanh of Q3.12: the scale power -12 means no shift. */
    mculab_tfl_tanh_s16(0, 0, (uint32_t)count, out, out);
  }
}

/* The cell state's tanh (lstm_eval.cc's Tanh): the input shift 15 + power - 3, a negative one
 * taken as a right shift with the multiplier 3. */
static void tanh_of_cell(int32_t power, uint32_t n, const int16_t* in, int16_t* out) {
  int32_t shift = 15 + power - 3;
  int32_t mult = 0;
  if (shift < 0) {
    shift = -shift;
    mult = 3;
  }
  mculab_tfl_tanh_s16(mult, shift, n, in, out);
}

static void step(const mculab_tfl_model* m, const mculab_tfl_op* op, const int8_t* x, int8_t* h,
                 int16_t* cell, int32_t n, int8_t* out, int16_t* scratch) {
  const mculab_tfl_lstm_params* p = &op->k.lstm;
  const int32_t count = n * p->units;
  int16_t* buf0 = scratch;
  int16_t* buf1 = buf0 + count;
  int16_t* buf2 = buf1 + count;
  int16_t* buf3 = buf2 + count;
  gate(m, op, GATE_FORGET, x, h, n, buf0, buf3, ACT_SIGMOID);
  gate(m, op, GATE_INPUT, x, h, n, buf1, buf3, ACT_SIGMOID);
  gate(m, op, GATE_CELL, x, h, n, buf2, buf3, p->cell_act);
  /* UpdateLstmCell: forget x cell, input x cell gate, their saturated sum, the clip. */
  for (int32_t i = 0; i < count; ++i) {
    const int32_t kept = sat16(mculab_tfl_mbqm(buf0[i] * cell[i], p->forget_mult, p->forget_shift));
    const int32_t added = sat16(mculab_tfl_mbqm(buf1[i] * buf2[i], p->input_mult, p->input_shift));
    int32_t v = sat16(kept + added);
    if (p->cell_clip >= 0) v = mculab_tfl_clamp(v, -p->cell_clip, p->cell_clip);
    cell[i] = (int16_t)v;
  }
  gate(m, op, GATE_OUTPUT, x, h, n, buf1, buf3, ACT_SIGMOID);
  /* UpdateLstmHidden: tanh(cell) x output gate into the hidden state's scale and zero point. */
  tanh_of_cell(p->cell_scale_power, (uint32_t)count, cell, buf0);
  for (int32_t i = 0; i < count; ++i) {
    const int32_t v =
        p->hidden_zp + mculab_tfl_mbqm(buf0[i] * buf1[i], p->hidden_mult, p->hidden_shift);
    h[i] = (int8_t)mculab_tfl_clamp(v, -128, 127);
    out[i] = h[i];
  }
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const mculab_tfl_lstm_params* p = &op->k.lstm;
  const int8_t* in = (const int8_t*)mculab_tfl_data(m, op->inputs[IN]);
  int8_t* h = (int8_t*)m->tensors[op->inputs[HIDDEN]].data;
  int16_t* cell = (int16_t*)(void*)m->tensors[op->inputs[CELL]].data;
  int8_t* out = (int8_t*)mculab_tfl_out_data(m, op);
  int16_t* scratch = (int16_t*)(void*)m->scratch;
  if (p->time_major) {
    for (int32_t t = 0; t < p->steps; ++t) {
      const int64_t at = (int64_t)t * p->batches;
      step(m, op, in + at * p->input_size, h, cell, p->batches, out + at * p->units, scratch);
    }
    return MCULAB_TFL_OK;
  }
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t t = 0; t < p->steps; ++t) {
      const int64_t at = (int64_t)b * p->steps + t;
      step(m, op, in + at * p->input_size, h + (int64_t)b * p->units, cell + (int64_t)b * p->units,
           1, out + at * p->units, scratch);
    }
  }
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_unidirectional_sequence_lstm = {
    "UNIDIRECTIONAL_SEQUENCE_LSTM", 71, parse, prepare, NULL, invoke};
