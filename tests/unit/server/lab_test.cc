// The Lab's use cases with a real SQLite store in a temporary directory, a fake clock and fake
// agent channels. No sleeps: tests wait for the messages and events the Lab produces.
#include "server/service/lab.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <limits>
#include <map>
#include <random>
#include <thread>

#include "db/sqlite_store.h"
#include "fakes.h"
#include "server/domain/admission.h"

namespace mculab::server {
namespace {

using testing::FakeAgentChannel;
using testing::FakeClock;
namespace v1 = mculab::v1;
using Outcome = v1::RunFinished;

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("mculab-lab-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct BoardSpec {
  std::string name;
  std::string kind;
};

class LabTest : public ::testing::Test {
 protected:
  // The fake agents send no heartbeats while tests move the clock by minutes; tests of the
  // heartbeat timeout set their own.
  LabTest() { config_.heartbeat_timeout_ms = 24 * 3'600'000; }
  void SetUp() override { OpenLab(); }
  void TearDown() override {
    if (lab_) lab_->Stop();
    lab_.reset();
    store_.reset();
  }

  void OpenLab() {
    auto store = db::SqliteStore::Open(dir_.path() / "mculab.db");
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(*store);
    lab_ = std::make_unique<Lab>(*store_, clock_, config_, dir_.path());
    Status s = lab_->Start();
    ASSERT_TRUE(s.ok()) << s.error().message;
  }

  void RestartLab() {
    lab_->Stop();
    lab_.reset();
    store_->Close();
    store_.reset();
    OpenLab();
  }

  AgentSessionId Connect(const std::shared_ptr<FakeAgentChannel>& channel, const std::string& agent,
                         const std::vector<BoardSpec>& boards,
                         const std::vector<std::uint64_t>& active_runs = {}) {
    v1::Register reg;
    reg.set_agent(agent);
    for (std::uint64_t run : active_runs) reg.add_active_runs(run);
    for (const auto& b : boards) {
      auto* info = reg.add_boards();
      info->set_name(b.name);
      info->set_kind(b.kind);
      info->set_serial("SN-" + b.name);
    }
    auto id = lab_->ConnectAgent(testing::AgentCaller(reg.agent()), testing::RegistrationOf(reg),
                                 channel);
    EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().message);
    EXPECT_TRUE(channel->Take(FakeAgentChannel::IsRegistered));
    return id.ok() ? *id : 0;
  }

  // An agent whose boards carry tags: {name, kind, {{key, value}, ...}}.
  struct TaggedBoard {
    std::string name;
    std::string kind;
    std::map<std::string, std::string> tags;
  };
  AgentSessionId ConnectTagged(const std::shared_ptr<FakeAgentChannel>& channel,
                               const std::string& agent, const std::vector<TaggedBoard>& boards) {
    v1::Register reg;
    reg.set_agent(agent);
    for (const auto& b : boards) {
      auto* info = reg.add_boards();
      info->set_name(b.name);
      info->set_kind(b.kind);
      info->set_serial("SN-" + b.name);
      for (const auto& [k, v] : b.tags) (*info->mutable_tags())[k] = v;
    }
    auto id = lab_->ConnectAgent(testing::AgentCaller(reg.agent()), testing::RegistrationOf(reg),
                                 channel);
    EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error().message);
    EXPECT_TRUE(channel->Take(FakeAgentChannel::IsRegistered));
    return id.ok() ? *id : 0;
  }

  // A host agent "lab-1" with one board "host-0".
  AgentSessionId ConnectHostAgent() { return Connect(agent_, "lab-1", {{"host-0", "host"}}); }

  static SubmitRequest FcJob(std::uint32_t cases = 2, std::uint32_t iterations = 4,
                             std::string kind = "host") {
    SubmitRequest r;
    r.kind = std::move(kind);
    r.op = "fully_connected_s8";
    for (std::uint32_t i = 0; i < cases; ++i)
      r.cases.push_back({100 + i, {1, static_cast<std::int32_t>(8 * (i + 1)), 4}});
    r.iterations = iterations;
    r.warmup = 1;
    return r;
  }

  JobId Submit(SubmitRequest r) {
    auto reply = lab_->Submit(caller_, std::move(r));
    EXPECT_TRUE(reply.ok()) << (reply.ok() ? "" : reply.error().message);
    return reply.ok() ? reply->id : 0;
  }

  v1::Assignment TakeAssignment(FakeAgentChannel& channel) {
    auto m = channel.Take(FakeAgentChannel::IsAssign);
    EXPECT_TRUE(m.has_value()) << "no Assignment arrived";
    return m ? m->assign() : v1::Assignment{};
  }

  void Send(AgentSessionId session, const v1::AgentMessage& m) {
    lab_->OnAgentMessage(session, testing::AgentEventOf(m));
  }

  static v1::AgentMessage RunStateMsg(std::uint64_t run, const std::string& state) {
    v1::AgentMessage m;
    m.mutable_run_state()->set_run_id(run);
    m.mutable_run_state()->set_state(state);
    return m;
  }
  static v1::AgentMessage StartedMsg(std::uint64_t run) {
    v1::AgentMessage m;
    auto* s = m.mutable_run_started();
    s->set_run_id(run);
    s->set_runner_version("0.1.0");
    s->set_port("host");
    s->set_timer_unit("ns");
    s->add_counters("instructions");
    s->set_firmware_sha256(std::string(64, 'f'));
    return m;
  }
  // One batch with the given timer values of one case, iterations from `first`.
  static v1::AgentMessage BatchMsg(std::uint64_t run, std::uint64_t seq, std::uint32_t case_index,
                                   const std::vector<std::int64_t>& values,
                                   std::uint32_t first = 0) {
    v1::AgentMessage m;
    auto* b = m.mutable_batch();
    b->set_run_id(run);
    b->set_sequence(seq);
    for (std::size_t i = 0; i < values.size(); ++i) {
      auto* s = b->add_samples();
      s->set_case_index(case_index);
      s->set_iteration(first + static_cast<std::uint32_t>(i));
      s->set_metric(0);
      s->set_value(values[i]);
      auto* c = b->add_samples();
      c->set_case_index(case_index);
      c->set_iteration(first + static_cast<std::uint32_t>(i));
      c->set_metric(1);
      c->set_value(1000);
    }
    return m;
  }
  static v1::AgentMessage CaseDoneMsg(std::uint64_t run, std::uint32_t case_index, bool ok = true) {
    v1::AgentMessage m;
    auto* c = m.mutable_case_done();
    c->set_run_id(run);
    c->set_case_index(case_index);
    c->set_checksum(ok ? 0x1234 : 0x9999);
    c->set_expected_checksum(0x1234);
    c->set_checksum_ok(ok);
    c->set_overhead(7);
    return m;
  }
  static v1::AgentMessage FinishedMsg(std::uint64_t run, Outcome::Outcome outcome,
                                      std::uint32_t batches, const std::string& message = "") {
    v1::AgentMessage m;
    auto* f = m.mutable_run_finished();
    f->set_run_id(run);
    f->set_outcome(outcome);
    f->set_batches_sent(batches);
    f->set_message(message);
    return m;
  }

  // Follows the job's events until `target` or the end; returns the last state seen.
  JobState WaitForState(JobId id, JobState target) {
    auto watch = lab_->Watch(caller_, id);
    EXPECT_TRUE(watch.ok());
    JobState last = JobState::kQueued;
    while (watch.ok()) {
      auto e = (*watch)->Next(std::chrono::seconds(10));
      if (!e) break;
      last = e->state;
      if (last == target) break;
    }
    return last;
  }

  // Runs a whole successful job on run `a`: states, provenance, one batch per case, checksums.
  void RunToSuccess(AgentSessionId session, const v1::Assignment& a) {
    Send(session, RunStateMsg(a.run_id(), "preparing"));
    Send(session, RunStateMsg(a.run_id(), "running"));
    Send(session, StartedMsg(a.run_id()));
    std::uint32_t seq = 0;
    for (const auto& c : a.cases()) {
      std::vector<std::int64_t> values;
      for (std::uint32_t i = 0; i < a.iterations(); ++i) values.push_back(100 + i);
      Send(session, BatchMsg(a.run_id(), seq++, c.index(), values));
      Send(session, CaseDoneMsg(a.run_id(), c.index()));
    }
    Send(session, FinishedMsg(a.run_id(), Outcome::SUCCEEDED, seq));
  }

  BoardView BoardNamed(const std::string& name) {
    auto boards = lab_->ListBoards(caller_);
    EXPECT_TRUE(boards.ok());
    for (const auto& b : *boards) {
      if (b.board.name == name) return b;
    }
    ADD_FAILURE() << "no board " << name;
    return {};
  }

  TempDir dir_;
  FakeClock clock_;
  // Health checks off unless a test turns them on: they add jobs of their own.
  LabConfig config_ = [] {
    LabConfig c;
    c.health_checks = false;
    return c;
  }();
  Caller caller_;
  std::unique_ptr<db::SqliteStore> store_;
  std::unique_ptr<Lab> lab_;
  std::shared_ptr<FakeAgentChannel> agent_ = std::make_shared<FakeAgentChannel>();
};

// ---- submit and admission ----

TEST_F(LabTest, SubmittedJobIsAssignedAtOnceToAnIdleBoardOfItsKind) {
  ConnectHostAgent();
  auto reply = lab_->Submit(caller_, FcJob(2, 5));
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->state, JobState::kAssigned);
  EXPECT_EQ(reply->queue_position, 0u);
  v1::Assignment a = TakeAssignment(*agent_);
  EXPECT_EQ(a.job_id(), static_cast<std::uint64_t>(reply->id));
  EXPECT_EQ(a.board(), "host-0");
  EXPECT_EQ(a.op(), "fully_connected_s8");
  EXPECT_EQ(a.iterations(), 5u);
  EXPECT_EQ(a.warmup(), 1u);
  EXPECT_EQ(a.timeout_s(), config_.default_timeout_s);
  ASSERT_EQ(a.cases_size(), 2);
  EXPECT_EQ(a.cases(1).index(), 1u);
  EXPECT_EQ(a.cases(1).id(), 101);
  EXPECT_EQ(std::vector<int>(a.cases(1).params().begin(), a.cases(1).params().end()),
            (std::vector<int>{1, 16, 4}));
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kBusy);
  EXPECT_EQ(BoardNamed("host-0").board.current_job, reply->id);
}

TEST_F(LabTest, JobNamingABoardRunsOnThatBoard) {
  Connect(agent_, "lab-1", {{"host-0", "host"}, {"host-1", "host"}});
  SubmitRequest r = FcJob();
  r.kind.clear();
  r.board = "host-1";
  Submit(r);
  EXPECT_EQ(TakeAssignment(*agent_).board(), "host-1");
}

TEST_F(LabTest, AdmissionRejectsAKindNoBoardHasAndListsTheKinds) {
  Connect(agent_, "lab-1", {{"an547-0", "corstone300-qemu"}, {"host-0", "host"}});
  auto reply = lab_->Submit(caller_, FcJob(1, 1, "nucleo-h743"));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(reply.error().message.find("no board of kind 'nucleo-h743'"), std::string::npos)
      << reply.error().message;
  EXPECT_NE(reply.error().message.find("corstone300-qemu (1 board)"), std::string::npos);
  EXPECT_NE(reply.error().message.find("host (1 board)"), std::string::npos);
}

TEST_F(LabTest, AdmissionRejectsAnUnknownBoardNameAndListsTheBoards) {
  ConnectHostAgent();
  SubmitRequest r = FcJob();
  r.board = "host-7";
  auto reply = lab_->Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.error().message.find("no board named 'host-7'; the lab has: host-0"),
            std::string::npos)
      << reply.error().message;
}

