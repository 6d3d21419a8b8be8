/* The kernel self-test: each kernel of mculab/kernels_s8.h run with the fast set (the entry points
 * after mculab_kernels_select(MCULAB_KERNELS_FAST)) and with the reference (the _ref functions) on
 * the same randomised tensors, outputs compared byte for byte. The shapes are drawn to reach every
 * path of the fast kernels: strides, top/left padding and a SAME padding's extra bottom/right row,
 * dilations, depth multipliers, channel counts on and off the vector widths, batches, activation
 * clamps, a null bias, 1x1 matrix products and im2col rows, fully connected with and without
 * precomputed kernel sums, matrix-vector products with int8 and int16 vectors (depths off the
 * vector widths, row strides, offsets, extreme values, accumulators near their limits); then the
 * layer shapes bench/kernels.py measures.
 *
 * Output, on the port's link as text lines: "kernels-selftest: <set>", one "MISMATCH ..." line per
 * failing case, then "kernels-selftest: PASS <cases>" or "kernels-selftest: FAIL
 * <failures>/<cases>". The QEMU test (tests/unit/firmware/kernels_qemu_test.py) waits for the last
 * line. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mculab/kernels_s8.h"
#include "port.h"

#define MAX_IN 20000
#define MAX_FILTER 9000
#define MAX_OUT 10000
#define MAX_CH 256

static int8_t input[MAX_IN], input2[MAX_IN], filter[MAX_FILTER];
static int8_t out_fast[MAX_OUT], out_ref[MAX_OUT];
static int32_t bias[MAX_CH], mult[MAX_CH], shift[MAX_CH], sums[MAX_CH];
#define MAX_VEC 4500
static int16_t vec16[MAX_VEC];
static int32_t acc32_fast[MAX_CH], acc32_ref[MAX_CH];
static int64_t acc64_fast[MAX_CH], acc64_ref[MAX_CH];

static uint32_t rng = 0x2545F491u;
static uint32_t next_u32(void) {
  rng ^= rng << 13;
  rng ^= rng >> 17;
  rng ^= rng << 5;
  return rng;
}
static int32_t in_range(int32_t lo, int32_t hi) {
  return lo + (int32_t)(next_u32() % (uint32_t)(hi - lo + 1));
}
static int32_t pick(const int32_t* v, int n) { return v[next_u32() % (uint32_t)n]; }

static void put(const char* s) { mculab_port_write((const uint8_t*)s, strlen(s)); }
static void put_int(int32_t v) {
  char buf[12];
  int i = 11;
  uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
  buf[i] = 0;
  do {
    buf[--i] = (char)('0' + u % 10u);
    u /= 10u;
  } while (u != 0);
  if (v < 0) buf[--i] = '-';
  put(buf + i);
}

static uint32_t cases, failures;

static void fill(int8_t* v, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) v[i] = (int8_t)(next_u32() >> 24);
}

static void fill_filter(uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) filter[i] = (int8_t)in_range(-127, 127);
}

/* Per-channel requantization that keeps most outputs off the clamps for a given depth. */
static void fill_quant(int32_t channels, int32_t depth) {
  int base = 7;
  while ((1 << (2 * (base - 7))) < depth) ++base;
  for (int32_t c = 0; c < channels; ++c) {
    mult[c] = (int32_t)(0x40000000u | (next_u32() >> 2));
    shift[c] = -base + in_range(-1, 1);
    if (shift[c] > 0) shift[c] = 0;
    /* Now and then a left shift (a real multiplier above 1), where the sums stay small enough. */
    if (depth <= 64 && next_u32() % 16u == 0) shift[c] = 1;
    bias[c] = in_range(-(1 << 16), 1 << 16);
  }
  if (next_u32() % 8u == 0) mult[0] = 0x7FFFFFFF;
  if (next_u32() % 8u == 0) shift[channels - 1] = 0;
}

