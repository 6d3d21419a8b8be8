// The Lab's use cases: submit and admission, runs and their samples, watches, failures, cancel,
// timeouts, restarts and agents (lab_test_fixture.h).
#include "server/service/run_statistics.h"
#include "tests/unit/server/lab_test_fixture.h"

namespace mculab::server::lab_testing {
namespace {

// The statistics stored for the job equal, field for field, those read back from the run's stored
// samples (ComputeRunStatistics, the finalisation's fallback).
void ExpectStatisticsAsReadBack(Store& store, JobId job, RunId run, std::uint32_t cases) {
  auto stored = store.GetCaseStats(job);
  ASSERT_TRUE(stored.ok()) << stored.error().message;
  auto r = store.GetRun(run);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto read = ComputeRunStatistics(store, job, run, r->provenance, 1, cases);
  ASSERT_TRUE(read.ok()) << read.error().message;
  ASSERT_EQ(stored->size(), read->stats.size());
  for (std::size_t i = 0; i < stored->size(); ++i) {
    const CaseStats& a = read->stats[i];
    const CaseStats& b = (*stored)[i];
    SCOPED_TRACE("case " + std::to_string(a.case_index) + " metric " + a.metric);
    EXPECT_EQ(std::tie(a.case_index, a.metric_index, a.metric, a.unit, a.n),
              std::tie(b.case_index, b.metric_index, b.metric, b.unit, b.n));
    EXPECT_EQ(std::tie(a.min, a.median, a.mean, a.p90, a.p99, a.stddev, a.cv, a.max),
              std::tie(b.min, b.median, b.mean, b.p90, b.p99, b.stddev, b.cv, b.max));
  }
}

// ---- submit and admission ----

TEST_F(LabTest, SubmittedJobIsAssignedAtOnceToAnIdleBoardOfItsKind) {
  ConnectHostAgent();
  auto reply = lab_->jobs().Submit(caller_, FcJob(2, 5));
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
  auto reply = lab_->jobs().Submit(caller_, FcJob(1, 1, "nucleo-h743"));
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
  auto reply = lab_->jobs().Submit(caller_, r);
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
  auto reply = lab_->jobs().Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(reply.error().message.find("no board of kind host has tag cpu=cortex-m7; its boards "
                                       "have: an547-0 {cpu=cortex-m55}, an547-1 {}"),
            std::string::npos)
      << reply.error().message;
  // A named board must have the tag too.
  r.board = "an547-0";
  reply = lab_->jobs().Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.error().message.find("board an547-0 does not have tag cpu=cortex-m7; its tags "
                                       "are {cpu=cortex-m55}"),
            std::string::npos)
      << reply.error().message;
  // A tag that is not KEY=VALUE is invalid.
  r.board.clear();
  r.tags = {{"cpu", ""}};
  reply = lab_->jobs().Submit(caller_, r);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, second)->state, JobState::kQueued);
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kIdle);
  EXPECT_EQ(BoardNamed("host-0").queue_length, 0u);
  EXPECT_EQ(BoardNamed("host-1").queue_length, 1u);
  EXPECT_EQ(lab_->jobs().GetJob(caller_, first)->tags, r.tags);

  RestartLab();
  auto job = lab_->jobs().GetJob(caller_, second);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, JobState::kQueued);
  EXPECT_EQ(job->tags, r.tags);
  // Back with both boards: only host-1 gets work (the requeued first job), host-0 stays idle.
  auto agent = std::make_shared<FakeAgentChannel>();
  ConnectTagged(agent, "lab-1", boards);
  EXPECT_EQ(TakeAssignment(*agent).board(), "host-1");
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kIdle);
  EXPECT_EQ(lab_->jobs().GetJob(caller_, second)->state, JobState::kQueued);
}

TEST_F(LabTest, AdmissionAcceptsAKindWhoseBoardsAreOfflineAndQueuesTheJob) {
  AgentSessionId s = ConnectHostAgent();
  lab_->agents().DisconnectAgent(s, "test");
  auto reply = lab_->jobs().Submit(caller_, FcJob());
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->state, JobState::kQueued);
  EXPECT_EQ(reply->queue_position, 1u);
}