TEST_F(LabTest, AdmissionRejectsATagNoBoardOfTheKindHasAndListsTheirTags) {
  ConnectTagged(agent_, "lab-1",
                {{"an547-0", "host", {{"cpu", "cortex-m55"}}},
                 {"an547-1", "host", {}},
                 {"other-0", "qemu", {{"cpu", "cortex-m7"}}}});
  SubmitRequest r = FcJob();
  r.tags = {{"cpu", "cortex-m7"}};
  auto reply = lab_->Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(reply.error().message.find("no board of kind host has tag cpu=cortex-m7; its boards "
                                       "have: an547-0 {cpu=cortex-m55}, an547-1 {}"),
            std::string::npos)
      << reply.error().message;
  // A named board must have the tag too.
  r.board = "an547-0";
  reply = lab_->Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.error().message.find("board an547-0 does not have tag cpu=cortex-m7; its tags "
                                       "are {cpu=cortex-m55}"),
            std::string::npos)
      << reply.error().message;
  // A tag that is not KEY=VALUE is invalid.
  r.board.clear();
  r.tags = {{"cpu", ""}};
  reply = lab_->Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(LabTest, TaggedJobRunsOnlyOnABoardWithTheTagAndKeepsItsTagsAfterARestart) {
  const std::vector<TaggedBoard> boards = {{"host-0", "host", {{"cpu", "x86"}}},
                                           {"host-1", "host", {{"cpu", "arm"}}}};
  ConnectTagged(agent_, "lab-1", boards);
  SubmitRequest r = FcJob();
  r.tags = {{"cpu", "arm"}};
  const JobId first = Submit(r);
  EXPECT_EQ(TakeAssignment(*agent_).board(), "host-1");
  const JobId second = Submit(r);  // host-0 is idle but lacks the tag: the job waits
  EXPECT_EQ(lab_->GetJob(caller_, second)->state, JobState::kQueued);
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kIdle);
  EXPECT_EQ(BoardNamed("host-0").queue_length, 0u);
  EXPECT_EQ(BoardNamed("host-1").queue_length, 1u);
  EXPECT_EQ(lab_->GetJob(caller_, first)->tags, r.tags);

  RestartLab();
  auto job = lab_->GetJob(caller_, second);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, JobState::kQueued);
  EXPECT_EQ(job->tags, r.tags);
  // Back with both boards: only host-1 gets work (the requeued first job), host-0 stays idle.
  auto agent = std::make_shared<FakeAgentChannel>();
  ConnectTagged(agent, "lab-1", boards);
  EXPECT_EQ(TakeAssignment(*agent).board(), "host-1");
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kIdle);
  EXPECT_EQ(lab_->GetJob(caller_, second)->state, JobState::kQueued);
}

TEST_F(LabTest, AdmissionAcceptsAKindWhoseBoardsAreOfflineAndQueuesTheJob) {
  AgentSessionId s = ConnectHostAgent();
  lab_->DisconnectAgent(s, "test");
  auto reply = lab_->Submit(caller_, FcJob());
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->state, JobState::kQueued);
  EXPECT_EQ(reply->queue_position, 1u);
}

TEST_F(LabTest, UnknownOpIsRejectedNamingTheBuiltInOps) {
  ConnectHostAgent();
  SubmitRequest r = FcJob();
  r.op = "conv3d_s8";
  auto reply = lab_->Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(reply.error().message.find("unknown op 'conv3d_s8'"), std::string::npos);
  EXPECT_NE(reply.error().message.find("conv2d_s8, fully_connected_s8"), std::string::npos);
}

TEST_F(LabTest, BadCaseParameterIsRejectedNamingTheCaseAndParameter) {
  ConnectHostAgent();
  SubmitRequest r = FcJob(3);
  r.cases[2].params = {1, 8, 0};
  auto reply = lab_->Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(reply.error().message.find("case 2 (id 102)"), std::string::npos)
      << reply.error().message;
  EXPECT_NE(reply.error().message.find("out_features"), std::string::npos);
}

TEST_F(LabTest, WrongParameterCountIsRejected) {
  ConnectHostAgent();
  SubmitRequest r = FcJob(1);
  r.cases[0].params = {1, 8};
  auto reply = lab_->Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.error().message.find("takes 3 parameters, got 2"), std::string::npos);
}

TEST_F(LabTest, IterationsOutsideOneToOneHundredThousandAreRejected) {
  ConnectHostAgent();
  for (std::uint32_t n : {0u, 100'001u}) {
    auto reply = lab_->Submit(caller_, FcJob(1, n));
    ASSERT_FALSE(reply.ok());
    EXPECT_NE(reply.error().message.find("iterations must be between 1 and 100000"),
              std::string::npos);
  }
  EXPECT_TRUE(lab_->Submit(caller_, FcJob(1, 100'000)).ok());
}

TEST_F(LabTest, JobWithoutCasesIsRejected) {
  ConnectHostAgent();
  auto reply = lab_->Submit(caller_, FcJob(0));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(LabTest, CasesArtifactMustHaveBeenUploaded) {
  ConnectHostAgent();
  SubmitRequest r = FcJob();
  r.cases_artifact = std::string(64, 'a');
  auto reply = lab_->Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.error().message.find("never uploaded"), std::string::npos);

  auto upload = lab_->BeginUpload(caller_, "cases.csv", 0);
  ASSERT_TRUE(upload.ok());
  ASSERT_TRUE((*upload)->Append("id,N,in,out\n0,1,8,4\n").ok());
  auto artifact = (*upload)->Finish();
  ASSERT_TRUE(artifact.ok());
  r.cases_artifact = artifact->sha256;
  auto ok = lab_->Submit(caller_, r);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(lab_->GetJob(caller_, ok->id)->cases_artifact, artifact->sha256);
}

TEST_F(LabTest, QueuePositionCountsJobsAheadForTheSameBoards) {
  Connect(agent_, "lab-1", {{"an547-0", "corstone300-qemu"}, {"host-0", "host"}});
  Submit(FcJob());  // takes host-0
  EXPECT_EQ(lab_->Submit(caller_, FcJob())->queue_position, 1u);
  EXPECT_EQ(lab_->Submit(caller_, FcJob(1, 1, "corstone300-qemu"))->state, JobState::kAssigned);
  EXPECT_EQ(lab_->Submit(caller_, FcJob())->queue_position, 2u);
}

TEST_F(LabTest, ListingManyQueuedJobsGivesEachItsPositionAmongTheJobsForItsBoards) {
  Connect(agent_, "lab-1", {{"an547-0", "corstone300-qemu"}, {"host-0", "host"}});
  Submit(FcJob());                          // takes host-0
  Submit(FcJob(1, 1, "corstone300-qemu"));  // takes an547-0
  std::vector<JobId> host, qemu;
  JobId cancelled = 0;
  for (int i = 0; i < 120; ++i) {
    const bool on_host = i % 3 != 0;
    const JobId id = Submit(on_host ? FcJob() : FcJob(1, 1, "corstone300-qemu"));
    if (i == 40) {
      ASSERT_TRUE(lab_->Cancel(caller_, id).ok());  // leaves the queue: behind it move up
      cancelled = id;
      continue;
    }
    (on_host ? host : qemu).push_back(id);
  }
  JobFilter all;
  all.limit = 1000;
  auto jobs = lab_->ListJobs(caller_, all);
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 122u);
  std::map<JobId, std::uint32_t> positions;
  for (const Job& j : *jobs) positions[j.id] = j.wait.position;
  for (std::size_t i = 0; i < host.size(); ++i) EXPECT_EQ(positions[host[i]], i + 1);
  for (std::size_t i = 0; i < qemu.size(); ++i) EXPECT_EQ(positions[qemu[i]], i + 1);
  EXPECT_EQ(positions[cancelled], 0u);
  EXPECT_EQ(positions[1], 0u) << "a job on a board waits for nothing";
  // One job read alone says the same as the page.
  EXPECT_EQ(lab_->GetJob(caller_, host.back())->wait.position, host.size());
}

TEST_F(LabTest, BoardListShowsStateHealthAndQueueLengthPerBoard) {
  Connect(agent_, "lab-1", {{"host-0", "host"}, {"host-1", "host"}});
  Submit(FcJob());
  Submit(FcJob());
  SubmitRequest pinned = FcJob();
  pinned.board = "host-1";
  Submit(pinned);
  Submit(FcJob());
  // Jobs 1 and 2 hold host-0 and host-1; job 3 (pinned to host-1) and job 4 (any host) wait.
  EXPECT_EQ(BoardNamed("host-0").queue_length, 1u);
  EXPECT_EQ(BoardNamed("host-1").queue_length, 2u);
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kGood);
  EXPECT_EQ(BoardNamed("host-0").board.agent, "lab-1");
  EXPECT_EQ(BoardNamed("host-0").board.serial, "SN-host-0");
}

// ---- a run from start to end ----

TEST_F(LabTest, SuccessfulRunStoresSamplesAndComputesPerCaseStatistics) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob(2, 4));
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "preparing"));
  Send(s, RunStateMsg(a.run_id(), "running"));
  Send(s, StartedMsg(a.run_id()));
  Send(s, BatchMsg(a.run_id(), 0, 0, {100, 110, 105, 120}));
  Send(s, CaseDoneMsg(a.run_id(), 0));
  Send(s, BatchMsg(a.run_id(), 1, 1, {7, 7}));
  Send(s, BatchMsg(a.run_id(), 2, 1, {7, 9}, 2));
  Send(s, CaseDoneMsg(a.run_id(), 1));
  Send(s, FinishedMsg(a.run_id(), Outcome::SUCCEEDED, 3));
  ASSERT_EQ(WaitForState(id, JobState::kSucceeded), JobState::kSucceeded);
  for (std::uint64_t seq = 0; seq < 3; ++seq) {
    EXPECT_TRUE(agent_->Take(FakeAgentChannel::AckOf(a.run_id(), seq))) << seq;
  }
  EXPECT_TRUE(agent_->Take(FakeAgentChannel::ClosedOf(a.run_id())));

  auto results = lab_->GetResults(caller_, id, /*include_samples=*/true);
  ASSERT_TRUE(results.ok()) << results.error().message;
  EXPECT_EQ(results->job.state, JobState::kSucceeded);
  EXPECT_EQ(results->job.message, "");
  EXPECT_EQ(results->job.progress_done, 8u);
  EXPECT_EQ(results->param_names, (std::vector<std::string>{"N", "in_features", "out_features"}));
  ASSERT_TRUE(results->run.has_value());
  EXPECT_EQ(results->run->provenance.timer_unit, "ns");
  EXPECT_EQ(results->run->provenance.board_serial, "SN-host-0");
  ASSERT_EQ(results->cases.size(), 2u);
  const CaseOutcome& c0 = results->cases[0];
  EXPECT_EQ(c0.case_id, 100);
  ASSERT_TRUE(c0.result.has_value());
  EXPECT_TRUE(c0.result->ok);
  EXPECT_EQ(c0.result->overhead, 7);
  ASSERT_EQ(c0.stats.size(), 2u);  // the timer and one counter
  const CaseStats& t = c0.stats[0];
  EXPECT_EQ(t.metric, "ns");
  EXPECT_EQ(t.unit, "ns");
  EXPECT_EQ(t.n, 4u);
  EXPECT_DOUBLE_EQ(t.min, 100);
  EXPECT_DOUBLE_EQ(t.max, 120);
  EXPECT_DOUBLE_EQ(t.median, 107.5);
  EXPECT_DOUBLE_EQ(t.mean, 108.75);
  EXPECT_DOUBLE_EQ(t.p90, 117);
  EXPECT_EQ(c0.stats[1].metric, "instructions");
  EXPECT_EQ(c0.stats[1].unit, "count");
  EXPECT_DOUBLE_EQ(c0.stats[1].median, 1000);
  EXPECT_DOUBLE_EQ(results->cases[1].stats[0].median, 7);
  EXPECT_EQ(results->cases[1].stats[0].n, 4u);

  // Raw samples in iteration order, per case and metric.
  ASSERT_EQ(results->samples.size(), 4u);
  EXPECT_EQ(results->samples[0].case_index, 0u);
  EXPECT_EQ(results->samples[0].metric, "ns");
  EXPECT_EQ(results->samples[0].values, (std::vector<std::int64_t>{100, 110, 105, 120}));
  EXPECT_EQ(results->samples[2].values, (std::vector<std::int64_t>{7, 7, 7, 9}));

  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kIdle);
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kGood);
}

TEST_F(LabTest, EveryTransitionOfAJobIsInTheAuditTrail) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob(1, 2));
  RunToSuccess(s, TakeAssignment(*agent_));
  ASSERT_EQ(WaitForState(id, JobState::kSucceeded), JobState::kSucceeded);
  auto history = lab_->JobHistory(caller_, id);
  ASSERT_TRUE(history.ok());
  std::vector<std::string> path;
  for (const auto& t : *history) path.push_back(t.from + ">" + t.to);
  EXPECT_EQ(path, (std::vector<std::string>{">queued", "queued>assigned", "assigned>preparing",
                                            "preparing>running", "running>succeeded"}));
  EXPECT_EQ((*history)[0].actor, "local");
  EXPECT_EQ((*history)[2].actor, "agent:lab-1");
}

