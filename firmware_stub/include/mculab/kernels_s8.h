/* The int8 kernels with TFLite's reference semantics (tensorflow/lite/kernels/internal/
 * reference/integer_ops/), over explicit shapes and quantization parameters: what the built-in
 * operator benchmarks (ops.h) and the TFLite interpreter (tflite.h) both call.
 *
 * Layouts are TFLite's: activations NHWC, conv filters [out_c][kh][kw][in_c], depthwise filters
 * [1][kh][kw][out_c], fully connected filters [out][in]. Filter zero points are 0 (TFLite's int8
 * quantization spec). Contracts the caller keeps (the interpreter checks them when it prepares a
 * model): every size >= 1, the output sizes follow from the input, the filter, the strides and
 * the padding, an accumulation depth (kh * kw * in_c, or the fully connected depth) of at most
 * 65536 so that the sum of products cannot overflow int32, and requantization shifts <= 0. A
 * bias is added with wrap-around, so no model can make the arithmetic undefined.
 *
 * Kernel sets: each entry point below runs the variant of the selected set (mculab_kernels_select):
 * the fastest the build has by default (Helium on a Cortex-M55 build, the DSP extension's SIMD on
 * a Cortex-M7 build, else the reference), or the reference C. Every variant gives the reference's
 * outputs bit for bit; the reference stays callable by name (the _ref functions).
 *
 * Thread-safety: none needed; the kernels only read their inputs and write their output, and the
 * fast conv variants use a static scratch buffer (MCULAB_KERNEL_SCRATCH_BYTES): one caller at a
 * time, as on a single-threaded runner. The selected set is a global. */
#ifndef MCULAB_KERNELS_S8_H_
#define MCULAB_KERNELS_S8_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCULAB_KERNEL_MAX_DEPTH 65536

/* The kernel sets. */
typedef enum {
  MCULAB_KERNELS_REFERENCE = 0, /* the portable reference C below (_ref) */
  MCULAB_KERNELS_FAST = 1,      /* the fastest bit-exact set of this build (the default) */
} mculab_kernel_set;

/* Selects the set the entry points run; returns the name of the set now in effect. */
const char* mculab_kernels_select(mculab_kernel_set set);
/* "reference", "helium" or "dsp": the set the entry points run now. */
const char* mculab_kernels_name(void);
/* The name of this build's fast set ("reference" where the build has no other). */
const char* mculab_kernels_fast_name(void);

/* Static scratch of the fast conv variants (im2col rows, widened inputs): reported by the runner
 * as the kernels' scratch memory. */
#define MCULAB_KERNEL_SCRATCH_BYTES 8192u

/* CONV_2D and DEPTHWISE_CONV_2D (reference_integer_ops::ConvPerChannel,
 * DepthwiseConvPerChannel). pad_h/pad_w are the top/left padding; a SAME padding's extra row or
 * column at the bottom/right follows from out_h/out_w. */
typedef struct {
  int32_t batches, in_h, in_w, in_c;
  int32_t out_h, out_w, out_c;
  int32_t filter_h, filter_w;
  int32_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
  int32_t depth_multiplier; /* depthwise only: out_c == in_c * depth_multiplier */
  int32_t input_offset;     /* -input zero point */
  int32_t output_offset;    /* output zero point */
  int32_t act_min, act_max;
  const int32_t* out_multiplier; /* per output channel */
  const int32_t* out_shift;      /* per output channel, <= 0 */
} mculab_conv_s8_params;

void mculab_conv2d_s8_nhwc(const mculab_conv_s8_params* p, const int8_t* input,
                           const int8_t* filter, const int32_t* bias /* NULL: none */,
                           int8_t* output);
void mculab_depthwise_conv2d_s8_nhwc(const mculab_conv_s8_params* p, const int8_t* input,
                                     const int8_t* filter, const int32_t* bias /* NULL: none */,
                                     int8_t* output);
void mculab_conv2d_s8_nhwc_ref(const mculab_conv_s8_params* p, const int8_t* input,
                               const int8_t* filter, const int32_t* bias, int8_t* output);
void mculab_depthwise_conv2d_s8_nhwc_ref(const mculab_conv_s8_params* p, const int8_t* input,
                                         const int8_t* filter, const int32_t* bias, int8_t* output);

/* FULLY_CONNECTED (reference_integer_ops::FullyConnected): input [batches][depth], filter
 * [out_c][depth], per-tensor requantization. */
