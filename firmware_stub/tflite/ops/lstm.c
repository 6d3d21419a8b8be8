/* UNIDIRECTIONAL_SEQUENCE_LSTM (TFLite Micro's unidirectional_sequence_lstm.cc,
 * lstm_eval_common.cc and lstm_eval.h: the "standard" LSTM of Keras, no peephole, projection,
 * layer norm or CIFG, which TFLite Micro refuses too) in TFLite Micro's three kinds
 * (EvalLstm<activation, weight, cell, bias>): int8 activations (input, output and hidden state,
 * asymmetric) with int32 biases; int16 activations (symmetric) with int64 biases (16x8); both
 * with int8 weights (symmetric, per tensor) and an int16 cell state with a power-of-two scale;
 * and float32 throughout. Hidden and cell state are variable tensors (inputs 18 and 19), reset
 * before every inference.
 *
 * Integer, each step, per gate: the input and the hidden state through their fully connected
 * weights into Q3.12 (scale 2^-12, int16, the input's bias added, the recurrent one none; int8
 * activations sum in int32, int16 ones in int64 rescaled by the 64-bit
 * MultiplyByQuantizedMultiplier), summed with int16 saturation, then the int16 sigmoid (tanh for
 * the cell gate) into Q0.15. The cell state becomes forget x cell + input x cell gate (each
 * product rescaled to the cell's scale, the sum saturated, clipped by cell_clip), the hidden state
 * tanh(cell) x output gate rescaled to the hidden state's scale and zero point; the output at
 * that step is the hidden state. TFLite Micro derives its scales from the fixed Q3.12 and Q0.15
 * and the tensors' own: it reads no intermediate tensors, and neither do we.
 *
 * float32, the same steps in float: each fully connected sums in float in order and adds the
 * bias, the two are added, then TFLite's reference Logistic and Tanh (mculab_tfl_logistic_f32,
 * mculab_tfl_tanh_f32); every product clamped to +-FLT_MAX as kTfLiteActNone's range does; the
 * cell clipped to +-cell_clip when it is positive.
 *
 * Time-major runs all batches at each step; batch-major runs each batch through time with its own
 * slice of the state. */
#include <float.h>
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

/* A gate's weights: constant [rows, cols] of float32 (4-byte aligned) or of int8 (symmetric, one
 * scale). */
static int weights(const mculab_tfl_tensor* w, int32_t rows, int32_t cols, uint8_t type) {
  if (w == NULL || !w->is_const || w->num_dims != 2 || w->dims[0] != rows || w->dims[1] != cols) {
    return 0;
  }
  if (type == MCULAB_TFL_FLOAT32) {
    return w->type == MCULAB_TFL_FLOAT32 && ((uintptr_t)w->const_data & 3u) == 0;
  }
  return mculab_tfl_quantized(w, MCULAB_TFL_INT8) && w->num_scales == 1 && w->zero_point == 0;
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

/* The activations' quantization for the integer kinds: int8 (any zero point) or 16x8 (int16,
 * symmetric); a symmetric int16 cell state. */
static mculab_tfl_status check_integer_types(mculab_tfl_ctx* c, uint8_t type) {
  const mculab_tfl_tensor* in = mculab_tfl_in(c, IN);
  const mculab_tfl_tensor* hidden = mculab_tfl_in(c, HIDDEN);
  const mculab_tfl_tensor* cell = mculab_tfl_in(c, CELL);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (!mculab_tfl_quantized(cell, MCULAB_TFL_INT16) || cell->zero_point != 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "integer activations need a symmetric int16 cell state");
  }
  if (!mculab_tfl_quantized(in, type) || !mculab_tfl_quantized(out, type) ||
      !mculab_tfl_quantized(hidden, type)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "the input, output and hidden state must be quantized, of one type");
  }
  if (type == MCULAB_TFL_INT16 &&
      (in->zero_point != 0 || hidden->zero_point != 0 || out->zero_point != 0)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "int16 activations (16x8) must be symmetric (zero points 0)");
  }
  return MCULAB_TFL_OK;
}

/* The integer kinds' rescalings (PrepareGateParametersInteger, CreateInterGateMulParams,
 * CreateLstmCellStateInfo). */
