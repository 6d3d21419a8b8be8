/* mat_vec_s8: matrix times vector with int8 weights, the reference (mculab/kernels_s8.h): the sums
 * in TFLite's order, int32 ones wrapping as they do on the target (in unsigned arithmetic here,
 * so that the wrap is defined C). */
#include "mculab/kernels_s8.h"

void mculab_mat_vec_s8s8_s32_ref(const int8_t* w, int32_t w_stride, const int8_t* x,
                                 int32_t x_offset, int32_t rows, int32_t depth, int32_t* acc) {
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t* row = w + (int64_t)r * w_stride;
    uint32_t sum = (uint32_t)acc[r];
    for (int32_t k = 0; k < depth; ++k) sum += (uint32_t)(row[k] * (x[k] + x_offset));
    acc[r] = (int32_t)sum;
  }
}

void mculab_mat_vec_s8s16_s64_ref(const int8_t* w, int32_t w_stride, const int16_t* x, int32_t rows,
                                  int32_t depth, int64_t* acc) {
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t* row = w + (int64_t)r * w_stride;
    int64_t sum = acc[r];
    for (int32_t k = 0; k < depth; ++k) sum += (int64_t)row[k] * x[k];
    acc[r] = sum;
  }
}
