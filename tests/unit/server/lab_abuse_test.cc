// The Lab against hostile agents and users: takeovers, foreign runs, revoked tokens and per-user
// caps (lab_test_fixture.h).
#include "tests/unit/server/lab_test_fixture.h"

namespace mculab::server::lab_testing {
namespace {

// ---- one agent must not act for another; one user must not starve the others ----------------

class LabAbuseTest : public LabTest {
 protected:
  // An uploaded artifact of `user` holding `bytes`.
  Result<Artifact> Upload(const Caller& user, const std::string& bytes,
                          const std::string& name = "cases.csv") {
    auto up = lab_->uploads().BeginUpload(user, name, 0);
    if (!up.ok()) return up.error();
    if (Status s = (*up)->Append(bytes); !s.ok()) return s.error();
    return (*up)->Finish();
  }
  // A caller holding a real token of a new user `name` (its streams watch the token).
  Caller WithToken(const std::string& name, const std::string& role) {
    auto issued = lab_->accounts().AddUser(name, role);
    EXPECT_TRUE(issued.ok());
    token_ = issued.ok() ? issued->token : "";
    return lab_->accounts().Authenticate(token_, "test");
  }
  std::string token_;
};

TEST_F(LabAbuseTest, ABoardOfAnAgentThatIsAwayCannotBeTakenOverEvenAfterARestart) {
  AgentSessionId s = ConnectHostAgent();
  lab_->agents().DisconnectAgent(s, "gone");
  auto thief = std::make_shared<FakeAgentChannel>();
  v1::Register reg;
  reg.set_agent("lab-2");
  reg.add_boards()->set_name("host-0");
  reg.mutable_boards(0)->set_kind("host");
  auto id = lab_->agents().ConnectAgent(testing::AgentCaller("lab-2"), testing::RegistrationOf(reg),
                                        thief);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(id.error().message.find("belongs to agent lab-1"), std::string::npos)
      << id.error().message;
  EXPECT_NE(id.error().message.find("mculab board host-0 --agent lab-2"), std::string::npos)
      << id.error().message;
  RestartLab();
  EXPECT_FALSE(lab_->agents()
                   .ConnectAgent(testing::AgentCaller("lab-2"), testing::RegistrationOf(reg), thief)
                   .ok());
  EXPECT_EQ(BoardNamed("host-0").board.agent, "lab-1");
}

TEST_F(LabAbuseTest, AnAdminGivesABoardToAnotherAgentAndTheOldOneIsRefusedFromThenOn) {
  ConnectHostAgent();
  auto denied = lab_->boards().AssignBoard(Member("mallory"), "host-0", "lab-2");
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, ErrorCode::kPermissionDenied);
  auto given = lab_->boards().AssignBoard(caller_, "host-0", "lab-2");
  ASSERT_TRUE(given.ok()) << given.error().message;
  EXPECT_EQ(given->agent, "lab-2");
  EXPECT_EQ(given->state, BoardState::kOffline);
  auto second = std::make_shared<FakeAgentChannel>();
  Connect(second, "lab-2", {{"host-0", "host"}});
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kIdle);
  v1::Register old;
  old.set_agent("lab-1");
  old.add_boards()->set_name("host-0");
  old.mutable_boards(0)->set_kind("host");
  EXPECT_FALSE(lab_->agents()
                   .ConnectAgent(testing::AgentCaller("lab-1"), testing::RegistrationOf(old),
                                 std::make_shared<FakeAgentChannel>())
                   .ok());
  auto history = lab_->boards().BoardHistory(caller_, "host-0");
  ASSERT_TRUE(history.ok());
  EXPECT_TRUE(std::any_of(history->begin(), history->end(), [](const BoardTransition& t) {
    return t.field == "agent" && t.from == "lab-1" && t.to == "lab-2";
  }));
}

