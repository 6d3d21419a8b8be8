// The int8 kernels against a naive implementation written here: int64 arithmetic with TFLite's
// rounding stated directly (round half up for the doubling high multiply, round half away from
// zero for the power-of-two division), over the same generated tensors.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>
#include <vector>

#include "common/reference.h"
#include "mculab/ops.h"

namespace {

using Params = std::array<int32_t, MCULAB_MAX_PARAMS>;

// x * m / 2^31, rounded half up (what gemmlowp's nudge-and-truncate amounts to), then
// / 2^-shift rounded half away from zero.
int32_t NaiveRequantize(int64_t acc, int64_t multiplier, int shift) {
  int64_t high = (acc * multiplier + (int64_t{1} << 30)) >> 31;  // floor((p + 2^30) / 2^31)
  if (shift > 0) high = ((acc << shift) * multiplier + (int64_t{1} << 30)) >> 31;
  const int e = shift < 0 ? -shift : 0;
  if (e == 0) return static_cast<int32_t>(high);
  const int64_t half = int64_t{1} << (e - 1);
  const int64_t mag = ((high < 0 ? -high : high) + half) >> e;
  return static_cast<int32_t>(high < 0 ? -mag : mag);
}

int8_t Clamp(int64_t v) { return static_cast<int8_t>(std::clamp<int64_t>(v, -128, 127)); }

std::vector<int8_t> NaiveConv(const mculab_case& c) {
  const int32_t* p = c.params;
  const int n = p[MCULAB_CONV_N], ch = p[MCULAB_CONV_C], h = p[MCULAB_CONV_H];
  const int w = p[MCULAB_CONV_W], k = p[MCULAB_CONV_K], kh = p[MCULAB_CONV_KH];
  const int kw = p[MCULAB_CONV_KW], ph = p[MCULAB_CONV_PAD_H], pw = p[MCULAB_CONV_PAD_W];
  const int sh = p[MCULAB_CONV_STRIDE_H], sw = p[MCULAB_CONV_STRIDE_W];
  const int oh = (h + 2 * ph - kh) / sh + 1, ow = (w + 2 * pw - kw) / sw + 1;
  // Explicitly zero-padded input (value = -input_offset so that in + offset == 0 there).
  const int hp = h + 2 * ph, wp = w + 2 * pw;
  std::vector<int64_t> padded(static_cast<size_t>(n) * hp * wp * ch, 0);
  for (int b = 0; b < n; ++b)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x)
        for (int i = 0; i < ch; ++i)
          padded[((static_cast<size_t>(b) * hp + y + ph) * wp + x + pw) * ch + i] =
              int64_t{c.input[((static_cast<size_t>(b) * h + y) * w + x) * ch + i]} +
              c.input_offset;
  std::vector<int8_t> out;
  for (int b = 0; b < n; ++b)
    for (int y = 0; y < oh; ++y)
      for (int x = 0; x < ow; ++x)
        for (int o = 0; o < k; ++o) {
          int64_t acc = c.bias[o];
          for (int fy = 0; fy < kh; ++fy)
            for (int fx = 0; fx < kw; ++fx)
              for (int i = 0; i < ch; ++i)
                acc +=
                    int64_t{c.filter[((static_cast<size_t>(o) * kh + fy) * kw + fx) * ch + i]} *
                    padded[((static_cast<size_t>(b) * hp + y * sh + fy) * wp + x * sw + fx) * ch +
                           i];
          out.push_back(Clamp(int64_t{NaiveRequantize(acc, c.out_multiplier[o], c.out_shift[o])} +
                              c.output_offset));
        }
  return out;
}