TEST_F(LabTest, BatchIsAcknowledgedOnlyAfterItsTransactionCommits) {
  AgentSessionId s = ConnectHostAgent();
  Submit(FcJob(1, 2));
  v1::Assignment a = TakeAssignment(*agent_);
  // Hold the store's writer so nothing can commit.
  std::promise<void> holding, release;
  std::shared_future<void> released = release.get_future().share();
  store_->Write(WriteSet{}, [&](const WriteOutcome&) {
    holding.set_value();
    released.wait();
  });
  holding.get_future().wait();
  Send(s, BatchMsg(a.run_id(), 0, 0, {5, 6}));
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::AckOf(a.run_id(), 0)));
  release.set_value();
  EXPECT_TRUE(agent_->Take(FakeAgentChannel::AckOf(a.run_id(), 0)));
  EXPECT_EQ(*store_->CountSamples(static_cast<RunId>(a.run_id())), 4u);
}

TEST_F(LabTest, RepeatedBatchIsAcknowledgedAgainButStoredOnce) {
  AgentSessionId s = ConnectHostAgent();
  Submit(FcJob(1, 2));
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, BatchMsg(a.run_id(), 0, 0, {5, 6}));
  ASSERT_TRUE(agent_->Take(FakeAgentChannel::AckOf(a.run_id(), 0)));
  Send(s, BatchMsg(a.run_id(), 0, 0, {5, 6}));
  ASSERT_TRUE(agent_->Take(FakeAgentChannel::AckOf(a.run_id(), 0)));
  EXPECT_EQ(*store_->CountSamples(static_cast<RunId>(a.run_id())), 4u);
  EXPECT_EQ(lab_->GetJob(caller_, static_cast<JobId>(a.job_id()))->progress_done, 2u);
}

TEST_F(LabTest, JobSucceedsOnlyOnceEveryBatchTheAgentSentIsCommitted) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob(1, 4));
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "running"));
  Send(s, BatchMsg(a.run_id(), 0, 0, {1, 2}));
  Send(s, CaseDoneMsg(a.run_id(), 0));
  Send(s, FinishedMsg(a.run_id(), Outcome::SUCCEEDED, 2));  // batch 1 is still on its way
  ASSERT_TRUE(agent_->Take(FakeAgentChannel::AckOf(a.run_id(), 0)));
  store_->Flush();
  EXPECT_EQ(lab_->GetJob(caller_, id)->state, JobState::kRunning);
  Send(s, BatchMsg(a.run_id(), 1, 0, {3, 4}, 2));
  ASSERT_EQ(WaitForState(id, JobState::kSucceeded), JobState::kSucceeded);
  auto results = lab_->GetResults(caller_, id, false);
  EXPECT_EQ(results->cases[0].stats[0].n, 4u);
}

TEST_F(LabTest, MissingIterationsAreFlaggedOnTheSucceededJob) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob(1, 4));
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "running"));
  Send(s, BatchMsg(a.run_id(), 0, 0, {1, 2, 3}));
  Send(s, CaseDoneMsg(a.run_id(), 0));
  Send(s, FinishedMsg(a.run_id(), Outcome::SUCCEEDED, 1));
  ASSERT_EQ(WaitForState(id, JobState::kSucceeded), JobState::kSucceeded);
  EXPECT_EQ(lab_->GetJob(caller_, id)->message, "case 0: 3 of 4 iterations stored");
}

TEST_F(LabTest, WatchDeliversStatesAndProgressUntilTheFinalState) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob(1, 4));
  v1::Assignment a = TakeAssignment(*agent_);
  auto watch = lab_->Watch(caller_, id);
  ASSERT_TRUE(watch.ok());
  auto first = (*watch)->Next(std::chrono::seconds(10));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->state, JobState::kAssigned);
  EXPECT_EQ(first->board, "host-0");
  EXPECT_EQ(first->progress_total, 4u);
  Send(s, RunStateMsg(a.run_id(), "running"));
  Send(s, BatchMsg(a.run_id(), 0, 0, {1, 2}));
  std::uint64_t max_progress = 0;
  while (auto e = (*watch)->Next(std::chrono::seconds(10))) {
    if (e->state == JobState::kRunning) max_progress = std::max(max_progress, e->progress_done);
    if (max_progress == 2) break;
  }
  EXPECT_EQ(max_progress, 2u);
  Send(s, BatchMsg(a.run_id(), 1, 0, {3, 4}, 2));
  Send(s, CaseDoneMsg(a.run_id(), 0));
  Send(s, FinishedMsg(a.run_id(), Outcome::SUCCEEDED, 2));
  std::optional<JobEvent> last;
  while (auto e = (*watch)->Next(std::chrono::seconds(10))) last = e;
  ASSERT_TRUE(last);
  EXPECT_EQ(last->state, JobState::kSucceeded);
  EXPECT_EQ(last->progress_done, 4u);
  EXPECT_TRUE((*watch)->Ended());
}

TEST_F(LabTest, WatchOfAFinishedJobGivesItsFinalStateAndEnds) {
  ConnectHostAgent();
  const JobId id = Submit(FcJob());
  ASSERT_TRUE(lab_->Cancel(caller_, id).ok());
  auto watch = lab_->Watch(caller_, id);
  ASSERT_TRUE(watch.ok());
  auto e = (*watch)->Next(std::chrono::seconds(10));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->state, JobState::kCancelled);
  EXPECT_FALSE((*watch)->Next(std::chrono::seconds(10)));
  EXPECT_TRUE((*watch)->Ended());
}

TEST_F(LabTest, WatchOfAnUnknownJobIsNotFound) {
  auto watch = lab_->Watch(caller_, 999);
  ASSERT_FALSE(watch.ok());
  EXPECT_EQ(watch.error().code, ErrorCode::kNotFound);
}

// ---- failures ----

TEST_F(LabTest, InfrastructureFailureRequeuesTheJobAndMarksTheBoardHealthUnknown) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob());
  v1::Assignment first = TakeAssignment(*agent_);
  Send(s, RunStateMsg(first.run_id(), "running"));
  Send(s, FinishedMsg(first.run_id(), Outcome::INFRA_FAILED, 0, "runner process crashed"));
  // Requeued, and at once rescheduled on the only board, whose health is now unknown.
  v1::Assignment second = TakeAssignment(*agent_);
  EXPECT_EQ(second.job_id(), first.job_id());
  EXPECT_NE(second.run_id(), first.run_id());
  EXPECT_TRUE(agent_->Take(FakeAgentChannel::ClosedOf(first.run_id())));
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kUnknown);
  auto job = lab_->GetJob(caller_, id);
  EXPECT_EQ(job->state, JobState::kAssigned);
  EXPECT_EQ(job->attempts, 2u);
  EXPECT_NE(job->message.find("runner process crashed; requeued (attempt 1 of 3)"),
            std::string::npos)
      << job->message;
  auto run = store_->GetRun(static_cast<RunId>(first.run_id()));
  EXPECT_EQ(run->state, RunState::kInfraFailed);
}

TEST_F(LabTest, InfrastructureFailuresBeyondMaxAttemptsFailTheJob) {
  lab_->Stop();
  lab_.reset();
  store_.reset();
  config_.max_attempts = 2;
  OpenLab();
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob());
  for (int attempt = 1; attempt <= 2; ++attempt) {
    v1::Assignment a = TakeAssignment(*agent_);
    Send(s, FinishedMsg(a.run_id(), Outcome::INFRA_FAILED, 0, "probe lost"));
  }
  ASSERT_EQ(WaitForState(id, JobState::kFailed), JobState::kFailed);
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::IsAssign));
  auto job = lab_->GetJob(caller_, id);
  EXPECT_EQ(job->attempts, 2u);
  EXPECT_NE(job->message.find("gave up after 2 attempts"), std::string::npos) << job->message;
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kIdle);
}

TEST_F(LabTest, WorkloadFailureFailsTheJobWithoutBlamingTheBoard) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "running"));
  Send(s, FinishedMsg(a.run_id(), Outcome::WORKLOAD_FAILED, 0, "runner: arena too small"));
  ASSERT_EQ(WaitForState(id, JobState::kFailed), JobState::kFailed);
  EXPECT_EQ(lab_->GetJob(caller_, id)->message, "runner: arena too small");
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kGood);
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kIdle);
  EXPECT_EQ(store_->GetRun(static_cast<RunId>(a.run_id()))->state, RunState::kWorkloadFailed);
}

TEST_F(LabTest, ChecksumMismatchFailsTheJobWithoutBlamingTheBoard) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob(1, 2));
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "running"));
  Send(s, BatchMsg(a.run_id(), 0, 0, {1, 2}));
  Send(s, CaseDoneMsg(a.run_id(), 0, /*ok=*/false));
  Send(s, FinishedMsg(a.run_id(), Outcome::SUCCEEDED, 1));
  ASSERT_EQ(WaitForState(id, JobState::kFailed), JobState::kFailed);
  EXPECT_NE(
      lab_->GetJob(caller_, id)
          ->message.find("checksum mismatch): case 0: checksum 0x00009999, expected 0x00001234"),
      std::string::npos)
      << lab_->GetJob(caller_, id)->message;
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kGood);
}

TEST_F(LabTest, AgentDisconnectRequeuesItsRunsAndTakesItsBoardsOffline) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob());
  TakeAssignment(*agent_);
  lab_->DisconnectAgent(s, "stream closed");
  auto job = lab_->GetJob(caller_, id);
  EXPECT_EQ(job->state, JobState::kQueued);
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kOffline);
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kUnknown);
  // The agent comes back: the job goes to the board again.
  auto again = std::make_shared<FakeAgentChannel>();
  Connect(again, "lab-1", {{"host-0", "host"}});
  EXPECT_EQ(TakeAssignment(*again).job_id(), static_cast<std::uint64_t>(id));
}

TEST_F(LabTest, ReconnectingAgentReplacesItsOldSessionAndGetsStaleRunsClosed) {
  AgentSessionId old = ConnectHostAgent();
  Submit(FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  auto again = std::make_shared<FakeAgentChannel>();
  v1::Register reg;
  reg.set_agent("lab-1");
  auto* b = reg.add_boards();
  b->set_name("host-0");
  b->set_kind("host");
  reg.add_active_runs(a.run_id());
  auto id =
      lab_->ConnectAgent(testing::AgentCaller(reg.agent()), testing::RegistrationOf(reg), again);
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(again->Take(FakeAgentChannel::ClosedOf(a.run_id())));
  EXPECT_NE(TakeAssignment(*again).run_id(), a.run_id());
  // The old stream's late messages change nothing.
  Send(old, FinishedMsg(a.run_id(), Outcome::SUCCEEDED, 0));
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kBusy);
}

TEST_F(LabTest, BoardHeldByAnotherConnectedAgentCannotBeRegistered) {
  ConnectHostAgent();
  v1::Register reg;
  reg.set_agent("lab-2");
  auto* b = reg.add_boards();
  b->set_name("host-0");
  b->set_kind("host");
  auto id = lab_->ConnectAgent(testing::AgentCaller(reg.agent()), testing::RegistrationOf(reg),
                               std::make_shared<FakeAgentChannel>());
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().code, ErrorCode::kAlreadyExists);
}

TEST_F(LabTest, BatchOfAnUnknownRunIsAnsweredWithRunClosed) {
  AgentSessionId s = ConnectHostAgent();
  Send(s, BatchMsg(4242, 0, 0, {1}));
  EXPECT_TRUE(agent_->Take(FakeAgentChannel::ClosedOf(4242)));
  EXPECT_EQ(*store_->CountSamples(4242), 0u);
}

// ---- cancel and timeout ----

TEST_F(LabTest, CancellingAQueuedJobEndsItWithoutTouchingTheBoard) {
  ConnectHostAgent();
  const JobId running = Submit(FcJob());
  TakeAssignment(*agent_);
  const JobId queued = Submit(FcJob());
  auto job = lab_->Cancel(caller_, queued);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, JobState::kCancelled);
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::IsCancel));
  EXPECT_EQ(lab_->GetJob(caller_, queued)->state, JobState::kCancelled);
  EXPECT_EQ(lab_->GetJob(caller_, running)->state, JobState::kAssigned);
  EXPECT_EQ(BoardNamed("host-0").queue_length, 0u);
}

TEST_F(LabTest, CancellingARunningJobCancelsItsRunAndFreesTheBoardWhenTheAgentConfirms) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "running"));
  const JobId next = Submit(FcJob());
  auto job = lab_->Cancel(caller_, id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, JobState::kCancelled);
  auto cancel = agent_->Take(FakeAgentChannel::IsCancel);
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->cancel().run_id(), a.run_id());
  EXPECT_EQ(cancel->cancel().reason(), "cancelled by local");
  // Until the agent confirms, the board is still busy with the cancelled run.
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kBusy);
  EXPECT_EQ(lab_->GetJob(caller_, next)->state, JobState::kQueued);
  Send(s, FinishedMsg(a.run_id(), Outcome::CANCELLED, 0));
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(next));
  EXPECT_EQ(store_->GetRun(static_cast<RunId>(a.run_id()))->state, RunState::kCancelled);
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kGood);
}

