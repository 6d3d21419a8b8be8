// The int8 kernels the TFLite interpreter runs (mculab/kernels_s8.h) against naive versions
// written here with int64 arithmetic and TFLite's rounding stated directly, over random tensors:
// depthwise conv, conv with dilation, asymmetric padding and a fused activation range, fully
// connected without bias, average and max pooling with windows cut by the padding, add, and the
// matrix-vector products (int8 and int16 vectors). Also
// TFLite's QuantizeMultiplier and softmax scaling against their definitions in doubles.
#include "mculab/kernels_s8.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

class Rng {
 public:
  explicit Rng(uint32_t s) : x_(s) {}
  uint32_t Next() {
    x_ ^= x_ << 13;
    x_ ^= x_ >> 17;
    x_ ^= x_ << 5;
    return x_;
  }
  int32_t In(int32_t lo, int32_t hi) { return lo + static_cast<int32_t>(Next() % (hi - lo + 1)); }
  std::vector<int8_t> Int8(size_t n) {
    std::vector<int8_t> v(n);
    for (auto& x : v) x = static_cast<int8_t>(Next() >> 24);
    return v;
  }

 private:
  uint32_t x_;
};

// x * m / 2^31 rounded half up, then / 2^-shift rounded half away from zero (shift <= 0).
int64_t NaiveRequantize(int64_t acc, int64_t multiplier, int shift) {
  const int64_t high = (acc * multiplier + (int64_t{1} << 30)) >> 31;
  const int e = -shift;
  if (e == 0) return high;
  const int64_t half = int64_t{1} << (e - 1);
  const int64_t mag = ((high < 0 ? -high : high) + half) >> e;
  return high < 0 ? -mag : mag;
}

int8_t Clamp(int64_t v, int32_t lo, int32_t hi) {
  return static_cast<int8_t>(std::clamp<int64_t>(v, lo, hi));
}

struct Quant {
  std::vector<int32_t> mult, shift;
};

Quant RandomQuant(Rng& r, int n, int depth) {
  Quant q;
  const int base = -(7 + static_cast<int>(std::log2(depth) + 1) / 2);
  for (int i = 0; i < n; ++i) {
    q.mult.push_back(static_cast<int32_t>(0x40000000u | (r.Next() >> 2)));
    q.shift.push_back(base - static_cast<int>(r.Next() & 1u));
  }
  return q;
}

std::vector<int8_t> NaiveConv(const mculab_conv_s8_params& p, const std::vector<int8_t>& in,
                              const std::vector<int8_t>& f, const std::vector<int32_t>* bias,
                              bool depthwise) {
  std::vector<int8_t> out;
  for (int b = 0; b < p.batches; ++b)
    for (int y = 0; y < p.out_h; ++y)
      for (int x = 0; x < p.out_w; ++x)
        for (int oc = 0; oc < p.out_c; ++oc) {
          int64_t acc = 0;
          for (int fy = 0; fy < p.filter_h; ++fy)
            for (int fx = 0; fx < p.filter_w; ++fx) {
              const int iy = y * p.stride_h - p.pad_h + fy * p.dilation_h;
              const int ix = x * p.stride_w - p.pad_w + fx * p.dilation_w;
              if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) continue;
              if (depthwise) {
                const int ic = oc / p.depth_multiplier;
                acc += int64_t{f[(fy * p.filter_w + fx) * p.out_c + oc]} *
                       (in[((b * p.in_h + iy) * p.in_w + ix) * p.in_c + ic] + p.input_offset);
              } else {
                for (int ic = 0; ic < p.in_c; ++ic)
                  acc += int64_t{f[((oc * p.filter_h + fy) * p.filter_w + fx) * p.in_c + ic]} *
                         (in[((b * p.in_h + iy) * p.in_w + ix) * p.in_c + ic] + p.input_offset);
              }
            }
          if (bias != nullptr) acc += (*bias)[oc];
          out.push_back(
              Clamp(NaiveRequantize(acc, p.out_multiplier[oc], p.out_shift[oc]) + p.output_offset,
                    p.act_min, p.act_max));
        }
  return out;
}