std::vector<int8_t> NaiveFc(const mculab_case& c) {
  const int n = c.params[MCULAB_FC_N], in = c.params[MCULAB_FC_IN], outc = c.params[MCULAB_FC_OUT];
  std::vector<int8_t> out;
  for (int b = 0; b < n; ++b)
    for (int o = 0; o < outc; ++o) {
      int64_t acc = c.bias[o];
      for (int d = 0; d < in; ++d)
        acc += int64_t{c.filter[static_cast<size_t>(o) * in + d]} *
               (int64_t{c.input[static_cast<size_t>(b) * in + d]} + c.input_offset);
      out.push_back(Clamp(int64_t{NaiveRequantize(acc, c.out_multiplier[0], c.out_shift[0])} +
                          c.output_offset));
    }
  return out;
}

// Depthwise: output channel o reads input channel o / depth_multiplier; dilated taps.
std::vector<int8_t> NaiveDepthwise(const mculab_case& c) {
  const int32_t* p = c.params;
  const int n = p[MCULAB_DW_N], ch = p[MCULAB_DW_C], h = p[MCULAB_DW_H], w = p[MCULAB_DW_W];
  const int dm = p[MCULAB_DW_DEPTH_MULTIPLIER], kh = p[MCULAB_DW_KH], kw = p[MCULAB_DW_KW];
  const int ph = p[MCULAB_DW_PAD_H], pw = p[MCULAB_DW_PAD_W];
  const int sh = p[MCULAB_DW_STRIDE_H], sw = p[MCULAB_DW_STRIDE_W];
  const int dh = p[MCULAB_DW_DILATION_H], dw = p[MCULAB_DW_DILATION_W];
  const int oh = (h + 2 * ph - (dh * (kh - 1) + 1)) / sh + 1;
  const int ow = (w + 2 * pw - (dw * (kw - 1) + 1)) / sw + 1;
  const int k = ch * dm;
  std::vector<int8_t> out;
  for (int b = 0; b < n; ++b)
    for (int y = 0; y < oh; ++y)
      for (int x = 0; x < ow; ++x)
        for (int o = 0; o < k; ++o) {
          int64_t acc = c.bias[o];
          for (int fy = 0; fy < kh; ++fy)
            for (int fx = 0; fx < kw; ++fx) {
              const int iy = y * sh - ph + fy * dh, ix = x * sw - pw + fx * dw;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              acc += int64_t{c.filter[(static_cast<size_t>(fy) * kw + fx) * k + o]} *
                     (int64_t{c.input[((static_cast<size_t>(b) * h + iy) * w + ix) * ch + o / dm]} +
                      c.input_offset);
            }
          out.push_back(Clamp(int64_t{NaiveRequantize(acc, c.out_multiplier[o], c.out_shift[o])} +
                              c.output_offset));
        }
  return out;
}

struct Prepared {
  std::vector<uint8_t> arena;
  mculab_case c;
};

Prepared Prepare(uint16_t op, Params p, uint32_t seed) {
  Prepared r;
  r.arena.resize(mculab_case_arena_bytes(op, p.data()));
  EXPECT_GT(r.arena.size(), 0u);
  EXPECT_EQ(mculab_case_prepare(op, p.data(), seed, r.arena.data(), r.arena.size(), &r.c),
            MCULAB_CASE_OK);
  return r;
}

// Most outputs land inside (-128, 127) and they take many values: the requantization scale is
// sensible, so a wrong kernel cannot hide behind saturated outputs.
void ExpectNotSaturated(const std::vector<int8_t>& out) {
  size_t saturated = 0;
  std::set<int> distinct;
  for (int8_t v : out) {
    if (v == -128 || v == 127) ++saturated;
    distinct.insert(v);
  }
  EXPECT_LT(saturated * 10, out.size()) << saturated << " of " << out.size() << " saturated";
  EXPECT_GE(distinct.size(), std::min<size_t>(out.size() / 2, 40));
}

struct ConvShape {
  const char* name;
  Params p;
};
void PrintTo(const ConvShape& s, std::ostream* os) { *os << s.name; }

class Conv2dS8 : public ::testing::TestWithParam<ConvShape> {};

