// Alerts (server/service/alerts.h) against a real Lab and store: a followed series' new change
// point is posted once, never again (not after a restart either); a label follow posts the same;
// a follow made after a change does not post it; a failed gate is posted; follows are the
// owner's (lab_test_fixture.h).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "server/service/alerts.h"
#include "server/service/notifier.h"
#include "tests/unit/server/lab_test_fixture.h"

namespace mculab::server::lab_testing {
namespace {

Caller As(const std::string& user, Role role) {
  Caller c;
  c.user = user;
  c.role = role;
  return c;
}

class LabAlertsTest : public LabTest {
 protected:
  void SetUp() override {
    LabTest::SetUp();
    session_ = ConnectHostAgent();
    MakeAlerts();
  }
  void TearDown() override {
    DropAlerts();
    LabTest::TearDown();
  }
  void MakeAlerts() {
    NotifyOptions o;
    o.webhooks = {"http://chat.example/hook"};
    notifier_ = std::make_unique<Notifier>(
        o,
        [this](const std::string&, const std::string& body, std::uint32_t) -> Status {
          std::lock_guard l(mu_);
          bodies_.push_back(nlohmann::json::parse(body));
          return {};
        },
        clock_);
    queries_ = std::make_unique<LabQueries>(*lab_, *store_);
    alerts_ = std::make_unique<Alerts>(*lab_, *queries_, *store_, *store_, *notifier_, clock_,
                                       AlertsOptions{2000, "http://lab.example:8080"});
  }
  void DropAlerts() {
    alerts_.reset();
    queries_.reset();
    notifier_.reset();
  }

  // One succeeded job of one fully_connected_s8 case (params 1,8,4) whose timer reads `value`.
  JobId RunJob(std::int64_t value, const std::string& label = "nightly") {
    SubmitRequest r = FcJob(1, 4);
    r.label = label;
    const JobId id = Submit(r);
    const v1::Assignment a = TakeAssignment(*agent_);
    Send(session_, RunStateMsg(a.run_id(), "preparing"));
    Send(session_, RunStateMsg(a.run_id(), "running"));
    Send(session_, StartedMsg(a.run_id()));
    Send(session_, BatchMsg(a.run_id(), 0, 0, {value, value, value + 1, value}));
    Send(session_, CaseDoneMsg(a.run_id(), 0));
    Send(session_, FinishedMsg(a.run_id(), Outcome::SUCCEEDED, 1));
    EXPECT_EQ(WaitForState(id, JobState::kSucceeded), JobState::kSucceeded);
    return id;
  }

  // Waits until `n` alerts were posted, then returns them.
  std::vector<nlohmann::json> Posted(std::size_t n) {
    for (int i = 0; i < 500 && notifier_->counts().sent < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::lock_guard l(mu_);
    return bodies_;
  }

  static FollowSpec Series() {
    SeriesQuery q;
    q.kind = "host";
    q.op = "fully_connected_s8";
    q.params = std::vector<std::int32_t>{1, 8, 4};
    FollowSpec s;
    s.series = q;
    return s;
  }

  AgentSessionId session_ = 0;
  std::unique_ptr<Notifier> notifier_;
  std::unique_ptr<LabQueries> queries_;
  std::unique_ptr<Alerts> alerts_;
  std::mutex mu_;
  std::vector<nlohmann::json> bodies_;
};

TEST_F(LabAlertsTest, ANewChangePointInAFollowedSeriesIsPostedOnceEvenAfterARestart) {
  auto follow = alerts_->Follow(caller_, Series());
  ASSERT_TRUE(follow.ok()) << follow.error().message;
  EXPECT_EQ(follow->description, "fully_connected_s8 params 1,8,4 on host");
  auto by_label = alerts_->Follow(caller_, FollowSpec{std::nullopt, "night", "", "host"});
  ASSERT_TRUE(by_label.ok()) << by_label.error().message;
  std::vector<JobId> jobs;
  for (std::int64_t v : {1000, 1000, 1000, 2000, 2000}) {
    jobs.push_back(RunJob(v));
    auto n = alerts_->Scan();
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, 0u) << "no change point before the window after it is complete";
  }
  jobs.push_back(RunJob(2000));
  auto n = alerts_->Scan();
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(*n, 2u);  // the series follow and the label follow
  const auto bodies = Posted(2);
  ASSERT_EQ(bodies.size(), 2u);
  for (const auto& b : bodies) {
    EXPECT_EQ(b["mculab"]["event"], "change_point");
    EXPECT_EQ(b["mculab"]["before_job"], jobs[2]);
    EXPECT_EQ(b["mculab"]["after_job"], jobs[3]);
    EXPECT_DOUBLE_EQ(b["mculab"]["ratio"].get<double>(), 2.0);
  }
  EXPECT_EQ(bodies[0]["text"],
            fmt::format("mculab: change point in fully_connected_s8 params 1,8,4 on host: job {} "
                        "-> job {}, 1000 -> 2000 ns (+100.0%, slower) "
                        "http://lab.example:8080/compare.html?jobs={},{}",
                        jobs[2], jobs[3], jobs[2], jobs[3]));
  EXPECT_EQ(bodies[0]["mculab"]["follow"], follow->id);
  EXPECT_EQ(bodies[1]["mculab"]["follow"], by_label->id);

