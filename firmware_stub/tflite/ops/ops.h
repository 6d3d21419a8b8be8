/* The interpreter's operators: one file per operator family, each defining the kernels of its
 * builtin codes (what TFLite Micro's kernels/ folder holds), and the one table that lists them
 * (registry.c). A kernel reads its options, checks its tensors and computes its parameters as
 * TFLite's Prepare does, and runs as TFLite's reference kernel runs. Private to the interpreter.
 *
 * Adding an operator: a file here defining `const mculab_tfl_kernel mculab_tfl_kernel_<name>`,
 * and one line `KERNEL(<builtin code>, <name>)` in registry.c's list. */
#ifndef MCULAB_TFLITE_OPS_H_
#define MCULAB_TFLITE_OPS_H_

#include <stdint.h>

#include "../flatbuffer.h"
#include "../tflite_internal.h"
#include "mculab/tflite.h"

/* What prepare and bind see: the model and the operator being prepared. */
typedef struct {
  mculab_tfl_model* m;
  uint32_t index;
  mculab_tfl_op* op;
} mculab_tfl_ctx;

struct mculab_tfl_kernel {
  const char* name; /* the BuiltinOperator's name in TFLite's schema */
  /* The BuiltinOptions member its options table must be; 0: its options are not read (any
   * type, or none, is accepted). */
  uint8_t options_type;
  /* Reads the options table into op (NULL: nothing to read). TFLite's defaults are set before. */
  void (*parse)(fb_reader* r, const fb_table* options, mculab_tfl_op* op);
  /* Checks the tensors and fills op->k; may ask for op->persistent_bytes (kept for the model's
   * life, handed to bind) and op->scratch_bytes (shared by all operators, during invoke). */
  mculab_tfl_status (*prepare)(mculab_tfl_ctx* c);
  /* Fills the persistent bytes once the arena is laid out (NULL: none asked). */
  mculab_tfl_status (*bind)(mculab_tfl_ctx* c, uint8_t* persistent);
  /* Runs the operator: MCULAB_TFL_OK, or a status with m->error set. */
  mculab_tfl_status (*invoke)(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index);
};

/* The kernel for a builtin code, NULL when the interpreter lacks it. */
const mculab_tfl_kernel* mculab_tfl_find_kernel(int32_t builtin);

/* ---- helpers shared by the kernels (common.c) ---- */

/* TFLite's ActivationFunctionType. */
enum {
  MCULAB_ACT_NONE = 0,
  MCULAB_ACT_RELU = 1,
  MCULAB_ACT_RELU_N1_TO_1 = 2,
  MCULAB_ACT_RELU6 = 3
};

#define MCULAB_TFL_MAX_STRIDE 65535

/* "operator 7 (CONV_2D): why" in m->error; returns st. */
mculab_tfl_status mculab_tfl_bad(mculab_tfl_ctx* c, mculab_tfl_status st, const char* why);

/* Input k of the operator, NULL when absent or omitted (-1). */
const mculab_tfl_tensor* mculab_tfl_in(const mculab_tfl_ctx* c, unsigned k);
static inline const mculab_tfl_tensor* mculab_tfl_out(const mculab_tfl_ctx* c) {
  return &c->m->tensors[c->op->output];
}
/* A tensor's bytes at run time: in the model (constants) or in the arena. */
static inline const void* mculab_tfl_data(const mculab_tfl_model* m, int16_t i) {
  if (i < 0) return 0;
  const mculab_tfl_tensor* t = &m->tensors[i];
  return t->is_const ? (const void*)t->const_data : (const void*)t->data;
}
static inline void* mculab_tfl_out_data(const mculab_tfl_model* m, const mculab_tfl_op* op) {
  return m->tensors[op->output].data;
}

/* Scale i (per channel) of t, read from the model. */
float mculab_tfl_scale_at(const mculab_tfl_model* m, const mculab_tfl_tensor* t, uint32_t i);
/* Positive and finite (false for NaN). */
int mculab_tfl_valid_scale(float s);
/* An activation of `type` with a usable scale. */
int mculab_tfl_quantized(const mculab_tfl_tensor* t, uint8_t type);
/* round(v) halves away from zero, as TfLiteRound, saturated to int32. */
int32_t mculab_tfl_round(double v);

/* e^x in double from IEEE basic operations alone (no libm, no fused multiply-add): the same bits
 * on every board and on the host, so a float32 kernel's output checksum is the host's. Within 2
 * units in the last place of a double; 0 below -745, +infinity above 709.78. */
double mculab_tfl_exp(double x);
/* CalculateActivationRangeQuantized for the output's type (int8 or int16): 0 for an activation
 * other than NONE, RELU, RELU6, RELU_N1_TO_1. */
int mculab_tfl_activation_range(uint8_t act, const mculab_tfl_tensor* out, int32_t* lo,
                                int32_t* hi);
/* CalculateActivationRange for float32 outputs. */
int mculab_tfl_activation_range_f32(uint8_t act, float* lo, float* hi);
/* ActivationFunctionWithMinMax: min(max(v, lo), hi) as std::min and std::max compare (NaN and -0
 * kept). */