TEST_F(LabTest, UnknownOpIsRejectedNamingTheBuiltInOps) {
  ConnectHostAgent();
  SubmitRequest r = FcJob();
  r.op = "conv3d_s8";
  auto reply = lab_->jobs().Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(reply.error().message.find("unknown op 'conv3d_s8'"), std::string::npos);
  EXPECT_NE(reply.error().message.find("conv2d_s8, fully_connected_s8"), std::string::npos);
}

TEST_F(LabTest, BadCaseParameterIsRejectedNamingTheCaseAndParameter) {
  ConnectHostAgent();
  SubmitRequest r = FcJob(3);
  r.cases[2].params = {1, 8, 0};
  auto reply = lab_->jobs().Submit(caller_, r);
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
  auto reply = lab_->jobs().Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.error().message.find("takes 3 parameters, got 2"), std::string::npos);
}

TEST_F(LabTest, IterationsOutsideOneToOneHundredThousandAreRejected) {
  ConnectHostAgent();
  for (std::uint32_t n : {0u, 100'001u}) {
    auto reply = lab_->jobs().Submit(caller_, FcJob(1, n));
    ASSERT_FALSE(reply.ok());
    EXPECT_NE(reply.error().message.find("iterations must be between 1 and 100000"),
              std::string::npos);
  }
  EXPECT_TRUE(lab_->jobs().Submit(caller_, FcJob(1, 100'000)).ok());
}

TEST_F(LabTest, JobWithoutCasesIsRejected) {
  ConnectHostAgent();
  auto reply = lab_->jobs().Submit(caller_, FcJob(0));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(LabTest, CasesArtifactMustHaveBeenUploaded) {
  ConnectHostAgent();
  SubmitRequest r = FcJob();
  r.cases_artifact = std::string(64, 'a');
  auto reply = lab_->jobs().Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.error().message.find("never uploaded"), std::string::npos);

  auto upload = lab_->uploads().BeginUpload(caller_, "cases.csv", 0);
  ASSERT_TRUE(upload.ok());
  ASSERT_TRUE((*upload)->Append("id,N,in,out\n0,1,8,4\n").ok());
  auto artifact = (*upload)->Finish();
  ASSERT_TRUE(artifact.ok());
  r.cases_artifact = artifact->sha256;
  auto ok = lab_->jobs().Submit(caller_, r);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(lab_->jobs().GetJob(caller_, ok->id)->cases_artifact, artifact->sha256);
}

TEST_F(LabTest, QueuePositionCountsJobsAheadForTheSameBoards) {
  Connect(agent_, "lab-1", {{"an547-0", "corstone300-qemu"}, {"host-0", "host"}});
  Submit(FcJob());  // takes host-0
  EXPECT_EQ(lab_->jobs().Submit(caller_, FcJob())->queue_position, 1u);
  EXPECT_EQ(lab_->jobs().Submit(caller_, FcJob(1, 1, "corstone300-qemu"))->state,
            JobState::kAssigned);
  EXPECT_EQ(lab_->jobs().Submit(caller_, FcJob())->queue_position, 2u);
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
      ASSERT_TRUE(lab_->jobs().Cancel(caller_, id).ok());  // leaves the queue: behind it move up
      cancelled = id;
      continue;
    }
    (on_host ? host : qemu).push_back(id);
  }
  JobQuery all;
  all.limit = 500;
  auto jobs = ListJobs(all);
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 122u);
  std::map<JobId, std::uint32_t> positions;
  for (const Job& j : *jobs) positions[j.id] = j.wait.position;
  for (std::size_t i = 0; i < host.size(); ++i) EXPECT_EQ(positions[host[i]], i + 1);
  for (std::size_t i = 0; i < qemu.size(); ++i) EXPECT_EQ(positions[qemu[i]], i + 1);
  EXPECT_EQ(positions[cancelled], 0u);
  EXPECT_EQ(positions[1], 0u) << "a job on a board waits for nothing";
  // One job read alone says the same as the page.
  EXPECT_EQ(lab_->jobs().GetJob(caller_, host.back())->wait.position, host.size());
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

  auto results = LabQueries(*lab_, *store_).GetJobResults(caller_, id, /*include_samples=*/true);
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
  auto history = lab_->jobs().JobHistory(caller_, id);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, static_cast<JobId>(a.job_id()))->progress_done, 2u);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, id)->state, JobState::kRunning);
  Send(s, BatchMsg(a.run_id(), 1, 0, {3, 4}, 2));
  ASSERT_EQ(WaitForState(id, JobState::kSucceeded), JobState::kSucceeded);
  auto results = LabQueries(*lab_, *store_).GetJobResults(caller_, id, false);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, id)->message, "case 0: 3 of 4 iterations stored");
}

