// Nothing is said before it is committed: the Lab over a store that can hold or fail its writes
// (faulty_store.h), a fake clock and fake agent channels. A held write is a commit that has not
// happened yet: nothing it reports may have reached an agent, a watch, a feed or a reply. A
// failed write is a commit that never happens: nothing it reports is ever said, and the Lab stops.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <future>
#include <random>

#include "db/sqlite_store.h"
#include "fakes.h"
#include "faulty_store.h"
#include "server/service/accounts.h"
#include "server/service/lab.h"
#include "tests/unit/server/owned_lab.h"

namespace mculab::server {
namespace {

using testing::FakeAgentChannel;
using testing::FakeClock;
using testing::FaultyStore;
using Mode = FaultyStore::Mode;
namespace v1 = mculab::v1;
using Outcome = v1::RunFinished;

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("mculab-commit-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

class CommitOrderTest : public ::testing::Test {
 protected:
  CommitOrderTest() {
    config_.health_checks = false;
    config_.heartbeat_timeout_ms = 24 * 3'600'000;
  }
  void SetUp() override { OpenLab(); }
  void TearDown() override {
    if (lab_) lab_->Stop();
    lab_.reset();
    faulty_.reset();
    if (store_) store_->Close();
    store_.reset();
  }

  void OpenLab() {
    auto store = db::SqliteStore::Open(dir_.path() / "mculab.db");
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(*store);
    faulty_ = std::make_unique<FaultyStore>(*store_);
    lab_ =
        std::make_unique<mculab::server::testing::OwnedLab>(*faulty_, clock_, config_, dir_.path());
    Status s = lab_->Start();
    ASSERT_TRUE(s.ok()) << s.error().message;
  }
  // A new server on the same database (after a crash or a stop: only what was committed).
  void RestartLab() {
    lab_->Stop();
    lab_.reset();
    faulty_.reset();
    store_->Close();
    store_.reset();
    OpenLab();
  }

  AgentSessionId Connect(const std::shared_ptr<FakeAgentChannel>& channel,
                         const std::vector<std::string>& boards = {"host-0"},
                         const std::vector<std::uint64_t>& active_runs = {}) {
    v1::Register reg;
    reg.set_agent("lab-1");
    for (std::uint64_t run : active_runs) reg.add_active_runs(run);
    for (const auto& name : boards) {
      auto* info = reg.add_boards();
      info->set_name(name);
      info->set_kind("host");
    }
    auto id = lab_->agents().ConnectAgent(testing::AgentCaller(reg.agent()),
                                          testing::RegistrationOf(reg), channel);
    EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().message);
    EXPECT_TRUE(channel->Take(FakeAgentChannel::IsRegistered));
    return id.ok() ? *id : 0;
  }

  static SubmitRequest FcJob(const std::string& board = "") {
    SubmitRequest r;
    r.kind = "host";
    r.board = board;
    r.op = "fully_connected_s8";
    r.cases.push_back({100, {1, 8, 4}});
    r.iterations = 4;
    r.warmup = 1;
    return r;
  }

  JobId Submit(SubmitRequest r = FcJob()) {
    auto reply = lab_->jobs().Submit(caller_, std::move(r));
    EXPECT_TRUE(reply.ok()) << (reply.ok() ? "" : reply.error().message);
    return reply.ok() ? reply->id : 0;
  }

  static v1::AgentMessage FinishedMsg(std::uint64_t run, Outcome::Outcome outcome,
                                      const std::string& message = "") {
    v1::AgentMessage m;
    m.mutable_run_finished()->set_run_id(run);
    m.mutable_run_finished()->set_outcome(outcome);
    m.mutable_run_finished()->set_message(message);
    return m;
  }

  // Every write queued so far has committed (or failed) and its callback has run.
  void Settle() { store_->Flush(); }

  TempDir dir_;
  FakeClock clock_;
  LabConfig config_;
  Caller caller_;
  std::unique_ptr<db::SqliteStore> store_;
  std::unique_ptr<FaultyStore> faulty_;
  std::unique_ptr<mculab::server::testing::OwnedLab> lab_;
  std::shared_ptr<FakeAgentChannel> agent_ = std::make_shared<FakeAgentChannel>();
};

// ---- held commits: nothing is said before ----

TEST_F(CommitOrderTest, AssignmentIsSentOnlyAfterTheRunRowIsCommitted) {
  Connect(agent_);
  faulty_->SetMode(Mode::kHold);
  auto reply =
      std::async(std::launch::async, [&] { return lab_->jobs().Submit(caller_, FcJob()); });
  ASSERT_TRUE(faulty_->WaitHeld(1));  // the job, its run and the assignment are decided
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::IsAssign)) << "assignment sent before its commit";
  faulty_->Release();
  ASSERT_TRUE(reply.get().ok());
  auto a = agent_->Take(FakeAgentChannel::IsAssign);
  ASSERT_TRUE(a.has_value());
  auto run = store_->GetRun(static_cast<RunId>(a->assign().run_id()));
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->job_id, static_cast<JobId>(a->assign().job_id()));
}