typedef struct {
  int32_t batches, depth, out_c;
  int32_t input_offset, output_offset;
  int32_t out_multiplier, out_shift;
  int32_t act_min, act_max;
  /* NULL (zero-initialise the struct), or [out_c] sums of each filter row, filled by
   * mculab_fully_connected_s8_prepare for the filter the kernel is then called with: the Helium
   * kernel then skips summing the filter (TFLite Micro computes them at Prepare likewise). */
  const int32_t* kernel_sums;
} mculab_fc_s8_params;

void mculab_fully_connected_s8_run(const mculab_fc_s8_params* p, const int8_t* input,
                                   const int8_t* filter, const int32_t* bias /* NULL: none */,
                                   int8_t* output);
void mculab_fully_connected_s8_run_ref(const mculab_fc_s8_params* p, const int8_t* input,
                                       const int8_t* filter, const int32_t* bias, int8_t* output);
/* Optional, outside the timed region: sums[oc] = sum of filter row oc (out_c values), and
 * p->kernel_sums = sums. */
void mculab_fully_connected_s8_prepare(mculab_fc_s8_params* p, const int8_t* filter, int32_t* sums);

/* The Helium (MVE) set (kernels/helium_s8.c), defined only in Cortex-M55 builds, and the DSP set
 * (kernels/dsp_s8.c), only in builds with the DSP extension and without MVE. */
void mculab_conv2d_s8_nhwc_mve(const mculab_conv_s8_params* p, const int8_t* input,
                               const int8_t* filter, const int32_t* bias, int8_t* output);
void mculab_depthwise_conv2d_s8_nhwc_mve(const mculab_conv_s8_params* p, const int8_t* input,
                                         const int8_t* filter, const int32_t* bias, int8_t* output);
void mculab_fully_connected_s8_run_mve(const mculab_fc_s8_params* p, const int8_t* input,
                                       const int8_t* filter, const int32_t* bias, int8_t* output);
void mculab_conv2d_s8_nhwc_dsp(const mculab_conv_s8_params* p, const int8_t* input,
                               const int8_t* filter, const int32_t* bias, int8_t* output);
void mculab_depthwise_conv2d_s8_nhwc_dsp(const mculab_conv_s8_params* p, const int8_t* input,
                                         const int8_t* filter, const int32_t* bias, int8_t* output);
void mculab_fully_connected_s8_run_dsp(const mculab_fc_s8_params* p, const int8_t* input,
                                       const int8_t* filter, const int32_t* bias, int8_t* output);

/* Matrix times vector with int8 weights: the building block of the operators whose products are
 * not an int8 conv or fully connected (16x8 CONV_2D, TRANSPOSE_CONV, SVDF, the LSTM's gates).
 * For r < rows:
 *   acc[r] += sum over k < depth of w[r * w_stride + k] * (x[k] + x_offset)
 * The rows of w are `depth` int8 values, `w_stride` apart (a row of a larger matrix, or one tap of
 * a [out][kh][kw][in] filter: w_stride = kh * kw * in). rows >= 0, depth >= 0.
 *   _s8s8_s32: an int8 vector, int32 accumulators that wrap modulo 2^32 (TFLite's int32 sums on
 *     the target); x[k] + x_offset must fit int16 (a zero point's negation always does).
 *   _s8s16_s64: an int16 vector (16x8 activations have zero point 0), int64 accumulators
 *     (TFLite's 16x8 accumulator): exact, no wrap for any depth a model can have.
 * acc must not overlap w or x. The fast variants reorder the sums, which the integer arithmetic
 * makes bit-exact; the DSP ones widen x into the static scratch first. */
void mculab_mat_vec_s8s8_s32(const int8_t* w, int32_t w_stride, const int8_t* x, int32_t x_offset,
                             int32_t rows, int32_t depth, int32_t* acc);
void mculab_mat_vec_s8s16_s64(const int8_t* w, int32_t w_stride, const int16_t* x, int32_t rows,
                              int32_t depth, int64_t* acc);
void mculab_mat_vec_s8s8_s32_ref(const int8_t* w, int32_t w_stride, const int8_t* x,
                                 int32_t x_offset, int32_t rows, int32_t depth, int32_t* acc);
void mculab_mat_vec_s8s16_s64_ref(const int8_t* w, int32_t w_stride, const int16_t* x, int32_t rows,
                                  int32_t depth, int64_t* acc);