// Returns whether the random shape was valid (and so checked).
bool CheckConv(uint32_t seed, bool depthwise) {
  Rng r(seed);
  mculab_conv_s8_params p{};
  p.batches = r.In(1, 2);
  p.in_h = r.In(3, 9);
  p.in_w = r.In(3, 9);
  p.in_c = r.In(1, 6);
  p.depth_multiplier = depthwise ? r.In(1, 3) : 1;
  p.out_c = depthwise ? p.in_c * p.depth_multiplier : r.In(1, 7);
  p.filter_h = r.In(1, 3);
  p.filter_w = r.In(1, 3);
  p.stride_h = r.In(1, 2);
  p.stride_w = r.In(1, 2);
  p.dilation_h = r.In(1, 2);
  p.dilation_w = r.In(1, 2);
  p.pad_h = r.In(0, 1);
  p.pad_w = r.In(0, 1);
  // One more row/column of padding at the bottom/right than at the top/left (SAME, odd total).
  p.out_h = (p.in_h + 2 * p.pad_h + 1 - ((p.filter_h - 1) * p.dilation_h + 1)) / p.stride_h + 1;
  p.out_w = (p.in_w + 2 * p.pad_w + 1 - ((p.filter_w - 1) * p.dilation_w + 1)) / p.stride_w + 1;
  if (p.out_h < 1 || p.out_w < 1) return false;
  p.input_offset = r.In(-8, 8);
  p.output_offset = r.In(-8, 8);
  p.act_min = r.In(-128, -20);
  p.act_max = r.In(20, 127);
  const int depth = p.filter_h * p.filter_w * (depthwise ? 1 : p.in_c);
  const Quant q = RandomQuant(r, p.out_c, depth);
  p.out_multiplier = q.mult.data();
  p.out_shift = q.shift.data();
  const auto in = r.Int8(static_cast<size_t>(p.batches) * p.in_h * p.in_w * p.in_c);
  const auto f =
      r.Int8(static_cast<size_t>(p.out_c) * p.filter_h * p.filter_w * (depthwise ? 1 : p.in_c));
  std::vector<int32_t> bias(p.out_c);
  for (auto& b : bias) b = r.In(-3000, 3000);
  const bool with_bias = (seed & 1u) != 0;
  std::vector<int8_t> got(static_cast<size_t>(p.batches) * p.out_h * p.out_w * p.out_c, 0x5A);
  if (depthwise) {
    mculab_depthwise_conv2d_s8_nhwc(&p, in.data(), f.data(), with_bias ? bias.data() : nullptr,
                                    got.data());
  } else {
    mculab_conv2d_s8_nhwc(&p, in.data(), f.data(), with_bias ? bias.data() : nullptr, got.data());
  }
  EXPECT_EQ(got, NaiveConv(p, in, f, with_bias ? &bias : nullptr, depthwise)) << "seed " << seed;
  return true;
}

TEST(KernelsS8, DepthwiseConvMatchesNaiveOverRandomShapes) {
  int checked = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) checked += CheckConv(seed * 2654435761u, true);
  EXPECT_GT(checked, 150);
}

TEST(KernelsS8, ConvWithDilationPaddingAndActivationMatchesNaive) {
  int checked = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) checked += CheckConv(seed * 2246822519u, false);
  EXPECT_GT(checked, 150);
}