TEST_F(LabTest, CancellingAFinishedJobIsRefused) {
  ConnectHostAgent();
  const JobId id = Submit(FcJob());
  ASSERT_TRUE(lab_->Cancel(caller_, id).ok());
  auto again = lab_->Cancel(caller_, id);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(again.error().message.find("already cancelled"), std::string::npos);
  auto unknown = lab_->Cancel(caller_, 777);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
}

TEST_F(LabTest, JobOnABoardTimesOutAfterItsTimeoutAndItsRunIsCancelled) {
  AgentSessionId s = ConnectHostAgent();
  SubmitRequest r = FcJob();
  r.timeout_s = 30;
  const JobId id = Submit(r);
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "running"));
  auto watch = lab_->Watch(caller_, id);
  ASSERT_TRUE(watch.ok());
  clock_.Advance(std::chrono::seconds(29));
  EXPECT_FALSE(agent_->Take(FakeAgentChannel::IsCancel, std::chrono::milliseconds(50)));
  clock_.Advance(std::chrono::seconds(1));
  auto cancel = agent_->Take(FakeAgentChannel::IsCancel);
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->cancel().run_id(), a.run_id());
  std::optional<JobEvent> last;
  while (auto e = (*watch)->Next(std::chrono::seconds(10))) last = e;
  ASSERT_TRUE(last);
  EXPECT_EQ(last->state, JobState::kTimedOut);
  EXPECT_EQ(last->message, "timed out after 30 s on board host-0");
  Send(s, FinishedMsg(a.run_id(), Outcome::CANCELLED, 0));
  store_->Flush();
  EXPECT_EQ(store_->GetRun(static_cast<RunId>(a.run_id()))->state, RunState::kTimedOut);
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kIdle);
}

TEST_F(LabTest, TimeoutCountsFromAssignmentNotFromSubmit) {
  AgentSessionId s = ConnectHostAgent();
  Submit(FcJob());
  v1::Assignment first = TakeAssignment(*agent_);
  SubmitRequest r = FcJob();
  r.timeout_s = 10;
  const JobId waiting = Submit(r);
  clock_.Advance(std::chrono::seconds(20));  // waiting in the queue does not count
  RunToSuccess(s, first);
  v1::Assignment second = TakeAssignment(*agent_);
  EXPECT_EQ(second.job_id(), static_cast<std::uint64_t>(waiting));
  EXPECT_EQ(lab_->GetJob(caller_, waiting)->state, JobState::kAssigned);
  clock_.Advance(std::chrono::seconds(10));
  EXPECT_EQ(WaitForState(waiting, JobState::kTimedOut), JobState::kTimedOut);
}

// ---- scheduling across events ----

TEST_F(LabTest, FreedBoardGoesToTheOldestQueuedJob) {
  AgentSessionId s = ConnectHostAgent();
  Submit(FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  const JobId older = Submit(FcJob());
  const JobId newer = Submit(FcJob());
  RunToSuccess(s, a);
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(older));
  EXPECT_EQ(lab_->GetJob(caller_, newer)->state, JobState::kQueued);
}

TEST_F(LabTest, RegisteringABoardStartsQueuedJobsForIt) {
  ConnectHostAgent();
  Submit(FcJob());
  TakeAssignment(*agent_);
  const JobId waiting = Submit(FcJob());
  auto second = std::make_shared<FakeAgentChannel>();
  Connect(second, "lab-2", {{"host-9", "host"}});
  v1::Assignment a = TakeAssignment(*second);
  EXPECT_EQ(a.job_id(), static_cast<std::uint64_t>(waiting));
  EXPECT_EQ(a.board(), "host-9");
}

// ---- restart ----

TEST_F(LabTest, AfterARestartQueuedJobsStayQueuedAndARunItsAgentLostIsRequeued) {
  ConnectHostAgent();
  const JobId on_board = Submit(FcJob());
  TakeAssignment(*agent_);
  const JobId queued = Submit(FcJob());
  RestartLab();
  // The run waits for its agent; its board is offline meanwhile.
  EXPECT_EQ(lab_->GetJob(caller_, on_board)->state, JobState::kAssigned);
  EXPECT_EQ(lab_->GetJob(caller_, queued)->state, JobState::kQueued);
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kOffline);
  // The agent comes back without the run (e.g. it restarted too): the job is requeued and, being
  // the oldest, runs first; new ids continue after the old ones.
  auto agent = std::make_shared<FakeAgentChannel>();
  Connect(agent, "lab-1", {{"host-0", "host"}});
  v1::Assignment again = TakeAssignment(*agent);
  EXPECT_EQ(again.job_id(), static_cast<std::uint64_t>(on_board));
  auto job = lab_->GetJob(caller_, on_board);
  EXPECT_EQ(job->attempts, 2u);
  store_->Flush();
  auto history = lab_->JobHistory(caller_, on_board);
  ASSERT_TRUE(history.ok());
  bool requeued = false;
  for (const auto& t : *history) {
    requeued |= t.to == "queued" && t.reason.find("reconnected without run") != std::string::npos;
  }
  EXPECT_TRUE(requeued) << "no requeue naming the lost run in the audit trail";
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kUnknown);
  EXPECT_GT(Submit(FcJob()), queued);
}

TEST_F(LabTest, AfterARestartARunItsAgentStillHasResumesAndEverySampleIsStoredOnce) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob(2, 4));
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "running"));
  Send(s, StartedMsg(a.run_id()));
  Send(s, BatchMsg(a.run_id(), 0, 0, {10, 11, 12, 13}));
  ASSERT_TRUE(agent_->Take(FakeAgentChannel::AckOf(a.run_id(), 0)));
  RestartLab();
  EXPECT_EQ(lab_->GetJob(caller_, id)->state, JobState::kRunning);
  EXPECT_EQ(lab_->GetJob(caller_, id)->progress_done, 4u);

  // The agent claims the run: its board is busy with the job again, nothing is requeued.
  auto agent = std::make_shared<FakeAgentChannel>();
  s = Connect(agent, "lab-1", {{"host-0", "host"}}, {a.run_id()});
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kBusy);
  EXPECT_EQ(BoardNamed("host-0").board.current_job, id);
  EXPECT_FALSE(agent->Has(FakeAgentChannel::ClosedOf(a.run_id())));
  EXPECT_FALSE(agent->Has(FakeAgentChannel::IsAssign));
  // It replays its spool (RunStarted again; batch 0 was acknowledged, but a replay racing the
  // ack sends it again) and goes on.
  Send(s, StartedMsg(a.run_id()));
  Send(s, BatchMsg(a.run_id(), 0, 0, {10, 11, 12, 13}));
  ASSERT_TRUE(agent->Take(FakeAgentChannel::AckOf(a.run_id(), 0)));
  Send(s, CaseDoneMsg(a.run_id(), 0));
  Send(s, BatchMsg(a.run_id(), 1, 1, {20, 21, 22, 23}));
  Send(s, CaseDoneMsg(a.run_id(), 1));
  Send(s, FinishedMsg(a.run_id(), Outcome::SUCCEEDED, 2));
  EXPECT_EQ(WaitForState(id, JobState::kSucceeded), JobState::kSucceeded);
  EXPECT_TRUE(agent->Take(FakeAgentChannel::ClosedOf(a.run_id())));

  store_->Flush();
  auto job = lab_->GetJob(caller_, id);
  EXPECT_EQ(job->last_run_id, static_cast<RunId>(a.run_id()));
  EXPECT_EQ(job->attempts, 1u);
  EXPECT_EQ(job->progress_done, 8u);
  EXPECT_EQ(*store_->CountSamples(static_cast<RunId>(a.run_id())), 2u * 4u * 2u);
  auto stats = store_->GetCaseStats(id);
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(stats->size(), 4u);  // 2 cases x 2 metrics
  for (const auto& st : *stats) EXPECT_EQ(st.n, 4u);
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kIdle);
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kGood);
}

TEST_F(LabTest, AfterARestartARunWhoseAgentStaysAwayIsRequeuedWhenTheGraceEnds) {
  config_.reconnect_grace_s = 30;
  RestartLab();
  ConnectHostAgent();
  const JobId id = Submit(FcJob());
  TakeAssignment(*agent_);
  RestartLab();
  clock_.Advance(std::chrono::seconds(29));
  store_->Flush();
  EXPECT_EQ(lab_->GetJob(caller_, id)->state, JobState::kAssigned);
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_EQ(WaitForState(id, JobState::kQueued), JobState::kQueued);
  auto job = lab_->GetJob(caller_, id);
  EXPECT_NE(job->message.find("did not reconnect within 30 s"), std::string::npos) << job->message;
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kOffline);
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kUnknown);
  // When the agent is back, the job runs again on a new run.
  auto agent = std::make_shared<FakeAgentChannel>();
  Connect(agent, "lab-1", {{"host-0", "host"}});
  EXPECT_EQ(TakeAssignment(*agent).job_id(), static_cast<std::uint64_t>(id));
}

TEST_F(LabTest, JobCancelledWhileItsRunWaitsForItsAgentIsCancelledOnTheAgentWhenItIsBack) {
  ConnectHostAgent();
  const JobId id = Submit(FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  RestartLab();
  ASSERT_TRUE(lab_->Cancel(caller_, id).ok());
  EXPECT_EQ(lab_->GetJob(caller_, id)->state, JobState::kCancelled);
  auto agent = std::make_shared<FakeAgentChannel>();
  AgentSessionId s = Connect(agent, "lab-1", {{"host-0", "host"}}, {a.run_id()});
  // The board stays busy until the agent confirms the run is over.
  auto cancel = agent->Take(FakeAgentChannel::IsCancel);
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->cancel().run_id(), a.run_id());
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kBusy);
  Send(s, FinishedMsg(a.run_id(), Outcome::CANCELLED, 0));
  store_->Flush();
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kIdle);
  EXPECT_EQ(store_->GetRun(static_cast<RunId>(a.run_id()))->state, RunState::kCancelled);
  EXPECT_EQ(lab_->GetJob(caller_, id)->state, JobState::kCancelled);
}

TEST_F(LabTest, SilentAgentIsDroppedAfterTheHeartbeatTimeoutAndItsJobRequeued) {
  config_.heartbeat_ms = 1000;
  config_.heartbeat_timeout_ms = 3000;
  RestartLab();
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "running"));
  // Heartbeats keep it alive past the timeout counted from its registration.
  for (int i = 0; i < 4; ++i) {
    clock_.Advance(std::chrono::seconds(2));
    v1::AgentMessage hb;
    hb.mutable_heartbeat();
    Send(s, hb);
  }
  store_->Flush();
  EXPECT_EQ(lab_->GetJob(caller_, id)->state, JobState::kRunning);
  EXPECT_FALSE(agent_->hung_up());
  // Then it goes quiet.
  clock_.Advance(std::chrono::milliseconds(2999));
  store_->Flush();
  EXPECT_EQ(lab_->GetJob(caller_, id)->state, JobState::kRunning);
  EXPECT_FALSE(agent_->hung_up());
  clock_.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(WaitForState(id, JobState::kQueued), JobState::kQueued);
  EXPECT_TRUE(agent_->hung_up());
  auto job = lab_->GetJob(caller_, id);
  EXPECT_NE(job->message.find("sent nothing for 3000 ms"), std::string::npos) << job->message;
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kOffline);
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kUnknown);
  // Whatever the old stream still delivers is ignored; a new registration brings the board back.
  Send(s, BatchMsg(a.run_id(), 0, 0, {1, 2, 3, 4}));
  store_->Flush();
  EXPECT_EQ(*store_->CountSamples(static_cast<RunId>(a.run_id())), 0u);
  auto agent = std::make_shared<FakeAgentChannel>();
  Connect(agent, "lab-1", {{"host-0", "host"}}, {a.run_id()});
  EXPECT_TRUE(agent->Take(FakeAgentChannel::ClosedOf(a.run_id())));
  EXPECT_EQ(TakeAssignment(*agent).job_id(), static_cast<std::uint64_t>(id));
}

