// The Lab shared by a team: priority, fair share, reservations, maintenance, health checks,
// cancel grace, estimates and live feeds (lab_test_fixture.h).
#include "tests/unit/server/lab_test_fixture.h"

namespace mculab::server::lab_testing {
namespace {

// ---- team sharing: priority, fair share, reservations, maintenance, health, cancel, estimates
// ----

class LabSchedTest : public LabTest {
 protected:
  JobId SubmitAs(const Caller& who, SubmitRequest r) {
    auto reply = lab_->jobs().Submit(who, std::move(r));
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
  // Runs the next `n` assignments (the health checks of new boards) to success.
  void PassHealthChecks(AgentSessionId s, int n) {
    for (int i = 0; i < n; ++i) {
      v1::Assignment check = TakeAssignment(*agent_);
      ASSERT_EQ(lab_->jobs().GetJob(caller_, static_cast<JobId>(check.job_id()))->user,
                kHealthCheckUser);
      RunToSuccess(s, check);
      ASSERT_EQ(WaitForState(static_cast<JobId>(check.job_id()), JobState::kSucceeded),
                JobState::kSucceeded);
    }
  }
  bool HistoryHas(const std::string& board, const std::string& field, const std::string& to,
                  const std::string& actor, const std::string& reason_part = "") {
    store_->Flush();
    auto h = lab_->boards().BoardHistory(caller_, board);
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
  auto r = lab_->boards().Reserve(alice, {"host-0", 60'000, "debugging", false});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->state, BoardState::kReserved);
  EXPECT_EQ(r->holder, "alice");
  EXPECT_EQ(r->lease_until_ms, clock_.NowMs() + 60'000);
  const JobId bobs = SubmitAs(bob, FcJob());
  EXPECT_EQ(lab_->jobs().GetJob(caller_, bobs)->state, JobState::kQueued);
  // Someone else cannot take it over.
  auto taken = lab_->boards().Reserve(bob, {"host-0", 1000, "", false});
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
  lab_->agents().DisconnectAgent(Connect(other, "lab-2", {}), "test");
  EXPECT_EQ(lab_->schedule_passes(), passes);
  EXPECT_EQ(lab_->jobs().GetJob(caller_, oldest)->state, JobState::kQueued);
  // The board comes free: one pass, and the oldest job gets it.
  RunToSuccess(s, busy);
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(oldest));
  EXPECT_EQ(lab_->schedule_passes(), passes + 1);
}

TEST_F(LabSchedTest, NoSchedulingPassRunsWhenNothingChangedSinceAPassThatPlacedNothing) {
  ConnectHostAgent();
  const Caller alice = Member("alice"), bob = Member("bob");
  ASSERT_TRUE(lab_->boards().Reserve(alice, {"host-0", 60'000, "", false}).ok());
  const JobId bobs = SubmitAs(bob, FcJob());  // the board is free, but not for bob
  const std::uint64_t passes = lab_->schedule_passes();
  EXPECT_GE(passes, 1u);
  auto other = std::make_shared<FakeAgentChannel>();
  lab_->agents().DisconnectAgent(Connect(other, "lab-2", {}), "test");
  lab_->agents().DisconnectAgent(Connect(other, "lab-3", {}), "test");
  EXPECT_EQ(lab_->schedule_passes(), passes);
  EXPECT_EQ(lab_->jobs().GetJob(caller_, bobs)->state, JobState::kQueued);
  // The lease ends: that changes the answer, so the next pass places bob's job.
  clock_.Advance(std::chrono::milliseconds(60'000));
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(bobs));
  EXPECT_GT(lab_->schedule_passes(), passes);
}

TEST_F(LabSchedTest, AJobWaitingOnSomeonesReservationSaysWhoHoldsItAndEstimatesFromTheLease) {
  ConnectHostAgent();
  const Caller alice = Member("alice"), bob = Member("bob");
  ASSERT_TRUE(lab_->boards().Reserve(alice, {"host-0", 60'000, "debugging", false}).ok());
  const std::int64_t lease_end = clock_.NowMs() + 60'000;
  auto reply = lab_->jobs().Submit(bob, FcJob());
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->wait.position, 1u);
  EXPECT_EQ(reply->wait.board, "host-0");
  EXPECT_EQ(reply->wait.holder, "alice");
  EXPECT_EQ(reply->wait.lease_until_ms, lease_end);
  EXPECT_EQ(reply->wait.note, "debugging");
  EXPECT_EQ(reply->estimated_start_ms, lease_end);
  // GetJob and ListJobs say the same while it waits.
  auto job = lab_->jobs().GetJob(caller_, reply->id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->wait.holder, "alice");
  EXPECT_EQ(job->wait.estimated_start_ms, lease_end);
  auto jobs = ListJobs();
  ASSERT_TRUE(jobs.ok());
  ASSERT_FALSE(jobs->empty());
  EXPECT_EQ(jobs->front().wait.board, "host-0");
  // Once the lease ends and the job runs, it waits on nothing.
  clock_.Advance(std::chrono::milliseconds(60'000));
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(reply->id));
  job = lab_->jobs().GetJob(caller_, reply->id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->wait.position, 0u);
  EXPECT_EQ(job->wait.board, "");
}

TEST_F(LabSchedTest, AQueuedJobBehindABusyBoardWaitsOnNoReservation) {
  ConnectHostAgent();
  const Caller bob = Member("bob");
  SubmitAs(bob, FcJob());
  TakeAssignment(*agent_);
  auto reply = lab_->jobs().Submit(bob, FcJob());
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->wait.position, 1u);
  EXPECT_EQ(reply->wait.board, "");
  EXPECT_EQ(reply->wait.holder, "");
}

TEST_F(LabSchedTest, HoldersJobsRunOnTheReservedBoard) {
  ConnectHostAgent();
  const Caller alice = Member("alice");
  ASSERT_TRUE(lab_->boards().Reserve(alice, {"host-0", 60'000, "", false}).ok());
  const JobId mine = SubmitAs(alice, FcJob());
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(mine));
}

TEST_F(LabSchedTest, ReservingABusyBoardTakesEffectWhenItsJobEnds) {
  AgentSessionId s = ConnectHostAgent();
  const Caller alice = Member("alice"), bob = Member("bob");
  SubmitAs(bob, FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  ASSERT_TRUE(lab_->boards().Reserve(alice, {"host-0", 60'000, "", false}).ok());
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
  ASSERT_TRUE(lab_->boards().Reserve(alice, {"host-0", 30'000, "", true}).ok());
  clock_.Advance(std::chrono::seconds(20));
  auto renewed = lab_->boards().RenewReservation(alice, "host-0", 30'000);
  ASSERT_TRUE(renewed.ok()) << renewed.error().message;
  clock_.Advance(std::chrono::seconds(20));  // 40 s after the start: still held
  EXPECT_EQ(BoardNamed("host-0").board.holder, "alice");
  auto other = lab_->boards().RenewReservation(Member("bob"), "host-0", 30'000);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().code, ErrorCode::kFailedPrecondition);
  const JobId job = SubmitAs(Member("bob"), FcJob());
  clock_.Advance(std::chrono::seconds(10));  // the renewed lease ends: the holder is gone
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(job));
  EXPECT_TRUE(HistoryHas("host-0", "reservation", "", "server", "--hold lease of alice ran out"));
}

TEST_F(LabSchedTest, ReleasingSomeoneElsesReservationNeedsAdmin) {
  ConnectHostAgent();
  ASSERT_TRUE(lab_->boards().Reserve(Member("alice"), {"host-0", 60'000, "", false}).ok());
  auto denied = lab_->boards().Release(Member("bob"), "host-0");
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, ErrorCode::kPermissionDenied);
  EXPECT_NE(denied.error().message.find("reserved by alice"), std::string::npos);
  auto viewer = lab_->boards().Reserve(Member("vera", Role::kViewer), {"host-0", 1000, "", false});
  ASSERT_FALSE(viewer.ok());
  EXPECT_EQ(viewer.error().code, ErrorCode::kPermissionDenied);
  auto admin = lab_->boards().Release(Member("root", Role::kAdmin), "host-0");
  ASSERT_TRUE(admin.ok()) << admin.error().message;
  EXPECT_EQ(admin->state, BoardState::kIdle);
  EXPECT_TRUE(HistoryHas("host-0", "reservation", "", "root", "released by root"));
  auto again = lab_->boards().Release(Member("alice"), "host-0");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kFailedPrecondition);
}

TEST_F(LabSchedTest, ReservationBadInputsAreRejectedWithReasons) {
  ConnectHostAgent();
  auto unknown = lab_->boards().Reserve(Member("alice"), {"nope", 1000, "", false});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().code, ErrorCode::kNotFound);
  EXPECT_NE(unknown.error().message.find("the lab has: host-0"), std::string::npos);
  auto zero = lab_->boards().Reserve(Member("alice"), {"host-0", 0, "", false});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(LabSchedTest, ReservationSurvivesARestartAndStillExpires) {
  ConnectHostAgent();
  ASSERT_TRUE(lab_->boards().Reserve(Member("alice"), {"host-0", 60'000, "note", false}).ok());
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
  auto member = lab_->boards().SetMaintenance(Member("alice"), "host-0", true, "");
  ASSERT_FALSE(member.ok());
  EXPECT_EQ(member.error().code, ErrorCode::kPermissionDenied);
  const Caller root = Member("root", Role::kAdmin);
  auto on = lab_->boards().SetMaintenance(root, "host-0", true, "new cable");
  ASSERT_TRUE(on.ok()) << on.error().message;
  EXPECT_EQ(on->health, BoardHealth::kMaintenance);
  const JobId job = Submit(FcJob());
  EXPECT_EQ(lab_->jobs().GetJob(caller_, job)->state, JobState::kQueued);
  auto off = lab_->boards().SetMaintenance(root, "host-0", false, "");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->health, BoardHealth::kGood);  // health checks are off in this fixture
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(job));
  EXPECT_TRUE(HistoryHas("host-0", "health", "maintenance", "root", "new cable"));
  EXPECT_TRUE(HistoryHas("host-0", "health", "good", "root", "maintenance off by root"));
  auto history = lab_->boards().BoardHistory(Member("vera", Role::kViewer), "host-0");
  ASSERT_TRUE(history.ok());
  EXPECT_GE(history->size(), 3u);
}

TEST_F(LabSchedTest, CancellingAnAssignedJobFreesTheBoardWhenTheAgentConfirms) {
  AgentSessionId s = ConnectHostAgent();
  const JobId id = Submit(FcJob());
  v1::Assignment a = TakeAssignment(*agent_);
  ASSERT_TRUE(lab_->jobs().Cancel(caller_, id).ok());
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, id)->state, JobState::kPreparing);
  const JobId next = Submit(FcJob());
  ASSERT_TRUE(lab_->jobs().Cancel(caller_, id).ok());
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
  ASSERT_TRUE(lab_->jobs().Cancel(caller_, id).ok());
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
  auto reply = lab_->jobs().Submit(caller_, FcJob());
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->queue_position, 1u);
  EXPECT_EQ(reply->estimated_start_ms, clock_.NowMs() + 40'000);
  auto second = lab_->jobs().Submit(caller_, FcJob());
  EXPECT_EQ(second->queue_position, 2u);
  EXPECT_EQ(second->estimated_start_ms, clock_.NowMs() + 80'000);
}

TEST_F(LabSchedTest, AdmissionRejectsAWorkloadOnAnUnknownKindWithTheKindsThatExist) {
  Connect(agent_, "lab-1", {{"host-0", "host"}});
  auto reply = lab_->jobs().Submit(caller_, FcJob(1, 1, "stm32h7"));
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
  PassHealthChecks(s, 2);  // new boards: checked first
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
  auto hc = lab_->jobs().GetJob(caller_, static_cast<JobId>(check.job_id()));
  EXPECT_EQ(hc->user, kHealthCheckUser);
  EXPECT_EQ(hc->label, "health check of host-0");
  EXPECT_EQ(lab_->jobs().GetJob(caller_, static_cast<JobId>(on1.job_id()))->state,
            JobState::kQueued);
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
  EXPECT_EQ(lab_->jobs().GetJob(caller_, job)->state, JobState::kSucceeded);
  EXPECT_TRUE(HistoryHas("host-0", "health", "bad", "server", "health check job"));
}

TEST_F(LabSchedTest, PassingHealthCheckMakesTheBoardGoodAndCalibratesIt) {
  LabConfig c = config_;
  c.health_checks = true;
  Reopen(c);
  AgentSessionId s = ConnectHostAgent();
  ASSERT_TRUE(lab_->boards().SetMaintenance(caller_, "host-0", true, "").ok());
  const JobId job = Submit(FcJob());
  ASSERT_TRUE(lab_->boards().SetMaintenance(caller_, "host-0", false, "").ok());
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kUnknown);
  v1::Assignment check = TakeAssignment(*agent_);
  EXPECT_NE(check.job_id(), static_cast<std::uint64_t>(job));
  RunToSuccess(s, check);
  v1::Assignment next = TakeAssignment(*agent_);
  EXPECT_EQ(next.job_id(), static_cast<std::uint64_t>(job));
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kGood);
  EXPECT_EQ(lab_->jobs().GetJob(caller_, static_cast<JobId>(check.job_id()))->state,
            JobState::kSucceeded);
}

TEST_F(LabSchedTest, HealthCheckOffCalibrationFailsOnAnEmulatedKindWithAnExpectedValue) {
  LabConfig c = config_;
  c.health_checks = true;
  c.health_max_failures = 1;
  c.health_expected["host"] = 5;  // RunToSuccess reports medians near 102
  Reopen(c);
  AgentSessionId s = ConnectHostAgent();
  ASSERT_TRUE(lab_->boards().SetMaintenance(caller_, "host-0", true, "").ok());
  ASSERT_TRUE(lab_->boards().SetMaintenance(caller_, "host-0", false, "").ok());
  v1::Assignment check = TakeAssignment(*agent_);
  RunToSuccess(s, check);
  EXPECT_EQ(WaitForState(static_cast<JobId>(check.job_id()), JobState::kFailed), JobState::kFailed);
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kBad);
  EXPECT_NE(
      lab_->jobs().GetJob(caller_, static_cast<JobId>(check.job_id()))->message.find("expected 5"),
      std::string::npos);
}

// A new agent's token must not be a way to collect users' jobs (and the files they reference): a
// board the lab has never seen starts with health unknown and takes only its health check.
TEST_F(LabSchedTest, ANewBoardOfAKnownKindGetsNoUsersJobUntilItsHealthCheckPasses) {
  LabConfig c = config_;
  c.health_checks = true;
  Reopen(c);
  AgentSessionId s = ConnectHostAgent();
  EXPECT_EQ(BoardNamed("host-0").board.health, BoardHealth::kUnknown);
  v1::Assignment first_check = TakeAssignment(*agent_);
  EXPECT_EQ(lab_->jobs().GetJob(caller_, static_cast<JobId>(first_check.job_id()))->user,
            kHealthCheckUser);
  RunToSuccess(s, first_check);
  ASSERT_EQ(WaitForState(static_cast<JobId>(first_check.job_id()), JobState::kSucceeded),
            JobState::kSucceeded);
  ASSERT_EQ(BoardNamed("host-0").board.health, BoardHealth::kGood);
  const JobId busy = Submit(FcJob());
  v1::Assignment on0 = TakeAssignment(*agent_);
  ASSERT_EQ(on0.job_id(), static_cast<std::uint64_t>(busy));

  // Another agent registers a new board of the same kind while a user's job waits.
  const JobId waiting = Submit(FcJob());
  auto other = std::make_shared<FakeAgentChannel>();
  AgentSessionId s2 = Connect(other, "lab-2", {{"host-9", "host"}});
  EXPECT_EQ(BoardNamed("host-9").board.health, BoardHealth::kUnknown);
  v1::Assignment check = TakeAssignment(*other);
  EXPECT_EQ(check.board(), "host-9");
  EXPECT_EQ(lab_->jobs().GetJob(caller_, static_cast<JobId>(check.job_id()))->label,
            "health check of host-9");
  EXPECT_FALSE(other->Take(FakeAgentChannel::IsAssign, std::chrono::milliseconds(50)));
  EXPECT_EQ(lab_->jobs().GetJob(caller_, waiting)->state, JobState::kQueued);
  // Its check passes: now it is trusted with the user's job.
  RunToSuccess(s2, check);
  v1::Assignment moved = TakeAssignment(*other);
  EXPECT_EQ(moved.job_id(), static_cast<std::uint64_t>(waiting));
  EXPECT_EQ(BoardNamed("host-9").board.health, BoardHealth::kGood);
}

TEST_F(LabSchedTest, WithApproveNewBoardsANewBoardWaitsForAnAdmin) {
  LabConfig c = config_;
  c.health_checks = true;
  c.approve_new_boards = true;
  Reopen(c);
  AgentSessionId s = ConnectHostAgent();
  BoardView v = BoardNamed("host-0");
  EXPECT_EQ(v.board.health, BoardHealth::kMaintenance);
  EXPECT_FALSE(v.board.approved);
  EXPECT_TRUE(HistoryHas("host-0", "health", "maintenance", "server", "--approve"));
  const JobId job = Submit(FcJob());
  EXPECT_FALSE(agent_->Take(FakeAgentChannel::IsAssign, std::chrono::milliseconds(50)));
  // Only --approve lets it out: not maintenance off, not a member.
  auto off = lab_->boards().SetMaintenance(caller_, "host-0", false, "");
  ASSERT_FALSE(off.ok());
  EXPECT_NE(off.error().message.find("mculab board host-0 --approve"), std::string::npos)
      << off.error().message;
  auto member = lab_->boards().ApproveBoard(Member("bob"), "host-0");
  ASSERT_FALSE(member.ok());
  EXPECT_EQ(member.error().code, ErrorCode::kPermissionDenied);
  // It stays waiting across a restart and a reconnect.
  RestartLab();
  s = ConnectHostAgent();
  EXPECT_FALSE(BoardNamed("host-0").board.approved);
  auto approved = lab_->boards().ApproveBoard(caller_, "host-0");
  ASSERT_TRUE(approved.ok()) << approved.error().message;
  EXPECT_EQ(approved->health, BoardHealth::kUnknown);
  EXPECT_TRUE(approved->approved);
  v1::Assignment check = TakeAssignment(*agent_);
  EXPECT_NE(check.job_id(), static_cast<std::uint64_t>(job));
  RunToSuccess(s, check);
  EXPECT_EQ(TakeAssignment(*agent_).job_id(), static_cast<std::uint64_t>(job));
  auto again = lab_->boards().ApproveBoard(caller_, "host-0");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_EQ(lab_->boards().ApproveBoard(caller_, "nope").error().code, ErrorCode::kNotFound);
}

TEST_F(LabSchedTest, AdmissionRejectsACaseLargerThanEveryBoardsRam) {
  v1::Register reg;
  reg.set_agent("lab-1");
  auto* info = reg.add_boards();
  info->set_name("mcu-0");
  info->set_kind("small");
  info->set_ram_bytes(4096);
  ASSERT_TRUE(
      lab_->agents()
          .ConnectAgent(testing::AgentCaller(reg.agent()), testing::RegistrationOf(reg), agent_)
          .ok());
  SubmitRequest fits = FcJob(1, 1, "small");  // 1 x 8 -> 4: a few dozen bytes
  EXPECT_TRUE(lab_->jobs().Submit(caller_, fits).ok());
  SubmitRequest big = FcJob(1, 1, "small");
  big.cases = {{7, {1, 256, 256}}};  // 64 KiB of weights
  auto reply = lab_->jobs().Submit(caller_, big);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(reply.error().message.find("case 7 needs about 67072 bytes"), std::string::npos)
      << reply.error().message;
  EXPECT_NE(reply.error().message.find("mcu-0 (4096 bytes)"), std::string::npos);
}

// ---- events, passes, op profiles, memory ----------------------------------------------

}  // namespace
}  // namespace mculab::server::lab_testing
