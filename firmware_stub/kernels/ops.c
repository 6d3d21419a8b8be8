/* Case preparation for the built-in ops: parameter checks, arena layout and the deterministic
 * tensor generator shared bit for bit by the runner and the agent's reference (ops.h). */
#include "mculab/ops.h"

#include <stdint.h>

#include "kernels.h"
#include "mculab/runner_protocol.h"

#define MCULAB_TENSOR_ALIGN 16u

typedef struct {
  uint64_t input, filter, channels, quant, output; /* element counts */
  uint64_t sums;  /* fully connected: the filter rows' sums, computed at prepare */
  uint32_t depth; /* products summed per output value */
} shape;

static int in_range(int32_t v, int32_t lo) { return v >= lo && v <= MCULAB_MAX_DIM; }

/* Fills s; returns MCULAB_CASE_OK, _UNKNOWN_OP or _BAD_PARAMS. */
static mculab_case_status shape_of(uint16_t op, const int32_t* p, shape* s) {
  s->sums = 0;
  switch (op) {
    case MCULAB_OP_CONV2D_S8: {
      for (int i = MCULAB_CONV_N; i <= MCULAB_CONV_KW; ++i) {
        if (!in_range(p[i], 1)) return MCULAB_CASE_BAD_PARAMS;
      }
      if (!in_range(p[MCULAB_CONV_PAD_H], 0) || !in_range(p[MCULAB_CONV_PAD_W], 0) ||
          !in_range(p[MCULAB_CONV_STRIDE_H], 1) || !in_range(p[MCULAB_CONV_STRIDE_W], 1)) {
        return MCULAB_CASE_BAD_PARAMS;
      }
      const int32_t padded_h = p[MCULAB_CONV_H] + 2 * p[MCULAB_CONV_PAD_H];
      const int32_t padded_w = p[MCULAB_CONV_W] + 2 * p[MCULAB_CONV_PAD_W];
      if (p[MCULAB_CONV_KH] > padded_h || p[MCULAB_CONV_KW] > padded_w) {
        return MCULAB_CASE_BAD_PARAMS;
      }
      const uint64_t depth =
          (uint64_t)p[MCULAB_CONV_KH] * (uint64_t)p[MCULAB_CONV_KW] * (uint64_t)p[MCULAB_CONV_C];
      if (depth > MCULAB_MAX_DEPTH) return MCULAB_CASE_BAD_PARAMS;
      const uint64_t out_h = (uint64_t)(padded_h - p[MCULAB_CONV_KH]) / p[MCULAB_CONV_STRIDE_H] + 1;
      const uint64_t out_w = (uint64_t)(padded_w - p[MCULAB_CONV_KW]) / p[MCULAB_CONV_STRIDE_W] + 1;
      const uint64_t n = (uint64_t)p[MCULAB_CONV_N], k = (uint64_t)p[MCULAB_CONV_K];
      s->depth = (uint32_t)depth;
      s->input = n * (uint64_t)p[MCULAB_CONV_H] * (uint64_t)p[MCULAB_CONV_W] * p[MCULAB_CONV_C];
      s->filter = k * depth;
      s->channels = k;
      s->quant = k;
      s->output = n * out_h * out_w * k;
      return MCULAB_CASE_OK;
    }
    case MCULAB_OP_DEPTHWISE_CONV2D_S8: {
      for (int i = MCULAB_DW_N; i <= MCULAB_DW_KW; ++i) {
        if (!in_range(p[i], 1)) return MCULAB_CASE_BAD_PARAMS;
      }
      if (!in_range(p[MCULAB_DW_PAD_H], 0) || !in_range(p[MCULAB_DW_PAD_W], 0) ||
          !in_range(p[MCULAB_DW_STRIDE_H], 1) || !in_range(p[MCULAB_DW_STRIDE_W], 1) ||
          !in_range(p[MCULAB_DW_DILATION_H], 1) || !in_range(p[MCULAB_DW_DILATION_W], 1)) {
        return MCULAB_CASE_BAD_PARAMS;
      }
      /* The dilated window: dilation * (kernel - 1) + 1, within the padded input. */
      const int64_t eff_h = (int64_t)p[MCULAB_DW_DILATION_H] * (p[MCULAB_DW_KH] - 1) + 1;
      const int64_t eff_w = (int64_t)p[MCULAB_DW_DILATION_W] * (p[MCULAB_DW_KW] - 1) + 1;
      const int64_t padded_h = (int64_t)p[MCULAB_DW_H] + 2 * p[MCULAB_DW_PAD_H];
      const int64_t padded_w = (int64_t)p[MCULAB_DW_W] + 2 * p[MCULAB_DW_PAD_W];
      if (eff_h > padded_h || eff_w > padded_w) return MCULAB_CASE_BAD_PARAMS;
      const uint64_t taps = (uint64_t)p[MCULAB_DW_KH] * (uint64_t)p[MCULAB_DW_KW];
      const uint64_t k = (uint64_t)p[MCULAB_DW_C] * (uint64_t)p[MCULAB_DW_DEPTH_MULTIPLIER];
      if (taps > MCULAB_MAX_DEPTH || k > MCULAB_MAX_DIM) return MCULAB_CASE_BAD_PARAMS;
      const uint64_t out_h = (uint64_t)(padded_h - eff_h) / p[MCULAB_DW_STRIDE_H] + 1;
      const uint64_t out_w = (uint64_t)(padded_w - eff_w) / p[MCULAB_DW_STRIDE_W] + 1;
      const uint64_t n = (uint64_t)p[MCULAB_DW_N];
      s->depth = (uint32_t)taps;
      s->input = n * (uint64_t)p[MCULAB_DW_H] * (uint64_t)p[MCULAB_DW_W] * p[MCULAB_DW_C];
      s->filter = taps * k;
      s->channels = k;
      s->quant = k;
      s->output = n * out_h * out_w * k;
      return MCULAB_CASE_OK;
    }
    case MCULAB_OP_FULLY_CONNECTED_S8: {
      for (int i = 0; i < MCULAB_FC_NUM_PARAMS; ++i) {
        if (!in_range(p[i], 1)) return MCULAB_CASE_BAD_PARAMS;
      }
      if (p[MCULAB_FC_IN] > MCULAB_MAX_DEPTH) return MCULAB_CASE_BAD_PARAMS;
      const uint64_t n = (uint64_t)p[MCULAB_FC_N], in = (uint64_t)p[MCULAB_FC_IN];
      const uint64_t out = (uint64_t)p[MCULAB_FC_OUT];
      s->depth = (uint32_t)in;
      s->input = n * in;
      s->filter = out * in;
      s->channels = out;
      s->quant = 1;
      s->output = n * out;
      s->sums = out;
      return MCULAB_CASE_OK;
    }
    case MCULAB_OP_CALIBRATE: {
      if (p[MCULAB_CAL_KIND] < 0 || p[MCULAB_CAL_KIND] >= MCULAB_CAL_NUM_KINDS ||
          p[MCULAB_CAL_LOOPS] < 1 || p[MCULAB_CAL_LOOPS] > MCULAB_CAL_MAX_LOOPS) {
        return MCULAB_CASE_BAD_PARAMS;
      }
      s->depth = 1;
      s->input = 0;
      s->filter = 0;
      s->channels = 0;
      s->quant = 0;
      s->output = MCULAB_CAL_OUTPUT_BYTES;
      return MCULAB_CASE_OK;
    }
  }
  return MCULAB_CASE_UNKNOWN_OP;
}

