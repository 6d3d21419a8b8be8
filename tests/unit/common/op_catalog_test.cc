#include "common/op_catalog.h"

#include <gtest/gtest.h>

#include "mculab/ops.h"

namespace mculab {
namespace {

TEST(OpCatalog, ParameterCountsMatchTheRunnersOps) {
  EXPECT_EQ(FindOp("conv2d_s8")->params.size(), size_t{MCULAB_CONV_NUM_PARAMS});
  EXPECT_EQ(FindOp("fully_connected_s8")->params.size(), size_t{MCULAB_FC_NUM_PARAMS});
  EXPECT_EQ(FindOp(uint16_t{MCULAB_OP_CONV2D_S8})->name, "conv2d_s8");
  EXPECT_EQ(FindOp("depthwise_conv2d_s8")->params.size(), size_t{MCULAB_DW_NUM_PARAMS});
  EXPECT_EQ(FindOp(uint16_t{MCULAB_OP_DEPTHWISE_CONV2D_S8})->name, "depthwise_conv2d_s8");
  // The catalog's order is the kernel's (firmware_stub/include/mculab/ops.h).
  EXPECT_EQ(FindOp("depthwise_conv2d_s8")->params[MCULAB_DW_DEPTH_MULTIPLIER].name,
            "depth_multiplier");
  EXPECT_EQ(FindOp("depthwise_conv2d_s8")->params[MCULAB_DW_DILATION_W].name, "dilation_w");
}

TEST(OpCatalog, UnknownOpIsNull) {
  EXPECT_EQ(FindOp("matmul_f32"), nullptr);
  EXPECT_NE(OpNames().find("fully_connected_s8"), std::string::npos);
}

TEST(OpCatalog, ValidateNamesTheWrongParameter) {
  const OpInfo& fc = *FindOp("fully_connected_s8");
  EXPECT_TRUE(ValidateCaseParams(fc, {1, 2, 3}).ok());
  auto s = ValidateCaseParams(fc, {1, 0, 3});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("in_features"), std::string::npos);
  EXPECT_FALSE(ValidateCaseParams(fc, {1, 2}).ok());
}

TEST(OpCatalog, AParameterAboveTheKernelsLimitIsRefusedNamingTheLimit) {
  const OpInfo& conv = *FindOp("conv2d_s8");
  auto s = ValidateCaseParams(conv, {1, 3, MCULAB_MAX_DIM + 1, 8, 4, 3, 3, 0, 0, 1, 1});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message,
            "conv2d_s8 parameter H must be <= 65535 (the kernel's limit), got 65536");
  EXPECT_TRUE(ValidateCaseParams(conv, {1, 3, MCULAB_MAX_DIM, 8, 4, 3, 3, 0, 0, 1, 1}).ok());
  const OpInfo& cal = *FindOp("calibrate");
  EXPECT_FALSE(ValidateCaseParams(cal, {MCULAB_CAL_NUM_KINDS, 10}).ok());
  EXPECT_FALSE(ValidateCaseParams(cal, {0, MCULAB_CAL_MAX_LOOPS + 1}).ok());
  EXPECT_NE(conv.limits.find("kernel_h * kernel_w * C <= 65536"), std::string::npos);
}

}  // namespace
}  // namespace mculab