static mculab_tfl_status prepare_integer(mculab_tfl_ctx* c) {
  mculab_tfl_op* op = c->op;
  mculab_tfl_lstm_params* p = &op->k.lstm;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, IN);
  const mculab_tfl_tensor* hidden = mculab_tfl_in(c, HIDDEN);
  const mculab_tfl_tensor* cell = mculab_tfl_in(c, CELL);
  p->input_zp = in->zero_point;
  p->hidden_zp = hidden->zero_point;
  /* Each fully connected rescales into Q3.12 (its multiplier GetQuantizedConvolutionMultipler:
   * the scales' product in float, then double). The 16x8 ones go through the 64-bit
   * MultiplyByQuantizedMultiplier, which takes shifts below 8. */
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
    if (p->type == MCULAB_TFL_INT16 && (p->in_shift[g] > 7 || p->rec_shift[g] > 7)) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "a 16x8 gate rescaling of 2^8 or more");
    }
  }
  /* The gates' outputs are Q0.15 (2^-15); products in double. */
  const double q15 = 1.0 / 32768.0;
  st = multiplier(c, q15 * (double)cell->scale / (double)cell->scale, &p->forget_mult,
                  &p->forget_shift);
  if (st != MCULAB_TFL_OK) return st;
  st = multiplier(c, q15 * q15 / (double)cell->scale, &p->input_mult, &p->input_shift);
  if (st != MCULAB_TFL_OK) return st;
  st = multiplier(c, q15 * q15 / (double)hidden->scale, &p->hidden_mult, &p->hidden_shift);
  if (st != MCULAB_TFL_OK) return st;
  /* CheckedLog2 of the cell's scale, its result used even when the scale is not a power of two
   * (TFLite Micro ignores the check). */
  int power;
  (void)mculab_tfl_checked_log2(cell->scale, &power);
  if (power > 3 || power < -40) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "a cell state scale outside 2^-40..2^3");
  }
  p->cell_scale_power = power;
  double clip = (double)op->cell_clip / (double)cell->scale;
  if (clip > 32767.0) clip = 32767.0;
  p->cell_clip = op->cell_clip > 0.0f ? (int32_t)clip : -1;
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
  /* LstmTensors::ValidateTensorStatus: TFLite Micro runs the standard LSTM only. */
  for (unsigned k = PEEPHOLE_FIRST; k < PEEPHOLE_FIRST + 3; ++k) {
    if (mculab_tfl_in(c, k) != NULL) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                            "peephole weights are not implemented, as in TFLite Micro");
    }
  }
  if (mculab_tfl_in(c, PROJECTION_W) != NULL || mculab_tfl_in(c, PROJECTION_B) != NULL) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "projection is not implemented, as in TFLite Micro");
  }
  for (unsigned k = LAYER_NORM_FIRST; k < NUM_INPUTS; ++k) {
    if (mculab_tfl_in(c, k) != NULL) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                            "layer normalization is not implemented, as in TFLite Micro");
    }
  }
  if (mculab_tfl_in(c, W_IN_I) == NULL || mculab_tfl_in(c, W_REC_I) == NULL ||
      mculab_tfl_in(c, BIAS_I) == NULL) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "CIFG (no input gate weights) is not implemented, as in TFLite Micro");
  }
  if (op->diagonal_recurrent != 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "diagonal recurrent weights are not implemented");
  }
  mculab_tfl_lstm_params* p = &op->k.lstm;
  p->type = in->type;
  /* The kind follows the activations, as TFLite Micro's Eval switches on the input's type. */
  uint8_t bias_type;
  if (in->type == MCULAB_TFL_FLOAT32) {
    if (hidden->type != MCULAB_TFL_FLOAT32 || cell->type != MCULAB_TFL_FLOAT32 ||
        out->type != MCULAB_TFL_FLOAT32) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                            "float32 input needs float32 output, hidden and cell states");
    }
    bias_type = MCULAB_TFL_FLOAT32;
  } else if (in->type == MCULAB_TFL_INT8 || in->type == MCULAB_TFL_INT16) {
    const mculab_tfl_status st = check_integer_types(c, in->type);
    if (st != MCULAB_TFL_OK) return st;
    bias_type = in->type == MCULAB_TFL_INT8 ? MCULAB_TFL_INT32 : MCULAB_TFL_INT64;
  } else {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "needs int8, int16 (16x8) or float32 activations");
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
    if (!weights(mculab_tfl_in(c, kGateInputWeights[g]), p->units, p->input_size, p->type) ||
        !weights(mculab_tfl_in(c, kGateRecurrentWeights[g]), p->units, p->units, p->type)) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                            "gate weights must be constant [units, input] and [units, units], "
                            "float32 or int8 (symmetric, one scale each)");
    }
    if (b == NULL || !b->is_const || b->type != bias_type || b->num_dims != 1 ||
        b->dims[0] != p->units || ((uintptr_t)b->const_data & 3u) != 0) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                            "gate biases must be constant [units], float32, int32 (int8 "
                            "activations) or int64 (int16 activations)");
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
  /* Four buffers of batches x units in the cell state's type (TFLite Micro's four scratch
   * buffers). */
  op->scratch_bytes = 4u * (p->type == MCULAB_TFL_FLOAT32 ? 4u : 2u) * state;
  /* Integer kinds: after them, one row of int64 sums per gate (the kernel set's products). */
  if (p->type != MCULAB_TFL_FLOAT32) op->scratch_bytes += 8u * (uint32_t)p->units;
  op->macs = (uint64_t)p->steps * p->batches * 4u * (uint64_t)p->units *
             (uint64_t)(p->input_size + p->units);
  return p->type == MCULAB_TFL_FLOAT32 ? MCULAB_TFL_OK : prepare_integer(c);
}