static uint64_t align_up(uint64_t v) {
  return (v + MCULAB_TENSOR_ALIGN - 1) & ~(uint64_t)(MCULAB_TENSOR_ALIGN - 1);
}

/* Layout from an aligned base: bias, multipliers, shifts (int32), input, filter, output (int8),
 * kernel sums (int32). */
static uint64_t layout_bytes(const shape* s) {
  return align_up(4 * s->channels) + 2 * align_up(4 * s->quant) + align_up(s->input) +
         align_up(s->filter) + align_up(s->output) + align_up(4 * s->sums);
}

size_t mculab_case_arena_bytes(uint16_t op, const int32_t* params) {
  shape s;
  if (shape_of(op, params, &s) != MCULAB_CASE_OK) return 0;
  /* Worst case: the arena's start needs MCULAB_TENSOR_ALIGN - 1 bytes to reach alignment. */
  const uint64_t total = layout_bytes(&s) + MCULAB_TENSOR_ALIGN - 1;
  return total > (uint64_t)SIZE_MAX ? SIZE_MAX : (size_t)total;
}

/* xorshift32 (Marsaglia): fixed, tiny and the same on every compiler. */
static uint32_t next_u32(uint32_t* state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *state = x;
  return x;
}

static uint32_t case_seed(uint16_t op, const int32_t* params, uint32_t seed) {
  uint8_t buf[6 + 4 * MCULAB_MAX_PARAMS];
  const uint16_t n = mculab_op_param_count(op);
  mculab_put_u32(buf, seed);
  mculab_put_u16(buf + 4, op);
  for (uint16_t i = 0; i < n; ++i) mculab_put_u32(buf + 6 + 4 * i, (uint32_t)params[i]);
  const uint32_t s = mculab_crc32(0, buf, 6u + 4u * n);
  return s != 0 ? s : 0x6D2B79F5u; /* xorshift32 must not start at 0 */
}

static int floor_log2(uint32_t v) {
  int r = 0;
  while (v >>= 1) ++r;
  return r;
}