TEST(KernelsS8, FullyConnectedWithoutBiasMatchesNaive) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    Rng r(seed * 3266489917u);
    mculab_fc_s8_params p{};
    p.batches = r.In(1, 3);
    p.depth = r.In(1, 300);
    p.out_c = r.In(1, 20);
    p.input_offset = r.In(-8, 8);
    p.output_offset = r.In(-8, 8);
    p.act_min = -128;
    p.act_max = r.In(0, 127);
    const Quant q = RandomQuant(r, 1, p.depth);
    p.out_multiplier = q.mult[0];
    p.out_shift = q.shift[0];
    const auto in = r.Int8(static_cast<size_t>(p.batches) * p.depth);
    const auto f = r.Int8(static_cast<size_t>(p.out_c) * p.depth);
    std::vector<int8_t> got(static_cast<size_t>(p.batches) * p.out_c);
    mculab_fully_connected_s8_run(&p, in.data(), f.data(), nullptr, got.data());
    // The same with the kernel sums prepared (the fast sets read them; the reference ignores them).
    std::vector<int32_t> sums(p.out_c);
    mculab_fc_s8_params prepared = p;
    mculab_fully_connected_s8_prepare(&prepared, f.data(), sums.data());
    EXPECT_EQ(prepared.kernel_sums, sums.data());
    std::vector<int8_t> got_prepared(got.size());
    mculab_fully_connected_s8_run(&prepared, in.data(), f.data(), nullptr, got_prepared.data());
    EXPECT_EQ(got_prepared, got) << seed;
    std::vector<int8_t> want;
    for (int b = 0; b < p.batches; ++b)
      for (int o = 0; o < p.out_c; ++o) {
        int64_t acc = 0;
        for (int d = 0; d < p.depth; ++d)
          acc += int64_t{f[o * p.depth + d]} * (in[b * p.depth + d] + p.input_offset);
        want.push_back(Clamp(NaiveRequantize(acc, p.out_multiplier, p.out_shift) + p.output_offset,
                             p.act_min, p.act_max));
      }
    EXPECT_EQ(got, want) << seed;
  }
}

TEST(KernelsS8, PoolingMatchesNaiveWithWindowsCutByPadding) {
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    Rng r(seed * 668265263u);
    mculab_pool_s8_params p{};
    p.batches = r.In(1, 2);
    p.in_h = r.In(1, 8);
    p.in_w = r.In(1, 8);
    p.channels = r.In(1, 5);
    p.filter_h = r.In(1, 3);
    p.filter_w = r.In(1, 3);
    p.stride_h = r.In(1, 2);
    p.stride_w = r.In(1, 2);
    p.pad_h = r.In(0, p.filter_h - 1);
    p.pad_w = r.In(0, p.filter_w - 1);
    p.out_h = (p.in_h + 2 * p.pad_h - p.filter_h) / p.stride_h + 1;
    p.out_w = (p.in_w + 2 * p.pad_w - p.filter_w) / p.stride_w + 1;
    if (p.out_h < 1 || p.out_w < 1) continue;
    p.act_min = r.In(-128, -60);
    p.act_max = r.In(60, 127);
    const auto in = r.Int8(static_cast<size_t>(p.batches) * p.in_h * p.in_w * p.channels);
    const size_t n = static_cast<size_t>(p.batches) * p.out_h * p.out_w * p.channels;
    std::vector<int8_t> avg(n), max(n), want_avg, want_max;
    ASSERT_EQ(mculab_average_pool_s8(&p, in.data(), avg.data()), 1);
    mculab_max_pool_s8(&p, in.data(), max.data());
    for (int b = 0; b < p.batches; ++b)
      for (int y = 0; y < p.out_h; ++y)
        for (int x = 0; x < p.out_w; ++x)
          for (int c = 0; c < p.channels; ++c) {
            int64_t sum = 0, count = 0, m = -128;
            for (int fy = 0; fy < p.filter_h; ++fy)
              for (int fx = 0; fx < p.filter_w; ++fx) {
                const int iy = y * p.stride_h - p.pad_h + fy, ix = x * p.stride_w - p.pad_w + fx;
                if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) continue;
                const int v = in[((b * p.in_h + iy) * p.in_w + ix) * p.channels + c];
                sum += v;
                ++count;
                m = std::max<int64_t>(m, v);
              }
            // Nearest, halves away from zero.
            const int64_t q = static_cast<int64_t>(std::round(static_cast<double>(sum) / count));
            want_avg.push_back(Clamp(q, p.act_min, p.act_max));
            want_max.push_back(Clamp(m, p.act_min, p.act_max));
          }
    EXPECT_EQ(avg, want_avg) << seed;
    EXPECT_EQ(max, want_max) << seed;
  }
}