/* ---- integer: int8 activations, or int16 ones (`wide`: 16x8, int64 sums and bias) ---- */

/* One fully connected into Q3.12: rows x depth int8 weights against n vectors of depth, the
 * input's zero point subtracted, the bias (may be NULL) added, through the kernel set's
 * matrix-vector products (mculab/kernels_s8.h: reference, Helium or DSP, bit-exact). int8
 * activations: the sums wrap in 32 bits as TFLite Micro's int32 sums do on the target; int16
 * ones (symmetric): int64 sums and the 64-bit rescaling. `sums`: `rows` int64 of scratch. */
static void fc_q12(const void* x, int wide, int32_t zp, const int8_t* w,
                   const mculab_tfl_tensor* bias, int32_t n, int32_t depth, int32_t rows,
                   int32_t mult, int32_t shift, int16_t* out, void* sums) {
  for (int32_t b = 0; b < n; ++b) {
    int16_t* o = out + (int64_t)b * rows;
    if (wide) {
      int64_t* acc = (int64_t*)sums;
      for (int32_t r = 0; r < rows; ++r) {
        acc[r] = bias != NULL ? mculab_tfl_const_int(bias, (uint32_t)r) : 0;
      }
      mculab_mat_vec_s8s16_s64(w, depth, (const int16_t*)x + (int64_t)b * depth, rows, depth, acc);
      for (int32_t r = 0; r < rows; ++r) {
        o[r] = (int16_t)mculab_tfl_clamp(mculab_tfl_mbqm64(acc[r], mult, shift), -32768, 32767);
      }
    } else {
      int32_t* acc = (int32_t*)sums;
      for (int32_t r = 0; r < rows; ++r) {
        acc[r] = bias != NULL ? (int32_t)mculab_tfl_const_int(bias, (uint32_t)r) : 0;
      }
      mculab_mat_vec_s8s8_s32(w, depth, (const int8_t*)x + (int64_t)b * depth, -zp, rows, depth,
                              acc);
      for (int32_t r = 0; r < rows; ++r) {
        o[r] = (int16_t)mculab_tfl_clamp(mculab_tfl_mbqm(acc[r], mult, shift), -32768, 32767);
      }
    }
  }
}

static int16_t sat16(int32_t v) { return (int16_t)mculab_tfl_clamp(v, -32768, 32767); }

