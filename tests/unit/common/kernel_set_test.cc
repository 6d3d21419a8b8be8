#include "common/kernel_set.h"

#include <gtest/gtest.h>

namespace mculab {
namespace {

TEST(ParseKernelSet, FastIsTheDefaultAndReferenceIsNamed) {
  EXPECT_EQ(*ParseKernelSet(""), KernelSet::kFast);
  EXPECT_EQ(*ParseKernelSet("fast"), KernelSet::kFast);
  EXPECT_EQ(*ParseKernelSet("reference"), KernelSet::kReference);
}

TEST(ParseKernelSet, AnUnknownSetIsRefusedNamingItAndTheChoices) {
  for (const char* bad : {"helium", "Reference", "ref", " fast"}) {
    auto r = ParseKernelSet(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(r.error().message.find(std::string("\"") + bad + "\""), std::string::npos);
    EXPECT_NE(r.error().message.find("fast"), std::string::npos);
    EXPECT_NE(r.error().message.find("reference"), std::string::npos);
  }
}

TEST(KernelSetName, ReadsBackWhatParseKernelSetTakes) {
  for (KernelSet s : {KernelSet::kFast, KernelSet::kReference}) {
    EXPECT_EQ(*ParseKernelSet(KernelSetName(s)), s);
  }
}

TEST(KernelSetRan, OwnRuntimesNameTheFastSetAfterADash) {
  EXPECT_EQ(KernelSetRan("builtin-helium"), "helium");
  EXPECT_EQ(KernelSetRan("builtin-dsp"), "dsp");
  EXPECT_EQ(KernelSetRan("tflite-helium"), "helium");
  EXPECT_EQ(KernelSetRan("tflite-dsp"), "dsp");
}

TEST(KernelSetRan, OwnRuntimesWithoutASuffixRanTheReference) {
  EXPECT_EQ(KernelSetRan("builtin"), "reference");
  EXPECT_EQ(KernelSetRan("tflite"), "reference");
}

TEST(KernelSetRan, AnotherRuntimeSaysNothingAboutOurKernels) {
  EXPECT_EQ(KernelSetRan("tflite-micro"), "");  // TFLite Micro's own runner, not our "micro" set
  EXPECT_EQ(KernelSetRan("example"), "");
  EXPECT_EQ(KernelSetRan("executorch"), "");
  EXPECT_EQ(KernelSetRan("builtins"), "");
  EXPECT_EQ(KernelSetRan("builtin-"), "");
  EXPECT_EQ(KernelSetRan(""), "");
}

}  // namespace
}  // namespace mculab