TEST(KernelsS8, AddMatchesNaiveRescaling) {
  Rng r(99);
  for (int t = 0; t < 50; ++t) {
    mculab_add_s8_params p{};
    p.input1_offset = r.In(-20, 20);
    p.input2_offset = r.In(-20, 20);
    p.output_offset = r.In(-20, 20);
    p.left_shift = 20;
    p.input1_multiplier = static_cast<int32_t>(0x40000000u | (r.Next() >> 2));
    p.input2_multiplier = static_cast<int32_t>(0x40000000u | (r.Next() >> 2));
    p.input1_shift = -r.In(1, 3);
    p.input2_shift = -r.In(1, 3);
    p.output_multiplier = static_cast<int32_t>(0x40000000u | (r.Next() >> 2));
    p.output_shift = -r.In(17, 20);
    p.act_min = -128;
    p.act_max = 127;
    const auto a = r.Int8(64), b = r.Int8(64);
    std::vector<int8_t> got(64);
    mculab_add_s8(&p, a.data(), b.data(), got.data(), 64);
    for (int i = 0; i < 64; ++i) {
      const int64_t s1 = NaiveRequantize((int64_t{a[i]} + p.input1_offset) << 20,
                                         p.input1_multiplier, p.input1_shift);
      const int64_t s2 = NaiveRequantize((int64_t{b[i]} + p.input2_offset) << 20,
                                         p.input2_multiplier, p.input2_shift);
      const int64_t o = NaiveRequantize(s1 + s2, p.output_multiplier, p.output_shift);
      EXPECT_EQ(got[i], Clamp(o + p.output_offset, -128, 127)) << t << " " << i;
    }
  }
}

// The matrix-vector block: rows `w_stride` apart, the offset added to each input, the sums added
// to what the accumulators held; the int32 form wraps modulo 2^32 as TFLite's sums on the target.
TEST(KernelsS8, MatVecInt8AddsStridedRowsTimesOffsetInputsAndWraps) {
  Rng rng(41);
  for (int t = 0; t < 100; ++t) {
    const int32_t rows = rng.In(0, 9), depth = rng.In(0, 40);
    const int32_t stride = depth + rng.In(0, 5), offset = rng.In(-128, 128);
    const auto w = rng.Int8(static_cast<size_t>(rows * stride) + 1);
    const auto x = rng.Int8(static_cast<size_t>(depth) + 1);
    std::vector<int32_t> acc(static_cast<size_t>(rows) + 1);
    for (auto& a : acc) a = static_cast<int32_t>(rng.Next());
    std::vector<int32_t> want = acc;
    for (int32_t r = 0; r < rows; ++r) {
      int64_t sum = want[r];
      for (int32_t k = 0; k < depth; ++k) sum += int64_t{w[r * stride + k]} * (x[k] + offset);
      want[r] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(sum)));
    }
    mculab_mat_vec_s8s8_s32(w.data(), stride, x.data(), offset, rows, depth, acc.data());
    EXPECT_EQ(acc, want) << t;  // the element past the rows included: left alone
  }
  // Past INT32_MAX: 127 * 255 + (INT32_MAX - 100) wraps to a negative sum.
  const int8_t w[1] = {127}, x[1] = {127};
  int32_t acc = INT32_MAX - 100;
  mculab_mat_vec_s8s8_s32(w, 1, x, 128, 1, 1, &acc);
  EXPECT_EQ(acc, static_cast<int32_t>(static_cast<uint32_t>(INT32_MAX - 100) + 127u * 255u));
}

