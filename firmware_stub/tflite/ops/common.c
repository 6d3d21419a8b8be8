/* Helpers the kernels share: messages, tensor access, TFLite's activation ranges, padding and
 * multipliers (kernel_util.cc, padding.h, quantization_util.cc). */
#include <stdint.h>

#include "kernels.h"
#include "mculab/kernels_s8.h"
#include "ops.h"

mculab_tfl_status mculab_tfl_bad(mculab_tfl_ctx* c, mculab_tfl_status st, const char* why) {
  const mculab_tfl_kernel* k = mculab_tfl_find_kernel(c->op->builtin);
  const char* name = k != NULL ? k->name : "UNKNOWN";
  mculab_tfl_fail(c->m, st, "operator ", c->index, " (");
  size_t at = 0;
  while (c->m->error[at] != 0) ++at;
  for (const char* s = name; *s && at + 1 < MCULAB_TFL_ERROR_LEN; ++s) c->m->error[at++] = *s;
  for (const char* s = "): "; *s && at + 1 < MCULAB_TFL_ERROR_LEN; ++s) c->m->error[at++] = *s;
  for (const char* s = why; *s && at + 1 < MCULAB_TFL_ERROR_LEN; ++s) c->m->error[at++] = *s;
  c->m->error[at] = 0;
  return st;
}

const mculab_tfl_tensor* mculab_tfl_in(const mculab_tfl_ctx* c, unsigned k) {
  return k < c->op->num_inputs && c->op->inputs[k] >= 0 ? &c->m->tensors[c->op->inputs[k]] : NULL;
}

float mculab_tfl_scale_at(const mculab_tfl_model* m, const mculab_tfl_tensor* t, uint32_t i) {
  const uint8_t* p = m->model + t->scales_pos + 4u * i;
  const uint32_t bits =
      (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
  float f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}

int mculab_tfl_valid_scale(float s) { return s > 0.0f && s < 1e30f; }

int mculab_tfl_quantized(const mculab_tfl_tensor* t, uint8_t type) {
  return t != NULL && t->type == type && t->num_scales >= 1 && mculab_tfl_valid_scale(t->scale);
}

int32_t mculab_tfl_round(double v) {
  if (v > 2147483647.0) return INT32_MAX;
  if (v < -2147483647.0) return -INT32_MAX;
  return v >= 0 ? (int32_t)(v + 0.5) : -(int32_t)(-v + 0.5);
}

double mculab_tfl_exp(double x) {
  if (x != x) return x;
  if (x > 709.78) return __builtin_inf();
  if (x < -745.0) return 0.0;
  /* x = k ln2 + r, |r| <= ln2 / 2 (Cody and Waite: ln2 in two parts, the first exact in 32 bits
   * so k x ln2_hi is exact for |k| < 2^20). */
  const double k = (double)(int32_t)(x * 1.4426950408889634 + (x >= 0.0 ? 0.5 : -0.5));
  const double r = (x - k * 0.693147180369123816490) - k * 1.90821492927058770002e-10;
  /* e^r: its Taylor series to r^13 / 13! (the remainder is below 2^-60 for |r| <= ln2 / 2), in
   * Horner's form 1 + r (1 + r/2 (1 + r/3 (...))) so the last step's rounding dominates. */
  double sum = 1.0;
  for (int i = 13; i >= 1; --i) sum = 1.0 + sum * r / (double)i;
  /* x 2^k by powers of two of at most 2^62: exact until the result goes subnormal. */
  const double two62 = (double)((uint64_t)1 << 62);
  int32_t e = (int32_t)k;
  for (; e > 62; e -= 62) sum *= two62;
  for (; e < -62; e += 62) sum /= two62;
  if (e >= 0) {
    sum *= (double)((uint64_t)1 << e);
  } else {
    sum /= (double)((uint64_t)1 << -e);
  }
  return sum;
}

int mculab_tfl_activation_range(uint8_t act, const mculab_tfl_tensor* out, int32_t* lo,
                                int32_t* hi) {
  const float scale = out->scale;
  const int32_t zp = out->zero_point;
  *lo = out->type == MCULAB_TFL_INT16 ? -32768 : -128;
  *hi = out->type == MCULAB_TFL_INT16 ? 32767 : 127;
  switch (act) {
    case MCULAB_ACT_NONE:
      return 1;
    case MCULAB_ACT_RELU:
      if (zp > *lo) *lo = zp;
      return 1;
    case MCULAB_ACT_RELU6: {
      const int32_t six = zp + mculab_tfl_round((double)(6.0f / scale));
      if (zp > *lo) *lo = zp;
      if (six < *hi) *hi = six;
      return 1;
    }
    case MCULAB_ACT_RELU_N1_TO_1: {
      const int32_t m1 = zp + mculab_tfl_round((double)(-1.0f / scale));
      const int32_t p1 = zp + mculab_tfl_round((double)(1.0f / scale));
      if (m1 > *lo) *lo = m1;
      if (p1 < *hi) *hi = p1;
      return 1;
    }
  }
  return 0;
}

int mculab_tfl_float_filter(const mculab_tfl_tensor* out, const mculab_tfl_tensor* filter) {
  return out->type == MCULAB_TFL_FLOAT32 && filter != NULL && filter->type == MCULAB_TFL_FLOAT32 &&
         filter->is_const && ((uintptr_t)filter->const_data & 3u) == 0;
}

int mculab_tfl_activation_range_f32(uint8_t act, float* lo, float* hi) {
  *lo = -3.402823466e38f;
  *hi = 3.402823466e38f;
  switch (act) {
    case MCULAB_ACT_NONE:
      return 1;
    case MCULAB_ACT_RELU:
      *lo = 0.0f;
      return 1;
    case MCULAB_ACT_RELU6:
      *lo = 0.0f;
      *hi = 6.0f;
      return 1;
    case MCULAB_ACT_RELU_N1_TO_1:
      *lo = -1.0f;
      *hi = 1.0f;
      return 1;
  }
  return 0;
}

mculab_tfl_status mculab_tfl_prepare_float_tail(mculab_tfl_ctx* c, const mculab_tfl_tensor* bias,
                                                uint32_t n) {
  if (bias != NULL && (bias->type != MCULAB_TFL_FLOAT32 || !bias->is_const || bias->elements != n ||
                       ((uintptr_t)bias->const_data & 3u) != 0)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "bias must be constant float32 [out channels], aligned");
  }
  if (!mculab_tfl_activation_range_f32(c->op->activation, &c->op->f_act_min, &c->op->f_act_max)) {
    return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED,
                          "fused activation other than RELU, RELU6, RELU_N1_TO_1");
  }
  return MCULAB_TFL_OK;
}

