// The workload format: BuildWorkload writes what mculab_workload_parse accepts, and the parser
// rejects each way the bytes can be wrong with its own status.
#include "mculab/workload.h"

#include <gtest/gtest.h>

#include "common/workload_builder.h"
#include "mculab/ops.h"
#include "mculab/runner_protocol.h"

namespace mculab {
namespace {

std::vector<std::uint8_t> ConvWorkload() {
  auto w = BuildWorkload(MCULAB_OP_CONV2D_S8,
                         {{-5, {1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1}},
                          {1234567890123, {1, 3, 9, 9, 4, 3, 3, 0, 0, 2, 2}}},
                         77);
  EXPECT_TRUE(w.ok());
  return std::move(w).value();
}

mculab_workload_status Parse(const std::vector<std::uint8_t>& b, mculab_workload* w = nullptr) {
  mculab_workload tmp;
  return mculab_workload_parse(b.data(), b.size(), w ? w : &tmp);
}

// Rewrites the body CRC after a deliberate edit so only the edit is wrong.
void FixCrc(std::vector<std::uint8_t>& b) {
  mculab_put_u32(&b[12], mculab_crc32(0, b.data() + 24, b.size() - 24));
}

TEST(Workload, BuiltWorkloadParsesBack) {
  const auto b = ConvWorkload();
  mculab_workload w;
  ASSERT_EQ(Parse(b, &w), MCULAB_WORKLOAD_OK);
  EXPECT_EQ(w.op, MCULAB_OP_CONV2D_S8);
  EXPECT_EQ(w.num_params, MCULAB_CONV_NUM_PARAMS);
  EXPECT_EQ(w.num_cases, 2);
  EXPECT_EQ(w.seed, 77u);
  int64_t id = 0;
  int32_t params[MCULAB_MAX_PARAMS] = {};
  mculab_workload_case(&w, 0, &id, params);
  EXPECT_EQ(id, -5);
  EXPECT_EQ(params[MCULAB_CONV_C], 8);
  mculab_workload_case(&w, 1, &id, params);
  EXPECT_EQ(id, 1234567890123);
  EXPECT_EQ(params[MCULAB_CONV_STRIDE_W], 2);
  EXPECT_EQ(b.size(), 24u + 8u + 2u * (8u + 44u));
}

TEST(Workload, HeaderFlagsAreRead) {
  auto b = ConvWorkload();
  mculab_workload w;
  ASSERT_EQ(Parse(b, &w), MCULAB_WORKLOAD_OK);
  EXPECT_EQ(w.flags, 0u);  // the builder's default: the runner's fastest kernels
  mculab_put_u32(&b[20], MCULAB_WORKLOAD_REFERENCE_KERNELS);
  ASSERT_EQ(Parse(b, &w), MCULAB_WORKLOAD_OK);  // the CRC covers the body only
  EXPECT_EQ(w.flags, MCULAB_WORKLOAD_REFERENCE_KERNELS);
}

TEST(Workload, TrailingRegionBytesAreIgnored) {
  auto b = ConvWorkload();
  b.resize(b.size() + 100, 0xEE);  // the region is bigger than the workload
  EXPECT_EQ(Parse(b), MCULAB_WORKLOAD_OK);
}

TEST(Workload, ZeroCasesIsValid) {
  auto b = BuildWorkload(MCULAB_OP_FULLY_CONNECTED_S8, {}, 1);
  ASSERT_TRUE(b.ok());
  mculab_workload w;
  ASSERT_EQ(Parse(*b, &w), MCULAB_WORKLOAD_OK);
  EXPECT_EQ(w.num_cases, 0);
  EXPECT_EQ(w.num_params, MCULAB_FC_NUM_PARAMS);
}

TEST(Workload, TooShort) {
  auto b = ConvWorkload();
  b.resize(23);
  EXPECT_EQ(Parse(b), MCULAB_WORKLOAD_TOO_SHORT);
  EXPECT_EQ(mculab_workload_parse(nullptr, 100, nullptr), MCULAB_WORKLOAD_TOO_SHORT);
}

TEST(Workload, BadMagic) {
  auto b = ConvWorkload();
  b[0] ^= 1;
  EXPECT_EQ(Parse(b), MCULAB_WORKLOAD_BAD_MAGIC);
}

TEST(Workload, BadVersion) {
  auto b = ConvWorkload();
  mculab_put_u16(&b[4], 2);
  EXPECT_EQ(Parse(b), MCULAB_WORKLOAD_BAD_VERSION);
}

TEST(Workload, BadCrc) {
  auto b = ConvWorkload();
  b[40] ^= 0x01;  // a parameter byte
  EXPECT_EQ(Parse(b), MCULAB_WORKLOAD_BAD_CRC);
}

TEST(Workload, BadLengthLargerThanRegion) {
  auto b = ConvWorkload();
  mculab_workload w;
  EXPECT_EQ(mculab_workload_parse(b.data(), b.size() - 1, &w), MCULAB_WORKLOAD_BAD_LENGTH);
}

TEST(Workload, BadLengthInconsistentWithCaseCount) {
  auto b = ConvWorkload();
  mculab_put_u16(&b[24 + 4], 3);  // says 3 cases, holds 2
  FixCrc(b);
  EXPECT_EQ(Parse(b), MCULAB_WORKLOAD_BAD_LENGTH);
}

TEST(Workload, BadHeaderLength) {
  auto b = ConvWorkload();
  mculab_put_u16(&b[6], 32);
  EXPECT_EQ(Parse(b), MCULAB_WORKLOAD_BAD_LENGTH);
}

TEST(Workload, UnknownOp) {
  auto b = BuildWorkload(99, {{0, {1, 2, 3}}}, 1);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Parse(*b), MCULAB_WORKLOAD_UNKNOWN_OP);
}

TEST(Workload, ParamCountMustBeTheOps) {
  auto b = BuildWorkload(MCULAB_OP_FULLY_CONNECTED_S8, {{0, {1, 2, 3, 4}}}, 1);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Parse(*b), MCULAB_WORKLOAD_BAD_PARAMS);
}

TEST(Workload, BuilderRejectsMixedParamCountsAndTooManyCases) {
  auto mixed = BuildWorkload(MCULAB_OP_FULLY_CONNECTED_S8, {{0, {1, 2, 3}}, {1, {1, 2}}}, 1);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.error().message.find("case 1 has 2 parameters"), std::string::npos)
      << mixed.error().message;
  std::vector<WorkloadCase> many(MCULAB_MAX_CASES + 1, WorkloadCase{0, {1, 1, 1}});
  EXPECT_FALSE(BuildWorkload(MCULAB_OP_FULLY_CONNECTED_S8, many, 1).ok());
  std::vector<WorkloadCase> max(MCULAB_MAX_CASES, WorkloadCase{0, {1, 1, 1}});
  auto ok = BuildWorkload(MCULAB_OP_FULLY_CONNECTED_S8, max, 1);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(Parse(*ok), MCULAB_WORKLOAD_OK);
}

TEST(Workload, StatusNamesAreDistinct) {
  EXPECT_STREQ(mculab_workload_status_name(MCULAB_WORKLOAD_BAD_CRC), "bad workload CRC");
  EXPECT_STRNE(mculab_workload_status_name(MCULAB_WORKLOAD_BAD_MAGIC),
               mculab_workload_status_name(MCULAB_WORKLOAD_BAD_LENGTH));
}

}  // namespace
}  // namespace mculab