void mculab_mat_vec_s8s8_s32_mve(const int8_t* w, int32_t w_stride, const int8_t* x,
                                 int32_t x_offset, int32_t rows, int32_t depth, int32_t* acc);
void mculab_mat_vec_s8s16_s64_mve(const int8_t* w, int32_t w_stride, const int16_t* x, int32_t rows,
                                  int32_t depth, int64_t* acc);
void mculab_mat_vec_s8s8_s32_dsp(const int8_t* w, int32_t w_stride, const int8_t* x,
                                 int32_t x_offset, int32_t rows, int32_t depth, int32_t* acc);
void mculab_mat_vec_s8s16_s64_dsp(const int8_t* w, int32_t w_stride, const int16_t* x, int32_t rows,
                                  int32_t depth, int64_t* acc);

/* AVERAGE_POOL_2D and MAX_POOL_2D (reference_integer_ops::AveragePool, MaxPool); input and output
 * share their quantization. */
typedef struct {
  int32_t batches, in_h, in_w, channels, out_h, out_w;
  int32_t filter_h, filter_w, stride_h, stride_w, pad_h, pad_w;
  int32_t act_min, act_max;
} mculab_pool_s8_params;

/* Returns 0 when a window holds no input value (TFLite fails the op then), else 1. */
int mculab_average_pool_s8(const mculab_pool_s8_params* p, const int8_t* input, int8_t* output);
void mculab_max_pool_s8(const mculab_pool_s8_params* p, const int8_t* input, int8_t* output);
int mculab_average_pool_s8_ref(const mculab_pool_s8_params* p, const int8_t* input, int8_t* output);
void mculab_max_pool_s8_ref(const mculab_pool_s8_params* p, const int8_t* input, int8_t* output);

/* ADD of two tensors of one shape (reference_integer_ops::AddElementwise). */
typedef struct {
  int32_t input1_offset, input2_offset, output_offset, left_shift;
  int32_t input1_multiplier, input1_shift, input2_multiplier, input2_shift;
  int32_t output_multiplier, output_shift;
  int32_t act_min, act_max;
} mculab_add_s8_params;

void mculab_add_s8(const mculab_add_s8_params* p, const int8_t* input1, const int8_t* input2,
                   int8_t* output, uint32_t n);
void mculab_add_s8_ref(const mculab_add_s8_params* p, const int8_t* input1, const int8_t* input2,
                       int8_t* output, uint32_t n);
/* The pooling and add of the Helium and DSP sets (defined as the conv ones are). */
int mculab_average_pool_s8_mve(const mculab_pool_s8_params* p, const int8_t* input, int8_t* output);
void mculab_max_pool_s8_mve(const mculab_pool_s8_params* p, const int8_t* input, int8_t* output);
void mculab_add_s8_mve(const mculab_add_s8_params* p, const int8_t* input1, const int8_t* input2,
                       int8_t* output, uint32_t n);
int mculab_average_pool_s8_dsp(const mculab_pool_s8_params* p, const int8_t* input, int8_t* output);
void mculab_max_pool_s8_dsp(const mculab_pool_s8_params* p, const int8_t* input, int8_t* output);
void mculab_add_s8_dsp(const mculab_add_s8_params* p, const int8_t* input1, const int8_t* input2,
                       int8_t* output, uint32_t n);

/* SOFTMAX over the last dimension, int8 in, int8 out with zero point -128 and scale 1/256
 * (reference_ops::Softmax: gemmlowp's fixed-point exp and reciprocal). */
typedef struct {
  int32_t input_multiplier, input_left_shift, diff_min;
} mculab_softmax_s8_params;

#define MCULAB_SOFTMAX_MAX_DEPTH 4095 /* the sum of exps stays within int32 */
void mculab_softmax_s8(const mculab_softmax_s8_params* p, const int8_t* input, int8_t* output,
                       uint32_t outer, uint32_t depth);

/* TFLite's QuantizeMultiplier (quantization_util.cc): m = multiplier * 2^shift / 2^31, with
 * multiplier in [2^30, 2^31) or 0. Double arithmetic, no libm. */
void mculab_quantize_multiplier(double m, int32_t* multiplier, int* shift);
/* TFLite's PreprocessSoftmaxScaling + CalculateInputRadius for int8 input with `beta` and
 * `input_scale`. Returns 0 when the scaling is out of the range TFLite accepts. */
int mculab_softmax_s8_prepare(double beta, double input_scale, mculab_softmax_s8_params* p);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_KERNELS_S8_H_ */