TEST_F(LabTest, WatchDeliversStatesAndProgressUntilTheFinalState) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob(1, 4));
  v1::Assignment a = TakeAssignment(*agent_);
  auto watch = lab_->jobs().Watch(caller_, id);
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
  ASSERT_TRUE(lab_->jobs().Cancel(caller_, id).ok());
  auto watch = lab_->jobs().Watch(caller_, id);
  ASSERT_TRUE(watch.ok());
  auto e = (*watch)->Next(std::chrono::seconds(10));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->state, JobState::kCancelled);
  EXPECT_FALSE((*watch)->Next(std::chrono::seconds(10)));
  EXPECT_TRUE((*watch)->Ended());
}

TEST_F(LabTest, WatchOfAnUnknownJobIsNotFound) {
  auto watch = lab_->jobs().Watch(caller_, 999);
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
  auto job = lab_->jobs().GetJob(caller_, id);
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
  auto job = lab_->jobs().GetJob(caller_, id);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, id)->message, "runner: arena too small");
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
      lab_->jobs()
          .GetJob(caller_, id)
          ->message.find("checksum mismatch): case 0: checksum 0x00009999, expected 0x00001234"),
      std::string::npos)
      << lab_->jobs().GetJob(caller_, id)->message;
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kGood);
}

TEST_F(LabTest, AgentDisconnectRequeuesItsRunsAndTakesItsBoardsOffline) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob());
  TakeAssignment(*agent_);
  lab_->agents().DisconnectAgent(s, "stream closed");
  auto job = lab_->jobs().GetJob(caller_, id);
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
  auto id = lab_->agents().ConnectAgent(testing::AgentCaller(reg.agent()),
                                        testing::RegistrationOf(reg), again);
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
  auto id =
      lab_->agents().ConnectAgent(testing::AgentCaller(reg.agent()), testing::RegistrationOf(reg),
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
  auto job = lab_->jobs().Cancel(caller_, queued);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, JobState::kCancelled);
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::IsCancel));
  EXPECT_EQ(lab_->jobs().GetJob(caller_, queued)->state, JobState::kCancelled);
  EXPECT_EQ(lab_->jobs().GetJob(caller_, running)->state, JobState::kAssigned);
  EXPECT_EQ(BoardNamed("host-0").queue_length, 0u);
}

TEST_F(LabTest, CancellingARunningJobCancelsItsRunAndFreesTheBoardWhenTheAgentConfirms) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  Send(s, RunStateMsg(a.run_id(), "running"));
  const JobId next = Submit(FcJob());
  auto job = lab_->jobs().Cancel(caller_, id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->state, JobState::kCancelled);
  auto cancel = agent_->Take(FakeAgentChannel::IsCancel);
  ASSERT_TRUE(cancel);
  EXPECT_EQ(cancel->cancel().run_id(), a.run_id());
  EXPECT_EQ(cancel->cancel().reason(), "cancelled by local");
  // Until the agent confirms, the board is still busy with the cancelled run.
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kBusy);
  EXPECT_EQ(lab_->jobs().GetJob(caller_, next)->state, JobState::kQueued);
  Send(s, FinishedMsg(a.run_id(), Outcome::CANCELLED, 0));
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(next));
  EXPECT_EQ(store_->GetRun(static_cast<RunId>(a.run_id()))->state, RunState::kCancelled);
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kGood);
}