TEST_F(LabAbuseTest, MessagesAboutAnotherAgentsRunAreRefusedCountedAndNeverStored) {
  AgentSessionId holder = ConnectHostAgent();
  JobId job = Submit(FcJob(1, 2));
  const v1::Assignment a = TakeAssignment(*agent_);
  Send(holder, RunStateMsg(a.run_id(), "running"));
  auto other = std::make_shared<FakeAgentChannel>();
  AgentSessionId stranger = Connect(other, "lab-2", {{"host-9", "host"}});
  ASSERT_EQ(lab_->refused_agent_messages(), 0u);
  Send(stranger, BatchMsg(a.run_id(), 0, 0, {5, 6}));
  Send(stranger, CaseDoneMsg(a.run_id(), 0));
  Send(stranger, FinishedMsg(a.run_id(), Outcome::SUCCEEDED, 1));
  Send(stranger, BatchMsg(999'999, 0, 0, {5}));  // a run that was never assigned
  EXPECT_EQ(lab_->refused_agent_messages(), 4u);
  EXPECT_EQ(*store_->CountSamples(a.run_id()), 0u);
  EXPECT_TRUE(store_->GetCaseResults(a.run_id())->empty());
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::AckOf(a.run_id(), 0)));
  EXPECT_FALSE(other->Has(FakeAgentChannel::AckOf(a.run_id(), 0)));
  EXPECT_EQ(lab_->jobs().GetJob(caller_, job)->state, JobState::kRunning);
  // The holder's own messages still count.
  RunToSuccess(holder, a);
  EXPECT_EQ(WaitForState(job, JobState::kSucceeded), JobState::kSucceeded);
}

TEST_F(LabAbuseTest, OnlyTheAgentHoldingARunThatReferencesAnArtifactMayFetchIt) {
  ConnectHostAgent();
  auto other = std::make_shared<FakeAgentChannel>();
  Connect(other, "lab-2", {{"host-9", "other-kind"}});
  auto artifact = Upload(caller_, "id,N,in,out\n0,1,8,4\n");
  ASSERT_TRUE(artifact.ok());
  const std::string sha = artifact->sha256;
  // Before any job references it, no agent may have it.
  auto early = lab_->uploads().OpenArtifact(testing::AgentCaller("lab-1"), sha);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().code, ErrorCode::kPermissionDenied);
  SubmitRequest r = FcJob(1, 1);
  r.cases_artifact = sha;
  Submit(r);
  TakeAssignment(*agent_);
  EXPECT_TRUE(lab_->uploads().OpenArtifact(testing::AgentCaller("lab-1"), sha).ok());
  auto stranger = lab_->uploads().OpenArtifact(testing::AgentCaller("lab-2"), sha);
  ASSERT_FALSE(stranger.ok());
  EXPECT_EQ(stranger.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(stranger.error().message.find("holds no active run"), std::string::npos);
  // A stranger asking for an artifact that does not exist learns nothing either.
  auto missing = lab_->uploads().OpenArtifact(testing::AgentCaller("lab-2"), std::string(64, 'b'));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kPermissionDenied);
  EXPECT_TRUE(lab_->uploads().OpenArtifact(caller_, sha).ok());  // admins keep access
}

TEST_F(LabAbuseTest, RevokingAnAgentsTokenEndsItsSessionAndTakesItsBoardsOffline) {
  auto issued = lab_->accounts().AddAgent("lab-1");
  ASSERT_TRUE(issued.ok());
  const Caller agent = lab_->accounts().Authenticate(issued->token, "test");
  ASSERT_EQ(agent.role, Role::kAgent);
  v1::Register reg;
  reg.set_agent("lab-1");
  reg.add_boards()->set_name("host-0");
  reg.mutable_boards(0)->set_kind("host");
  ASSERT_TRUE(lab_->agents().ConnectAgent(agent, testing::RegistrationOf(reg), agent_).ok());
  JobId job = Submit(FcJob());
  TakeAssignment(*agent_);
  EXPECT_EQ(lab_->accounts().watched_streams(), 1u);
  ASSERT_TRUE(lab_->accounts().Revoke(issued->token).ok());
  EXPECT_TRUE(agent_->hung_up());
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kOffline);
  EXPECT_EQ(lab_->jobs().GetJob(caller_, job)->state, JobState::kQueued);  // requeued
  EXPECT_EQ(lab_->accounts().watched_streams(), 0u);
}