TEST_F(CommitOrderTest, RunClosedIsSentOnlyAfterTheRunsFinalStateIsCommitted) {
  const AgentSessionId session = Connect(agent_);
  const JobId job = Submit();
  auto a = agent_->Take(FakeAgentChannel::IsAssign);
  ASSERT_TRUE(a.has_value());
  const std::uint64_t run = a->assign().run_id();
  faulty_->SetMode(Mode::kHold);
  lab_->agents().OnAgentMessage(
      session, testing::AgentEventOf(FinishedMsg(run, Outcome::WORKLOAD_FAILED, "bad model")));
  ASSERT_TRUE(faulty_->WaitHeld(1));
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::ClosedOf(run)))
      << "RunClosed sent before the run's end was committed: the agent would drop its spool";
  faulty_->Release();
  ASSERT_TRUE(agent_->Take(FakeAgentChannel::ClosedOf(run)));
  auto stored = store_->GetRun(static_cast<RunId>(run));
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->state, RunState::kWorkloadFailed);
  auto j = store_->GetJob(job);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->state, JobState::kFailed);
}

TEST_F(CommitOrderTest, CancelIsSentAndAnsweredOnlyAfterItIsCommitted) {
  Connect(agent_);
  const JobId job = Submit();
  ASSERT_TRUE(agent_->Take(FakeAgentChannel::IsAssign));
  faulty_->SetMode(Mode::kHold);
  auto reply = std::async(std::launch::async, [&] { return lab_->jobs().Cancel(caller_, job); });
  ASSERT_TRUE(faulty_->WaitHeld(1));
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::IsCancel)) << "Cancel sent before its commit";
  EXPECT_NE(reply.wait_for(std::chrono::seconds(0)), std::future_status::ready)
      << "Cancel answered before its commit";
  faulty_->Release();
  auto out = reply.get();
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->state, JobState::kCancelled);
  auto stored = store_->GetJob(job);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->state, JobState::kCancelled);
  EXPECT_TRUE(agent_->Take(FakeAgentChannel::IsCancel));
}

TEST_F(CommitOrderTest, WatchAndFeedEventsArePublishedOnlyAfterTheirCommit) {
  Connect(agent_);
  Submit();                    // takes the board
  const JobId job = Submit();  // queued behind it
  auto watch = lab_->jobs().Watch(caller_, job);
  ASSERT_TRUE(watch.ok());
  auto first = (*watch)->Next(std::chrono::seconds(10));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->state, JobState::kQueued);
  auto feed = lab_->Subscribe();
  faulty_->SetMode(Mode::kHold);
  auto reply = std::async(std::launch::async, [&] { return lab_->jobs().Cancel(caller_, job); });
  ASSERT_TRUE(faulty_->WaitHeld(1));
  EXPECT_FALSE((*watch)->TryNext().has_value()) << "watch event before its commit";
  EXPECT_TRUE(feed->TakeAll().empty()) << "feed event before its commit";
  faulty_->Release();
  ASSERT_TRUE(reply.get().ok());
  auto e = (*watch)->Next(std::chrono::seconds(10));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->state, JobState::kCancelled);
  Settle();
  bool cancelled = false;
  for (const LabEvent& ev : feed->TakeAll()) {
    cancelled |= ev.kind == LabEvent::Kind::kJob && ev.job.job_id == job &&
                 ev.job.state == JobState::kCancelled;
  }
  EXPECT_TRUE(cancelled);
}

