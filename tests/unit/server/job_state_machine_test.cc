// The job state machine: every pair of states is either a legal move or rejected.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "server/domain/job.h"

namespace mculab::server {
namespace {

using S = JobState;

// The legal moves, written out independently of the implementation.
const std::set<std::pair<S, S>>& Legal() {
  static const std::set<std::pair<S, S>> kLegal = {
      {S::kQueued, S::kAssigned},    {S::kQueued, S::kCancelled},  {S::kAssigned, S::kPreparing},
      {S::kAssigned, S::kRunning},   {S::kAssigned, S::kQueued},   {S::kAssigned, S::kFailed},
      {S::kAssigned, S::kCancelled}, {S::kAssigned, S::kTimedOut}, {S::kPreparing, S::kRunning},
      {S::kPreparing, S::kQueued},   {S::kPreparing, S::kFailed},  {S::kPreparing, S::kCancelled},
      {S::kPreparing, S::kTimedOut}, {S::kRunning, S::kSucceeded}, {S::kRunning, S::kQueued},
      {S::kRunning, S::kFailed},     {S::kRunning, S::kCancelled}, {S::kRunning, S::kTimedOut},
  };
  return kLegal;
}

Job JobIn(S state) {
  Job j;
  j.id = 7;
  j.state = state;
  return j;
}

TEST(JobStateMachine, EveryPairOfStatesIsLegalExactlyWhenListed) {
  for (S from : kAllJobStates) {
    for (S to : kAllJobStates) {
      const bool legal = Legal().contains({from, to});
      EXPECT_EQ(IsLegalTransition(from, to), legal)
          << JobStateName(from) << " -> " << JobStateName(to);
      Job job = JobIn(from);
      auto t = ApplyTransition(job, to, "why", "who", 1000);
      EXPECT_EQ(t.ok(), legal) << JobStateName(from) << " -> " << JobStateName(to);
      if (legal) {
        EXPECT_EQ(job.state, to);
      } else {
        EXPECT_EQ(job.state, from) << "a rejected move leaves the job unchanged";
        EXPECT_EQ(t.error().code, ErrorCode::kFailedPrecondition);
      }
    }
  }
}

TEST(JobStateMachine, FinalStatesHaveNoWayOut) {
  for (S from : {S::kSucceeded, S::kFailed, S::kCancelled, S::kTimedOut}) {
    EXPECT_TRUE(IsFinal(from));
    for (S to : kAllJobStates) EXPECT_FALSE(IsLegalTransition(from, to));
  }
}

TEST(JobStateMachine, CancelIsLegalFromEveryStateThatIsNotFinal) {
  for (S from : kAllJobStates) {
    if (!IsFinal(from)) {
      EXPECT_TRUE(IsLegalTransition(from, S::kCancelled)) << JobStateName(from);
    }
  }
}

TEST(JobStateMachine, RejectionNamesBothStates) {
  Job job = JobIn(S::kSucceeded);
  auto t = ApplyTransition(job, S::kRunning, "", "", 0);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "job 7 cannot go from succeeded to running");
}

TEST(JobStateMachine, TransitionReturnsTheAuditRecord) {
  Job job = JobIn(S::kQueued);
  auto t = ApplyTransition(job, S::kAssigned, "scheduled on board host-0", "server", 1234567);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->job_id, 7);
  EXPECT_EQ(t->from, "queued");
  EXPECT_EQ(t->to, "assigned");
  EXPECT_EQ(t->reason, "scheduled on board host-0");
  EXPECT_EQ(t->actor, "server");
  EXPECT_EQ(t->time_ms, 1234);
  EXPECT_EQ(t->time_us, 1234567) << "the record keeps the microseconds";
}

TEST(JobStateMachine, AssignmentCountsAnAttempt) {
  Job job = JobIn(S::kQueued);
  ASSERT_TRUE(ApplyTransition(job, S::kAssigned, "", "", 1).ok());
  ASSERT_TRUE(ApplyTransition(job, S::kQueued, "", "", 2).ok());
  ASSERT_TRUE(ApplyTransition(job, S::kAssigned, "", "", 3).ok());
  EXPECT_EQ(job.attempts, 2u);
}

TEST(JobStateMachine, RunningSetsStartAndFinalStateSetsFinish) {
  Job job = JobIn(S::kAssigned);
  ASSERT_TRUE(ApplyTransition(job, S::kRunning, "", "", 50'000).ok());
  EXPECT_EQ(job.started_ms, 50);
  EXPECT_EQ(job.finished_ms, 0);
  ASSERT_TRUE(ApplyTransition(job, S::kSucceeded, "", "", 80'999).ok());
  EXPECT_EQ(job.finished_ms, 80);
}

TEST(JobStateMachine, RequeueClearsTheAssignedBoard) {
  Job job = JobIn(S::kRunning);
  job.assigned_board = "host-0";
  ASSERT_TRUE(ApplyTransition(job, S::kQueued, "", "", 1).ok());
  EXPECT_EQ(job.assigned_board, "");
}

TEST(JobStateMachine, InfraFailureRequeuesWhileAttemptsRemainThenFails) {
  Job job = JobIn(S::kRunning);
  job.attempts = 1;
  EXPECT_EQ(AfterInfraFailure(job, 3), S::kQueued);
  job.attempts = 2;
  EXPECT_EQ(AfterInfraFailure(job, 3), S::kQueued);
  job.attempts = 3;
  EXPECT_EQ(AfterInfraFailure(job, 3), S::kFailed);
  job.attempts = 1;
  EXPECT_EQ(AfterInfraFailure(job, 1), S::kFailed);
  // Reruns of an unstable case are runs that succeeded: not counted against max_attempts.
  job.attempts = 3;
  job.reruns_done = 2;
  EXPECT_EQ(CountedAttempts(job), 1u);
  EXPECT_EQ(AfterInfraFailure(job, 3), S::kQueued);
  job.attempts = 5;
  EXPECT_EQ(AfterInfraFailure(job, 3), S::kFailed);
}

TEST(JobStateMachine, StateNamesRoundTrip) {
  for (S s : kAllJobStates) EXPECT_EQ(ParseJobState(JobStateName(s)), s);
  EXPECT_EQ(JobStateName(S::kTimedOut), "timed_out");
  EXPECT_FALSE(ParseJobState("done").has_value());
}

}  // namespace
}  // namespace mculab::server