  // Nothing twice: not on the next scan, nor with new alerts over the same store.
  EXPECT_EQ(*alerts_->Scan(), 0u);
  RunJob(2000);
  EXPECT_EQ(*alerts_->Scan(), 0u);
  DropAlerts();
  MakeAlerts();
  EXPECT_EQ(*alerts_->Scan(), 0u);
  // A follow made now starts after the change its series has.
  auto late = alerts_->Follow(caller_, Series());
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(late->notified_to, jobs[3]);
  EXPECT_EQ(*alerts_->Scan(), 0u);
}

TEST_F(LabAlertsTest, FollowsAreTheirOwnersAndBadOnesAreRefused) {
  const Caller viewer = As("vic", Role::kViewer);
  const Caller other = As("olga", Role::kMember);
  auto f = alerts_->Follow(viewer, Series());
  ASSERT_TRUE(f.ok()) << f.error().message;
  auto mine = alerts_->ListFollows(other);
  ASSERT_TRUE(mine.ok());
  EXPECT_TRUE(mine->empty());
  EXPECT_EQ(alerts_->ListFollows(caller_)->size(), 1u);  // an admin sees everyone's
  EXPECT_EQ(alerts_->Unfollow(other, f->id).error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(alerts_->Unfollow(viewer, f->id).ok());
  EXPECT_TRUE(alerts_->ListFollows(viewer)->empty());

  auto none = alerts_->Follow(viewer, FollowSpec{});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, ErrorCode::kInvalidArgument);
  FollowSpec custom;
  custom.series = SeriesQuery{};
  custom.series->kind = "host";
  custom.series->op = "custom";
  custom.series->case_id = 0;
  auto refused = alerts_->Follow(viewer, custom);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("needs the runner's file name"), std::string::npos);
  const Caller nobody = As("x", Role::kNone);
  EXPECT_EQ(alerts_->Follow(nobody, Series()).error().code, ErrorCode::kUnauthenticated);
}

TEST_F(LabAlertsTest, AFailedGateIsPostedWithItsJobsAndSummary) {
  const JobId base = RunJob(1000);
  const JobId job = RunJob(1100);
  const Caller viewer = As("vic", Role::kViewer);
  EXPECT_EQ(alerts_->ReportGate(viewer, GateReport{job, base, "x"}).error().code,
            ErrorCode::kPermissionDenied);
  EXPECT_EQ(alerts_->ReportGate(caller_, GateReport{9999, base, "x"}).error().code,
            ErrorCode::kNotFound);
  auto posted = alerts_->ReportGate(
      caller_, GateReport{job, base, "gate failed: 1 of 1 case regressed\x1b[31m"});
  ASSERT_TRUE(posted.ok()) << posted.error().message;
  EXPECT_TRUE(*posted);
  const auto bodies = Posted(1);
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0]["mculab"]["event"], "gate_failed");
  EXPECT_EQ(bodies[0]["mculab"]["job"], job);
  EXPECT_EQ(bodies[0]["text"],
            fmt::format("mculab: gate failed for job {} against job {}: gate failed: 1 of 1 case "
                        "regressed [31m http://lab.example:8080/compare.html?jobs={},{}",
                        job, base, base, job));
}

}  // namespace
}  // namespace mculab::server::lab_testing
