/* LOGISTIC and TANH, int8 and int16 (TFLite Micro's logistic_common.cc and tanh.cc prepare,
 * reference_integer_ops::Logistic and Tanh).
 * int8: the input less its zero point, saturated beyond the input radius, otherwise rescaled to
 * Q4.27 and through gemmlowp's fixed-point logistic or tanh (exp_on_negative_values and a
 * Newton-Raphson reciprocal, kernels.h), the result in 1/256 with zero point -128 (LOGISTIC, whose
 * output zero point must be -128) or in 1/128 with zero point 0 (TANH); TFLite Micro reads no
 * other output quantization, and neither do we.
 * int16: symmetric in and out, the output's scale 2^-15; a power-of-two input scale of 2^-12
 * (LOGISTIC; TANH also 2^-11) is read directly, any other is rescaled to 1/(3 x 4096) by an
 * integer multiplier and a shift. Both look up the 256-entry table of sigmoid(i/24) in 0.16
 * (tanh(x) = 2 sigmoid(2x) - 1) and interpolate. The integer LSTM runs the same two functions on
 * its gates. float32: TFLite's reference formulas, e^x from mculab_tfl_exp (ops/common.c); the
 * float32 LSTM runs them on its gates. */
#include <stdint.h>

#include "kernels.h"
#include "ops.h"

/* sigmoid(i / 24) in 0.16, i = 0..255: TFLite's sigmoid_table_uint16. */
static const uint16_t kSigmoidTable[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535};

/* The input in the table's scale (1/(3 x 4096)); the power-of-two case multiplies by 3 << shift.
 * LOGISTIC and TANH keep the multiplier at most 32767, so the product fits; the LSTM's tanh of a
 * cell state of a large scale (up to 3 << 15) can exceed int32 and then wraps as TFLite Micro's
 * int32 arithmetic does on the target (unsigned here, so that the wrap is defined C). */
static int32_t table_input(int16_t x, int32_t multiplier, int32_t left_shift) {
  if (multiplier == 0) {
    multiplier = 3 << left_shift;
    left_shift = 0;
  }
  const int32_t round = left_shift > 0 ? 1 << (left_shift - 1) : 0;
  return (int32_t)((uint32_t)x * (uint32_t)multiplier + (uint32_t)round) >> left_shift;
}

void mculab_tfl_logistic_s16(int32_t multiplier, int32_t left_shift, uint32_t n, const int16_t* in,
                             int16_t* out) {
  for (uint32_t i = 0; i < n; ++i) {
    const int32_t x = table_input(in[i], multiplier, left_shift);
    const uint32_t ax = x < 0 ? (uint32_t)0 - (uint32_t)x : (uint32_t)x;
    const uint32_t uh = ax >> 9;
    uint32_t result;
    if (uh >= 255) {
      result = 0x7FFFu << 10;
    } else {
      const uint32_t ua = kSigmoidTable[uh];
      const uint32_t ub = kSigmoidTable[uh + 1];
      result = (ua << 9) + (ax & 0x1FFu) * (ub - ua);
    }
    result = x >= 0 ? result + (1u << 9) : (1u << 25) - result + (1u << 9) - 1u;
    out[i] = (int16_t)(result >> 10);
  }
}

void mculab_tfl_tanh_s16(int32_t multiplier, int32_t left_shift, uint32_t n, const int16_t* in,
                         int16_t* out) {
  for (uint32_t i = 0; i < n; ++i) {
    const int32_t x = table_input(in[i], multiplier, left_shift);
    const uint32_t ax = x < 0 ? (uint32_t)0 - (uint32_t)x : (uint32_t)x;
    const uint32_t uh = ax >> 8;
    int32_t result;
    if (uh >= 255) {
      result = 0xFFFF << 8;
    } else {
      const uint32_t ua = kSigmoidTable[uh];
      const uint32_t ub = kSigmoidTable[uh + 1];
      result = (int32_t)((ua << 8) + (ax & 0xFFu) * (ub - ua));
    }
    result = x >= 0 ? result - (1 << 23) + (1 << 7) : -result + (1 << 23) + (1 << 7) - 1;
    out[i] = (int16_t)(result >> 8);
  }
}

int mculab_tfl_checked_log2(float x, int* log2) {
  uint32_t bits;
  __builtin_memcpy(&bits, &x, sizeof bits);
  int e = (int)((bits >> 23) & 0xFFu) - 127;
  float m; /* x / 2^e in [1, 2) */
  const uint32_t mbits = (bits & 0x007FFFFFu) | 0x3F800000u;
  __builtin_memcpy(&m, &mbits, sizeof m);
  /* log2(m) rounds up from sqrt(2); within 1e-3 of an integer means m below 2^0.001 or above
   * 2^0.999. */
  *log2 = m >= 1.41421356f ? e + 1 : e;
  return m < 1.00069339f || m > 1.99861391f;
}