TEST_F(LabAbuseTest, RevokingAUsersTokenEndsTheirWatchesAndFeeds) {
  ConnectHostAgent();
  JobId job = Submit(FcJob());
  const Caller viewer = WithToken("vera", "viewer");
  auto watch = lab_->jobs().Watch(viewer, job);
  ASSERT_TRUE(watch.ok());
  ASSERT_TRUE((*watch)->Next(std::chrono::seconds(10)).has_value());
  auto feed = lab_->Subscribe(viewer);
  EXPECT_FALSE(feed->ended());
  EXPECT_FALSE((*watch)->Ended());
  ASSERT_TRUE(lab_->accounts().Revoke(token_).ok());
  EXPECT_TRUE((*watch)->Ended());
  EXPECT_NE((*watch)->failure().find("revoked"), std::string::npos);
  EXPECT_TRUE(feed->ended());
}

TEST_F(LabAbuseTest, ARevocationByAnotherProcessEndsAWatchAtTheNextPeriodicCheck) {
  ConnectHostAgent();
  JobId job = Submit(FcJob());
  const Caller viewer = WithToken("vera", "viewer");
  auto watch = lab_->jobs().Watch(viewer, job);
  ASSERT_TRUE(watch.ok());
  ASSERT_TRUE((*watch)->Next(std::chrono::seconds(10)).has_value());
  // `mculab-server admin token revoke` is another process: its Accounts shares only the store.
  Accounts admin(*store_, clock_);
  ASSERT_TRUE(admin.Revoke(token_).ok());
  // The Lab's checker (every kRevocationCheckPeriod) ends the watch; Next waits at most 10 s.
  EXPECT_FALSE((*watch)->Next(std::chrono::seconds(10)).has_value());
  EXPECT_TRUE((*watch)->Ended());
  EXPECT_NE((*watch)->failure().find("revoked"), std::string::npos);
}