TEST_F(LabTest, StoppingAgentsBoardsGetNoNewJobs) {
  AgentSessionId s = Connect(agent_, "lab-1", {{"host-0", "host"}, {"host-1", "host"}});
  const JobId id = Submit(FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  v1::AgentMessage stopping;
  stopping.mutable_heartbeat()->set_stopping(true);
  Send(s, stopping);
  const std::string other = a.board() == "host-0" ? "host-1" : "host-0";
  EXPECT_EQ(BoardNamed(other).board.state, BoardState::kOffline);
  // The agent ends its run as an infrastructure failure; the job waits instead of going back to
  // a board of the stopping agent.
  Send(s,
       FinishedMsg(a.run_id(), Outcome::INFRA_FAILED, 0, "the agent was stopped during the run"));
  store_->Flush();
  EXPECT_EQ(lab_->GetJob(caller_, id)->state, JobState::kQueued);
  EXPECT_EQ(BoardNamed(a.board()).board.state, BoardState::kOffline);
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::IsAssign));
  // Registered again (a new process): the boards come back and the job runs.
  lab_->DisconnectAgent(s, "stopped");
  auto agent = std::make_shared<FakeAgentChannel>();
  Connect(agent, "lab-1", {{"host-0", "host"}, {"host-1", "host"}});
  EXPECT_EQ(TakeAssignment(*agent).job_id(), static_cast<std::uint64_t>(id));
}

TEST_F(LabTest, ABoardWhoseProbeIsGoneIsOfflineAndItsJobRequeuedUntilItReturns) {
  AgentSessionId s = Connect(agent_, "lab-1", {{"h743", "nucleo-h743"}, {"h743-b", "nucleo-h743"}});
  const JobId id = Submit(FcJob(2, 4, "nucleo-h743"));
  v1::Assignment a = TakeAssignment(*agent_);
  const std::string other = a.board() == "h743" ? "h743-b" : "h743";
  auto status = [](const std::string& board, const std::string& offline) {
    v1::AgentMessage m;
    m.mutable_board_status()->set_board(board);
    m.mutable_board_status()->set_offline(offline);
    return m;
  };
  // Both probes unplugged: the idle board goes offline at once, the busy one when its run ends.
  Send(s, status(other, "probe 0669FF unplugged"));
  EXPECT_EQ(BoardNamed(other).board.state, BoardState::kOffline);
  Send(s, status(a.board(), "probe 066EFF unplugged"));
  EXPECT_EQ(BoardNamed(a.board()).board.state, BoardState::kBusy);
  Send(s, FinishedMsg(a.run_id(), Outcome::INFRA_FAILED, 0, "the board's probe disappeared"));
  store_->Flush();
  EXPECT_EQ(lab_->GetJob(caller_, id)->state, JobState::kQueued);
  EXPECT_EQ(BoardNamed(a.board()).board.state, BoardState::kOffline);
  EXPECT_EQ(BoardNamed(a.board()).board.health, BoardHealth::kUnknown);
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::IsAssign));
  // A probe returns: its board takes the waiting job.
  Send(s, status(other, ""));
  EXPECT_EQ(BoardNamed(other).board.state, BoardState::kBusy);
  v1::Assignment again = TakeAssignment(*agent_);
  EXPECT_EQ(again.job_id(), static_cast<std::uint64_t>(id));
  EXPECT_EQ(again.board(), other);
  EXPECT_EQ(BoardNamed(a.board()).board.state, BoardState::kOffline);
}

TEST_F(LabTest, ABoardRegisteredWithoutItsProbeStaysOfflineUntilItsStatusSaysItIsBack) {
  v1::Register reg;
  reg.set_agent("lab-1");
  auto* info = reg.add_boards();
  info->set_name("f767");
  info->set_kind("nucleo-f767");
  info->set_offline("probe 066EFF not plugged in");
  auto id =
      lab_->ConnectAgent(testing::AgentCaller(reg.agent()), testing::RegistrationOf(reg), agent_);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(BoardNamed("f767").board.state, BoardState::kOffline);
  Submit(FcJob(1, 2, "nucleo-f767"));
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::IsAssign));
  v1::AgentMessage back;
  back.mutable_board_status()->set_board("f767");
  Send(*id, back);
  EXPECT_EQ(TakeAssignment(*agent_).board(), "f767");
  // Another agent's board is not this agent's to report.
  auto other = std::make_shared<FakeAgentChannel>();
  AgentSessionId s2 = Connect(other, "lab-2", {{"host-9", "host"}});
  v1::AgentMessage foreign;
  foreign.mutable_board_status()->set_board("f767");
  foreign.mutable_board_status()->set_offline("not yours");
  const auto refused = lab_->refused_agent_messages();
  Send(s2, foreign);
  EXPECT_EQ(lab_->refused_agent_messages(), refused + 1);
  EXPECT_EQ(BoardNamed("f767").board.state, BoardState::kBusy);
}

TEST_F(LabTest, HeartbeatTimeoutDefaultsToThreeHeartbeats) {
  LabConfig c;
  c.heartbeat_ms = 5000;
  EXPECT_EQ(c.HeartbeatTimeoutMs(), 15000);
  c.heartbeat_timeout_ms = 7000;
  EXPECT_EQ(c.HeartbeatTimeoutMs(), 7000);
}

// ---- history ----

TEST_F(LabTest, ListJobsFiltersByStateAndPagesNewestFirst) {
  ConnectHostAgent();
  std::vector<JobId> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(Submit(FcJob()));
  ASSERT_TRUE(lab_->Cancel(caller_, ids[3]).ok());
  JobFilter queued;
  queued.state = "queued";
  auto jobs = lab_->ListJobs(caller_, queued);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, ids[2]);
  JobFilter page;
  page.limit = 2;
  page.before_id = ids[3];
  jobs = lab_->ListJobs(caller_, page);
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, ids[2]);
  EXPECT_EQ((*jobs)[1].id, ids[1]);
  JobFilter bad;
  bad.state = "sleeping";
  EXPECT_EQ(lab_->ListJobs(caller_, bad).error().code, ErrorCode::kInvalidArgument);
}

TEST_F(LabTest, UnknownJobIsNotFound) {
  EXPECT_EQ(lab_->GetJob(caller_, 31337).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(lab_->GetResults(caller_, 31337, false).error().code, ErrorCode::kNotFound);
}

// ---- team sharing: priority, fair share, reservations, maintenance, health, cancel, estimates
// ----

Caller Member(const std::string& user, Role role = Role::kMember) {
  Caller c;
  c.user = user;
  c.role = role;
  return c;
}

class LabSchedTest : public LabTest {
 protected:
  JobId SubmitAs(const Caller& who, SubmitRequest r) {
    auto reply = lab_->Submit(who, std::move(r));
    EXPECT_TRUE(reply.ok()) << (reply.ok() ? "" : reply.error().message);
    return reply.ok() ? reply->id : 0;
  }
  static SubmitRequest WithPriority(JobPriority p) {
    SubmitRequest r = FcJob();
    r.priority = p;
    return r;
  }
  void Reopen(LabConfig config) {
    lab_->Stop();
    lab_.reset();
    store_.reset();
    config_ = config;
    OpenLab();
  }
  bool HistoryHas(const std::string& board, const std::string& field, const std::string& to,
                  const std::string& actor, const std::string& reason_part = "") {
    store_->Flush();
    auto h = lab_->BoardHistory(caller_, board);
    EXPECT_TRUE(h.ok());
    if (!h.ok()) return false;
    for (const auto& t : *h) {
      if (t.field == field && t.to == to && t.actor == actor &&
          t.reason.find(reason_part) != std::string::npos) {
        return true;
      }
    }
    return false;
  }
};

TEST_F(LabSchedTest, HighPriorityRunsBeforeOlderNormalAndLowJobs) {
  AgentSessionId s = ConnectHostAgent();
  Submit(FcJob());
  v1::Assignment busy = TakeAssignment(*agent_);
  const JobId low = Submit(WithPriority(JobPriority::kLow));
  const JobId normal = Submit(WithPriority(JobPriority::kNormal));
  const JobId high = Submit(WithPriority(JobPriority::kHigh));
  RunToSuccess(s, busy);
  v1::Assignment next = TakeAssignment(*agent_);
  EXPECT_EQ(next.job_id(), static_cast<std::uint64_t>(high));
  RunToSuccess(s, next);
  next = TakeAssignment(*agent_);
  EXPECT_EQ(next.job_id(), static_cast<std::uint64_t>(normal));
  RunToSuccess(s, next);
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(low));
  // Stored with the job.
  EXPECT_EQ(store_->GetJob(high)->priority, JobPriority::kHigh);
  EXPECT_EQ(store_->GetJob(low)->priority, JobPriority::kLow);
}

TEST_F(LabSchedTest, FairShareRunsAColleaguesSingleJobBeforeTwentyQueuedOnes) {
  AgentSessionId s = ConnectHostAgent();
  const Caller alice = Member("alice"), bob = Member("bob");
  SubmitAs(alice, FcJob());
  v1::Assignment first = TakeAssignment(*agent_);
  for (int i = 0; i < 20; ++i) SubmitAs(alice, FcJob());
  clock_.Advance(std::chrono::seconds(1));
  const JobId bobs = SubmitAs(bob, FcJob());
  RunToSuccess(s, first);
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(bobs));
}

