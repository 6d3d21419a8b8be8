// ModelReference: a model job's expected checksum from the real mculab-model-reference, in the real
// job sandbox, under a memory limit.
#include "agent/run/model_reference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/tflite_model.h"
#include "real_runner_test_util.h"
#include "tflite_writer.h"

namespace mculab::agent {
namespace {

using ::testing::HasSubstr;
namespace tw = tflite_writer;

ModelReference Reference(std::uint64_t memory_limit) {
  ModelReferenceOptions o;
  o.program = MCULAB_MODEL_REFERENCE;
  o.sandbox = testing::DefaultSandbox();
  o.memory_limit = memory_limit;
  return ModelReference(std::move(o));
}

// ADD of the input with itself: two activations of side x side x 4 int8 each, a few hundred bytes
// of model.
std::vector<std::uint8_t> BigArenaModel(std::int32_t side) {
  tw::Model m;
  m.tensors.push_back(tw::Tensor{{1, side, side, 4}, 9, {}, {0.5f}, {0}, 0, "input"});
  m.tensors.push_back(tw::Tensor{{1, side, side, 4}, 9, {}, {1.0f}, {0}, 0, "sum"});
  m.operators.push_back({0, {0, 0}, {1}, 11, {tw::Option{0, tw::Option::kU8, 0, 0.0f}}});
  m.inputs = {0};
  m.outputs = {1};
  return tw::Serialize(m);
}

TEST(ModelReference, GivesTheChecksumOfTheInterpreterOnThisHost) {
  const auto model = tw::Serialize(tw::SampleNet(7));
  auto in_process = ModelReferenceChecksum(model, 1234);
  ASSERT_TRUE(in_process.ok()) << in_process.error().message;
  auto sandboxed = Reference(512ull << 20).Checksum(model, 1234);
  ASSERT_TRUE(sandboxed.ok()) << sandboxed.error().message;
  EXPECT_EQ(*sandboxed, *in_process);
}

TEST(ModelReference, AModelThatWantsMoreMemoryThanTheLimitFailsSayingSo) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: no RLIMIT_AS under it";
#endif
  const auto model = BigArenaModel(2048);  // two 16 MiB activations
  ASSERT_LT(model.size(), 4096u);
  auto r = Reference(24ull << 20).Checksum(model, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kResourceExhausted) << r.error().message;
  EXPECT_THAT(r.error().message, HasSubstr("24 MiB"));
  // The same model within a larger limit runs.
  auto ok = Reference(512ull << 20).Checksum(model, 1);
  EXPECT_TRUE(ok.ok()) << ok.error().message;
}

TEST(ModelReference, AModelTheInterpreterRefusesSaysWhy) {
  const std::vector<std::uint8_t> junk(64, 0x5a);
  auto r = Reference(512ull << 20).Checksum(junk, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument) << r.error().message;
  EXPECT_FALSE(r.error().message.empty());
}

TEST(ModelReference, WithoutTheProgramModelJobsAreRefusedClearly) {
  ModelReferenceOptions o;
  auto r = ModelReference(std::move(o)).Checksum(std::vector<std::uint8_t>(8), 1);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("mculab-model-reference"));
}

}  // namespace
}  // namespace mculab::agent