TEST(KernelsS8, MatVecInt16AccumulatesInt64WithoutWrapping) {
  Rng rng(43);
  for (int t = 0; t < 100; ++t) {
    const int32_t rows = rng.In(0, 9), depth = rng.In(0, 40), stride = depth + rng.In(0, 5);
    const auto w = rng.Int8(static_cast<size_t>(rows * stride));
    std::vector<int16_t> x(static_cast<size_t>(depth));
    for (auto& v : x) v = static_cast<int16_t>(rng.Next() >> 16);
    std::vector<int64_t> acc(static_cast<size_t>(rows));
    for (auto& a : acc) a = int64_t{static_cast<int32_t>(rng.Next())} << 16;
    std::vector<int64_t> want = acc;
    for (int32_t r = 0; r < rows; ++r) {
      for (int32_t k = 0; k < depth; ++k) want[r] += int64_t{w[r * stride + k]} * x[k];
    }
    mculab_mat_vec_s8s16_s64(w.data(), stride, x.data(), rows, depth, acc.data());
    EXPECT_EQ(acc, want) << t;
  }
  // -128 * -32768 over 70000 values: beyond int32, exact in int64.
  const std::vector<int8_t> w(70000, -128);
  const std::vector<int16_t> x(70000, INT16_MIN);
  int64_t acc = 0;
  mculab_mat_vec_s8s16_s64(w.data(), 70000, x.data(), 1, 70000, &acc);
  EXPECT_EQ(acc, int64_t{70000} * 128 * 32768);
}

TEST(KernelSets, TheHostsFastSetIsTheReferenceAndTheSelectionSticks) {
  // The Helium and DSP sets are checked on their boards (tests/kernels_selftest under QEMU).
  EXPECT_STREQ(mculab_kernels_fast_name(), "reference");
  EXPECT_STREQ(mculab_kernels_select(MCULAB_KERNELS_REFERENCE), "reference");
  EXPECT_STREQ(mculab_kernels_name(), "reference");
  EXPECT_STREQ(mculab_kernels_select(MCULAB_KERNELS_FAST), mculab_kernels_fast_name());
  EXPECT_STREQ(mculab_kernels_name(), mculab_kernels_fast_name());
}

TEST(KernelsS8, QuantizeMultiplierIsFrexpRounded) {
  Rng r(7);
  for (int i = 0; i < 2000; ++i) {
    const double m = std::ldexp(1.0 + (r.Next() % 1000000) / 1e6, r.In(-40, 10));
    int32_t q;
    int shift;
    mculab_quantize_multiplier(m, &q, &shift);
    int e;
    const double frac = std::frexp(m, &e);
    int64_t want = std::llround(frac * 2147483648.0);
    if (want == (int64_t{1} << 31)) {
      want /= 2;
      ++e;
    }
    if (e < -31) {
      want = 0;
      e = 0;
    }
    EXPECT_EQ(q, want) << m;
    EXPECT_EQ(shift, e) << m;
  }
  int32_t q;
  int shift;
  mculab_quantize_multiplier(0.0, &q, &shift);
  EXPECT_EQ(q, 0);
  mculab_quantize_multiplier(std::nan(""), &q, &shift);
  EXPECT_EQ(q, 0);
}

TEST(KernelsS8, SoftmaxScalingIsTflitesAndOutputsAreProbabilities) {
  mculab_softmax_s8_params p;
  ASSERT_EQ(mculab_softmax_s8_prepare(1.0, 0.1, &p), 1);
  // beta * scale * 2^26 = 6710886.4 = 0.8 * 2^23: multiplier round(0.8 * 2^31), left shift 23.
  EXPECT_EQ(p.input_multiplier, 1717986918);
  EXPECT_EQ(p.input_left_shift, 23);
  EXPECT_EQ(p.diff_min, -static_cast<int32_t>(std::floor(31.0 * (1 << 26) / (1 << 23))));
  // Equal inputs share the probability; the row adds up to ~1 (256 steps).
  const std::vector<int8_t> in(16, 5);
  std::vector<int8_t> out(16);
  mculab_softmax_s8(&p, in.data(), out.data(), 1, 16);
  for (int8_t v : out) EXPECT_EQ(v, 16 - 128);
  // One input far above the rest takes everything.
  std::vector<int8_t> peak(8, -100);
  peak[3] = 100;
  mculab_softmax_s8(&p, peak.data(), out.data(), 1, 8);
  EXPECT_EQ(out[3], 127);
  EXPECT_EQ(out[0], -128);
}

}  // namespace