/* gemmlowp::logistic and gemmlowp::tanh of a Q4.27 value, Q0.31 out. */
static int32_t fx_logistic(int32_t a) {
  if (a == 0) return 1 << 30; /* one half */
  const int32_t abs_a = a > 0 ? a : -a;
  const int32_t positive =
      mculab_fx_one_over_one_plus_x(mculab_fx_exp_on_negative_values(-abs_a, 4));
  return a > 0 ? positive : INT32_MAX - positive;
}

static int32_t fx_tanh(int32_t a) {
  if (a == 0) return 0;
  const int32_t n = a < 0 ? a : -a;
  /* ExactMulByPot<1>: the same raw value read with 5 integer bits, so exp(2n). */
  const int32_t t = mculab_fx_one_minus_x_over_one_plus_x(mculab_fx_exp_on_negative_values(n, 5));
  return a < 0 ? -t : t;
}

static void sigmoid_s8(const mculab_tfl_sigmoid_params* p, int tanh, uint32_t n, const int8_t* in,
                       int8_t* out) {
  for (uint32_t i = 0; i < n; ++i) {
    const int32_t x = in[i] - p->in_zp;
    if (x <= -p->range_radius) {
      out[i] = -128;
    } else if (x >= p->range_radius) {
      out[i] = 127;
    } else {
      const int32_t q4 = mculab_tfl_mbqm(x, p->multiplier, p->left_shift);
      /* LOGISTIC: Q0.31 to 1/256 less 128; TANH: Q0.31 to 1/128. */
      const int32_t v =
          tanh ? mculab_rdbpot(fx_tanh(q4), 24) : mculab_rdbpot(fx_logistic(q4), 23) - 128;
      out[i] = (int8_t)mculab_tfl_clamp(v, -128, 127);
    }
  }
}

/* The int8 input rescaled to Q4.27 (frexp of scale x 2^27, the mantissa rounded to 31 bits) and
 * CalculateInputRadius(4, shift, 31): beyond it the function is saturated. */
static mculab_tfl_status prepare_s8(mculab_tfl_ctx* c, const mculab_tfl_tensor* in,
                                    mculab_tfl_sigmoid_params* p) {
  double q = (double)in->scale * (double)(1 << 27);
  int e = 0;
  while (q >= 1.0) {
    q /= 2.0;
    ++e;
  }
  while (q < 0.5) {
    q *= 2.0;
    --e;
  }
  const int64_t m = (int64_t)(q * 2147483648.0 + 0.5); /* TfLiteRound, q > 0 */
  if (m > INT32_MAX || e > 30 || e < -31) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "an int8 input scale out of range");
  }
  p->multiplier = (int32_t)m;
  p->left_shift = e;
  p->in_zp = in->zero_point;
  const double radius = 15.0 * (double)(1 << 27) /
                        (e >= 0 ? (double)((int64_t)1 << e) : 1.0 / (double)((int64_t)1 << -e));
  p->range_radius = radius >= 2147483647.0 ? INT32_MAX : (int32_t)radius; /* floor, positive */
  return MCULAB_TFL_OK;
}

enum { KIND_LOGISTIC = 0, KIND_TANH = 1 };

static mculab_tfl_status prepare(mculab_tfl_ctx* c, int kind) {
  mculab_tfl_op* op = c->op;
  const mculab_tfl_tensor* in = mculab_tfl_in(c, 0);
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  if (op->num_inputs != 1 || in == NULL || in->type != out->type || in->elements != out->elements) {
    return mculab_tfl_bad(c, MCULAB_TFL_BAD_SHAPE, "needs one input like the output");
  }
  op->macs = out->elements;
  if (out->type == MCULAB_TFL_FLOAT32) return MCULAB_TFL_OK;
  if (out->type == MCULAB_TFL_INT8) {
    if (!mculab_tfl_quantized(in, MCULAB_TFL_INT8) || !mculab_tfl_quantized(out, MCULAB_TFL_INT8)) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs quantized int8 tensors");
    }
    if (kind == KIND_LOGISTIC && out->zero_point != -128) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "int8 needs an output zero point of -128");
    }
    return prepare_s8(c, in, &op->k.sigmoid);
  }
  if (!mculab_tfl_quantized(in, MCULAB_TFL_INT16) || !mculab_tfl_quantized(out, MCULAB_TFL_INT16)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "needs quantized int16 tensors");
  }
  if (in->zero_point != 0 || out->zero_point != 0) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "int16 needs zero points of 0");
  }
  mculab_tfl_sigmoid_params* p = &op->k.sigmoid;
  int in_log2;
  int pot = mculab_tfl_checked_log2(in->scale, &in_log2);
  p->left_shift = 12 + in_log2; /* (15 - 3 integer bits) + log2(scale) */
  pot = pot && (p->left_shift == 0 || (kind == KIND_TANH && p->left_shift == 1));
  if (pot) {
    p->multiplier = 0;
  } else {
    double multiplier = (double)in->scale * 4096.0 * 3.0;
    p->left_shift = 0;
    while (multiplier <= 32767.0 / 2.0 && p->left_shift <= 30) {
      ++p->left_shift;
      multiplier *= 2.0;
    }
    if (multiplier > 32767.0) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "an input scale above 2^-12 x 8/3");
    }
    p->multiplier = (int32_t)multiplier;
  }
  int out_log2;
  if (!mculab_tfl_checked_log2(out->scale, &out_log2) || out_log2 != -15) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "int16 needs an output scale of 2^-15");
  }
  return MCULAB_TFL_OK;
}