static void gate_q(const mculab_tfl_model* m, const mculab_tfl_op* op, int g, const void* x,
                   const void* h, int32_t n, int16_t* out, int16_t* tmp, uint8_t act) {
  const mculab_tfl_lstm_params* p = &op->k.lstm;
  const int wide = p->type == MCULAB_TFL_INT16;
  const int32_t count = n * p->units;
  /* The sums' row after the four int16 buffers (prepare's scratch_bytes). */
  void* sums = m->scratch + 4u * 2u * (uint32_t)(p->batches * p->units);
  fc_q12(x, wide, p->input_zp, (const int8_t*)mculab_tfl_data(m, op->inputs[kGateInputWeights[g]]),
         &m->tensors[op->inputs[kGateBias[g]]], n, p->input_size, p->units, p->in_mult[g],
         p->in_shift[g], out, sums);
  fc_q12(h, wide, p->hidden_zp,
         (const int8_t*)mculab_tfl_data(m, op->inputs[kGateRecurrentWeights[g]]), NULL, n, p->units,
         p->units, p->rec_mult[g], p->rec_shift[g], tmp, sums);
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

/* UpdateLstmCell: forget x cell, input x cell gate, their saturated sum, the clip. */
static void update_cell_q(const mculab_tfl_lstm_params* p, int32_t count, int16_t* cell,
                          const int16_t* forget, const int16_t* input, const int16_t* cell_gate) {
  for (int32_t i = 0; i < count; ++i) {
    const int32_t kept =
        sat16(mculab_tfl_mbqm(forget[i] * cell[i], p->forget_mult, p->forget_shift));
    const int32_t added =
        sat16(mculab_tfl_mbqm(input[i] * cell_gate[i], p->input_mult, p->input_shift));
    int32_t v = sat16(kept + added);
    if (p->cell_clip >= 0) v = mculab_tfl_clamp(v, -p->cell_clip, p->cell_clip);
    cell[i] = (int16_t)v;
  }
}

/* UpdateLstmHidden: tanh(cell) x output gate into the hidden state's scale and zero point,
 * clamped to its type (int8 or int16); the output at this step is the hidden state. */
static void update_hidden_q(const mculab_tfl_lstm_params* p, int32_t count, const int16_t* cell,
                            const int16_t* output_gate, int16_t* tmp, void* h, void* out) {
  tanh_of_cell(p->cell_scale_power, (uint32_t)count, cell, tmp);
  for (int32_t i = 0; i < count; ++i) {
    const int32_t v =
        p->hidden_zp + mculab_tfl_mbqm(tmp[i] * output_gate[i], p->hidden_mult, p->hidden_shift);
    if (p->type == MCULAB_TFL_INT16) {
      ((int16_t*)h)[i] = ((int16_t*)out)[i] = sat16(v);
    } else {
      ((int8_t*)h)[i] = ((int8_t*)out)[i] = (int8_t)mculab_tfl_clamp(v, -128, 127);
    }
  }
}

/* ---- float32 ---- */

/* kTfLiteActNone's range, which TFLite's float fully connected and Mul clamp to. */
static float act_none(float v) { return v < -FLT_MAX ? -FLT_MAX : v > FLT_MAX ? FLT_MAX : v; }

/* reference_ops::FullyConnected: each sum in float in order, then the bias (may be NULL). */
static void fc_f32(const float* x, const float* w, const float* bias, int32_t n, int32_t depth,
                   int32_t rows, float* out) {
  for (int32_t b = 0; b < n; ++b) {
    for (int32_t r = 0; r < rows; ++r) {
      float total = 0.0f;
      for (int32_t k = 0; k < depth; ++k) {
        total += x[(int64_t)b * depth + k] * w[(int64_t)r * depth + k];
      }
      out[(int64_t)b * rows + r] = act_none(total + (bias != NULL ? bias[r] : 0.0f));
    }
  }
}

static void gate_f32(const mculab_tfl_model* m, const mculab_tfl_op* op, int g, const float* x,
                     const float* h, int32_t n, float* out, float* tmp, uint8_t act) {
  const mculab_tfl_lstm_params* p = &op->k.lstm;
  const int32_t count = n * p->units;
  fc_f32(x, (const float*)mculab_tfl_data(m, op->inputs[kGateInputWeights[g]]),
         (const float*)mculab_tfl_data(m, op->inputs[kGateBias[g]]), n, p->input_size, p->units,
         out);
  fc_f32(h, (const float*)mculab_tfl_data(m, op->inputs[kGateRecurrentWeights[g]]), NULL, n,
         p->units, p->units, tmp);
  for (int32_t i = 0; i < count; ++i) out[i] = out[i] + tmp[i];
  (act == ACT_SIGMOID ? mculab_tfl_logistic_f32 : mculab_tfl_tanh_f32)((uint32_t)count, out, out);
}

/* UpdateLstmCell; the clip as std::max(std::min(clip, v), -clip) (a NaN becomes clip). */
static void update_cell_f32(float clip, int32_t count, float* cell, const float* forget,
                            const float* input, const float* cell_gate) {
  for (int32_t i = 0; i < count; ++i) {
    float v = act_none(forget[i] * cell[i]) + act_none(input[i] * cell_gate[i]);
    if (clip > 0.0f) {
      v = v < clip ? v : clip;
      v = v < -clip ? -clip : v;
    }
    cell[i] = v;
  }
}

/* UpdateLstmHidden. */
static void update_hidden_f32(int32_t count, const float* cell, const float* output_gate,
                              float* tmp, float* h, float* out) {
  mculab_tfl_tanh_f32((uint32_t)count, cell, tmp);
  for (int32_t i = 0; i < count; ++i) h[i] = out[i] = act_none(tmp[i] * output_gate[i]);
}

/* ---- every kind ---- */

/* One gate of the step into `out` (`tmp` its scratch), in the kind's arithmetic. */
static void gate(const mculab_tfl_model* m, const mculab_tfl_op* op, int g, const void* x,
                 const void* h, int32_t n, void* out, void* tmp, uint8_t act) {
  if (op->k.lstm.type == MCULAB_TFL_FLOAT32) {
    gate_f32(m, op, g, (const float*)x, (const float*)h, n, (float*)out, (float*)tmp, act);
  } else {
    gate_q(m, op, g, x, h, n, (int16_t*)out, (int16_t*)tmp, act);
  }
}

/* LstmStep: one step of n vectors (x the input, h the hidden state, out the output), the four
 * scratch buffers in the cell state's type, reused as TFLite Micro reuses them. */
static void step(const mculab_tfl_model* m, const mculab_tfl_op* op, const void* x, void* h,
                 void* cell, int32_t n, void* out, uint8_t* scratch) {
  const mculab_tfl_lstm_params* p = &op->k.lstm;
  const int32_t count = n * p->units;
  const int is_float = p->type == MCULAB_TFL_FLOAT32;
  void* buf[4];
  for (int k = 0; k < 4; ++k) buf[k] = scratch + (int64_t)k * count * (is_float ? 4 : 2);
  gate(m, op, GATE_FORGET, x, h, n, buf[0], buf[3], ACT_SIGMOID);
  gate(m, op, GATE_INPUT, x, h, n, buf[1], buf[3], ACT_SIGMOID);
  gate(m, op, GATE_CELL, x, h, n, buf[2], buf[3], p->cell_act);
  if (is_float) {
    update_cell_f32(op->cell_clip, count, (float*)cell, (const float*)buf[0], (const float*)buf[1],
                    (const float*)buf[2]);
  } else {
    update_cell_q(p, count, (int16_t*)cell, (const int16_t*)buf[0], (const int16_t*)buf[1],
                  (const int16_t*)buf[2]);
  }
  gate(m, op, GATE_OUTPUT, x, h, n, buf[1], buf[3], ACT_SIGMOID);
  if (is_float) {
    update_hidden_f32(count, (const float*)cell, (const float*)buf[1], (float*)buf[0], (float*)h,
                      (float*)out);
  } else {
    update_hidden_q(p, count, (const int16_t*)cell, (const int16_t*)buf[1], (int16_t*)buf[0], h,
                    out);
  }
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const mculab_tfl_lstm_params* p = &op->k.lstm;
  const uint8_t* in = (const uint8_t*)mculab_tfl_data(m, op->inputs[IN]);
  uint8_t* h = m->tensors[op->inputs[HIDDEN]].data;
  uint8_t* cell = m->tensors[op->inputs[CELL]].data;
  uint8_t* out = (uint8_t*)mculab_tfl_out_data(m, op);
  const int is_float = p->type == MCULAB_TFL_FLOAT32;
  /* Bytes per activation and per cell state element. */
  const int64_t size = is_float ? 4 : p->type == MCULAB_TFL_INT16 ? 2 : 1;
  const int64_t cell_size = is_float ? 4 : 2;
  /* Time-major: every batch at each step, the states whole; batch-major: one batch at a time
   * through every step, with its slice of the states. */
  const int32_t outer = p->time_major ? 1 : p->batches;
  const int32_t n = p->time_major ? p->batches : 1;
  for (int32_t b = 0; b < outer; ++b) {
    const int64_t state = (int64_t)b * p->units;
    for (int32_t t = 0; t < p->steps; ++t) {
      const int64_t at = p->time_major ? (int64_t)t * p->batches : (int64_t)b * p->steps + t;
      step(m, op, in + at * p->input_size * size, h + state * size, cell + state * cell_size, n,
           out + at * p->units * size, m->scratch);
    }
  }
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_unidirectional_sequence_lstm = {
    "UNIDIRECTIONAL_SEQUENCE_LSTM", 71, parse, prepare, NULL, invoke};
