// The run state machine: every pair of states is either a legal move or rejected.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "server/domain/run.h"

namespace mculab::server {
namespace {

using S = RunState;
using RunRecord = ::mculab::server::Run;  // `Run` alone is gtest's Test::Run in a TEST

// The legal moves, written out independently of kRunTransitions.
std::set<std::pair<S, S>> Legal() {
  std::set<std::pair<S, S>> legal = {
      {S::kAssigned, S::kPreparing}, {S::kAssigned, S::kRunning}, {S::kPreparing, S::kRunning}};
  for (S from : {S::kAssigned, S::kPreparing, S::kRunning}) {
    for (S to : {S::kSucceeded, S::kWorkloadFailed, S::kInfraFailed, S::kCancelled, S::kTimedOut}) {
      legal.insert({from, to});
    }
  }
  return legal;
}

RunRecord RunIn(S state) {
  RunRecord r;
  r.id = 9;
  r.state = state;
  return r;
}

TEST(RunStateMachine, EveryPairOfStatesIsLegalExactlyWhenListed) {
  const auto legal = Legal();
  for (S from : kAllRunStates) {
    for (S to : kAllRunStates) {
      const bool ok = legal.contains({from, to});
      EXPECT_EQ(IsLegalTransition(from, to), ok)
          << RunStateName(from) << " -> " << RunStateName(to);
      RunRecord run = RunIn(from);
      Status s = ApplyTransition(run, to, "why", 1000);
      EXPECT_EQ(s.ok(), ok) << RunStateName(from) << " -> " << RunStateName(to);
      if (ok) {
        EXPECT_EQ(run.state, to);
      } else {
        EXPECT_EQ(run.state, from) << "a rejected move leaves the run unchanged";
        EXPECT_EQ(run.finished_ms, 0);
        EXPECT_EQ(s.error().code, ErrorCode::kFailedPrecondition);
      }
    }
  }
}

TEST(RunStateMachine, TheTableHoldsEachMoveOnce) {
  std::set<std::pair<S, S>> seen;
  for (const RunTransitionRule& r : kRunTransitions) {
    EXPECT_TRUE(seen.insert({r.from, r.to}).second)
        << RunStateName(r.from) << " -> " << RunStateName(r.to) << " listed twice";
  }
}

TEST(RunStateMachine, FinalStatesHaveNoWayOutAndEveryOtherStateCanEnd) {
  for (S from : kAllRunStates) {
    for (S to : kAllRunStates) {
      if (IsFinal(from)) {
        EXPECT_FALSE(IsLegalTransition(from, to));
      } else if (IsFinal(to)) {
        EXPECT_TRUE(IsLegalTransition(from, to));
      }
    }
  }
}

TEST(RunStateMachine, EndingARunRecordsWhenAndWhy) {
  RunRecord run = RunIn(S::kRunning);
  ASSERT_TRUE(ApplyTransition(run, S::kInfraFailed, "agent lost", 1234).ok());
  EXPECT_EQ(run.finished_ms, 1234);
  EXPECT_EQ(run.message, "agent lost");
  RunRecord moving = RunIn(S::kAssigned);
  ASSERT_TRUE(ApplyTransition(moving, S::kPreparing, "ignored", 99).ok());
  EXPECT_EQ(moving.finished_ms, 0) << "only a final state ends a run";
  EXPECT_EQ(moving.message, "");
}

TEST(RunStateMachine, RejectionNamesBothStates) {
  RunRecord run = RunIn(S::kRunning);
  Status s = ApplyTransition(run, S::kPreparing, "", 0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "run 9 cannot go from running to preparing");
}

TEST(RunStateMachine, StateNamesRoundTrip) {
  for (S s : kAllRunStates) EXPECT_EQ(ParseRunState(RunStateName(s)), s);
  EXPECT_EQ(ParseRunState("sleeping"), std::nullopt);
}

}  // namespace
}  // namespace mculab::server