static void clamps(int32_t* lo, int32_t* hi) {
  *lo = -128;
  *hi = 127;
  if (next_u32() % 3u == 0) {
    *lo = in_range(-128, 0);
    *hi = in_range(*lo, 127);
  }
}

/* Byte for byte: n bytes of the fast set's output against the reference's. */
static void check_bytes(const char* what, const void* fast_out, const void* ref_out, uint32_t n,
                        const int32_t* shape, int shape_n) {
  const int8_t* fast = (const int8_t*)fast_out;
  const int8_t* ref = (const int8_t*)ref_out;
  ++cases;
  if (memcmp(fast, ref, n) == 0) return;
  ++failures;
  uint32_t at = 0;
  while (fast[at] == ref[at]) ++at;
  put("MISMATCH ");
  put(what);
  for (int i = 0; i < shape_n; ++i) {
    put(i == 0 ? " " : ",");
    put_int(shape[i]);
  }
  put(" at ");
  put_int((int32_t)at);
  put(": fast ");
  put_int(fast[at]);
  put(" reference ");
  put_int(ref[at]);
  put("\n");
}

static void check(const char* what, uint32_t n, const int32_t* shape, int shape_n) {
  check_bytes(what, out_fast, out_ref, n, shape, shape_n);
}

/* One conv or depthwise case; returns 0 when the shape does not fit the buffers. */
static int conv_case(int depthwise, const mculab_conv_s8_params* in_p, int null_bias) {
  mculab_conv_s8_params p = *in_p;
  const uint32_t in_n = (uint32_t)(p.batches * p.in_h * p.in_w * p.in_c);
  const uint32_t f_n = depthwise ? (uint32_t)(p.filter_h * p.filter_w * p.out_c)
                                 : (uint32_t)(p.out_c * p.filter_h * p.filter_w * p.in_c);
  const uint32_t out_n = (uint32_t)(p.batches * p.out_h * p.out_w * p.out_c);
  if (p.out_h < 1 || p.out_w < 1 || in_n > MAX_IN || f_n > MAX_FILTER || out_n > MAX_OUT ||
      p.out_c > MAX_CH) {
    return 0;
  }
  fill(input, in_n);
  fill_filter(f_n);
  fill_quant(p.out_c, depthwise ? p.filter_h * p.filter_w : p.filter_h * p.filter_w * p.in_c);
  p.out_multiplier = mult;
  p.out_shift = shift;
  const int32_t* b = null_bias ? NULL : bias;
  memset(out_fast, 0x5A, out_n);
  memset(out_ref, 0x3C, out_n);
  const int32_t shape[] = {p.batches,      p.in_h,       p.in_w,       p.in_c,
                           p.out_c,        p.filter_h,   p.filter_w,   p.stride_h,
                           p.stride_w,     p.pad_h,      p.pad_w,      p.out_h,
                           p.out_w,        p.dilation_h, p.dilation_w, p.depth_multiplier,
                           p.input_offset, p.act_min,    p.act_max,    null_bias};
  if (depthwise) {
    mculab_depthwise_conv2d_s8_nhwc(&p, input, filter, b, out_fast);
    mculab_depthwise_conv2d_s8_nhwc_ref(&p, input, filter, b, out_ref);
    check("depthwise", out_n, shape, 20);
  } else {
    mculab_conv2d_s8_nhwc(&p, input, filter, b, out_fast);
    mculab_conv2d_s8_nhwc_ref(&p, input, filter, b, out_ref);
    check("conv", out_n, shape, 20);
  }
  return 1;
}

static int32_t out_size(int32_t in, int32_t k, int32_t stride, int32_t dil, int32_t pad,
                        int32_t extra) {
  const int32_t eff = dil * (k - 1) + 1;
  const int32_t padded = in + 2 * pad + extra;
  return padded < eff ? 0 : (padded - eff) / stride + 1;
}