TEST_F(LabSchedTest, ReservationKeepsOthersOffUntilItExpiresOnTime) {
  ConnectHostAgent();
  const Caller alice = Member("alice"), bob = Member("bob");
  auto r = lab_->Reserve(alice, {"host-0", 60'000, "debugging", false});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->state, BoardState::kReserved);
  EXPECT_EQ(r->holder, "alice");
  EXPECT_EQ(r->lease_until_ms, clock_.NowMs() + 60'000);
  const JobId bobs = SubmitAs(bob, FcJob());
  EXPECT_EQ(lab_->GetJob(caller_, bobs)->state, JobState::kQueued);
  // Someone else cannot take it over.
  auto taken = lab_->Reserve(bob, {"host-0", 1000, "", false});
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(taken.error().message.find("reserved by alice"), std::string::npos);
  clock_.Advance(std::chrono::milliseconds(59'999));
  EXPECT_FALSE(agent_->Take(FakeAgentChannel::IsAssign, std::chrono::milliseconds(50)));
  clock_.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(bobs));
  EXPECT_EQ(BoardNamed("host-0").board.holder, "");
  EXPECT_TRUE(HistoryHas("host-0", "reservation", "alice", "alice", "debugging"));
  EXPECT_TRUE(HistoryHas("host-0", "reservation", "", "server", "expired"));
}

TEST_F(LabSchedTest, NoSchedulingPassRunsWhileNoBoardIsFree) {
  AgentSessionId s = ConnectHostAgent();
  Submit(FcJob());
  v1::Assignment busy = TakeAssignment(*agent_);
  const std::uint64_t passes = lab_->schedule_passes();
  const JobId oldest = Submit(FcJob());
  Submit(FcJob());
  Submit(FcJob());
  // An agent without boards comes and goes: events that wake the scheduler, no board to give.
  auto other = std::make_shared<FakeAgentChannel>();
  lab_->DisconnectAgent(Connect(other, "lab-2", {}), "test");
  EXPECT_EQ(lab_->schedule_passes(), passes);
  EXPECT_EQ(lab_->GetJob(caller_, oldest)->state, JobState::kQueued);
  // The board comes free: one pass, and the oldest job gets it.
  RunToSuccess(s, busy);
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(oldest));
  EXPECT_EQ(lab_->schedule_passes(), passes + 1);
}

TEST_F(LabSchedTest, NoSchedulingPassRunsWhenNothingChangedSinceAPassThatPlacedNothing) {
  ConnectHostAgent();
  const Caller alice = Member("alice"), bob = Member("bob");
  ASSERT_TRUE(lab_->Reserve(alice, {"host-0", 60'000, "", false}).ok());
  const JobId bobs = SubmitAs(bob, FcJob());  // the board is free, but not for bob
  const std::uint64_t passes = lab_->schedule_passes();
  EXPECT_GE(passes, 1u);
  auto other = std::make_shared<FakeAgentChannel>();
  lab_->DisconnectAgent(Connect(other, "lab-2", {}), "test");
  lab_->DisconnectAgent(Connect(other, "lab-3", {}), "test");
  EXPECT_EQ(lab_->schedule_passes(), passes);
  EXPECT_EQ(lab_->GetJob(caller_, bobs)->state, JobState::kQueued);
  // The lease ends: that changes the answer, so the next pass places bob's job.
  clock_.Advance(std::chrono::milliseconds(60'000));
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(bobs));
  EXPECT_GT(lab_->schedule_passes(), passes);
}

TEST_F(LabSchedTest, AJobWaitingOnSomeonesReservationSaysWhoHoldsItAndEstimatesFromTheLease) {
  ConnectHostAgent();
  const Caller alice = Member("alice"), bob = Member("bob");
  ASSERT_TRUE(lab_->Reserve(alice, {"host-0", 60'000, "debugging", false}).ok());
  const std::int64_t lease_end = clock_.NowMs() + 60'000;
  auto reply = lab_->Submit(bob, FcJob());
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->wait.position, 1u);
  EXPECT_EQ(reply->wait.board, "host-0");
  EXPECT_EQ(reply->wait.holder, "alice");
  EXPECT_EQ(reply->wait.lease_until_ms, lease_end);
  EXPECT_EQ(reply->wait.note, "debugging");
  EXPECT_EQ(reply->estimated_start_ms, lease_end);
  // GetJob and ListJobs say the same while it waits.
  auto job = lab_->GetJob(caller_, reply->id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->wait.holder, "alice");
  EXPECT_EQ(job->wait.estimated_start_ms, lease_end);
  auto jobs = lab_->ListJobs(caller_, {});
  ASSERT_TRUE(jobs.ok());
  ASSERT_FALSE(jobs->empty());
  EXPECT_EQ(jobs->front().wait.board, "host-0");
  // Once the lease ends and the job runs, it waits on nothing.
  clock_.Advance(std::chrono::milliseconds(60'000));
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(reply->id));
  job = lab_->GetJob(caller_, reply->id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->wait.position, 0u);
  EXPECT_EQ(job->wait.board, "");
}

TEST_F(LabSchedTest, AQueuedJobBehindABusyBoardWaitsOnNoReservation) {
  ConnectHostAgent();
  const Caller bob = Member("bob");
  SubmitAs(bob, FcJob());
  TakeAssignment(*agent_);
  auto reply = lab_->Submit(bob, FcJob());
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->wait.position, 1u);
  EXPECT_EQ(reply->wait.board, "");
  EXPECT_EQ(reply->wait.holder, "");
}

TEST_F(LabSchedTest, HoldersJobsRunOnTheReservedBoard) {
  ConnectHostAgent();
  const Caller alice = Member("alice");
  ASSERT_TRUE(lab_->Reserve(alice, {"host-0", 60'000, "", false}).ok());
  const JobId mine = SubmitAs(alice, FcJob());
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(mine));
}

TEST_F(LabSchedTest, ReservingABusyBoardTakesEffectWhenItsJobEnds) {
  AgentSessionId s = ConnectHostAgent();
  const Caller alice = Member("alice"), bob = Member("bob");
  SubmitAs(bob, FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  ASSERT_TRUE(lab_->Reserve(alice, {"host-0", 60'000, "", false}).ok());
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kBusy);
  SubmitAs(bob, FcJob());
  RunToSuccess(s, a);
  ASSERT_EQ(WaitForState(static_cast<JobId>(a.job_id()), JobState::kSucceeded),
            JobState::kSucceeded);
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kReserved);
  EXPECT_FALSE(agent_->Take(FakeAgentChannel::IsAssign, std::chrono::milliseconds(50)));
}

TEST_F(LabSchedTest, HoldLeaseRunsOutWhenNotRenewedAndIsExtendedWhenRenewed) {
  ConnectHostAgent();
  const Caller alice = Member("alice");
  ASSERT_TRUE(lab_->Reserve(alice, {"host-0", 30'000, "", true}).ok());
  clock_.Advance(std::chrono::seconds(20));
  auto renewed = lab_->RenewReservation(alice, "host-0", 30'000);
  ASSERT_TRUE(renewed.ok()) << renewed.error().message;
  clock_.Advance(std::chrono::seconds(20));  // 40 s after the start: still held
  EXPECT_EQ(BoardNamed("host-0").board.holder, "alice");
  auto other = lab_->RenewReservation(Member("bob"), "host-0", 30'000);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ErrorCode::kFailedPrecondition);
  const JobId job = SubmitAs(Member("bob"), FcJob());
  clock_.Advance(std::chrono::seconds(10));  // the renewed lease ends: the holder is gone
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(job));
  EXPECT_TRUE(HistoryHas("host-0", "reservation", "", "server", "--hold lease of alice ran out"));
}

TEST_F(LabSchedTest, ReleasingSomeoneElsesReservationNeedsAdmin) {
  ConnectHostAgent();
  ASSERT_TRUE(lab_->Reserve(Member("alice"), {"host-0", 60'000, "", false}).ok());
  auto denied = lab_->Release(Member("bob"), "host-0");
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(denied.error().message.find("reserved by alice"), std::string::npos);
  auto viewer = lab_->Reserve(Member("vera", Role::kViewer), {"host-0", 1000, "", false});
  ASSERT_FALSE(viewer.ok());
  EXPECT_EQ(viewer.error().code, ErrorCode::kPermissionDenied);
  auto admin = lab_->Release(Member("root", Role::kAdmin), "host-0");
  ASSERT_TRUE(admin.ok()) << admin.error().message;
  EXPECT_EQ(admin->state, BoardState::kIdle);
  EXPECT_TRUE(HistoryHas("host-0", "reservation", "", "root", "released by root"));
  auto again = lab_->Release(Member("alice"), "host-0");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kFailedPrecondition);
}

TEST_F(LabSchedTest, ReservationBadInputsAreRejectedWithReasons) {
  ConnectHostAgent();
  auto unknown = lab_->Reserve(Member("alice"), {"nope", 1000, "", false});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  EXPECT_NE(unknown.error().message.find("the lab has: host-0"), std::string::npos);
  auto zero = lab_->Reserve(Member("alice"), {"host-0", 0, "", false});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(LabSchedTest, ReservationSurvivesARestartAndStillExpires) {
  ConnectHostAgent();
  ASSERT_TRUE(lab_->Reserve(Member("alice"), {"host-0", 60'000, "note", false}).ok());
  RestartLab();
  agent_ = std::make_shared<FakeAgentChannel>();
  ConnectHostAgent();
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kReserved);
  EXPECT_EQ(BoardNamed("host-0").board.reservation_note, "note");
  const JobId bobs = SubmitAs(Member("bob"), FcJob());
  clock_.Advance(std::chrono::seconds(60));
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(bobs));
}

TEST_F(LabSchedTest, MaintenanceIsAdminOnlyKeepsJobsOffAndIsAudited) {
  ConnectHostAgent();
  auto member = lab_->SetMaintenance(Member("alice"), "host-0", true, "");
  ASSERT_FALSE(member.ok());
  EXPECT_EQ(member.error().code, ErrorCode::kPermissionDenied);
  const Caller root = Member("root", Role::kAdmin);
  auto on = lab_->SetMaintenance(root, "host-0", true, "new cable");
  ASSERT_TRUE(on.ok()) << on.error().message;
  EXPECT_EQ(on->health, BoardHealth::kMaintenance);
  const JobId job = Submit(FcJob());
  EXPECT_EQ(lab_->GetJob(caller_, job)->state, JobState::kQueued);
  auto off = lab_->SetMaintenance(root, "host-0", false, "");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->health, BoardHealth::kGood);  // health checks are off in this fixture
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(job));
  EXPECT_TRUE(HistoryHas("host-0", "health", "maintenance", "root", "new cable"));
  EXPECT_TRUE(HistoryHas("host-0", "health", "good", "root", "maintenance off by root"));
  auto history = lab_->BoardHistory(Member("vera", Role::kViewer), "host-0");
  ASSERT_TRUE(history.ok());
  EXPECT_GE(history->size(), 3u);
}

TEST_F(LabSchedTest, CancellingAnAssignedJobFreesTheBoardWhenTheAgentConfirms) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  ASSERT_TRUE(lab_->Cancel(caller_, id).ok());
  ASSERT_TRUE(agent_->Take(FakeAgentChannel::IsCancel));
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kBusy);
  Send(s, FinishedMsg(a.run_id(), Outcome::CANCELLED, 0));
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kIdle);
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kGood);
}

TEST_F(LabSchedTest, CancellingAPreparingJobFreesTheBoardWhenTheAgentConfirms) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "preparing"));
  EXPECT_EQ(lab_->GetJob(caller_, id)->state, JobState::kPreparing);
  const JobId next = Submit(FcJob());
  ASSERT_TRUE(lab_->Cancel(caller_, id).ok());
  ASSERT_TRUE(agent_->Take(FakeAgentChannel::IsCancel));
  Send(s, FinishedMsg(a.run_id(), Outcome::CANCELLED, 0));
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(next));
  EXPECT_EQ(store_->GetJob(id)->state, JobState::kCancelled);
}

TEST_F(LabSchedTest, AnAgentThatNeverConfirmsACancelLosesTheBoardAfterTheGracePeriod) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "running"));
  ASSERT_TRUE(lab_->Cancel(caller_, id).ok());
  clock_.Advance(std::chrono::milliseconds(config_.cancel_grace_ms - 1));
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kBusy);
  // The background thread takes the board offline: wait for the feed's board event.
  auto feed = lab_->Subscribe();
  std::mutex mu;
  std::condition_variable cv;
  int notified = 0;
  feed->SetListener([&] {
    std::lock_guard l(mu);
    ++notified;
    cv.notify_all();
  });
  clock_.Advance(std::chrono::milliseconds(1));
  bool offline = false;
  while (!offline) {
    std::unique_lock l(mu);
    ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(10), [&] { return notified > 0; }));
    notified = 0;
    l.unlock();
    for (const LabEvent& e : feed->TakeAll()) {
      if (e.kind == LabEvent::Kind::kBoard && e.board.state == BoardState::kOffline) {
        offline = true;
      }
    }
  }
  feed->Close();
  store_->Flush();
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kOffline);
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kUnknown);
  EXPECT_EQ(store_->GetRun(static_cast<RunId>(a.run_id()))->state, RunState::kCancelled);
  EXPECT_TRUE(HistoryHas("host-0", "health", "unknown", "server", "did not confirm"));
}

TEST_F(LabSchedTest, AFeedFollowingAJobGetsItsValuesAsBatchesCommitThinnedToABound) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob(2, 600));
  auto follower = lab_->Subscribe(LabFeed::kDefaultCapacity, id);
  auto other_job = lab_->Subscribe(LabFeed::kDefaultCapacity, id + 1);
  auto plain = lab_->Subscribe();
  std::mutex mu;
  std::condition_variable cv;
  bool notified = false;
  follower->SetListener([&] {
    std::lock_guard l(mu);
    notified = true;
    cv.notify_all();
  });
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "running"));
  Send(s, StartedMsg(a.run_id()));
  std::vector<std::int64_t> values(600);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 1000 + static_cast<std::int64_t>(i);
  Send(s, BatchMsg(a.run_id(), 0, 1, values));
  ASSERT_TRUE(agent_->Take(FakeAgentChannel::AckOf(a.run_id(), 0)));
  // The values follow the acknowledgement, with the batch's progress event: wait for them.
  std::vector<LiveSamples> live;
  while (live.empty()) {
    std::unique_lock l(mu);
    ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(10), [&] { return notified; }));
    notified = false;
    l.unlock();
    for (const LabEvent& e : follower->TakeAll()) {
      if (e.kind == LabEvent::Kind::kSamples) live.push_back(e.samples);
    }
  }
  follower->Close();
  store_->Flush();  // the commit that pushed them has pushed to every feed
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].job, id);
  EXPECT_EQ(live[0].case_index, 1u);
  ASSERT_EQ(live[0].iterations.size(), kLiveSamplesPerEvent);  // 600 values thinned to the bound
  ASSERT_EQ(live[0].values.size(), kLiveSamplesPerEvent);
  EXPECT_EQ(live[0].iterations.front(), 0u);
  EXPECT_LT(live[0].iterations.back(), 600u);
  for (std::size_t i = 0; i < live[0].iterations.size(); ++i) {
    EXPECT_EQ(live[0].values[i], 1000 + static_cast<std::int64_t>(live[0].iterations[i]));
    if (i > 0) {
      EXPECT_GT(live[0].iterations[i], live[0].iterations[i - 1]);
    }
  }
  // Feeds that do not follow this job get its progress, never its values.
  for (const auto& feed : {other_job, plain}) {
    bool progress = false;
    for (const LabEvent& e : feed->TakeAll()) {
      EXPECT_NE(e.kind, LabEvent::Kind::kSamples);
      progress = progress || (e.kind == LabEvent::Kind::kJob && e.job.progress_done == 600);
    }
    EXPECT_TRUE(progress);
  }
}