static mculab_tfl_status prepare_logistic(mculab_tfl_ctx* c) { return prepare(c, KIND_LOGISTIC); }
static mculab_tfl_status prepare_tanh(mculab_tfl_ctx* c) { return prepare(c, KIND_TANH); }

/* float32 LOGISTIC as TFLite's reference: 1 above 16.619047, e^x below -9, else 1 / (1 + e^-x)
 * in float; e^x is mculab_tfl_exp rounded to float (nearly always the float glibc's expf gives,
 * otherwise 1 unit in the last place apart), so every board computes the host's bits. */
void mculab_tfl_logistic_f32(uint32_t n, const float* in, float* out) {
  for (uint32_t i = 0; i < n; ++i) {
    const float v = in[i];
    if (v > 16.619047164916992188f) {
      out[i] = 1.0f;
    } else if (v < -9.0f) {
      out[i] = (float)mculab_tfl_exp((double)v);
    } else {
      out[i] = 1.0f / (1.0f + (float)mculab_tfl_exp(-(double)v));
    }
  }
}

/* float32 TANH: TFLite's reference is std::tanh; here tanh in double rounded to float (nearly
 * always glibc's tanhf, otherwise 1 unit in the last place apart): an odd polynomial near 0, (e^2x
 * - 1) / (e^2x + 1) from mculab_tfl_exp elsewhere, +-1 beyond 20. */
void mculab_tfl_tanh_f32(uint32_t n, const float* in, float* out) {
  for (uint32_t i = 0; i < n; ++i) {
    const double x = (double)in[i];
    const double a = x < 0.0 ? -x : x;
    double t;
    if (a > 20.0) {
      t = 1.0;
    } else if (a < 0.0004) {
      const double a2 = a * a;
      t = a - a * a2 / 3.0 + 2.0 * a * a2 * a2 / 15.0;
    } else {
      const double e = mculab_tfl_exp(2.0 * a);
      t = (e - 1.0) / (e + 1.0);
    }
    out[i] = (float)(x < 0.0 ? -t : t);
  }
}

static mculab_tfl_status invoke(mculab_tfl_model* m, const mculab_tfl_op* op, uint16_t index) {
  (void)index;
  const mculab_tfl_sigmoid_params* p = &op->k.sigmoid;
  if (m->tensors[op->output].type == MCULAB_TFL_FLOAT32) {
    (op->builtin == MCULAB_TFL_TANH ? mculab_tfl_tanh_f32 : mculab_tfl_logistic_f32)(
        m->tensors[op->output].elements, (const float*)mculab_tfl_data(m, op->inputs[0]),
        (float*)mculab_tfl_out_data(m, op));
    return MCULAB_TFL_OK;
  }
  if (m->tensors[op->output].type == MCULAB_TFL_INT8) {
    sigmoid_s8(p, op->builtin == MCULAB_TFL_TANH, m->tensors[op->output].elements,
               (const int8_t*)mculab_tfl_data(m, op->inputs[0]),
               (int8_t*)mculab_tfl_out_data(m, op));
    return MCULAB_TFL_OK;
  }
  void (*const f)(int32_t, int32_t, uint32_t, const int16_t*, int16_t*) =
      op->builtin == MCULAB_TFL_LOGISTIC ? mculab_tfl_logistic_s16 : mculab_tfl_tanh_s16;
  f(p->multiplier, p->left_shift, m->tensors[op->output].elements,
    (const int16_t*)mculab_tfl_data(m, op->inputs[0]), (int16_t*)mculab_tfl_out_data(m, op));
  return MCULAB_TFL_OK;
}

const mculab_tfl_kernel mculab_tfl_kernel_logistic = {"LOGISTIC",       0,    NULL,
                                                      prepare_logistic, NULL, invoke};
const mculab_tfl_kernel mculab_tfl_kernel_tanh = {"TANH", 0, NULL, prepare_tanh, NULL, invoke};