TEST_F(LabTest, CancellingAFinishedJobIsRefused) {
  ConnectHostAgent();
  const JobId id = Submit(FcJob());
  ASSERT_TRUE(lab_->jobs().Cancel(caller_, id).ok());
  auto again = lab_->jobs().Cancel(caller_, id);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(again.error().message.find("already cancelled"), std::string::npos);
  auto unknown = lab_->jobs().Cancel(caller_, 777);
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
  auto watch = lab_->jobs().Watch(caller_, id);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, waiting)->state, JobState::kAssigned);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, newer)->state, JobState::kQueued);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, on_board)->state, JobState::kAssigned);
  EXPECT_EQ(lab_->jobs().GetJob(caller_, queued)->state, JobState::kQueued);
  EXPECT_EQ(BoardNamed("host-0").board.state, BoardState::kOffline);
  // The agent comes back without the run (e.g. it restarted too): the job is requeued and, being
  // the oldest, runs first; new ids continue after the old ones.
  auto agent = std::make_shared<FakeAgentChannel>();
  Connect(agent, "lab-1", {{"host-0", "host"}});
  v1::Assignment again = TakeAssignment(*agent);
  EXPECT_EQ(again.job_id(), static_cast<std::uint64_t>(on_board));
  auto job = lab_->jobs().GetJob(caller_, on_board);
  EXPECT_EQ(job->attempts, 2u);
  store_->Flush();
  auto history = lab_->jobs().JobHistory(caller_, on_board);
  ASSERT_TRUE(history.ok());
  bool requeued = false;
  for (const auto& t : *history) {
    requeued |= t.to == "queued" && t.reason.find("reconnected without run") != std::string::npos;
  }
  EXPECT_TRUE(requeued) << "no requeue naming the lost run in the audit trail";
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kUnknown);
  EXPECT_GT(Submit(FcJob()), queued);
}