TEST_P(Conv2dS8, MatchesNaiveImplementation) {
  for (uint32_t seed : {1u, 0xC0FFEEu}) {
    Prepared r = Prepare(MCULAB_OP_CONV2D_S8, GetParam().p, seed);
    mculab_case_invoke(&r.c);
    const std::vector<int8_t> got(r.c.output, r.c.output + r.c.output_len);
    const std::vector<int8_t> want = NaiveConv(r.c);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(got, want) << GetParam().name << " seed " << seed;
    ExpectNotSaturated(got);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Conv2dS8,
                         ::testing::Values(
                             //                  N  C   H   W   K kh kw ph pw sh sw
                             ConvShape{"3x3_pad1", {1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1}},
                             ConvShape{"1x1", {1, 16, 7, 5, 12, 1, 1, 0, 0, 1, 1}},
                             ConvShape{"stride2_nopad", {1, 3, 9, 9, 4, 3, 3, 0, 0, 2, 2}},
                             ConvShape{"stride2_pad1_even", {2, 4, 10, 8, 6, 3, 3, 1, 1, 2, 2}},
                             ConvShape{"asymmetric", {1, 5, 11, 7, 3, 5, 2, 2, 0, 1, 3}},
                             ConvShape{"pad_wider_than_kernel", {1, 2, 4, 4, 2, 3, 3, 3, 3, 1, 1}},
                             ConvShape{"single_channel", {1, 1, 12, 12, 1, 3, 3, 1, 1, 1, 1}},
                             ConvShape{"deep", {1, 64, 6, 6, 16, 3, 3, 1, 1, 1, 1}}),
                         [](const auto& info) { return std::string(info.param.name); });

class DepthwiseConv2dS8 : public ::testing::TestWithParam<ConvShape> {};

TEST_P(DepthwiseConv2dS8, MatchesNaiveImplementation) {
  for (uint32_t seed : {3u, 0xBEEFu}) {
    Prepared r = Prepare(MCULAB_OP_DEPTHWISE_CONV2D_S8, GetParam().p, seed);
    mculab_case_invoke(&r.c);
    const std::vector<int8_t> got(r.c.output, r.c.output + r.c.output_len);
    const std::vector<int8_t> want = NaiveDepthwise(r.c);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(got, want) << GetParam().name << " seed " << seed;
    ExpectNotSaturated(got);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DepthwiseConv2dS8,
    ::testing::Values(
        //                         N  C   H  W  dm kh kw ph pw sh sw dh dw
        ConvShape{"3x3_s1_pad1", {1, 64, 25, 5, 1, 3, 3, 1, 1, 1, 1, 1, 1}},
        ConvShape{"multiplier2_stride2", {2, 3, 9, 8, 2, 3, 3, 1, 1, 2, 2, 1, 1}},
        ConvShape{"dilated", {1, 5, 10, 9, 1, 3, 2, 2, 1, 1, 1, 2, 3}},
        ConvShape{"5x5_odd_channels", {1, 7, 8, 8, 3, 5, 5, 2, 2, 1, 2, 1, 1}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(CasePrepare, DepthwiseRejectsADilatedKernelLargerThanThePaddedInput) {
  //              N  C  H  W dm kh kw ph pw sh sw dh dw
  Params p = {1, 4, 5, 5, 1, 3, 3, 0, 0, 1, 1, 3, 1};
  EXPECT_EQ(mculab_case_arena_bytes(MCULAB_OP_DEPTHWISE_CONV2D_S8, p.data()), 0u);
  p[MCULAB_DW_PAD_H] = 1;  // 5 + 2 >= 3 * 2 + 1
  EXPECT_GT(mculab_case_arena_bytes(MCULAB_OP_DEPTHWISE_CONV2D_S8, p.data()), 0u);
  p[MCULAB_DW_DILATION_W] = 0;
  EXPECT_EQ(mculab_case_arena_bytes(MCULAB_OP_DEPTHWISE_CONV2D_S8, p.data()), 0u);
}

TEST(CasePrepare, FullyConnectedKernelSumsArePreparedOutsideTheKernel) {
  Prepared r = Prepare(MCULAB_OP_FULLY_CONNECTED_S8, Params{1, 37, 5}, 9);
  ASSERT_NE(r.c.kernel_sums, nullptr);
  for (int o = 0; o < 5; ++o) {
    int32_t sum = 0;
    for (int d = 0; d < 37; ++d) sum += r.c.filter[o * 37 + d];
    EXPECT_EQ(r.c.kernel_sums[o], sum) << o;
  }
  EXPECT_EQ(Prepare(MCULAB_OP_CONV2D_S8, Params{1, 1, 3, 3, 1, 1, 1, 0, 0, 1, 1}, 9).c.kernel_sums,
            nullptr);
}

class FullyConnectedS8 : public ::testing::TestWithParam<Params> {};

TEST_P(FullyConnectedS8, MatchesNaiveImplementation) {
  Prepared r = Prepare(MCULAB_OP_FULLY_CONNECTED_S8, GetParam(), 5);
  mculab_case_invoke(&r.c);
  const std::vector<int8_t> got(r.c.output, r.c.output + r.c.output_len);
  EXPECT_EQ(got, NaiveFc(r.c));
  ExpectNotSaturated(got);
}

INSTANTIATE_TEST_SUITE_P(Shapes, FullyConnectedS8,
                         ::testing::Values(Params{1, 64, 32}, Params{4, 7, 10}, Params{1, 1, 50},
                                           Params{2, 1000, 40}),
                         [](const auto& info) {
                           const Params& p = info.param;
                           return "N" + std::to_string(p[0]) + "_in" + std::to_string(p[1]) +
                                  "_out" + std::to_string(p[2]);
                         });

TEST(Requantize, AgreesWithNaiveRoundingOnEdgeValues) {
  // Through a 1x1 FC with bias as the accumulator: the kernel's helpers are private, so drive
  // them with chosen inputs via a prepared case whose tensors we overwrite.
  Prepared r = Prepare(MCULAB_OP_FULLY_CONNECTED_S8, Params{1, 1, 1}, 1);
  r.c.input[0] = 0;
  r.c.input_offset = 0;
  r.c.output_offset = 0;
  for (int32_t bias : {0, 1, -1, 255, 256, 257, -255, -256, -257, 384, -384, 100000, -100000}) {
    for (int shift : {-1, -8, -9, -15}) {
      for (int32_t mult : {1 << 30, (1 << 30) + 1, 0x7FFFFFFF, 1518500250}) {
        r.c.bias[0] = bias;
        r.c.out_multiplier[0] = mult;
        r.c.out_shift[0] = shift;
        mculab_case_invoke(&r.c);
        EXPECT_EQ(r.c.output[0], Clamp(NaiveRequantize(bias, mult, shift)))
            << "bias " << bias << " mult " << mult << " shift " << shift;
      }
    }
  }
}

TEST(CasePrepare, SameSeedSameTensorsOtherSeedOtherTensors) {
  const Params p{1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1};
  auto a = mculab::ReferenceChecksum(MCULAB_OP_CONV2D_S8, std::span(p).first(11), 1);
  auto b = mculab::ReferenceChecksum(MCULAB_OP_CONV2D_S8, std::span(p).first(11), 1);
  auto c = mculab::ReferenceChecksum(MCULAB_OP_CONV2D_S8, std::span(p).first(11), 2);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
}

TEST(CasePrepare, GeneratorIsPinned) {
  // The runner on a board and the agent's reference must agree across builds: a change of the
  // tensor generator or the kernels changes this value and must be deliberate.
  const Params p{1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1};
  auto sum = mculab::ReferenceChecksum(MCULAB_OP_CONV2D_S8, std::span(p).first(11), 1);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(*sum, 0xE79BAAE8u);
}

TEST(CasePrepare, RejectsBadParams) {
  auto bad = [](Params p) {
    mculab_case c;
    uint8_t arena[64];
    EXPECT_EQ(mculab_case_arena_bytes(MCULAB_OP_CONV2D_S8, p.data()), 0u);
    return mculab_case_prepare(MCULAB_OP_CONV2D_S8, p.data(), 1, arena, sizeof arena, &c);
  };
  EXPECT_EQ(bad({0, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1}), MCULAB_CASE_BAD_PARAMS);   // N = 0
  EXPECT_EQ(bad({1, 8, 16, 16, -8, 3, 3, 1, 1, 1, 1}), MCULAB_CASE_BAD_PARAMS);  // K < 0
  EXPECT_EQ(bad({1, 8, 16, 16, 8, 3, 3, 1, 1, 0, 1}), MCULAB_CASE_BAD_PARAMS);   // stride 0
  EXPECT_EQ(bad({1, 8, 16, 16, 8, 3, 3, -1, 1, 1, 1}), MCULAB_CASE_BAD_PARAMS);  // pad < 0
  EXPECT_EQ(bad({1, 8, 2, 16, 8, 5, 3, 1, 1, 1, 1}), MCULAB_CASE_BAD_PARAMS);    // kh > H + 2p
  EXPECT_EQ(bad({1, 8192, 4, 4, 1, 3, 3, 1, 1, 1, 1}), MCULAB_CASE_BAD_PARAMS);  // depth > 64Ki
  EXPECT_EQ(bad({1, 8, 16, 16, 8, 3, 70000, 1, 1, 1, 1}), MCULAB_CASE_BAD_PARAMS);
  mculab_case c;
  const Params fc{1, 0, 4};
  EXPECT_EQ(mculab_case_prepare(MCULAB_OP_FULLY_CONNECTED_S8, fc.data(), 1, nullptr, 0, &c),
            MCULAB_CASE_BAD_PARAMS);
  EXPECT_EQ(mculab_case_prepare(77, fc.data(), 1, nullptr, 0, &c), MCULAB_CASE_UNKNOWN_OP);
  EXPECT_EQ(mculab_case_arena_bytes(77, fc.data()), 0u);
}

TEST(CasePrepare, ArenaTooSmallIsNoMemory) {
  const Params p{1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1};
  const size_t need = mculab_case_arena_bytes(MCULAB_OP_CONV2D_S8, p.data());
  std::vector<uint8_t> arena(need);
  mculab_case c;
  EXPECT_EQ(mculab_case_prepare(MCULAB_OP_CONV2D_S8, p.data(), 1, arena.data(), need / 2, &c),
            MCULAB_CASE_NO_MEMORY);
  // An unaligned arena of exactly the advertised size is enough.
  std::vector<uint8_t> bigger(need + 1);
  ASSERT_EQ(mculab_case_prepare(MCULAB_OP_CONV2D_S8, p.data(), 1, bigger.data() + 1, need, &c),
            MCULAB_CASE_OK);
  EXPECT_LE(c.arena_used, need);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c.bias) % 4, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c.out_multiplier) % 4, 0u);
  EXPECT_EQ(c.output_len, 16u * 16u * 8u);
}

TEST(ReferenceChecksum, RejectsWhatTheRunnerRejects) {
  const std::array<int32_t, 3> fc{1, 8, 4};
  EXPECT_EQ(mculab::ReferenceChecksum(99, fc, 1).error().code, mculab::ErrorCode::kInvalidArgument);
  EXPECT_FALSE(mculab::ReferenceChecksum(MCULAB_OP_CONV2D_S8, fc, 1).ok());  // wrong count
  const std::array<int32_t, 3> zero{1, 0, 4};
  EXPECT_FALSE(mculab::ReferenceChecksum(MCULAB_OP_FULLY_CONNECTED_S8, zero, 1).ok());
  const std::array<int32_t, 11> huge{65535, 64, 65535, 65535, 1, 1, 1, 0, 0, 1, 1};
  EXPECT_EQ(mculab::ReferenceChecksum(MCULAB_OP_CONV2D_S8, huge, 1).error().code,
            mculab::ErrorCode::kResourceExhausted);
}

}  // namespace