TEST_F(LabAbuseTest, QueuedJobsPerUserAreCappedNamingTheConfigKey) {
  config_.max_queued_jobs_per_user = 2;
  RestartLab();
  Connect(agent_, "lab-1", {{"host-0", "host"}});
  const Caller alice = Member("alice");
  ASSERT_TRUE(lab_->jobs().Submit(alice, FcJob()).ok());  // goes to the board
  ASSERT_TRUE(lab_->jobs().Submit(alice, FcJob()).ok());
  ASSERT_TRUE(lab_->jobs().Submit(alice, FcJob()).ok());
  auto refused = lab_->jobs().Submit(alice, FcJob());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(refused.error().message.find("max_queued_jobs_per_user"), std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(lab_->jobs().Submit(Member("bob"), FcJob()).ok());  // others are not held up
}

TEST_F(LabAbuseTest, BoardsAndTagsPerAgentAreCappedNamingTheConfigKeys) {
  config_.max_boards_per_agent = 1;
  config_.max_tags_per_board = 1;
  RestartLab();
  v1::Register reg;
  reg.set_agent("lab-1");
  for (const char* name : {"host-0", "host-1"}) {
    auto* b = reg.add_boards();
    b->set_name(name);
    b->set_kind("host");
  }
  auto many = lab_->agents().ConnectAgent(testing::AgentCaller("lab-1"),
                                          testing::RegistrationOf(reg), agent_);
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(many.error().message.find("max_boards_per_agent"), std::string::npos);
  reg.mutable_boards()->RemoveLast();
  (*reg.mutable_boards(0)->mutable_tags())["cpu"] = "m55";
  (*reg.mutable_boards(0)->mutable_tags())["npu"] = "u55";
  auto tagged = lab_->agents().ConnectAgent(testing::AgentCaller("lab-1"),
                                            testing::RegistrationOf(reg), agent_);
  ASSERT_FALSE(tagged.ok());
  EXPECT_NE(tagged.error().message.find("max_tags_per_board"), std::string::npos);
}

TEST_F(LabAbuseTest, UploadsPerUserAreCappedInCountAndBytesNamingTheConfigKeys) {
  config_.max_user_artifacts = 2;
  config_.max_user_artifact_bytes = 20;
  RestartLab();
  const Caller alice = Member("alice");
  ASSERT_TRUE(Upload(alice, "0123456789").ok());
  auto over = Upload(alice, "abcdefghijklmno");  // 10 + 15 > 20
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(over.error().message.find("max_user_artifact_bytes"), std::string::npos)
      << over.error().message;
  ASSERT_TRUE(Upload(alice, "abc").ok());
  auto third = Upload(alice, "x");
  ASSERT_FALSE(third.ok());
  EXPECT_NE(third.error().message.find("max_user_artifacts"), std::string::npos)
      << third.error().message;
  EXPECT_TRUE(Upload(Member("bob"), "0123456789").ok());  // quotas are per user
}

TEST_F(LabAbuseTest, UnusedUploadsAreDeletedAfterTheGracePeriodAndFreeTheQuota) {
  config_.artifact_grace_s = 60;
  config_.max_user_artifacts = 2;
  RestartLab();
  ConnectHostAgent();
  auto unused = Upload(caller_, "id,N,in,out\n0,1,8,4\n");
  auto used = Upload(caller_, "id,N,in,out\n0,1,16,4\n");
  ASSERT_TRUE(unused.ok() && used.ok());
  SubmitRequest r = FcJob(1, 1);
  r.cases_artifact = used->sha256;
  const JobId job = Submit(r);                         // on the board, unfinished
  ASSERT_FALSE(Upload(caller_, "third").ok());         // over max_user_artifacts
  EXPECT_EQ(*lab_->uploads().CollectArtifacts(), 0u);  // both are younger than the grace period
  clock_.Advance(std::chrono::seconds(61));
  EXPECT_EQ(*lab_->uploads().CollectArtifacts(), 1u);
  EXPECT_FALSE(store_->GetArtifact(unused->sha256)->has_value());
  EXPECT_TRUE(store_->GetArtifact(used->sha256)->has_value());
  EXPECT_TRUE(lab_->uploads().OpenArtifact(caller_, used->sha256).ok());
  EXPECT_TRUE(Upload(caller_, "third").ok());  // the quota has room again
  ASSERT_TRUE(lab_->jobs().Cancel(caller_, job).ok());
}

TEST_F(LabAbuseTest, ACaseOutsideTheKernelsLimitsIsRefusedAtSubmit) {
  ConnectHostAgent();
  SubmitRequest deep = FcJob(1, 1);
  deep.cases = {{3, {1, 70'000, 4}}};  // accumulation depth over the kernel's 65536
  auto reply = lab_->jobs().Submit(caller_, deep);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(reply.error().message.find("the kernel's limit"), std::string::npos)
      << reply.error().message;
  SubmitRequest huge;
  huge.kind = "host";
  huge.op = "conv2d_s8";
  huge.iterations = 1;
  huge.cases = {{4, {65535, 65535, 65535, 65535, 65535, 1, 1, 0, 0, 1, 1}}};
  auto too_big = lab_->jobs().Submit(caller_, huge);
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.error().message.find("more than a runner can address"), std::string::npos)
      << too_big.error().message;
}

TEST(Admission, TensorBytesSaturateInsteadOfWrappingAround) {
  // Every product fits 64 bits alone; their sum does not.
  const std::vector<std::int32_t> params = {65535, 65535, 65535, 65535, 65535, 65535,
                                            65535, 0,     0,     1,     1};
  EXPECT_EQ(WorkloadTensorBytes("conv2d_s8", params), std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(WorkloadTensorBytes("fully_connected_s8", {1, 8, 4}), 8u + 32u + 16u + 4u);
}

}  // namespace
}  // namespace mculab::server::lab_testing