static inline float mculab_tfl_clamp_f32(float v, float lo, float hi) {
  return v < lo ? lo : v > hi ? hi : v;
}
/* A float32 output and a constant float32 filter, 4-byte aligned: what float32 CONV_2D,
 * DEPTHWISE_CONV_2D, TRANSPOSE_CONV and FULLY_CONNECTED need besides their shapes. */
int mculab_tfl_float_filter(const mculab_tfl_tensor* out, const mculab_tfl_tensor* filter);
/* What a float32 CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV or FULLY_CONNECTED checks after its
 * shapes: no bias or a constant float32 one of `n` values, 4-byte aligned; a fused activation
 * of NONE, RELU, RELU6, RELU_N1_TO_1, its range into the operator's f_act_min and f_act_max. */
mculab_tfl_status mculab_tfl_prepare_float_tail(mculab_tfl_ctx* c, const mculab_tfl_tensor* bias,
                                                uint32_t n);
/* ComputeOutSize and the leading pad of ComputePaddingWithOffset (kernels/padding.h). */
int32_t mculab_tfl_out_size(uint8_t padding, int32_t in, int32_t filter, int32_t stride,
                            int32_t dilation);
int32_t mculab_tfl_pad_before(int32_t stride, int32_t dilation, int32_t in, int32_t filter,
                              int32_t out);
/* QuantizeMultiplier for a factor below 1 (refused otherwise, naming the operator). */
mculab_tfl_status mculab_tfl_multiplier_below_one(mculab_tfl_ctx* c, double real, int32_t* mult,
                                                  int32_t* shift);
/* TFLite's MultiplyByQuantizedMultiplier for int32 (gemmlowp rounding; a left shift wraps as
 * two's complement) and for int64 accumulators (the 16x8 kernels: the multiplier reduced to 16
 * bits, one rounding). */
int32_t mculab_tfl_mbqm(int32_t x, int32_t multiplier, int32_t shift);
int32_t mculab_tfl_mbqm64(int64_t x, int32_t multiplier, int32_t shift);
static inline int32_t mculab_tfl_clamp(int32_t v, int32_t lo, int32_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}
/* Reads element i of a constant int32 or int64 tensor (shapes, paddings, slices) as int64. */
int64_t mculab_tfl_const_int(const mculab_tfl_tensor* t, uint32_t i);
/* The tensor's type's range: int8, int16, int32. */
void mculab_tfl_type_range(uint8_t type, int32_t* lo, int32_t* hi);

/* Per-channel requantization (PopulateConvolutionQuantizationParams): for each of `channels`,
 * QuantizeMultiplier(input scale x filter scale / output scale) in double, the filter's scale
 * per channel or per tensor; the arrays laid in `persistent`, which holds
 * mculab_tfl_channel_multiplier_bytes(channels). */
uint32_t mculab_tfl_channel_multiplier_bytes(uint32_t channels);
mculab_tfl_status mculab_tfl_channel_multipliers(mculab_tfl_ctx* c, const mculab_tfl_tensor* in,
                                                 const mculab_tfl_tensor* filter, uint32_t channels,
                                                 uint8_t* persistent, const int32_t** mult,
                                                 const int32_t** shift);

/* Same shape (dimensions and sizes). */
int mculab_tfl_same_shape(const mculab_tfl_tensor* a, const mculab_tfl_tensor* b);

/* TFLite's int16 sigmoid and tanh (reference_integer_ops::Logistic and Tanh for int16): the
 * input rescaled by `multiplier` (0: a power-of-two scale, the multiplier 3 << left_shift) and
 * `left_shift`, then the 256-entry sigmoid table interpolated; the output in Q0.15. LOGISTIC,
 * TANH and UNIDIRECTIONAL_SEQUENCE_LSTM run them. In and out may be the same array. */
void mculab_tfl_logistic_s16(int32_t multiplier, int32_t left_shift, uint32_t n, const int16_t* in,
                             int16_t* out);
void mculab_tfl_tanh_s16(int32_t multiplier, int32_t left_shift, uint32_t n, const int16_t* in,
                         int16_t* out);
/* TFLite's float32 reference Logistic (1 above 16.619047, e^x below -9, else 1 / (1 + e^-x)) and
 * Tanh (std::tanh, here tanh in double rounded to float), e^x from mculab_tfl_exp: the same bits
 * on every board. LOGISTIC, TANH and the float32 UNIDIRECTIONAL_SEQUENCE_LSTM run them. In and
 * out may be the same array. */
void mculab_tfl_logistic_f32(uint32_t n, const float* in, float* out);
void mculab_tfl_tanh_f32(uint32_t n, const float* in, float* out);
/* CheckedLog2 (quantization_util.h) for a positive scale: *log2 is log2(x) rounded, and the
 * return is whether x is within 1e-3 (in log2) of that power of two. No libm. */
int mculab_tfl_checked_log2(float x, int* log2);

#endif /* MCULAB_TFLITE_OPS_H_ */