TEST(LabFeedTest, LiveValuesAreDroppedBeforeJobAndBoardEventsWhenTheConsumerLags) {
  LabFeed feed(8, 5);
  LabEvent samples;
  samples.kind = LabEvent::Kind::kSamples;
  samples.samples.job = 5;
  samples.samples.iterations = {0};
  samples.samples.values = {1};
  for (int i = 0; i < 10; ++i) feed.Push(samples);
  EXPECT_FALSE(feed.overflowed());
  LabEvent job;
  job.job.job_id = 5;
  job.job.state = JobState::kRunning;
  feed.Push(job);
  const auto events = feed.TakeAll();
  ASSERT_EQ(events.size(), 5u);  // half the capacity of values, then the job event
  EXPECT_EQ(events.back().kind, LabEvent::Kind::kJob);
}

TEST_F(LabSchedTest, AcceptedJobGetsAnEstimatedStartFromRecentRuns) {
  AgentSessionId s = ConnectHostAgent();
  Submit(FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "running"));
  clock_.Advance(std::chrono::seconds(40));
  RunToSuccess(s, a);
  ASSERT_EQ(WaitForState(static_cast<JobId>(a.job_id()), JobState::kSucceeded),
            JobState::kSucceeded);
  Submit(FcJob());  // takes the board
  TakeAssignment(*agent_);
  auto reply = lab_->Submit(caller_, FcJob());
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->queue_position, 1u);
  EXPECT_EQ(reply->estimated_start_ms, clock_.NowMs() + 40'000);
  auto second = lab_->Submit(caller_, FcJob());
  EXPECT_EQ(second->queue_position, 2u);
  EXPECT_EQ(second->estimated_start_ms, clock_.NowMs() + 80'000);
}

TEST_F(LabSchedTest, AdmissionRejectsAWorkloadOnAnUnknownKindWithTheKindsThatExist) {
  Connect(agent_, "lab-1", {{"host-0", "host"}});
  auto reply = lab_->Submit(caller_, FcJob(1, 1, "stm32h7"));
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.error().message.find("the lab has: host (1 board)"), std::string::npos)
      << reply.error().message;
}

// Health checks on: an infrastructure failure makes health unknown, the health check runs before
// anything else there; failing it max_failures times makes the board bad and its jobs go to the
// other board.
TEST_F(LabSchedTest, BoardFailingItsHealthCheckIsTakenOutAndItsJobGoesElsewhere) {
  LabConfig c = config_;
  c.health_checks = true;
  c.health_max_failures = 2;
  Reopen(c);
  AgentSessionId s = Connect(agent_, "lab-1", {{"host-0", "host"}, {"host-1", "host"}});
  const JobId busy = Submit(FcJob());
  v1::Assignment on1 = TakeAssignment(*agent_);
  ASSERT_EQ(on1.board(), "host-0");
  const JobId job = Submit(FcJob());
  v1::Assignment on2 = TakeAssignment(*agent_);
  ASSERT_EQ(on2.board(), "host-1");
  (void)busy;
  // host-0 crashes: its job is requeued, the health check takes host-0 first.
  Send(s, FinishedMsg(on1.run_id(), Outcome::INFRA_FAILED, 0, "runner process crashed"));
  v1::Assignment check = TakeAssignment(*agent_);
  EXPECT_EQ(check.board(), "host-0");
  auto hc = lab_->GetJob(caller_, static_cast<JobId>(check.job_id()));
  EXPECT_EQ(hc->user, kHealthCheckUser);
  EXPECT_EQ(hc->label, "health check of host-0");
  EXPECT_EQ(lab_->GetJob(caller_, static_cast<JobId>(on1.job_id()))->state, JobState::kQueued);
  // It fails twice: bad.
  Send(s, FinishedMsg(check.run_id(), Outcome::INFRA_FAILED, 0, "runner process crashed"));
  v1::Assignment check2 = TakeAssignment(*agent_);
  EXPECT_EQ(check2.board(), "host-0");
  EXPECT_NE(check2.job_id(), check.job_id());
  Send(s, FinishedMsg(check2.run_id(), Outcome::WORKLOAD_FAILED, 0, "checksum"));
  store_->Flush();
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kBad);
  EXPECT_FALSE(agent_->Take(FakeAgentChannel::IsAssign, std::chrono::milliseconds(50)));
  // The requeued job goes to host-1 once it is free.
  RunToSuccess(s, on2);
  v1::Assignment moved = TakeAssignment(*agent_);
  EXPECT_EQ(moved.job_id(), on1.job_id());
  EXPECT_EQ(moved.board(), "host-1");
  EXPECT_EQ(lab_->GetJob(caller_, job)->state, JobState::kSucceeded);
  EXPECT_TRUE(HistoryHas("host-0", "health", "bad", "server", "health check job"));
}

TEST_F(LabSchedTest, PassingHealthCheckMakesTheBoardGoodAndCalibratesIt) {
  LabConfig c = config_;
  c.health_checks = true;
  Reopen(c);
  AgentSessionId s = ConnectHostAgent();
  ASSERT_TRUE(lab_->SetMaintenance(caller_, "host-0", true, "").ok());
  const JobId job = Submit(FcJob());
  ASSERT_TRUE(lab_->SetMaintenance(caller_, "host-0", false, "").ok());
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kUnknown);
  v1::Assignment check = TakeAssignment(*agent_);
  EXPECT_NE(check.job_id(), static_cast<std::uint64_t>(job));
  RunToSuccess(s, check);
  v1::Assignment next = TakeAssignment(*agent_);
  EXPECT_EQ(next.job_id(), static_cast<std::uint64_t>(job));
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kGood);
  EXPECT_EQ(lab_->GetJob(caller_, static_cast<JobId>(check.job_id()))->state, JobState::kSucceeded);
}

TEST_F(LabSchedTest, HealthCheckOffCalibrationFailsOnAnEmulatedKindWithAnExpectedValue) {
  LabConfig c = config_;
  c.health_checks = true;
  c.health_max_failures = 1;
  c.health_expected["host"] = 5;  // RunToSuccess reports medians near 102
  Reopen(c);
  AgentSessionId s = ConnectHostAgent();
  ASSERT_TRUE(lab_->SetMaintenance(caller_, "host-0", true, "").ok());
  ASSERT_TRUE(lab_->SetMaintenance(caller_, "host-0", false, "").ok());
  v1::Assignment check = TakeAssignment(*agent_);
  RunToSuccess(s, check);
  EXPECT_EQ(WaitForState(static_cast<JobId>(check.job_id()), JobState::kFailed), JobState::kFailed);
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kBad);
  EXPECT_NE(lab_->GetJob(caller_, static_cast<JobId>(check.job_id()))->message.find("expected 5"),
            std::string::npos);
}

TEST_F(LabSchedTest, AdmissionRejectsACaseLargerThanEveryBoardsRam) {
  v1::Register reg;
  reg.set_agent("lab-1");
  auto* info = reg.add_boards();
  info->set_name("mcu-0");
  info->set_kind("small");
  info->set_ram_bytes(4096);
  ASSERT_TRUE(
      lab_->ConnectAgent(testing::AgentCaller(reg.agent()), testing::RegistrationOf(reg), agent_)
          .ok());
  SubmitRequest fits = FcJob(1, 1, "small");  // 1 x 8 -> 4: a few dozen bytes
  EXPECT_TRUE(lab_->Submit(caller_, fits).ok());
  SubmitRequest big = FcJob(1, 1, "small");
  big.cases = {{7, {1, 256, 256}}};  // 64 KiB of weights
  auto reply = lab_->Submit(caller_, big);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(reply.error().message.find("case 7 needs about 67072 bytes"), std::string::npos)
      << reply.error().message;
  EXPECT_NE(reply.error().message.find("mcu-0 (4096 bytes)"), std::string::npos);
}

// ---- events, passes, op profiles, memory ----------------------------------------------

namespace profiles {

// An emulated QEMU board with the plugin's unit (5 events, 3 at once).
v1::Register QemuAgent() {
  v1::Register reg;
  reg.set_agent("lab-q");
  auto* info = reg.add_boards();
  info->set_name("an547-0");
  info->set_kind("corstone300-qemu");
  info->set_emulated(true);
  auto* u = info->add_counter_units();
  u->set_name("qemu-plugin");
  u->set_max_simultaneous(3);
  for (const char* e : {"instructions", "loads", "stores", "branches", "mve_instructions"}) {
    u->add_events(e);
  }
  u->set_emulated(true);
  return reg;
}

// One pass's batch: for each case, `iterations` rows of the timer and of each metric given.
v1::AgentMessage PassBatch(std::uint64_t run, std::uint64_t seq, std::uint32_t pass,
                           std::uint32_t cases, std::uint32_t iterations, std::int64_t cycles,
                           const std::vector<std::uint32_t>& metrics) {
  v1::AgentMessage m;
  auto* b = m.mutable_batch();
  b->set_run_id(run);
  b->set_sequence(seq);
  b->set_pass(pass);
  for (std::uint32_t c = 0; c < cases; ++c) {
    for (std::uint32_t i = 0; i < iterations; ++i) {
      auto* s = b->add_samples();
      s->set_case_index(c);
      s->set_iteration(i);
      s->set_metric(0);
      s->set_value(cycles + c);
      for (std::uint32_t metric : metrics) {
        auto* e = b->add_samples();
        e->set_case_index(c);
        e->set_iteration(i);
        e->set_metric(metric);
        e->set_value(1000 * metric + c);
      }
    }
  }
  return m;
}

}  // namespace profiles

TEST_F(LabTest, AnEventTheBoardCannotCountIsRejectedAtSubmitListingWhatItCounts) {
  auto q = std::make_shared<FakeAgentChannel>();
  ASSERT_TRUE(lab_->ConnectAgent(testing::AgentCaller(profiles::QemuAgent().agent()),
                                 testing::RegistrationOf(profiles::QemuAgent()), q)
                  .ok());
  auto r = FcJob(1, 2, "corstone300-qemu");
  r.events = {"instructions", "npu_active"};
  auto reply = lab_->Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(reply.error().message.find("'npu_active'"), std::string::npos) << reply.error().message;
  EXPECT_NE(reply.error().message.find("mve_instructions"), std::string::npos);
  // A board without counter units counts cycles only.
  ConnectHostAgent();
  auto h = FcJob();
  h.events = {"loads"};
  EXPECT_FALSE(lab_->Submit(caller_, h).ok());
  h.events = {"cycles"};  // always allowed
  EXPECT_TRUE(lab_->Submit(caller_, h).ok());
}

TEST_F(LabTest, FiveEmulatedEventsRunAsTwoPassesOfOneRunAndTheirStatisticsAreStored) {
  auto q = std::make_shared<FakeAgentChannel>();
  auto session = lab_->ConnectAgent(testing::AgentCaller(profiles::QemuAgent().agent()),
                                    testing::RegistrationOf(profiles::QemuAgent()), q);
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(q->Take(FakeAgentChannel::IsRegistered));
  auto r = FcJob(2, 3, "corstone300-qemu");
  r.events = {"mve_instructions", "branches", "Stores", "loads", "instructions"};
  const JobId id = Submit(r);
  const v1::Assignment a = TakeAssignment(*q);
  ASSERT_EQ(a.passes_size(), 2);
  EXPECT_EQ(std::vector<std::string>(a.passes(0).events().begin(), a.passes(0).events().end()),
            (std::vector<std::string>{"instructions", "loads", "stores"}));
  EXPECT_EQ(std::vector<std::string>(a.passes(1).events().begin(), a.passes(1).events().end()),
            (std::vector<std::string>{"branches", "mve_instructions"}));
  EXPECT_EQ(a.events_size(), 5);
  EXPECT_TRUE(a.profile_ops());
  EXPECT_TRUE(a.report_memory());

  const auto run = a.run_id();
  Send(*session, RunStateMsg(run, "running"));
  v1::AgentMessage started;
  auto* s = started.mutable_run_started();
  s->set_run_id(run);
  s->set_runner_version("0.1.0");
  s->set_timer_unit("cycles");
  s->set_emulated(true);
  for (const auto& e : a.events()) s->add_counters(e);
  auto* f = s->add_firmware_memory();
  f->set_case_index(-1);
  f->set_source("elf");
  f->set_category("flash.text");
  f->set_used(12345);
  Send(*session, started);
  Send(*session, profiles::PassBatch(run, 0, 0, 2, 3, 5000, {1, 2, 3}));
  Send(*session, profiles::PassBatch(run, 1, 1, 2, 3, 5000, {4, 5}));
  for (std::uint32_t pass = 0; pass < 2; ++pass) {
    for (std::uint32_t c = 0; c < 2; ++c) {
      v1::AgentMessage m = CaseDoneMsg(run, c);
      m.mutable_case_done()->set_pass(pass);
      auto* op = m.mutable_case_done()->add_ops();
      op->set_op_index(0);
      op->set_type("FULLY_CONNECTED");
      op->set_name("fully_connected_s8");
      op->set_count(3);
      auto* metric = op->add_metrics();
      metric->set_metric(pass == 0 ? 0 : 4);
      metric->set_count(3);
      metric->set_sum(300);
      metric->set_min(100);
      metric->set_max(100);
      auto* mem = m.mutable_case_done()->add_memory();
      mem->set_case_index(static_cast<std::int32_t>(c));
      mem->set_source("runner");
      mem->set_category("arena");
      mem->set_used(64 + c);
      mem->set_reserved(4096);
      Send(*session, m);
    }
  }
  Send(*session, FinishedMsg(run, Outcome::SUCCEEDED, 2));
  EXPECT_EQ(WaitForState(id, JobState::kSucceeded), JobState::kSucceeded);

  auto res = lab_->GetResults(caller_, id, false);
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->job.message, "");  // passes agree exactly
  EXPECT_EQ(res->events.size(), 5u);
  ASSERT_EQ(res->passes.size(), 2u);
  EXPECT_EQ(res->passes[1].events,
            (std::vector<std::string>{"cycles", "branches", "mve_instructions"}));
  ASSERT_EQ(res->cases.size(), 2u);
  ASSERT_EQ(res->cases[1].stats.size(), 6u);  // cycles + 5 events
  EXPECT_EQ(res->cases[1].stats[0].n, 3u);    // cycles of pass 0 only
  EXPECT_EQ(res->cases[1].stats[5].metric, "mve_instructions");
  EXPECT_EQ(res->cases[1].stats[5].median, 5001);  // 1000 * metric + case
  ASSERT_EQ(res->ops.size(), 4u);
  EXPECT_EQ(res->ops[0].type, "FULLY_CONNECTED");
  ASSERT_EQ(res->memory.size(), 3u);
  EXPECT_EQ(res->memory[0].source, "elf");
  EXPECT_EQ(res->memory[0].used, 12345u);
  EXPECT_EQ(res->memory[2].used, 65u);
}

