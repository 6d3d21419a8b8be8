#include "common/op_catalog.h"

#include <gtest/gtest.h>

#include "mculab/ops.h"

namespace mculab {
namespace {

TEST(OpCatalog, ParameterCountsMatchTheRunnersOps) {
  EXPECT_EQ(FindOp("conv2d_s8")->params.size(), size_t{MCULAB_CONV_NUM_PARAMS});
  EXPECT_EQ(FindOp("fully_connected_s8")->params.size(), size_t{MCULAB_FC_NUM_PARAMS});
  EXPECT_EQ(FindOp(uint16_t{MCULAB_OP_CONV2D_S8})->name, "conv2d_s8");
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

}  // namespace
}  // namespace mculab