int32_t mculab_tfl_out_size(uint8_t padding, int32_t in, int32_t filter, int32_t stride,
                            int32_t dilation) {
  const int64_t effective = (int64_t)(filter - 1) * dilation + 1;
  if (padding == 0) return (int32_t)(((int64_t)in + stride - 1) / stride);
  const int64_t v = ((int64_t)in + stride - effective) / stride;
  return v < 0 ? 0 : (int32_t)v;
}

int32_t mculab_tfl_pad_before(int32_t stride, int32_t dilation, int32_t in, int32_t filter,
                              int32_t out) {
  const int64_t effective = (int64_t)(filter - 1) * dilation + 1;
  const int64_t total = ((int64_t)out - 1) * stride + effective - in;
  return total > 0 ? (int32_t)(total / 2) : 0;
}

mculab_tfl_status mculab_tfl_multiplier_below_one(mculab_tfl_ctx* c, double real, int32_t* mult,
                                                  int32_t* shift) {
  int s;
  mculab_quantize_multiplier(real, mult, &s);
  if (s > 0) return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "a rescaling factor of 1 or more");
  *shift = s;
  return MCULAB_TFL_OK;
}

int mculab_tfl_same_shape(const mculab_tfl_tensor* a, const mculab_tfl_tensor* b) {
  if (a->num_dims != b->num_dims) return 0;
  for (unsigned d = 0; d < a->num_dims; ++d) {
    if (a->dims[d] != b->dims[d]) return 0;
  }
  return 1;
}

int32_t mculab_tfl_mbqm(int32_t x, int32_t multiplier, int32_t shift) {
  const int32_t left = shift > 0 ? shift : 0;
  const int32_t right = shift > 0 ? 0 : -shift;
  const int32_t shifted = (int32_t)((uint32_t)x << left);
  return mculab_rdbpot(mculab_srdhm(shifted, multiplier), right);
}

int32_t mculab_tfl_mbqm64(int64_t x, int32_t multiplier, int32_t shift) {
  const int32_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
  const int32_t total_shift = 15 - shift;
  const int64_t round = (int64_t)1 << (total_shift - 1);
  const int64_t result = (int64_t)((uint64_t)(x * (int64_t)reduced) + (uint64_t)round);
  return (int32_t)(result >> total_shift);
}

int64_t mculab_tfl_const_int(const mculab_tfl_tensor* t, uint32_t i) {
  const uint8_t* p = t->const_data;
  if (t->type == MCULAB_TFL_INT64) {
    p += 8u * i;
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | p[b];
    return (int64_t)v;
  }
  p += 4u * i;
  return (int32_t)((uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                   ((uint32_t)p[3] << 24));
}

void mculab_tfl_type_range(uint8_t type, int32_t* lo, int32_t* hi) {
  switch (type) {
    case MCULAB_TFL_INT8:
      *lo = -128;
      *hi = 127;
      return;
    case MCULAB_TFL_INT16:
      *lo = -32768;
      *hi = 32767;
      return;
  }
  *lo = INT32_MIN;
  *hi = INT32_MAX;
}

uint32_t mculab_tfl_channel_multiplier_bytes(uint32_t channels) {
  return 2u * ((4u * channels + MCULAB_TFL_ALIGN - 1u) & ~(MCULAB_TFL_ALIGN - 1u));
}

mculab_tfl_status mculab_tfl_channel_multipliers(mculab_tfl_ctx* c, const mculab_tfl_tensor* in,
                                                 const mculab_tfl_tensor* filter, uint32_t channels,
                                                 uint8_t* persistent, const int32_t** mult_out,
                                                 const int32_t** shift_out) {
  const mculab_tfl_tensor* out = mculab_tfl_out(c);
  int32_t* mult = (int32_t*)(void*)persistent;
  int32_t* shift =
      (int32_t*)(void*)(persistent + mculab_tfl_channel_multiplier_bytes(channels) / 2u);
  for (uint32_t ch = 0; ch < channels; ++ch) {
    const float fs = mculab_tfl_scale_at(c->m, filter, filter->num_scales > 1 ? ch : 0u);
    const double effective = (double)in->scale * (double)fs / (double)out->scale;
    int s;
    mculab_quantize_multiplier(effective, &mult[ch], &s);
    if (s > 0) {
      return mculab_tfl_bad(c, MCULAB_TFL_UNSUPPORTED, "requantization scale of 1 or more");
    }
    shift[ch] = s;
  }
  *mult_out = mult;
  *shift_out = shift;
  return MCULAB_TFL_OK;
}