TEST_F(LabTest, EmulatedPassesThatDisagreeOnCyclesFlagTheJob) {
  auto q = std::make_shared<FakeAgentChannel>();
  auto session = lab_->ConnectAgent(testing::AgentCaller(profiles::QemuAgent().agent()),
                                    testing::RegistrationOf(profiles::QemuAgent()), q);
  ASSERT_TRUE(session.ok());
  auto r = FcJob(1, 2, "corstone300-qemu");
  r.events = {"instructions", "loads", "stores", "branches"};
  const JobId id = Submit(r);
  const v1::Assignment a = TakeAssignment(*q);
  ASSERT_EQ(a.passes_size(), 2);
  const auto run = a.run_id();
  v1::AgentMessage started;
  started.mutable_run_started()->set_run_id(run);
  started.mutable_run_started()->set_timer_unit("cycles");
  started.mutable_run_started()->set_emulated(true);
  for (const auto& e : a.events()) started.mutable_run_started()->add_counters(e);
  Send(*session, started);
  Send(*session, profiles::PassBatch(run, 0, 0, 1, 2, 5000, {1, 2, 3}));
  Send(*session, profiles::PassBatch(run, 1, 1, 1, 2, 5001, {4}));  // one cycle more
  Send(*session, CaseDoneMsg(run, 0));
  Send(*session, FinishedMsg(run, Outcome::SUCCEEDED, 2));
  EXPECT_EQ(WaitForState(id, JobState::kSucceeded), JobState::kSucceeded);
  auto job = lab_->GetJob(caller_, id);
  ASSERT_TRUE(job.ok());
  EXPECT_NE(job->message.find("passes disagree on cycles"), std::string::npos) << job->message;
}

TEST_F(LabTest, ListEventsShowsTheUnitsOfAKind) {
  auto q = std::make_shared<FakeAgentChannel>();
  ASSERT_TRUE(lab_->ConnectAgent(testing::AgentCaller(profiles::QemuAgent().agent()),
                                 testing::RegistrationOf(profiles::QemuAgent()), q)
                  .ok());
  auto v = lab_->ListEvents(caller_, "corstone300-qemu", "");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->boards, (std::vector<std::string>{"an547-0"}));
  ASSERT_EQ(v->units.units.size(), 1u);
  EXPECT_EQ(v->units.units[0].max_simultaneous, 3u);
  EXPECT_EQ(v->countable.size(), 6u);  // cycles + 5
  EXPECT_FALSE(lab_->ListEvents(caller_, "no-such-kind", "").ok());
}

TEST_F(LabTest, BoardUnitsAndJobEventsSurviveARestart) {
  auto q = std::make_shared<FakeAgentChannel>();
  ASSERT_TRUE(lab_->ConnectAgent(testing::AgentCaller(profiles::QemuAgent().agent()),
                                 testing::RegistrationOf(profiles::QemuAgent()), q)
                  .ok());
  RestartLab();
  // The agent has not reconnected: its board's units are known from the store.
  auto r = FcJob(1, 2, "corstone300-qemu");
  r.events = {"npu_active"};
  EXPECT_FALSE(lab_->Submit(caller_, r).ok());
  r.events = {"branches"};
  const JobId id = Submit(r);
  auto q2 = std::make_shared<FakeAgentChannel>();
  ASSERT_TRUE(lab_->ConnectAgent(testing::AgentCaller(profiles::QemuAgent().agent()),
                                 testing::RegistrationOf(profiles::QemuAgent()), q2)
                  .ok());
  const v1::Assignment a = TakeAssignment(*q2);
  EXPECT_EQ(a.passes_size(), 1);
  ASSERT_EQ(a.events_size(), 1);
  EXPECT_EQ(a.events(0), "branches");
  (void)id;
}

// ---- one agent must not act for another; one user must not starve the others ----------------

class LabAbuseTest : public LabTest {
 protected:
  // An uploaded artifact of `user` holding `bytes`.
  Result<Artifact> Upload(const Caller& user, const std::string& bytes,
                          const std::string& name = "cases.csv") {
    auto up = lab_->BeginUpload(user, name, 0);
    if (!up.ok()) return up.error();
    if (Status s = (*up)->Append(bytes); !s.ok()) return s.error();
    return (*up)->Finish();
  }
  static Caller Member(const std::string& name) {
    Caller c;
    c.user = name;
    c.role = Role::kMember;
    return c;
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
  lab_->DisconnectAgent(s, "gone");
  auto thief = std::make_shared<FakeAgentChannel>();
  v1::Register reg;
  reg.set_agent("lab-2");
  reg.add_boards()->set_name("host-0");
  reg.mutable_boards(0)->set_kind("host");
  auto id = lab_->ConnectAgent(testing::AgentCaller("lab-2"), testing::RegistrationOf(reg), thief);
  ASSERT_FALSE(id.ok());
  EXPECT_EQ(id.error().code, ErrorCode::kAlreadyExists);
  EXPECT_NE(id.error().message.find("belongs to agent lab-1"), std::string::npos)
      << id.error().message;
  EXPECT_NE(id.error().message.find("mculab board host-0 --agent lab-2"),
            std::string::npos)
      << id.error().message;
  RestartLab();
  EXPECT_FALSE(
      lab_->ConnectAgent(testing::AgentCaller("lab-2"), testing::RegistrationOf(reg), thief).ok());
  EXPECT_EQ(BoardNamed("host-0").board.agent, "lab-1");
}

TEST_F(LabAbuseTest, AnAdminGivesABoardToAnotherAgentAndTheOldOneIsRefusedFromThenOn) {
  ConnectHostAgent();
  auto denied = lab_->AssignBoard(Member("mallory"), "host-0", "lab-2");
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, ErrorCode::kPermissionDenied);
  auto given = lab_->AssignBoard(caller_, "host-0", "lab-2");
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
  EXPECT_FALSE(lab_->ConnectAgent(testing::AgentCaller("lab-1"), testing::RegistrationOf(old),
                                  std::make_shared<FakeAgentChannel>())
                   .ok());
  auto history = lab_->BoardHistory(caller_, "host-0");
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
  EXPECT_EQ(lab_->GetJob(caller_, job)->state, JobState::kRunning);
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
  auto early = lab_->OpenArtifact(testing::AgentCaller("lab-1"), sha);
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().code, ErrorCode::kPermissionDenied);
  SubmitRequest r = FcJob(1, 1);
  r.cases_artifact = sha;
  Submit(r);
  TakeAssignment(*agent_);
  EXPECT_TRUE(lab_->OpenArtifact(testing::AgentCaller("lab-1"), sha).ok());
  auto stranger = lab_->OpenArtifact(testing::AgentCaller("lab-2"), sha);
  ASSERT_FALSE(stranger.ok());
  EXPECT_EQ(stranger.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(stranger.error().message.find("holds no active run"), std::string::npos);
  // A stranger asking for an artifact that does not exist learns nothing either.
  auto missing = lab_->OpenArtifact(testing::AgentCaller("lab-2"), std::string(64, 'b'));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kPermissionDenied);
  EXPECT_TRUE(lab_->OpenArtifact(caller_, sha).ok());  // admins keep access
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
  ASSERT_TRUE(lab_->ConnectAgent(agent, testing::RegistrationOf(reg), agent_).ok());
  JobId job = Submit(FcJob());
  TakeAssignment(*agent_);
  EXPECT_EQ(lab_->accounts().watched_streams(), 1u);
  ASSERT_TRUE(lab_->accounts().Revoke(issued->token).ok());
  EXPECT_TRUE(agent_->hung_up());
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kOffline);
  EXPECT_EQ(lab_->GetJob(caller_, job)->state, JobState::kQueued);  // requeued
  EXPECT_EQ(lab_->accounts().watched_streams(), 0u);
}

TEST_F(LabAbuseTest, RevokingAUsersTokenEndsTheirWatchesAndFeeds) {
  ConnectHostAgent();
  JobId job = Submit(FcJob());
  const Caller viewer = WithToken("vera", "viewer");
  auto watch = lab_->Watch(viewer, job);
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
  auto watch = lab_->Watch(viewer, job);
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
  ASSERT_TRUE(lab_->Submit(alice, FcJob()).ok());  // goes to the board
  ASSERT_TRUE(lab_->Submit(alice, FcJob()).ok());
  ASSERT_TRUE(lab_->Submit(alice, FcJob()).ok());
  auto refused = lab_->Submit(alice, FcJob());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(refused.error().message.find("max_queued_jobs_per_user"), std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(lab_->Submit(Member("bob"), FcJob()).ok());  // others are not held up
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
  auto many =
      lab_->ConnectAgent(testing::AgentCaller("lab-1"), testing::RegistrationOf(reg), agent_);
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(many.error().message.find("max_boards_per_agent"), std::string::npos);
  reg.mutable_boards()->RemoveLast();
  (*reg.mutable_boards(0)->mutable_tags())["cpu"] = "m55";
  (*reg.mutable_boards(0)->mutable_tags())["npu"] = "u55";
  auto tagged =
      lab_->ConnectAgent(testing::AgentCaller("lab-1"), testing::RegistrationOf(reg), agent_);
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
  const JobId job = Submit(r);                  // on the board, unfinished
  ASSERT_FALSE(Upload(caller_, "third").ok());  // over max_user_artifacts
  EXPECT_EQ(*lab_->CollectArtifacts(), 0u);     // both are younger than the grace period
  clock_.Advance(std::chrono::seconds(61));
  EXPECT_EQ(*lab_->CollectArtifacts(), 1u);
  EXPECT_FALSE(store_->GetArtifact(unused->sha256)->has_value());
  EXPECT_TRUE(store_->GetArtifact(used->sha256)->has_value());
  EXPECT_TRUE(lab_->OpenArtifact(caller_, used->sha256).ok());
  EXPECT_TRUE(Upload(caller_, "third").ok());  // the quota has room again
  ASSERT_TRUE(lab_->Cancel(caller_, job).ok());
}

TEST_F(LabAbuseTest, ACaseOutsideTheKernelsLimitsIsRefusedAtSubmit) {
  ConnectHostAgent();
  SubmitRequest deep = FcJob(1, 1);
  deep.cases = {{3, {1, 70'000, 4}}};  // accumulation depth over the kernel's 65536
  auto reply = lab_->Submit(caller_, deep);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(reply.error().message.find("the kernel's limit"), std::string::npos)
      << reply.error().message;
  SubmitRequest huge;
  huge.kind = "host";
  huge.op = "conv2d_s8";
  huge.iterations = 1;
  huge.cases = {{4, {65535, 65535, 65535, 65535, 65535, 1, 1, 0, 0, 1, 1}}};
  auto too_big = lab_->Submit(caller_, huge);
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
}  // namespace mculab::server