TEST_F(CommitOrderTest, GetJobReportsOnlyWhatIsCommitted) {
  Connect(agent_);
  Submit();
  const JobId job = Submit();  // queued behind the first
  faulty_->SetMode(Mode::kHold);
  auto reply = std::async(std::launch::async, [&] { return lab_->jobs().Cancel(caller_, job); });
  ASSERT_TRUE(faulty_->WaitHeld(1));
  auto seen = lab_->jobs().GetJob(caller_, job);
  ASSERT_TRUE(seen.ok()) << seen.error().message;
  EXPECT_EQ(seen->state, JobState::kQueued) << "a state that is not committed was reported";
  faulty_->Release();
  ASSERT_TRUE(reply.get().ok());
  auto after = lab_->jobs().GetJob(caller_, job);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->state, JobState::kCancelled);
}

// ---- failed commits: nothing is said, the Lab stops ----

TEST_F(CommitOrderTest, SubmitWhoseCommitFailsIsRefusedAndTheJobNeverRuns) {
  Connect(agent_);
  faulty_->SetMode(Mode::kFail);
  auto reply = lab_->jobs().Submit(caller_, FcJob());
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(reply.error().message.find("not accepted"), std::string::npos) << reply.error().message;
  Settle();
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::IsAssign)) << "a job that was never stored ran";
  // The disk has room again, but this server has stopped: it says so and runs nothing.
  faulty_->SetMode(Mode::kPass);
  auto again = lab_->jobs().Submit(caller_, FcJob());
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(again.error().message.find("stopped accepting work"), std::string::npos)
      << again.error().message;
  EXPECT_NE(again.error().message.find("full"), std::string::npos) << again.error().message;
  auto other = std::make_shared<FakeAgentChannel>();
  v1::Register reg;
  reg.set_agent("lab-2");
  auto refused = lab_->agents().ConnectAgent(testing::AgentCaller("lab-2"),
                                             testing::RegistrationOf(reg), other);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  Settle();
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::IsAssign));
  // A restarted server knows only what was committed: no such job.
  RestartLab();
  auto jobs = store_->QueryJobs(JobQuery{});
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(jobs->jobs.empty());
}

TEST_F(CommitOrderTest, FailedCommitWithoutAReplyStopsTheLabAndHangsUpItsAgents) {
  const AgentSessionId session = Connect(agent_);
  Submit();
  auto a = agent_->Take(FakeAgentChannel::IsAssign);
  ASSERT_TRUE(a.has_value());
  faulty_->SetMode(Mode::kFail);
  v1::AgentMessage running;
  running.mutable_run_state()->set_run_id(a->assign().run_id());
  running.mutable_run_state()->set_state("running");
  lab_->agents().OnAgentMessage(
      session, testing::AgentEventOf(running));  // answered by nothing: its write fails quietly
  Settle();
  EXPECT_EQ(faulty_->failed_writes(), 1u);
  faulty_->SetMode(Mode::kPass);
  auto boards = lab_->boards().ListBoards(caller_);
  ASSERT_FALSE(boards.ok());
  EXPECT_EQ(boards.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(boards.error().message.find("restart"), std::string::npos) << boards.error().message;
  // The agents are hung up (they keep their spools and reconnect later), by the next message of
  // theirs at the latest.
  v1::AgentMessage heartbeat;
  heartbeat.mutable_heartbeat();
  lab_->agents().OnAgentMessage(session, testing::AgentEventOf(heartbeat));
  EXPECT_TRUE(agent_->hung_up());
  // Nothing more is written: the database keeps what was committed, as after a crash.
  lab_->agents().DisconnectAgent(session, "the stream ended");
  Settle();
  auto job = store_->GetJob(static_cast<JobId>(a->assign().job_id()));
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, JobState::kAssigned);
  EXPECT_EQ(job->attempts, 1u);
}

// ---- run ids ----

TEST_F(CommitOrderTest, RunIdIsNeverReusedAfterARestartThatLostTheAssignmentsCommit) {
  Connect(agent_, {"host-0", "host-1"});
  Submit();
  auto first = agent_->Take(FakeAgentChannel::IsAssign);
  ASSERT_TRUE(first.has_value());
  const std::uint64_t committed_run = first->assign().run_id();
  // The next assignment's commit never happens (the server dies with it).
  faulty_->SetMode(Mode::kFail);
  EXPECT_FALSE(lab_->jobs().Submit(caller_, FcJob()).ok());
  const std::uint64_t lost_run = committed_run + 1;  // the id the lost assignment numbered
  RestartLab();
  auto again = std::make_shared<FakeAgentChannel>();
  Connect(again, {"host-0", "host-1"}, {committed_run});
  Submit();
  auto next = again->Take(FakeAgentChannel::IsAssign);
  ASSERT_TRUE(next.has_value());
  EXPECT_GT(next->assign().run_id(), lost_run);
  EXPECT_NE(next->assign().run_id(), committed_run);
}