mculab_case_status mculab_case_prepare(uint16_t op, const int32_t* params, uint32_t seed,
                                       uint8_t* arena, size_t arena_len, mculab_case* c) {
  shape s;
  const mculab_case_status st = shape_of(op, params, &s);
  if (st != MCULAB_CASE_OK) return st;
  const uintptr_t base = (uintptr_t)arena;
  const uint64_t pad = (MCULAB_TENSOR_ALIGN - (base % MCULAB_TENSOR_ALIGN)) % MCULAB_TENSOR_ALIGN;
  const uint64_t need = pad + layout_bytes(&s);
  if (arena == NULL || need > (uint64_t)arena_len) return MCULAB_CASE_NO_MEMORY;

  uint8_t* at = arena + pad;
  c->op = op;
  for (unsigned i = 0; i < MCULAB_MAX_PARAMS; ++i) {
    c->params[i] = i < mculab_op_param_count(op) ? params[i] : 0;
  }
  c->bias = (int32_t*)(void*)at;
  at += align_up(4 * s.channels);
  c->out_multiplier = (int32_t*)(void*)at;
  at += align_up(4 * s.quant);
  c->out_shift = (int32_t*)(void*)at;
  at += align_up(4 * s.quant);
  c->input = (int8_t*)at;
  at += align_up(s.input);
  c->filter = (int8_t*)at;
  at += align_up(s.filter);
  c->output = (int8_t*)at;
  at += align_up(s.output);
  c->kernel_sums = s.sums != 0 ? (int32_t*)(void*)at : NULL;
  c->output_len = (uint32_t)s.output;
  c->arena_used = (size_t)need;

  /* The scale 2^shift * multiplier / 2^31 brings an accumulator of `depth` products of values
   * with a spread of ~74 (int8) down to int8 without saturating most outputs: the accumulator's
   * standard deviation is ~5400 * sqrt(depth); 2^-shift is ~128 * sqrt(depth) (up to 2x more). */
  const int base_shift = -(7 + (floor_log2(s.depth) + 1) / 2);
  const int32_t bias_bound = (int32_t)1 << (5 - base_shift);

  uint32_t rng = case_seed(op, params, seed);
  c->input_offset = (int32_t)(next_u32(&rng) % 17u) - 8;  /* -zero_point, zero_point in [-8, 8] */
  c->output_offset = (int32_t)(next_u32(&rng) % 17u) - 8; /* zero_point in [-8, 8] */
  for (uint64_t i = 0; i < s.input; ++i) c->input[i] = (int8_t)(next_u32(&rng) >> 24);
  /* Symmetric int8 weights, as TFLite quantizes them: [-127, 127]. */
  for (uint64_t i = 0; i < s.filter; ++i)
    c->filter[i] = (int8_t)((int32_t)(next_u32(&rng) % 255u) - 127);
  for (uint64_t i = 0; i < s.channels; ++i) {
    c->bias[i] = (int32_t)(next_u32(&rng) % (2u * (uint32_t)bias_bound + 1u)) - bias_bound;
  }
  for (uint64_t i = 0; i < s.quant; ++i) {
    c->out_multiplier[i] = (int32_t)(0x40000000u | (next_u32(&rng) >> 2)); /* [2^30, 2^31) */
    c->out_shift[i] = base_shift - (int32_t)(next_u32(&rng) & 1u);
  }
  /* The filter rows' sums, outside the measured region (TFLite Micro's Prepare does the same). */
  if (c->kernel_sums != NULL) {
    for (uint64_t r = 0; r < s.sums; ++r) {
      const int8_t* row = c->filter + r * s.depth;
      int32_t sum = 0;
      for (uint32_t k = 0; k < s.depth; ++k) sum += row[k];
      c->kernel_sums[r] = sum;
    }
  }
  /* Fill the output so a kernel that skips values cannot match the reference by luck. */
  for (uint64_t i = 0; i < s.output; ++i) c->output[i] = (int8_t)0x5A;
  return MCULAB_CASE_OK;
}

void mculab_case_invoke(mculab_case* c) {
  switch (c->op) {
    case MCULAB_OP_CONV2D_S8:
      mculab_conv2d_s8(c);
      break;
    case MCULAB_OP_FULLY_CONNECTED_S8:
      mculab_fully_connected_s8(c);
      break;
    case MCULAB_OP_DEPTHWISE_CONV2D_S8:
      mculab_depthwise_conv2d_s8(c);
      break;
    case MCULAB_OP_CALIBRATE:
      mculab_calibrate(c);
      break;
  }
}

uint32_t mculab_case_checksum(const mculab_case* c) {
  return mculab_crc32(0, (const uint8_t*)c->output, c->output_len);
}

const char* mculab_case_status_name(mculab_case_status s) {
  switch (s) {
    case MCULAB_CASE_OK:
      return "ok";
    case MCULAB_CASE_UNKNOWN_OP:
      return "unknown op";
    case MCULAB_CASE_BAD_PARAMS:
      return "bad parameters";
    case MCULAB_CASE_NO_MEMORY:
      return "tensors do not fit the arena";
  }
  return "unknown case status";
}
