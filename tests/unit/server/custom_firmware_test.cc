// Custom-runner jobs in the Lab (real SQLite store in a temp dir, fake clock and agent channel):
// admission with artifacts (uploaded? an ELF? for the boards' architecture? does the blob fit?),
// the assignment naming the artifacts, who may fetch them, and unverified checksums at the end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "db/sqlite_store.h"
#include "fakes.h"
#include "server/service/lab.h"
#include "tests/unit/server/owned_lab.h"

namespace mculab::server {
namespace {

using testing::FakeAgentChannel;
using testing::FakeClock;
using ::testing::HasSubstr;
namespace v1 = mculab::v1;

std::string ElfHeader(std::uint8_t cls, std::uint16_t machine) {
  std::string h(64, '\0');
  h[0] = 0x7f;
  h[1] = 'E';
  h[2] = 'L';
  h[3] = 'F';
  h[4] = static_cast<char>(cls);
  h[5] = 1;
  h[6] = 1;
  h[16] = 2;
  h[18] = static_cast<char>(machine & 0xff);
  h[19] = static_cast<char>(machine >> 8);
  return h + "rest of the runner";
}

class CustomFirmwareLabTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() /
           ("mculab-custom-test-" + std::to_string(rd()) + std::to_string(rd()));
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
    auto* an547 = reg.add_boards();
    an547->set_name("an547-0");
    an547->set_kind("corstone300-qemu");
    (*an547->mutable_tags())["cpu"] = "cortex-m55";
    an547->set_ram_bytes(4096);
    auto* host = reg.add_boards();
    host->set_name("host-0");
    host->set_kind("host");
    auto* odd = reg.add_boards();
    odd->set_name("odd-0");
    odd->set_kind("mystery");
    auto id = lab_->agents().ConnectAgent(testing::AgentCaller(reg.agent()),
                                          testing::RegistrationOf(reg), agent_);
    ASSERT_TRUE(id.ok()) << id.error().message;
    session_ = *id;
    ASSERT_TRUE(agent_->Take(FakeAgentChannel::IsRegistered));
  }
  void TearDown() override {
    lab_->Stop();
    lab_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string Upload(const std::string& name, const std::string& bytes) {
    return UploadAs(caller_, name, bytes);
  }
  std::string UploadAs(const Caller& who, const std::string& name, const std::string& bytes) {
    auto up = lab_->uploads().BeginUpload(who, name, bytes.size());
    EXPECT_TRUE(up.ok());
    EXPECT_TRUE((*up)->Append(bytes).ok());
    auto a = (*up)->Finish();
    EXPECT_TRUE(a.ok());
    return a->sha256;
  }
  SubmitRequest Custom(const std::string& fw, const std::string& blob = "",
                       const std::string& kind = "corstone300-qemu") {
    SubmitRequest r;
    r.kind = kind;
    r.firmware_artifact = fw;
    r.blob_artifact = blob;
    r.iterations = 3;
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
  AgentSessionId session_ = 0;
};

TEST_F(CustomFirmwareLabTest, AnArmElfWithABlobIsAcceptedAndTheAssignmentNamesBoth) {
  const std::string fw = Upload("runner.elf", ElfHeader(1, 40));
  const std::string blob = Upload("model.bin", std::string(56, 'm'));
  auto reply = lab_->jobs().Submit(caller_, Custom(fw, blob));
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  auto m = agent_->Take(FakeAgentChannel::IsAssign);
  ASSERT_TRUE(m);
  const v1::Assignment& a = m->assign();
  EXPECT_EQ(a.op(), "custom");
  EXPECT_EQ(a.firmware_sha256(), fw);
  EXPECT_EQ(a.blob_sha256(), blob);
  ASSERT_EQ(a.cases_size(), 1);  // no cases named: one case, id 0
  EXPECT_EQ(a.cases(0).id(), 0);
  EXPECT_EQ(a.cases(0).params_size(), 0);
  auto job = lab_->jobs().GetJob(caller_, reply->id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->firmware_artifact, fw);
  EXPECT_EQ(job->blob_artifact, blob);
  EXPECT_EQ(job->op, "custom");
}

TEST_F(CustomFirmwareLabTest, AKernelSetIsRefusedForACustomRunnerWhoseKernelsAreItsOwn) {
  const std::string fw = Upload("runner.elf", ElfHeader(1, 40));
  for (const char* kernels : {"reference", "fast"}) {
    SubmitRequest r = Custom(fw);
    r.kernels = kernels;
    Error e = SubmitError(std::move(r));
    EXPECT_EQ(e.code, ErrorCode::kInvalidArgument);
    EXPECT_NE(e.message.find("means nothing for a custom runner"), std::string::npos) << e.message;
  }
  EXPECT_TRUE(lab_->jobs().Submit(caller_, Custom(fw)).ok()) << "without a kernel set it runs";
}

TEST_F(CustomFirmwareLabTest, AFirmwareNeverUploadedIsRefused) {
  Error e = SubmitError(Custom(std::string(64, 'a')));
  EXPECT_EQ(e.code, ErrorCode::kFailedPrecondition);
  EXPECT_THAT(e.message, HasSubstr("was never uploaded"));
}

Caller Member(const std::string& name) {
  Caller c;
  c.user = name;
  c.role = Role::kMember;
  return c;
}

TEST_F(CustomFirmwareLabTest, AnotherUsersUploadIsRefusedNamingTheRule) {
  // The job list shows every job's artifact hashes; knowing bob's must not give alice his bytes.
  const Caller alice = Member("alice"), bob = Member("bob");
  const std::string fw = UploadAs(alice, "runner.elf", ElfHeader(1, 40));
  const std::string bobs_fw = UploadAs(bob, "bobs-runner.elf", ElfHeader(1, 40) + "bob");
  const std::string bobs_blob = UploadAs(bob, "bobs-model.bin", std::string(56, 'b'));
  auto blob = lab_->jobs().Submit(alice, Custom(fw, bobs_blob));
  ASSERT_FALSE(blob.ok());
  EXPECT_EQ(blob.error().code, ErrorCode::kPermissionDenied);
  EXPECT_THAT(blob.error().message,
              HasSubstr("blob artifact " + bobs_blob + " was not uploaded by alice"));
  EXPECT_THAT(blob.error().message, HasSubstr("only the files its submitter uploaded"));
  auto firmware = lab_->jobs().Submit(alice, Custom(bobs_fw));
  ASSERT_FALSE(firmware.ok());
  EXPECT_EQ(firmware.error().code, ErrorCode::kPermissionDenied);
  EXPECT_THAT(firmware.error().message, HasSubstr("firmware artifact " + bobs_fw));
  // Neither job was queued, so no agent was told to fetch bob's files.
  EXPECT_FALSE(agent_->Take(FakeAgentChannel::IsAssign));
  // The owner still uses his own.
  auto own = lab_->jobs().Submit(bob, Custom(bobs_fw, bobs_blob));
  EXPECT_TRUE(own.ok()) << own.error().message;
}

TEST_F(CustomFirmwareLabTest, TheSameBytesUploadedByTwoUsersAreEachOnesOwn) {
  const Caller alice = Member("alice"), bob = Member("bob");
  const std::string fw = UploadAs(alice, "runner.elf", ElfHeader(1, 40));
  const std::string bobs = UploadAs(bob, "model.bin", std::string(56, 'x'));
  ASSERT_FALSE(lab_->jobs().Submit(alice, Custom(fw, bobs)).ok());
  // Content-addressed: alice's upload of the same bytes stores nothing new, but makes it hers.
  EXPECT_EQ(UploadAs(alice, "mine.bin", std::string(56, 'x')), bobs);
  auto reply = lab_->jobs().Submit(alice, Custom(fw, bobs));
  EXPECT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_TRUE(
      lab_->jobs().Submit(bob, Custom(UploadAs(bob, "r.elf", ElfHeader(1, 40)), bobs)).ok());
}

TEST_F(CustomFirmwareLabTest, AnArtifactAnAdminSharedServesEveryMember) {
  const Caller alice = Member("alice"), bob = Member("bob");
  const std::string fw = UploadAs(alice, "runner.elf", ElfHeader(1, 40));
  const std::string bobs = UploadAs(bob, "dataset.bin", std::string(56, 'd'));
  ASSERT_FALSE(lab_->jobs().Submit(alice, Custom(fw, bobs)).ok());
  ASSERT_TRUE(ShareArtifact(*store_, bobs, true).ok());
  auto reply = lab_->jobs().Submit(alice, Custom(fw, bobs));
  EXPECT_TRUE(reply.ok()) << reply.error().message;
  ASSERT_TRUE(ShareArtifact(*store_, bobs, false).ok());
  EXPECT_FALSE(lab_->jobs().Submit(alice, Custom(fw, bobs)).ok());
  EXPECT_EQ(ShareArtifact(*store_, std::string(64, 'e'), true).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(ShareArtifact(*store_, "nope", true).error().code, ErrorCode::kInvalidArgument);
}

TEST_F(CustomFirmwareLabTest, AFileThatIsNotAnElfIsRefused) {
  Error e = SubmitError(Custom(Upload("runner.py", "#!/usr/bin/env python3\nprint('hi')\n")));
  EXPECT_EQ(e.code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(e.message, HasSubstr("runner.py: the firmware is not an ELF file (it is a script"));
}

TEST_F(CustomFirmwareLabTest, AnElfForAnotherArchitectureIsRefusedNamingBoth) {
  Error e = SubmitError(Custom(Upload("runner-x86", ElfHeader(2, 62))));
  EXPECT_EQ(e.code, ErrorCode::kFailedPrecondition);
  EXPECT_THAT(e.message, HasSubstr("an ELF for x86-64, but board an547-0 is ARM 32-bit"));
  // The host board takes the host's executables and refuses ARM ones.
  EXPECT_THAT(SubmitError(Custom(Upload("runner.elf", ElfHeader(1, 40)), "", "host")).message,
              HasSubstr("board host-0 runs"));
}

TEST_F(CustomFirmwareLabTest, ABoardWhoseArchitectureIsUnknownCannotBeChecked) {
  Error e = SubmitError(Custom(Upload("runner.elf", ElfHeader(1, 40)), "", "mystery"));
  EXPECT_EQ(e.code, ErrorCode::kFailedPrecondition);
  EXPECT_THAT(e.message, HasSubstr("have no cpu tag"));
}

TEST_F(CustomFirmwareLabTest, ABlobLargerThanTheBoardsRamIsRefused) {
  const std::string fw = Upload("runner.elf", ElfHeader(1, 40));
  Error e = SubmitError(Custom(fw, Upload("big.bin", std::string(5000, 'b'))));
  EXPECT_EQ(e.code, ErrorCode::kFailedPrecondition);
  EXPECT_THAT(e.message, HasSubstr("does not fit board an547-0"));
}

TEST_F(CustomFirmwareLabTest, BadRequestsSayWhatToDo) {
  const std::string fw = Upload("runner.elf", ElfHeader(1, 40));
  SubmitRequest with_op = Custom(fw);
  with_op.op = "conv2d_s8";
  EXPECT_THAT(SubmitError(with_op).message, HasSubstr("drop --op conv2d_s8"));
  SubmitRequest with_params = Custom(fw);
  with_params.cases.push_back({4, {1, 2}});
  EXPECT_THAT(SubmitError(with_params).message, HasSubstr("ids only"));
  SubmitRequest blob_only = Custom("", fw);
  EXPECT_THAT(SubmitError(blob_only).message, HasSubstr("a blob needs a custom runner"));
}

TEST_F(CustomFirmwareLabTest, OnlyAgentsAndAdminsFetchArtifacts) {
  const std::string fw = Upload("runner.elf", ElfHeader(1, 40));
  Caller agent{"lab-1", Role::kAgent, "", "", ""};
  // An agent fetches what a run it holds needs (LabAbuseTest covers other agents).
  EXPECT_EQ(lab_->uploads().OpenArtifact(agent, fw).error().code, ErrorCode::kPermissionDenied);
  ASSERT_TRUE(lab_->jobs().Submit(caller_, Custom(fw)).ok());
  ASSERT_TRUE(agent_->Take(FakeAgentChannel::IsAssign));
  auto ok = lab_->uploads().OpenArtifact(agent, fw);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_TRUE(std::filesystem::exists(ok->first));
  EXPECT_EQ(ok->second.sha256, fw);
  EXPECT_EQ(lab_->uploads().OpenArtifact(Caller{"bob", Role::kMember, "", "", ""}, fw).error().code,
            ErrorCode::kPermissionDenied);
  EXPECT_EQ(lab_->uploads().OpenArtifact(Caller{"", Role::kNone, "", "", ""}, fw).error().code,
            ErrorCode::kUnauthenticated);
  EXPECT_EQ(lab_->uploads().OpenArtifact(caller_, std::string(64, '0')).error().code,
            ErrorCode::kNotFound);
  EXPECT_EQ(lab_->uploads().OpenArtifact(agent, "../mculab.db").error().code,
            ErrorCode::kInvalidArgument);
}

TEST_F(CustomFirmwareLabTest, UnverifiedChecksumsDoNotFailTheJobAndAreFlagged) {
  const std::string fw = Upload("runner.elf", ElfHeader(1, 40));
  auto reply = lab_->jobs().Submit(caller_, Custom(fw));
  ASSERT_TRUE(reply.ok());
  auto a = agent_->Take(FakeAgentChannel::IsAssign)->assign();
  auto send = [&](const v1::AgentMessage& m) {
    lab_->agents().OnAgentMessage(session_, testing::AgentEventOf(m));
  };
  v1::AgentMessage m;
  m.mutable_run_started()->set_run_id(a.run_id());
  m.mutable_run_started()->set_timer_unit("cycles");
  m.mutable_run_started()->set_firmware_sha256(fw);
  send(m);
  m.Clear();
  auto* b = m.mutable_batch();
  b->set_run_id(a.run_id());
  for (std::uint32_t i = 0; i < 3; ++i) {
    auto* s = b->add_samples();
    s->set_iteration(i);
    s->set_value(100 + i);
  }
  send(m);
  m.Clear();
  auto* cd = m.mutable_case_done();
  cd->set_run_id(a.run_id());
  cd->set_checksum(0xabcd);
  cd->set_checksum_ok(false);
  cd->set_checksum_unverified(true);
  send(m);
  m.Clear();
  m.mutable_run_finished()->set_run_id(a.run_id());
  m.mutable_run_finished()->set_batches_sent(1);
  send(m);
  auto watch = lab_->jobs().Watch(caller_, reply->id);
  ASSERT_TRUE(watch.ok());
  JobState last = JobState::kQueued;
  while (auto e = (*watch)->Next(std::chrono::seconds(10))) {
    last = e->state;
    if (IsFinal(last)) break;
  }
  EXPECT_EQ(last, JobState::kSucceeded);
  auto job = lab_->jobs().GetJob(caller_, reply->id);
  ASSERT_TRUE(job.ok());
  EXPECT_THAT(job->message, HasSubstr("checksums not verified (custom firmware)"));
}

TEST_F(CustomFirmwareLabTest, BoardsWhoseAgentDoesNotAllowCustomRunnersAreRefusedAtSubmit) {
  v1::Register reg;
  reg.set_agent("lab-2");
  for (const char* name : {"locked-0", "locked-1"}) {
    auto* b = reg.add_boards();
    b->set_name(name);
    b->set_kind("locked");
    (*b->mutable_tags())["cpu"] = "cortex-m55";
    b->set_custom_runners(false);
    b->set_custom_runners_off(std::string("QEMU board ") + name +
                              " does not run uploaded runner ELFs: the agent's configuration "
                              "must set allow_custom_runners = true for this board");
  }
  auto* open = reg.add_boards();
  open->set_name("open-0");
  open->set_kind("open");
  (*open->mutable_tags())["cpu"] = "cortex-m55";
  open->set_custom_runners(true);
  auto agent2 = std::make_shared<FakeAgentChannel>();
  auto id = lab_->agents().ConnectAgent(testing::AgentCaller(reg.agent()),
                                        testing::RegistrationOf(reg), agent2);
  ASSERT_TRUE(id.ok()) << id.error().message;
  const std::string fw = Upload("runner.elf", ElfHeader(1, 40));

  // One board named: its agent's own words, saying what to change.
  SubmitRequest one = Custom(fw, "", "");
  one.board = "locked-0";
  Error e = SubmitError(one);
  EXPECT_EQ(e.code, ErrorCode::kFailedPrecondition);
  EXPECT_THAT(e.message, HasSubstr("board locked-0"));
  EXPECT_THAT(e.message, HasSubstr("allow_custom_runners = true"));

  // A kind whose every board says no: refused naming the kind and its boards.
  e = SubmitError(Custom(fw, "", "locked"));
  EXPECT_EQ(e.code, ErrorCode::kFailedPrecondition);
  EXPECT_THAT(e.message, HasSubstr("kind locked"));
  EXPECT_THAT(e.message, HasSubstr("locked-0, locked-1"));
  EXPECT_THAT(e.message, HasSubstr("allow_custom_runners = true"));

  // A board that takes them: accepted.
  auto ok = lab_->jobs().Submit(caller_, Custom(fw, "", "open"));
  EXPECT_TRUE(ok.ok()) << ok.error().message;
}

}  // namespace
}  // namespace mculab::server
