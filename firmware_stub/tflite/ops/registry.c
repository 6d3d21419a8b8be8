/* The table of kernels: every operator the interpreter runs, one line each. */
#include <stddef.h>
#include <stdint.h>

#include "ops.h"

/* KERNEL(builtin code, kernel): mculab_tfl_kernel_<kernel> runs that BuiltinOperator. */
#define MCULAB_TFL_KERNELS(KERNEL)                        \
  KERNEL(MCULAB_TFL_ADD, add)                             \
  KERNEL(MCULAB_TFL_AVERAGE_POOL_2D, average_pool_2d)     \
  KERNEL(MCULAB_TFL_CONV_2D, conv_2d)                     \
  KERNEL(MCULAB_TFL_DEPTHWISE_CONV_2D, depthwise_conv_2d) \
  KERNEL(MCULAB_TFL_FULLY_CONNECTED, fully_connected)     \
  KERNEL(MCULAB_TFL_MAX_POOL_2D, max_pool_2d)             \
  KERNEL(MCULAB_TFL_RESHAPE, reshape)                     \
  KERNEL(MCULAB_TFL_SOFTMAX, softmax)                     \
  KERNEL(MCULAB_TFL_QUANTIZE, quantize)                   \
  KERNEL(MCULAB_TFL_DEQUANTIZE, dequantize)               \
  KERNEL(MCULAB_TFL_SUB, sub)                             \
  KERNEL(MCULAB_TFL_PAD, pad)                             \
  KERNEL(MCULAB_TFL_PADV2, padv2)                         \
  KERNEL(MCULAB_TFL_STRIDED_SLICE, strided_slice)         \
  KERNEL(MCULAB_TFL_LEAKY_RELU, leaky_relu)               \
  KERNEL(MCULAB_TFL_TRANSPOSE_CONV, transpose_conv)       \
  KERNEL(MCULAB_TFL_SVDF, svdf)                           \
  KERNEL(MCULAB_TFL_SQUEEZE, squeeze)                     \
  KERNEL(MCULAB_TFL_EXPAND_DIMS, expand_dims)             \
  KERNEL(MCULAB_TFL_TRANSPOSE, transpose)                 \
  KERNEL(MCULAB_TFL_CONCATENATION, concatenation)         \
  KERNEL(MCULAB_TFL_MUL, mul)                             \
  KERNEL(MCULAB_TFL_RELU, relu)                           \
  KERNEL(MCULAB_TFL_RELU6, relu6)                         \
  KERNEL(MCULAB_TFL_HARD_SWISH, hard_swish)               \
  KERNEL(MCULAB_TFL_SLICE, slice)                         \
  KERNEL(MCULAB_TFL_MEAN, mean)                           \
  KERNEL(MCULAB_TFL_LOGISTIC, logistic)                   \
  KERNEL(MCULAB_TFL_TANH, tanh)                           \
  KERNEL(MCULAB_TFL_UNIDIRECTIONAL_SEQUENCE_LSTM, unidirectional_sequence_lstm)

#define DECLARE(code, name) extern const mculab_tfl_kernel mculab_tfl_kernel_##name;
MCULAB_TFL_KERNELS(DECLARE)
#undef DECLARE

#define CODE(code, name) code,
static const int32_t kCodes[] = {MCULAB_TFL_KERNELS(CODE)};
#undef CODE
#define ENTRY(code, name) &mculab_tfl_kernel_##name,
static const mculab_tfl_kernel* const kKernels[] = {MCULAB_TFL_KERNELS(ENTRY)};
#undef ENTRY

#define NUM_KERNELS (sizeof kCodes / sizeof kCodes[0])

const mculab_tfl_kernel* mculab_tfl_find_kernel(int32_t builtin) {
  for (size_t k = 0; k < NUM_KERNELS; ++k) {
    if (kCodes[k] == builtin) return kKernels[k];
  }
  return NULL;
}

uint32_t mculab_tfl_supported_ops(const int32_t** codes) {
  if (codes != NULL) *codes = kCodes;
  return (uint32_t)NUM_KERNELS;
}

const char* mculab_tfl_op_name(int32_t code) {
  const mculab_tfl_kernel* k = mculab_tfl_find_kernel(code);
  return k != NULL ? k->name : "UNKNOWN";
}