TEST_F(LabTest, ARunsEndReadsNoSampleBackAndStoresTheStatisticsTheReadBackGives) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob(3, 6));
  v1::Assignment a = TakeAssignment(*agent_);
  const auto run = static_cast<RunId>(a.run_id());
  Send(s, RunStateMsg(a.run_id(), "running"));
  Send(s, StartedMsg(a.run_id()));
  Send(s, BatchMsg(a.run_id(), 0, 0, {100, 110, 105}));
  Send(s, BatchMsg(a.run_id(), 1, 0, {120, 99, 101}, 3));
  Send(s, BatchMsg(a.run_id(), 1, 0, {120, 99, 101}, 3));  // sent again: stored once
  Send(s, CaseDoneMsg(a.run_id(), 0));
  Send(s, BatchMsg(a.run_id(), 2, 1, {7}));  // one sample
  Send(s, CaseDoneMsg(a.run_id(), 1));
  Send(s, BatchMsg(a.run_id(), 3, 2, {5, 5, 5, 900'000, 5, -3}));  // outliers
  Send(s, CaseDoneMsg(a.run_id(), 2));
  Send(s, FinishedMsg(a.run_id(), Outcome::SUCCEEDED, 4));
  ASSERT_EQ(WaitForState(id, JobState::kSucceeded), JobState::kSucceeded);
  store_->Flush();
  EXPECT_EQ(faulty_->sample_scans(), 0u) << "the run's end read its samples back";
  ExpectStatisticsAsReadBack(*store_, id, run, 3);
  auto stats = store_->GetCaseStats(id);
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(stats->size(), 6u);  // 3 cases x 2 metrics
  EXPECT_EQ((*stats)[0].n, 6u);
  EXPECT_EQ((*stats)[0].median, 103);
  EXPECT_EQ((*stats)[2].n, 1u);
  EXPECT_EQ((*stats)[4].max, 900'000);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, id)->state, JobState::kRunning);
  EXPECT_EQ(lab_->jobs().GetJob(caller_, id)->progress_done, 4u);

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
  auto job = lab_->jobs().GetJob(caller_, id);
  EXPECT_EQ(job->last_run_id, static_cast<RunId>(a.run_id()));
  EXPECT_EQ(job->attempts, 1u);
  EXPECT_EQ(job->progress_done, 8u);
  EXPECT_EQ(*store_->CountSamples(static_cast<RunId>(a.run_id())), 2u * 4u * 2u);
  auto stats = store_->GetCaseStats(id);
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(stats->size(), 4u);  // 2 cases x 2 metrics
  for (const auto& st : *stats) EXPECT_EQ(st.n, 4u);
  // Batch 0 was stored before the restart: the run's end read the samples back (once), and its
  // statistics hold case 0.
  EXPECT_EQ(faulty_->sample_scans(), 1u);
  EXPECT_DOUBLE_EQ((*stats)[0].median, 11.5);
  ExpectStatisticsAsReadBack(*store_, id, static_cast<RunId>(a.run_id()), 2);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, id)->state, JobState::kAssigned);
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_EQ(WaitForState(id, JobState::kQueued), JobState::kQueued);
  auto job = lab_->jobs().GetJob(caller_, id);
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
  ASSERT_TRUE(lab_->jobs().Cancel(caller_, id).ok());
  EXPECT_EQ(lab_->jobs().GetJob(caller_, id)->state, JobState::kCancelled);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, id)->state, JobState::kCancelled);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, id)->state, JobState::kRunning);
  EXPECT_FALSE(agent_->hung_up());
  // Then it goes quiet.
  clock_.Advance(std::chrono::milliseconds(2999));
  store_->Flush();
  EXPECT_EQ(lab_->jobs().GetJob(caller_, id)->state, JobState::kRunning);
  EXPECT_FALSE(agent_->hung_up());
  clock_.Advance(std::chrono::milliseconds(1));
  EXPECT_EQ(WaitForState(id, JobState::kQueued), JobState::kQueued);
  EXPECT_TRUE(agent_->hung_up());
  auto job = lab_->jobs().GetJob(caller_, id);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, id)->state, JobState::kQueued);
  EXPECT_EQ(BoardNamed(a.board()).board.state, BoardState::kOffline);
  EXPECT_FALSE(agent_->Has(FakeAgentChannel::IsAssign));
  // Registered again (a new process): the boards come back and the job runs.
  lab_->agents().DisconnectAgent(s, "stopped");
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, id)->state, JobState::kQueued);
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
  auto id = lab_->agents().ConnectAgent(testing::AgentCaller(reg.agent()),
                                        testing::RegistrationOf(reg), agent_);
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
  ASSERT_TRUE(lab_->jobs().Cancel(caller_, ids[3]).ok());
  JobQuery queued;
  queued.states = {"queued"};
  auto jobs = ListJobs(queued);
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, ids[2]);
  JobQuery page;
  page.limit = 2;
  page.before_id = ids[3];
  jobs = ListJobs(page);
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, ids[2]);
  EXPECT_EQ((*jobs)[1].id, ids[1]);
  JobQuery bad;
  bad.states = {"sleeping"};
  EXPECT_EQ(ListJobs(bad).error().code, ErrorCode::kInvalidArgument);
}

TEST_F(LabTest, UnknownJobIsNotFound) {
  EXPECT_EQ(lab_->jobs().GetJob(caller_, 31337).error().code, ErrorCode::kNotFound);
  EXPECT_EQ(LabQueries(*lab_, *store_).GetJobResults(caller_, 31337, false).error().code,
            ErrorCode::kNotFound);
}

}  // namespace
}  // namespace mculab::server::lab_testing
