/* The built-in int8 operator benchmarks: ids and parameter order, shared by the runner, the agent
 * (reference checksums) and the CSV matcher (common/op_catalog.h adds names and synonyms).
 *
 * Tensor data are not shipped: each case generates its input, weights, bias and requantization
 * parameters from the workload's seed with a fixed integer generator, so the runner on the board
 * and the reference on the agent's host compute the same output bit for bit. */
#ifndef MCULAB_OPS_H_
#define MCULAB_OPS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  MCULAB_OP_CONV2D_S8 = 1,
  MCULAB_OP_FULLY_CONNECTED_S8 = 2,
  MCULAB_OP_DEPTHWISE_CONV2D_S8 = 3,
  /* Lab-internal: a loop of known length and instruction mix (kernels/calibrate.c), for health
   * checks and to check counters against an independent count. Not an operator benchmark. */
  MCULAB_OP_CALIBRATE = 100,
  /* A custom workload: case ids and a blob for a runner with its own runtime (workload.h). */
  MCULAB_OP_CUSTOM = 0xFFFF,
} mculab_op_id;

/* conv2d_s8 parameters, in order (NHWC input, [K][kh][kw][C] filter, TFLite reference semantics,
 * per-channel requantization, zero padding of pad_h/pad_w on each side) */
enum {
  MCULAB_CONV_N,
  MCULAB_CONV_C,
  MCULAB_CONV_H,
  MCULAB_CONV_W,
  MCULAB_CONV_K,
  MCULAB_CONV_KH,
  MCULAB_CONV_KW,
  MCULAB_CONV_PAD_H,
  MCULAB_CONV_PAD_W,
  MCULAB_CONV_STRIDE_H,
  MCULAB_CONV_STRIDE_W,
  MCULAB_CONV_NUM_PARAMS
};

/* depthwise_conv2d_s8 parameters, in order (NHWC input, [1][kh][kw][C * depth_multiplier]
 * filter, TFLite reference semantics, per-channel requantization, zero padding of pad_h/pad_w on
 * each side, dilations) */
enum {
  MCULAB_DW_N,
  MCULAB_DW_C,
  MCULAB_DW_H,
  MCULAB_DW_W,
  MCULAB_DW_DEPTH_MULTIPLIER,
  MCULAB_DW_KH,
  MCULAB_DW_KW,
  MCULAB_DW_PAD_H,
  MCULAB_DW_PAD_W,
  MCULAB_DW_STRIDE_H,
  MCULAB_DW_STRIDE_W,
  MCULAB_DW_DILATION_H,
  MCULAB_DW_DILATION_W,
  MCULAB_DW_NUM_PARAMS
};

/* fully_connected_s8 parameters, in order: batches, input features, output features */
enum { MCULAB_FC_N, MCULAB_FC_IN, MCULAB_FC_OUT, MCULAB_FC_NUM_PARAMS };

/* calibrate parameters: which loop, and how many times it runs. Per pass of the loop, on
 * Cortex-M55 (on other targets the same output comes from plain C and the mix is the compiler's):
 *   kind      instructions  loads (accesses)  stores (accesses)  branches  MVE instructions
 *   0 alu     2             0                 0                  1         0
 *   1 ldst    4             1                 1                  1         0
 *   2 mve     6             12 (4 + 8 elems)  4                  1         4
 *   3 mve_tp  5             3 (3 lanes)       0                  1         3
 *   4 ldm     4             2                 2                  1         0
 * (loads/stores as memory accesses, one per element or register transferred.) */
enum { MCULAB_CAL_KIND, MCULAB_CAL_LOOPS, MCULAB_CAL_NUM_PARAMS };
enum {
  MCULAB_CAL_ALU = 0,
  MCULAB_CAL_LDST = 1,
  MCULAB_CAL_MVE = 2,
  MCULAB_CAL_MVE_TP = 3,
  MCULAB_CAL_LDM = 4,
  MCULAB_CAL_NUM_KINDS = 5
};
#define MCULAB_CAL_MAX_LOOPS (1 << 24)

#define MCULAB_MAX_PARAMS 16u

/* Largest value of any size parameter, and of the accumulation depth (kh * kw * C, or the FC
 * input size): 65536 * 127 * 136 plus the bias stays within int32, so the accumulator never
 * overflows. */
#define MCULAB_MAX_DIM 65535
#define MCULAB_MAX_DEPTH 65536

/* Parameter count of an op, or 0 for an unknown op. */
uint16_t mculab_op_param_count(uint16_t op);

/* One prepared case: tensors carved out of a caller-provided arena. */
typedef struct {
  uint16_t op;
  int32_t params[MCULAB_MAX_PARAMS];
  int8_t* input;
  int8_t* filter;
  int32_t* bias;
  int32_t* out_multiplier;
  int32_t* out_shift;
  int8_t* output;
  int32_t* kernel_sums; /* fully connected: each filter row's sum, filled at prepare; else NULL */
  uint32_t output_len;
  int32_t input_offset;
  int32_t output_offset;
  size_t arena_used;
} mculab_case;

typedef enum {
  MCULAB_CASE_OK = 0,
  MCULAB_CASE_UNKNOWN_OP = 1,
  /* sizes < 1 or > 65535, pads < 0, stride 0, kernel larger than the padded input, or an
   * accumulation depth (kh * kw * C, FC input size) over 65536, where int32 could overflow */
  MCULAB_CASE_BAD_PARAMS = 2,
  MCULAB_CASE_NO_MEMORY = 3, /* the arena is too small for the tensors */
} mculab_case_status;

/* Bytes of arena the case needs, counting the worst-case alignment of the arena's start (0 for
 * bad parameters or an unknown op; SIZE_MAX when it exceeds the address space). */
size_t mculab_case_arena_bytes(uint16_t op, const int32_t* params);

/* Lays the case's tensors out in `arena` (16-byte aligned) and fills them from `seed` with
 * xorshift32 seeded by CRC-32(seed, op, params): the same bytes on every platform. */
mculab_case_status mculab_case_prepare(uint16_t op, const int32_t* params, uint32_t seed,
                                       uint8_t* arena, size_t arena_len, mculab_case* c);

/* Runs the kernel once over the prepared tensors (the measured region). */
void mculab_case_invoke(mculab_case* c);

/* CRC-32 of the output tensor. */
uint32_t mculab_case_checksum(const mculab_case* c);

const char* mculab_case_status_name(mculab_case_status s);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_OPS_H_ */