static void random_conv(int depthwise) {
  static const int32_t kChannels[] = {1, 2, 3, 4, 5, 7, 8, 12, 15, 16, 17, 20, 31, 32, 33, 64};
  mculab_conv_s8_params p;
  for (;;) {
    p.batches = in_range(1, 2);
    p.in_h = in_range(1, 10);
    p.in_w = in_range(1, 10);
    p.in_c = pick(kChannels, 16);
    p.depth_multiplier = depthwise ? in_range(1, 3) : 1;
    if (depthwise && next_u32() % 2u == 0) p.depth_multiplier = 1;
    p.out_c = depthwise ? p.in_c * p.depth_multiplier : pick(kChannels, 16);
    const int one_by_one = !depthwise && next_u32() % 3u == 0;
    p.filter_h = one_by_one ? 1 : in_range(1, 4);
    p.filter_w = one_by_one ? 1 : in_range(1, 4);
    if (depthwise && next_u32() % 2u == 0) p.filter_h = p.filter_w = 3;
    p.stride_h = in_range(1, 3);
    p.stride_w = in_range(1, 3);
    p.dilation_h = next_u32() % 4u == 0 ? 2 : 1;
    p.dilation_w = next_u32() % 4u == 0 ? 2 : 1;
    p.pad_h = one_by_one ? 0 : in_range(0, 2);
    p.pad_w = one_by_one ? 0 : in_range(0, 2);
    p.out_h = out_size(p.in_h, p.filter_h, p.stride_h, p.dilation_h, p.pad_h, in_range(0, 1));
    p.out_w = out_size(p.in_w, p.filter_w, p.stride_w, p.dilation_w, p.pad_w, in_range(0, 1));
    p.input_offset =
        next_u32() % 5u == 0 ? pick((const int32_t[]){-127, 128, 0}, 3) : in_range(-127, 128);
    p.output_offset = in_range(-128, 127);
    clamps(&p.act_min, &p.act_max);
    if (conv_case(depthwise, &p, next_u32() % 4u == 0)) return;
  }
}

static void fc_case(int32_t batches, int32_t depth, int32_t out_c, int with_sums, int null_bias) {
  mculab_fc_s8_params p;
  memset(&p, 0, sizeof p);
  p.batches = batches;
  p.depth = depth;
  p.out_c = out_c;
  p.input_offset = in_range(-127, 128);
  p.output_offset = in_range(-128, 127);
  clamps(&p.act_min, &p.act_max);
  fill(input, (uint32_t)(batches * depth));
  fill_filter((uint32_t)(out_c * depth));
  fill_quant(1, depth);
  p.out_multiplier = mult[0];
  p.out_shift = shift[0];
  if (with_sums) mculab_fully_connected_s8_prepare(&p, filter, sums);
  const uint32_t n = (uint32_t)(batches * out_c);
  memset(out_fast, 0x5A, n);
  memset(out_ref, 0x3C, n);
  const int32_t* b = null_bias ? NULL : bias;
  mculab_fully_connected_s8_run(&p, input, filter, b, out_fast);
  mculab_fully_connected_s8_run_ref(&p, input, filter, b, out_ref);
  const int32_t shape[] = {batches, depth, out_c, with_sums, null_bias, p.input_offset};
  check("fully_connected", n, shape, 6);
}