// ---- health checks are known by their origin, not by the user name ----

TEST_F(CommitOrderTest, JobsOfAUserNamedLabAreNotHealthChecks) {
  const AgentSessionId session = Connect(agent_);
  Caller lab_user;  // a member named "lab", made before the name was reserved
  lab_user.user = "lab";
  lab_user.role = Role::kMember;
  auto reply = lab_->jobs().Submit(lab_user, FcJob("host-0"));
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  auto a = agent_->Take(FakeAgentChannel::IsAssign);
  ASSERT_TRUE(a.has_value());
  // An infrastructure failure requeues a user's job; a health check would fail instead.
  lab_->agents().OnAgentMessage(
      session,
      testing::AgentEventOf(FinishedMsg(a->assign().run_id(), Outcome::INFRA_FAILED, "probe")));
  Settle();
  auto job = store_->GetJob(reply->id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->origin, JobOrigin::kUser);
  EXPECT_NE(job->state, JobState::kFailed) << job->message;
  auto again = agent_->Take(FakeAgentChannel::IsAssign);  // requeued, and on the board again
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->assign().job_id(), static_cast<std::uint64_t>(reply->id));
}

TEST_F(CommitOrderTest, HealthCheckJobsAreStoredWithTheirOrigin) {
  config_.health_checks = true;
  RestartLab();
  const AgentSessionId session = Connect(agent_);
  Submit(FcJob("host-0"));
  // A board the lab has never seen takes its health check before any user's job.
  auto a = agent_->Take(FakeAgentChannel::IsAssign);
  ASSERT_TRUE(a.has_value());
  auto first = store_->GetJob(static_cast<JobId>(a->assign().job_id()));
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->origin, JobOrigin::kHealthCheck);
  lab_->agents().OnAgentMessage(
      session,
      testing::AgentEventOf(FinishedMsg(a->assign().run_id(), Outcome::INFRA_FAILED, "probe")));
  Settle();  // the board's health is still unknown: another health check is queued for it
  auto jobs = store_->QueryJobs(JobQuery{});
  ASSERT_TRUE(jobs.ok());
  int checks = 0;
  for (const JobRow& row : jobs->jobs) {
    const Job& j = row.job;
    if (j.origin == JobOrigin::kHealthCheck) {
      ++checks;
      EXPECT_EQ(j.board, "host-0");
    }
  }
  EXPECT_EQ(checks, 2);
}

TEST_F(CommitOrderTest, TheUserNameLabIsReserved) {
  Accounts accounts(*store_, clock_);
  auto added = accounts.AddUser("lab", "member");
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(added.error().message.find("reserved"), std::string::npos) << added.error().message;
  EXPECT_TRUE(accounts.AddUser("lab-member", "member").ok());
}

// ---- files are private ----

mode_t ModeOf(const std::filesystem::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 0777;
}

TEST_F(CommitOrderTest, DatabaseAndArtifactsAreReadableByTheirOwnerOnly) {
  const mode_t old_umask = ::umask(022);
  Connect(agent_);
  Submit();
  Settle();
  for (const char* name : {"mculab.db", "mculab.db-wal", "mculab.db-shm"}) {
    EXPECT_EQ(ModeOf(dir_.path() / name), 0600u) << name;
  }
  auto upload = lab_->uploads().BeginUpload(caller_, "cases.csv", 6);
  ASSERT_TRUE(upload.ok()) << upload.error().message;
  ASSERT_TRUE((*upload)->Append("id,N\n0").ok());
  auto artifact = (*upload)->Finish();
  ASSERT_TRUE(artifact.ok()) << artifact.error().message;
  const auto root = dir_.path() / "artifacts";
  const auto file = root / artifact->sha256.substr(0, 2) / artifact->sha256;
  EXPECT_EQ(ModeOf(root), 0700u);
  EXPECT_EQ(ModeOf(root / "tmp"), 0700u);
  EXPECT_EQ(ModeOf(file.parent_path()), 0700u);
  EXPECT_EQ(ModeOf(file), 0600u);
  ::umask(old_umask);
}

}  // namespace
}  // namespace mculab::server
