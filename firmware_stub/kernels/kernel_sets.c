/* The kernel table: the public entry points of mculab/kernels_s8.h run the selected set. The fast
 * set is fixed at build time by the target's features (ACLE's __ARM_FEATURE_MVE and
 * __ARM_FEATURE_DSP); the choice between it and the reference is a run-time switch, so a runner
 * can measure both from one image. */
#include "mculab/kernels_s8.h"

typedef struct {
  const char* name;
  void (*conv)(const mculab_conv_s8_params*, const int8_t*, const int8_t*, const int32_t*, int8_t*);
  void (*depthwise)(const mculab_conv_s8_params*, const int8_t*, const int8_t*, const int32_t*,
                    int8_t*);
  void (*fc)(const mculab_fc_s8_params*, const int8_t*, const int8_t*, const int32_t*, int8_t*);
  int (*average_pool)(const mculab_pool_s8_params*, const int8_t*, int8_t*);
  void (*max_pool)(const mculab_pool_s8_params*, const int8_t*, int8_t*);
  void (*add)(const mculab_add_s8_params*, const int8_t*, const int8_t*, int8_t*, uint32_t);
  void (*mat_vec_s8s8_s32)(const int8_t*, int32_t, const int8_t*, int32_t, int32_t, int32_t,
                           int32_t*);
  void (*mat_vec_s8s16_s64)(const int8_t*, int32_t, const int16_t*, int32_t, int32_t, int64_t*);
} kernel_set;

static const kernel_set kReference = {
    "reference",
    mculab_conv2d_s8_nhwc_ref,
    mculab_depthwise_conv2d_s8_nhwc_ref,
    mculab_fully_connected_s8_run_ref,
    mculab_average_pool_s8_ref,
    mculab_max_pool_s8_ref,
    mculab_add_s8_ref,
    mculab_mat_vec_s8s8_s32_ref,
    mculab_mat_vec_s8s16_s64_ref,
};

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
static const kernel_set kFast = {
    "helium",
    mculab_conv2d_s8_nhwc_mve,
    mculab_depthwise_conv2d_s8_nhwc_mve,
    mculab_fully_connected_s8_run_mve,
    mculab_average_pool_s8_mve,
    mculab_max_pool_s8_mve,
    mculab_add_s8_mve,
    mculab_mat_vec_s8s8_s32_mve,
    mculab_mat_vec_s8s16_s64_mve,
};
#elif defined(__ARM_FEATURE_DSP)
static const kernel_set kFast = {
    "dsp",
    mculab_conv2d_s8_nhwc_dsp,
    mculab_depthwise_conv2d_s8_nhwc_dsp,
    mculab_fully_connected_s8_run_dsp,
    mculab_average_pool_s8_dsp,
    mculab_max_pool_s8_dsp,
    mculab_add_s8_dsp,
    mculab_mat_vec_s8s8_s32_dsp,
    mculab_mat_vec_s8s16_s64_dsp,
};
#else
#define kFast kReference
#endif

static const kernel_set* current = &kFast;

const char* mculab_kernels_select(mculab_kernel_set set) {
  current = set == MCULAB_KERNELS_REFERENCE ? &kReference : &kFast;
  return current->name;
}

const char* mculab_kernels_name(void) { return current->name; }

const char* mculab_kernels_fast_name(void) { return kFast.name; }

void mculab_conv2d_s8_nhwc(const mculab_conv_s8_params* p, const int8_t* input,
                           const int8_t* filter, const int32_t* bias, int8_t* output) {
  current->conv(p, input, filter, bias, output);
}

void mculab_depthwise_conv2d_s8_nhwc(const mculab_conv_s8_params* p, const int8_t* input,
                                     const int8_t* filter, const int32_t* bias, int8_t* output) {
  current->depthwise(p, input, filter, bias, output);
}

void mculab_fully_connected_s8_run(const mculab_fc_s8_params* p, const int8_t* input,
                                   const int8_t* filter, const int32_t* bias, int8_t* output) {
  current->fc(p, input, filter, bias, output);
}

int mculab_average_pool_s8(const mculab_pool_s8_params* p, const int8_t* input, int8_t* output) {
  return current->average_pool(p, input, output);
}

void mculab_max_pool_s8(const mculab_pool_s8_params* p, const int8_t* input, int8_t* output) {
  current->max_pool(p, input, output);
}

void mculab_add_s8(const mculab_add_s8_params* p, const int8_t* input1, const int8_t* input2,
                   int8_t* output, uint32_t n) {
  current->add(p, input1, input2, output, n);
}

void mculab_mat_vec_s8s8_s32(const int8_t* w, int32_t w_stride, const int8_t* x, int32_t x_offset,
                             int32_t rows, int32_t depth, int32_t* acc) {
  current->mat_vec_s8s8_s32(w, w_stride, x, x_offset, rows, depth, acc);
}

void mculab_mat_vec_s8s16_s64(const int8_t* w, int32_t w_stride, const int16_t* x, int32_t rows,
                              int32_t depth, int64_t* acc) {
  current->mat_vec_s8s16_s64(w, w_stride, x, rows, depth, acc);
}