static void pool_and_add_case(void) {
  mculab_pool_s8_params p;
  p.batches = in_range(1, 2);
  p.in_h = in_range(1, 9);
  p.in_w = in_range(1, 9);
  p.channels = in_range(1, 33);
  p.filter_h = in_range(1, 3);
  p.filter_w = in_range(1, 3);
  p.stride_h = in_range(1, 2);
  p.stride_w = in_range(1, 2);
  p.pad_h = in_range(0, p.filter_h - 1);
  p.pad_w = in_range(0, p.filter_w - 1);
  p.out_h = out_size(p.in_h, p.filter_h, p.stride_h, 1, p.pad_h, 0);
  p.out_w = out_size(p.in_w, p.filter_w, p.stride_w, 1, p.pad_w, 0);
  clamps(&p.act_min, &p.act_max);
  if (p.out_h < 1 || p.out_w < 1) return;
  const uint32_t in_n = (uint32_t)(p.batches * p.in_h * p.in_w * p.channels);
  const uint32_t out_n = (uint32_t)(p.batches * p.out_h * p.out_w * p.channels);
  fill(input, in_n);
  const int32_t shape[] = {p.batches, p.in_h, p.in_w, p.channels, p.filter_h, p.filter_w};
  memset(out_fast, 0x5A, out_n);
  memset(out_ref, 0x3C, out_n);
  const int ok_fast = mculab_average_pool_s8(&p, input, out_fast);
  const int ok_ref = mculab_average_pool_s8_ref(&p, input, out_ref);
  if (ok_fast != ok_ref) out_fast[0] = (int8_t)~out_ref[0];
  check("average_pool", out_n, shape, 6);
  mculab_max_pool_s8(&p, input, out_fast);
  mculab_max_pool_s8_ref(&p, input, out_ref);
  check("max_pool", out_n, shape, 6);

  mculab_add_s8_params a;
  a.input1_offset = in_range(-127, 128);
  a.input2_offset = in_range(-127, 128);
  a.output_offset = in_range(-128, 127);
  a.left_shift = 20;
  a.input1_multiplier = (int32_t)(0x40000000u | (next_u32() >> 2));
  a.input2_multiplier = (int32_t)(0x40000000u | (next_u32() >> 2));
  a.input1_shift = in_range(-3, 0);
  a.input2_shift = in_range(-3, 0);
  a.output_multiplier = (int32_t)(0x40000000u | (next_u32() >> 2));
  a.output_shift = -20 + in_range(-1, 1);
  clamps(&a.act_min, &a.act_max);
  fill(input2, in_n);
  mculab_add_s8(&a, input, input2, out_fast, in_n);
  mculab_add_s8_ref(&a, input, input2, out_ref, in_n);
  const int32_t add_shape[] = {(int32_t)in_n};
  check("add", in_n, add_shape, 1);
}

/* The matrix-vector products, int8 and int16 vectors, on accumulators that already hold values
 * (the int32 ones near the ends of their range, to pin the wrap). `extreme`: every weight -128
 * and every input at one end of its range, the largest products there are. Depths reach past
 * the vector widths' multiples and past the DSP set's chunk of the scratch. */
static void mat_vec_case(int32_t rows, int32_t depth, int32_t w_stride, int32_t x_offset,
                         int extreme) {
  if (rows * w_stride > MAX_FILTER || depth > MAX_VEC || rows > MAX_CH) return;
  if (extreme) {
    memset(filter, 0x80, (size_t)(rows * w_stride));
    memset(input, next_u32() & 1u ? 0x80 : 0x7F, (size_t)depth);
    const int16_t v = next_u32() & 1u ? INT16_MIN : INT16_MAX;
    for (int32_t k = 0; k < depth; ++k) vec16[k] = v;
  } else {
    fill(filter, (uint32_t)(rows * w_stride));
    fill(input, (uint32_t)depth);
    for (int32_t k = 0; k < depth; ++k) vec16[k] = (int16_t)(next_u32() >> 16);
  }
  for (int32_t r = 0; r < rows; ++r) {
    acc32_fast[r] = acc32_ref[r] = (int32_t)next_u32();
    acc64_fast[r] = acc64_ref[r] = (int64_t)(int32_t)next_u32() * (int64_t)in_range(-4096, 4096);
  }
  const int32_t shape[] = {rows, depth, w_stride, x_offset, extreme};
  mculab_mat_vec_s8s8_s32(filter, w_stride, input, x_offset, rows, depth, acc32_fast);
  mculab_mat_vec_s8s8_s32_ref(filter, w_stride, input, x_offset, rows, depth, acc32_ref);
  check_bytes("mat_vec_s8s8_s32", acc32_fast, acc32_ref, 4u * (uint32_t)rows, shape, 5);
  mculab_mat_vec_s8s16_s64(filter, w_stride, vec16, rows, depth, acc64_fast);
  mculab_mat_vec_s8s16_s64_ref(filter, w_stride, vec16, rows, depth, acc64_ref);
  check_bytes("mat_vec_s8s16_s64", acc64_fast, acc64_ref, 8u * (uint32_t)rows, shape, 5);
}

