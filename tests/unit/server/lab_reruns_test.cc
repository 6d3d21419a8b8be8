// Reruns of unstable cases (`mculab submit --reruns N --max-cv PCT`): a succeeded run whose timer
// varies more than the limit runs again on the same board while the job has reruns left; every
// run's samples stay; what is still unstable at the end is in the job's message.
#include <cmath>
#include <initializer_list>

#include "tests/unit/server/lab_test_fixture.h"

namespace mculab::server::lab_testing {
namespace {

class LabRerunsTest : public LabTest {
 protected:
  // One case (index 0) timed with `values` (ns on the host runner), then finished.
  void RunWith(AgentSessionId s, const v1::Assignment& a, const std::vector<std::int64_t>& values) {
    Send(s, RunStateMsg(a.run_id(), "preparing"));
    Send(s, RunStateMsg(a.run_id(), "running"));
    Send(s, StartedMsg(a.run_id()));
    Send(s, BatchMsg(a.run_id(), 0, 0, values));
    Send(s, CaseDoneMsg(a.run_id(), 0));
    Send(s, FinishedMsg(a.run_id(), Outcome::SUCCEEDED, 1));
  }

  // Waits until the job has left the board (queued again, or final).
  JobState WaitOffBoard(JobId id) {
    for (int i = 0; i < 500; ++i) {
      auto job = lab_->jobs().GetJob(caller_, id);
      if (job.ok() && !IsOnBoard(job->state)) return job->state;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return JobState::kRunning;
  }

  const std::vector<std::int64_t> kNoisy = {100, 300, 100, 300};  // cv 0.577
  const std::vector<std::int64_t> kSteady = {100, 101, 100, 101};
};

TEST_F(LabRerunsTest, ANoisyCaseRunsAgainOnTheSameBoardUntilItsRerunsAreSpent) {
  AgentSessionId s = Connect(agent_, "lab-1", {{"host-0", "host"}, {"host-1", "host"}});
  const JobId blocker = Submit(FcJob(1, 4));  // takes host-0
  const v1::Assignment b = TakeAssignment(*agent_);
  ASSERT_EQ(b.board(), "host-0");
  SubmitRequest r = FcJob(1, 4);
  r.reruns = 1;
  const JobId id = Submit(r);
  const v1::Assignment first = TakeAssignment(*agent_);
  ASSERT_EQ(first.board(), "host-1");
  RunWith(s, b, kSteady);  // host-0 is free again before the noisy run ends
  ASSERT_EQ(WaitForState(blocker, JobState::kSucceeded), JobState::kSucceeded);
  RunWith(s, first, kNoisy);

  // Requeued, pinned to host-1 although host-0 is idle.
  const v1::Assignment second = TakeAssignment(*agent_);
  EXPECT_EQ(second.board(), "host-1");
  EXPECT_NE(second.run_id(), first.run_id());
  {
    auto job = lab_->jobs().GetJob(caller_, id);
    ASSERT_TRUE(job.ok());
    EXPECT_EQ(job->reruns_done, 1u);
    EXPECT_EQ(job->board, "host-1");
    EXPECT_NE(job->message.find("rerun 1 of 1 on board host-1: case 0 (cv 57.7% > 10%)"),
              std::string::npos)
        << job->message;
  }
  RunWith(s, second, kNoisy);  // still noisy, no rerun left: it succeeds and says so
  ASSERT_EQ(WaitForState(id, JobState::kSucceeded), JobState::kSucceeded);
  auto job = lab_->jobs().GetJob(caller_, id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->attempts, 2u);
  EXPECT_NE(job->message.find("still unstable after 1 rerun: case 0 (cv 57.7% > 10%)"),
            std::string::npos)
      << job->message;
  // Both runs' samples are kept; the results are the last run's.
  for (const auto* a : {&first, &second}) {
    auto series = store_->GetCaseSeries(a->run_id(), 0, 0, 0);
    ASSERT_TRUE(series.ok());
    EXPECT_EQ(series->size(), 4u) << "run " << a->run_id();
  }
  auto results = LabQueries(*lab_, *store_).GetJobResults(caller_, id, false);
  ASSERT_TRUE(results.ok());
  ASSERT_TRUE(results->run.has_value());
  EXPECT_EQ(results->run->id, second.run_id());

  // What was asked and done survives a restart.
  RestartLab();
  auto stored = store_->GetJob(id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->reruns, 1u);
  EXPECT_EQ(stored->reruns_done, 1u);
  EXPECT_EQ(stored->board, "host-1");
}

TEST_F(LabRerunsTest, ASteadyCaseOrALooseLimitIsNotRerun) {
  AgentSessionId s = ConnectHostAgent();
  SubmitRequest r = FcJob(1, 4);
  r.reruns = 3;
  const JobId steady = Submit(r);
  RunWith(s, TakeAssignment(*agent_), kSteady);
  ASSERT_EQ(WaitForState(steady, JobState::kSucceeded), JobState::kSucceeded);
  r.max_cv_pct = 80;  // the noisy case's 57.7% is within it
  const JobId loose = Submit(r);
  RunWith(s, TakeAssignment(*agent_), kNoisy);
  ASSERT_EQ(WaitForState(loose, JobState::kSucceeded), JobState::kSucceeded);
  for (JobId id : {steady, loose}) {
    auto job = lab_->jobs().GetJob(caller_, id);
    ASSERT_TRUE(job.ok());
    EXPECT_EQ(job->reruns_done, 0u) << id;
    EXPECT_EQ(job->attempts, 1u) << id;
    EXPECT_EQ(job->message, "") << id;
    EXPECT_EQ(job->board, "") << id;  // not pinned
  }
  // Without --reruns a noisy case is not rerun either.
  const JobId plain = Submit(FcJob(1, 4));
  RunWith(s, TakeAssignment(*agent_), kNoisy);
  EXPECT_EQ(WaitOffBoard(plain), JobState::kSucceeded);
}

// A rerun that then fails on its board is the job's first failed attempt, and says so: reruns
// are runs that succeeded.
TEST_F(LabRerunsTest, AnInfraFailureAfterARerunCountsOnlyFailedAttempts) {
  AgentSessionId s = ConnectHostAgent();
  SubmitRequest r = FcJob(1, 4);
  r.reruns = 2;
  const JobId id = Submit(r);
  RunWith(s, TakeAssignment(*agent_), kNoisy);
  const v1::Assignment rerun = TakeAssignment(*agent_);
  Send(s, RunStateMsg(rerun.run_id(), "preparing"));
  Send(s, FinishedMsg(rerun.run_id(), Outcome::INFRA_FAILED, 1));
  const v1::Assignment retry = TakeAssignment(*agent_);  // requeued, and at once assigned again
  EXPECT_NE(retry.run_id(), rerun.run_id());
  auto job = lab_->jobs().GetJob(caller_, id);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->attempts, 3u);
  EXPECT_EQ(job->reruns_done, 1u);
  EXPECT_NE(job->message.find("; requeued (attempt 1 of 3)"), std::string::npos) << job->message;
}

TEST_F(LabRerunsTest, OutOfRangeRerunsAndLimitsAreRefusedNamingTheField) {
  ConnectHostAgent();
  SubmitRequest r = FcJob(1, 4);
  r.reruns = kMaxReruns + 1;
  auto reply = lab_->jobs().Submit(caller_, r);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().message, "reruns must be between 0 and 5, got 6");
  r.reruns = 1;
  for (double bad : {-1.0, 1001.0, std::nan("")}) {
    r.max_cv_pct = bad;
    reply = lab_->jobs().Submit(caller_, r);
    ASSERT_FALSE(reply.ok()) << bad;
    EXPECT_EQ(reply.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(reply.error().message.find("max_cv must be a percentage from 0 to 1000"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace mculab::server::lab_testing
