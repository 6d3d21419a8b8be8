// Model jobs in the Lab (real SQLite store in a temp dir, fake clock and agent channel): the
// uploaded model parsed at admission by the runner's own interpreter compiled for the host: a
// corrupt model or an operator the runner lacks refused (naming it and the operators it has), a
// board too small for the model plus its planned arena refused (giving both sizes), and an
// accepted job's assignment naming the model.
#include "server/service/model_admission.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "common/tflite_model.h"
#include "db/sqlite_store.h"
#include "fakes.h"
#include "server/service/lab.h"
#include "tests/unit/server/owned_lab.h"
#include "tflite_writer.h"

namespace mculab::server {
namespace {

using testing::FakeAgentChannel;
using testing::FakeClock;
using ::testing::HasSubstr;
namespace v1 = mculab::v1;

// A model of a few KiB whose planned arena is 1 GiB: 15 ADDs of the 64 MiB input with itself
// (the interpreter's largest tensor, 2^26 int8 elements), all alive at once, then added up
// pairwise to the one output.
std::string HugeArenaModel() {
  tflite_writer::Model m;
  auto add_tensor = [&](const std::string& name) {
    m.tensors.push_back({{1, 2048, 4096, 8}, 9, {}, {0.02f}, {-3}, 0, name});
    return static_cast<int32_t>(m.tensors.size() - 1);
  };
  auto add_op = [&](int32_t a, int32_t b, const std::string& name) {
    const int32_t out = add_tensor(name);
    m.operators.push_back({0, {a, b}, {out}, 11, {{0, tflite_writer::Option::kU8}}});
    return out;
  };
  const int32_t in = add_tensor("input");
  std::vector<int32_t> live;
  for (int i = 0; i < 15; ++i) live.push_back(add_op(in, in, "copy" + std::to_string(i)));
  while (live.size() > 1) {
    std::vector<int32_t> next;
    for (std::size_t i = 0; i + 1 < live.size(); i += 2) {
      next.push_back(add_op(live[i], live[i + 1], "sum" + std::to_string(m.tensors.size())));
    }
    if (live.size() % 2 == 1) next.push_back(live.back());
    live = std::move(next);
  }
  m.inputs = {in};
  m.outputs = {live.front()};
  const std::vector<uint8_t> b = tflite_writer::Serialize(m);
  return std::string(b.begin(), b.end());
}

std::string SampleModel(int32_t last_op = -1) {
  tflite_writer::Model m = tflite_writer::SampleNet(3);
  if (last_op >= 0) {
    m.operators.back().builtin = last_op;
    m.operators.back().options_type = 0;
    m.operators.back().options.clear();
  }
  const std::vector<uint8_t> b = tflite_writer::Serialize(m);
  return std::string(b.begin(), b.end());
}

class ModelAdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() /
           ("mculab-model-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(dir_);
    auto store = db::SqliteStore::Open(dir_ / "mculab.db");
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(*store);
    // A new board's health check would take the first assignment these tests look at.
    config_.health_checks = false;
    lab_ = std::make_unique<mculab::server::testing::OwnedLab>(*store_, clock_, config_, dir_);
    ASSERT_TRUE(lab_->Start().ok());
    v1::Register reg;
    reg.set_agent("lab-1");
    auto* big = reg.add_boards();
    big->set_name("an547-0");
    big->set_kind("corstone300-qemu");
    big->set_ram_bytes(4u << 20);
    auto* small = reg.add_boards();
    small->set_name("tiny-0");
    small->set_kind("tiny");
    small->set_ram_bytes(20000);
    auto* undeclared = reg.add_boards();  // no ram_bytes, as every quick-start board
    undeclared->set_name("free-0");
    undeclared->set_kind("free");
    auto id = lab_->agents().ConnectAgent(testing::AgentCaller(reg.agent()),
                                          testing::RegistrationOf(reg), agent_);
    ASSERT_TRUE(id.ok()) << id.error().message;
    ASSERT_TRUE(agent_->Take(FakeAgentChannel::IsRegistered));
  }
  void TearDown() override {
    lab_->Stop();
    lab_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string Upload(const std::string& name, const std::string& bytes,
                     const Caller& who = Caller{}) {
    auto up = lab_->uploads().BeginUpload(who, name, bytes.size());
    EXPECT_TRUE(up.ok());
    EXPECT_TRUE((*up)->Append(bytes).ok());
    auto a = (*up)->Finish();
    EXPECT_TRUE(a.ok());
    return a->sha256;
  }
  SubmitRequest ModelJob(const std::string& blob, const std::string& kind = "corstone300-qemu") {
    SubmitRequest r;
    r.kind = kind;
    r.op = kModelOp;
    r.blob_artifact = blob;
    r.iterations = 2;
    return r;
  }
  Error SubmitError(SubmitRequest r) {
    auto reply = lab_->jobs().Submit(caller_, std::move(r));
    EXPECT_FALSE(reply.ok());
    return reply.ok() ? Error{} : reply.error();
  }

  std::filesystem::path dir_;
  FakeClock clock_;
  LabConfig config_;
  Caller caller_;
  std::unique_ptr<db::SqliteStore> store_;
  std::unique_ptr<mculab::server::testing::OwnedLab> lab_;
  std::shared_ptr<FakeAgentChannel> agent_ = std::make_shared<FakeAgentChannel>();
};

TEST_F(ModelAdmissionTest, AModelIsAcceptedAndTheAssignmentNamesIt) {
  const std::string blob = Upload("sample.tflite", SampleModel());
  auto reply = lab_->jobs().Submit(caller_, ModelJob(blob));
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  auto m = agent_->Take(FakeAgentChannel::IsAssign);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->assign().op(), "model");
  EXPECT_EQ(m->assign().blob_sha256(), blob);
  EXPECT_TRUE(m->assign().firmware_sha256().empty());
  ASSERT_EQ(m->assign().cases_size(), 1);
}

TEST_F(ModelAdmissionTest, AnOperatorTheRunnerLacksIsRefusedNamingItAndTheOnesItHas) {
  Error e = SubmitError(ModelJob(Upload("div.tflite", SampleModel(42))));
  EXPECT_EQ(e.code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.message, HasSubstr("model div.tflite"));
  EXPECT_THAT(e.message, HasSubstr("DIV (builtin code 42, first at operator 8)"));
  EXPECT_THAT(e.message, HasSubstr("it runs " + SupportedModelOps()));
  EXPECT_THAT(SupportedModelOps(), HasSubstr("CONV_2D"));
}

TEST_F(ModelAdmissionTest, ACorruptModelIsRefused) {
  std::string bytes = SampleModel();
  bytes.resize(bytes.size() / 2);
  Error e = SubmitError(ModelJob(Upload("cut.tflite", bytes)));
  EXPECT_EQ(e.code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.message, HasSubstr("model cut.tflite: "));
  e = SubmitError(ModelJob(Upload("text.tflite", "not a flatbuffer at all")));
  EXPECT_EQ(e.code, ErrorCode::kInvalidArgument);
}

TEST_F(ModelAdmissionTest, AnInputOfTheWrongSizeIsRefused) {
  const std::string model = SampleModel();
  const std::vector<std::uint8_t> m(model.begin(), model.end());
  const std::vector<std::uint8_t> in(100, 1);
  const std::vector<std::uint8_t> blob = PackModelBlob(m, in);
  Error e = SubmitError(ModelJob(Upload("m.tflite", std::string(blob.begin(), blob.end()))));
  EXPECT_THAT(e.message, HasSubstr("the given input has 100 bytes"));
  EXPECT_THAT(e.message, HasSubstr("takes 768 bytes"));
  const std::vector<std::uint8_t> right(768, 1);
  const std::vector<std::uint8_t> ok = PackModelBlob(m, right);
  auto reply = lab_->jobs().Submit(
      caller_, ModelJob(Upload("m2.tflite", std::string(ok.begin(), ok.end()))));
  EXPECT_TRUE(reply.ok()) << reply.error().message;
}

TEST_F(ModelAdmissionTest, ABoardTooSmallIsRefusedGivingBothSizes) {
  const std::string model = SampleModel();
  Error e = SubmitError(ModelJob(Upload("sample.tflite", model), "tiny"));
  EXPECT_EQ(e.code, ErrorCode::kFailedPrecondition);
  const std::vector<std::uint8_t> m(model.begin(), model.end());
  auto inspected = InspectModel(m);
  ASSERT_TRUE(inspected.ok());
  EXPECT_THAT(e.message, HasSubstr(fmt::format("needs {} bytes of RAM",
                                               ModelRamNeed(*inspected, model.size()))));
  EXPECT_THAT(e.message, HasSubstr(fmt::format("{} of activations", inspected->arena_bytes)));
  EXPECT_THAT(e.message, HasSubstr("tiny-0 (20000 bytes)"));
}

TEST_F(ModelAdmissionTest, AHugeArenaIsRefusedOnABoardThatDeclaresNoRam) {
  const std::string model = HugeArenaModel();
  const std::vector<std::uint8_t> m(model.begin(), model.end());
  auto inspected = InspectModel(m);
  ASSERT_TRUE(inspected.ok()) << inspected.error().message;
  ASSERT_GE(ModelArenaPlan(*inspected), 1ull << 30);
  const std::string blob = Upload("huge.tflite", model);
  Error e = SubmitError(ModelJob(blob, "free"));
  EXPECT_EQ(e.code, ErrorCode::kFailedPrecondition);
  ASSERT_LT(model.size(), 8u << 10);
  EXPECT_THAT(e.message,
              HasSubstr(fmt::format("plans an arena of {} bytes ({}", ModelArenaPlan(*inspected),
                                    HumanBytes(ModelArenaPlan(*inspected)))));
  EXPECT_THAT(e.message, HasSubstr("67108864 bytes (64 MiB)"));
  EXPECT_THAT(e.message, HasSubstr("free-0"));
  EXPECT_THAT(e.message, HasSubstr("max_model_arena"));
  // A board that declares its RAM compares the whole need with it.
  e = SubmitError(ModelJob(blob));
  EXPECT_THAT(e.message, HasSubstr("an547-0 (4194304 bytes)"));
  // A small model still runs on the board without ram_bytes.
  auto reply =
      lab_->jobs().Submit(caller_, ModelJob(Upload("sample.tflite", SampleModel()), "free"));
  EXPECT_TRUE(reply.ok()) << reply.error().message;
}

TEST_F(ModelAdmissionTest, AnotherUsersModelIsRefused) {
  Caller bob;
  bob.user = "bob";
  bob.role = Role::kMember;
  Caller alice = bob;
  alice.user = "alice";
  const std::string model = Upload("bobs.tflite", SampleModel(), bob);
  auto stolen = lab_->jobs().Submit(alice, ModelJob(model));
  ASSERT_FALSE(stolen.ok());
  EXPECT_EQ(stolen.error().code, ErrorCode::kPermissionDenied);
  EXPECT_THAT(stolen.error().message,
              HasSubstr("model artifact " + model + " was not uploaded by alice"));
  auto own = lab_->jobs().Submit(bob, ModelJob(model));
  EXPECT_TRUE(own.ok()) << own.error().message;
}

TEST_F(ModelAdmissionTest, BadRequestsSayWhatToDo) {
  Error e = SubmitError(ModelJob(std::string(64, 'a')));
  EXPECT_THAT(e.message, HasSubstr("never uploaded"));
  e = SubmitError(ModelJob(""));
  EXPECT_THAT(e.message, HasSubstr("needs its model"));
  SubmitRequest r = ModelJob(Upload("s.tflite", SampleModel()));
  r.firmware_artifact = std::string(64, 'b');
  e = SubmitError(r);
  EXPECT_THAT(e.message, HasSubstr("lab's own runner"));
}

}  // namespace
}  // namespace mculab::server