static void random_mat_vec(void) {
  static const int32_t kDepths[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 100};
  const int32_t rows = next_u32() % 4u == 0 ? in_range(0, 9) : in_range(1, 70);
  const int32_t depth = next_u32() % 2u == 0 ? pick(kDepths, 17) : in_range(1, 300);
  const int32_t w_stride = depth + (next_u32() % 2u == 0 ? 0 : in_range(1, 37));
  const int32_t x_offset =
      next_u32() % 4u == 0 ? pick((const int32_t[]){-128, 128, 0}, 3) : in_range(-128, 128);
  mat_vec_case(rows, depth, w_stride, x_offset, next_u32() % 8u == 0);
}

/* The measured layer shapes (bench/kernels.py). */
static void layer_cases(void) {
  mculab_conv_s8_params p;
  /* conv 1x1 25x5x64 -> 64; depthwise 3x3 s1 25x5x64; conv 3x3 s2 48x48x8 -> 16;
   * conv 10x4 s2 49x10x1 -> 64 */
  const int32_t layers[4][12] = {
      /* depthwise, h, w, c, k, kh, kw, s, pad_h, pad_w, out_h, out_w */
      {0, 25, 5, 64, 64, 1, 1, 1, 0, 0, 25, 5},
      {1, 25, 5, 64, 64, 3, 3, 1, 1, 1, 25, 5},
      {0, 48, 48, 8, 16, 3, 3, 2, 1, 1, 24, 24},
      {0, 49, 10, 1, 64, 10, 4, 2, 5, 1, 25, 5},
  };
  for (int i = 0; i < 4; ++i) {
    const int32_t* l = layers[i];
    p.batches = 1;
    p.in_h = l[1];
    p.in_w = l[2];
    p.in_c = l[3];
    p.out_c = l[4];
    p.filter_h = l[5];
    p.filter_w = l[6];
    p.stride_h = p.stride_w = l[7];
    p.pad_h = l[8];
    p.pad_w = l[9];
    p.out_h = l[10];
    p.out_w = l[11];
    p.dilation_h = p.dilation_w = 1;
    p.depth_multiplier = 1;
    p.input_offset = in_range(-127, 128);
    p.output_offset = in_range(-128, 127);
    p.act_min = -128;
    p.act_max = 127;
    if (!conv_case(l[0], &p, 0)) {
      put("MISMATCH layer does not fit\n");
      ++failures;
    }
  }
  fc_case(1, 256, 128, 1, 0);
  fc_case(1, 256, 128, 0, 0);
  /* Past the DSP set's 4096-value chunk, with a tail; and the extremes there. */
  mat_vec_case(2, 4099, 4100, 128, 0);
  mat_vec_case(2, 4099, 4099, -128, 1);
  mat_vec_case(3, 2053, 2053, 128, 1);
}

int main(void) {
  mculab_port_info info;
  memset(&info, 0, sizeof info);
  mculab_port_init(&info);
  put("kernels-selftest: ");
  put(mculab_kernels_select(MCULAB_KERNELS_FAST));
  put("\n");
  layer_cases();
  for (int i = 0; i < 600; ++i) {
    random_conv(0);
    random_conv(1);
    fc_case(in_range(1, 3), in_range(1, 300), in_range(1, 40), (int)(next_u32() & 1u),
            next_u32() % 4u == 0);
    pool_and_add_case();
    random_mat_vec();
  }
  if (failures == 0) {
    put("kernels-selftest: PASS ");
    put_int((int32_t)cases);
  } else {
    put("kernels-selftest: FAIL ");
    put_int((int32_t)failures);
    put("/");
    put_int((int32_t)cases);
  }
  put("\n");
  mculab_port_exit(failures == 0 ? 0 : 1);
  return 0;
}
