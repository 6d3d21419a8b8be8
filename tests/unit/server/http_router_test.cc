// The HTTP routes through Router::Handle (no sockets), against a real Lab over a temporary SQLite
// store, a fake clock and a fake agent that runs jobs with hand-made samples.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <set>

#include "db/sqlite_store.h"
#include "fakes.h"
#include "proto/json/export_csv.h"
#include "server/http/auth.h"
#include "server/http/event_stream.h"
#include "server/http/json_views.h"
#include "server/http/router.h"
#include "server/wire/convert.h"
#include "server/wire/documents.h"
#include "tests/unit/server/owned_lab.h"

namespace mculab::server::http {
namespace {

using testing::FakeAgentChannel;
using testing::FakeClock;
namespace v1 = mculab::v1;
using Outcome = v1::RunFinished;
using Json = nlohmann::json;
using beast_http::status;

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("mculab-http-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void WriteFile(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

Request Get(const std::string& target, beast_http::verb verb = beast_http::verb::get) {
  Request r{verb, target, 11};
  r.set(beast_http::field::host, "mculab.test");
  return r;
}

// Values of one case for a job the fake agent runs.
using Values = std::function<std::vector<std::int64_t>(std::uint32_t case_index)>;

class HttpRouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = db::SqliteStore::Open(dir_.path() / "mculab.db");
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(*store);
    LabConfig config;
    config.health_checks = false;  // a health check would add jobs of its own to the history
    lab_ =
        std::make_unique<mculab::server::testing::OwnedLab>(*store_, clock_, config, dir_.path());
    ASSERT_TRUE(lab_->Start().ok());
    web_ = dir_.path() / "web";
    WriteFile(web_ / "index.html", "<!doctype html><title>history</title>");
    WriteFile(web_ / "js" / "api.js", "export const x = 1;");
    WriteFile(web_ / "js" / "pages" / "job.mjs", "export {};");
    WriteFile(web_ / "css" / "app.css", "body{}");
    WriteFile(web_ / "favicon.svg", "<svg xmlns='http://www.w3.org/2000/svg'/>");
    WriteFile(web_ / "node_modules" / "uplot" / "index.js", "secret");
    WriteFile(web_ / "scripts" / "vendor.mjs", "secret");
    WriteFile(web_ / "package.json", "{}");
    WriteFile(web_ / "package-lock.json", "{}");
    WriteFile(web_ / ".env", "TOKEN=secret");
    WriteFile(web_ / "notes.txt", "unknown type");
    WriteFile(dir_.path() / "outside.js", "secret");
    router_ = std::make_unique<Router>(*lab_, *store_, clock_, RouterOptions{web_});
    auto admin = lab_->accounts().AddUser("admin", "admin");
    ASSERT_TRUE(admin.ok()) << admin.error().message;
    admin_token_ = admin->token;

    v1::Register reg;
    reg.set_agent("lab-1");
    for (auto [name, kind, emulated] :
         {std::tuple{"host-0", "host", false}, std::tuple{"an547-0", "corstone300-qemu", true}}) {
      auto* b = reg.add_boards();
      b->set_name(name);
      b->set_kind(kind);
      b->set_emulated(emulated);
      // As the agent tags every board of backend "host" (agent/boards/make_boards.cc).
      if (std::string_view(kind) == "host") (*b->mutable_tags())["timing"] = "host";
    }
    auto session = lab_->agents().ConnectAgent(testing::AgentCaller(reg.agent()),
                                               testing::RegistrationOf(reg), agent_);
    ASSERT_TRUE(session.ok());
    session_ = *session;
  }
  void TearDown() override {
    lab_->Stop();
    lab_.reset();
    store_.reset();
  }

  // Sends the admin's token unless the request carries its own Authorization header.
  Router::Reply Handle(Request r) {
    if (r.find(beast_http::field::authorization) == r.end()) {
      r.set(beast_http::field::authorization, "Bearer " + admin_token_);
    }
    return router_->Handle(r, "127.0.0.1:1");
  }

  // GET `target`, expecting `want`; the body parsed as JSON.
  Json GetJson(const std::string& target, status want = status::ok) {
    auto reply = Handle(Get(target));
    EXPECT_EQ(reply.response.result(), want) << target << ": " << reply.response.body();
    EXPECT_EQ(reply.response[beast_http::field::content_type], "application/json") << target;
    return Json::parse(reply.response.body(), nullptr, false);
  }

  // The error message of a 400 for `target`.
  std::string BadRequest(const std::string& target) {
    Json j = GetJson(target, status::bad_request);
    return j.is_object() && j["error"].is_string() ? j["error"].get<std::string>() : "";
  }

  static SubmitRequest Conv(std::uint32_t cases, std::uint32_t iterations,
                            std::string kind = "host") {
    SubmitRequest r;
    r.kind = std::move(kind);
    r.op = "fully_connected_s8";
    for (std::uint32_t i = 0; i < cases; ++i) {
      r.cases.push_back(
          {static_cast<std::int64_t>(10 * i), {1, static_cast<std::int32_t>(8 + i), 4}});
    }
    r.iterations = iterations;
    return r;
  }

  JobId Submit(SubmitRequest r) {
    auto reply = lab_->jobs().Submit(caller_, std::move(r));
    EXPECT_TRUE(reply.ok()) << (reply.ok() ? "" : reply.error().message);
    return reply.ok() ? reply->id : 0;
  }

  void Send(const v1::AgentMessage& m) {
    lab_->agents().OnAgentMessage(session_, testing::AgentEventOf(m));
  }

  // The fake agent starts the job's run: states and provenance.
  v1::Assignment Start(bool emulated) {
    auto m = agent_->Take(FakeAgentChannel::IsAssign);
    EXPECT_TRUE(m.has_value()) << "no assignment";
    const v1::Assignment a = m ? m->assign() : v1::Assignment{};
    for (const char* s : {"preparing", "running"}) {
      v1::AgentMessage st;
      st.mutable_run_state()->set_run_id(a.run_id());
      st.mutable_run_state()->set_state(s);
      Send(st);
    }
    v1::AgentMessage started;
    auto* p = started.mutable_run_started();
    p->set_run_id(a.run_id());
    p->set_runner_version(runner_version_);
    p->set_port(emulated ? "an547" : "host");
    p->set_cpu(emulated ? "cortex-m55" : "x86_64");
    p->set_timer_unit(emulated ? "cycles" : "ns");
    p->set_emulated(emulated);
    p->set_note("<b>note</b>");
    // As the generic runner of an M55 build reports it (HELLO's runtime).
    if (report_kernel_set_) p->set_kernel_set(a.reference_kernels() ? "reference" : "helium");
    Send(started);
    return a;
  }

  void SendCase(const v1::Assignment& a, std::uint32_t case_index,
                const std::vector<std::int64_t>& values, bool checksum = true) {
    v1::AgentMessage m;
    auto* b = m.mutable_batch();
    b->set_run_id(a.run_id());
    b->set_sequence(seq_++);
    for (std::size_t i = 0; i < values.size(); ++i) {
      auto* s = b->add_samples();
      s->set_case_index(case_index);
      s->set_iteration(static_cast<std::uint32_t>(i));
      s->set_metric(0);
      s->set_value(values[i]);
    }
    const std::uint64_t run = a.run_id();
    const std::uint64_t sequence = b->sequence();
    Send(m);
    ASSERT_TRUE(agent_->Take(FakeAgentChannel::AckOf(run, sequence))) << "batch not acknowledged";
    if (!checksum) return;
    v1::AgentMessage done;
    auto* c = done.mutable_case_done();
    c->set_run_id(a.run_id());
    c->set_case_index(case_index);
    c->set_checksum(0xabc);
    c->set_expected_checksum(0xabc);
    c->set_checksum_ok(true);
    c->set_overhead(12);
    Send(done);
  }

  void Finish(const v1::Assignment& a, JobId id) {
    v1::AgentMessage f;
    f.mutable_run_finished()->set_run_id(a.run_id());
    f.mutable_run_finished()->set_outcome(Outcome::SUCCEEDED);
    f.mutable_run_finished()->set_batches_sent(static_cast<std::uint32_t>(seq_));
    Send(f);
    auto watch = lab_->jobs().Watch(caller_, id);
    ASSERT_TRUE(watch.ok());
    JobState last = JobState::kQueued;
    while (auto e = (*watch)->Next(std::chrono::seconds(10))) last = e->state;
    ASSERT_EQ(last, JobState::kSucceeded);
  }

  // Submits and runs a whole job on the fake agent; every case gets values(case).
  JobId RunJob(SubmitRequest r, const Values& values, bool emulated = false) {
    const std::uint32_t cases = static_cast<std::uint32_t>(r.cases.size());
    const JobId id = Submit(std::move(r));
    seq_ = 0;
    const v1::Assignment a = Start(emulated);
    for (std::uint32_t c = 0; c < cases; ++c) SendCase(a, c, values(c));
    Finish(a, id);
    return id;
  }

  static Values Constant(std::int64_t v, std::uint32_t n) {
    return [=](std::uint32_t) { return std::vector<std::int64_t>(n, v); };
  }

  TempDir dir_;
  FakeClock clock_;
  Caller caller_;
  std::string admin_token_;
  std::unique_ptr<db::SqliteStore> store_;
  std::unique_ptr<mculab::server::testing::OwnedLab> lab_;
  std::filesystem::path web_;
  std::unique_ptr<Router> router_;
  std::shared_ptr<FakeAgentChannel> agent_ = std::make_shared<FakeAgentChannel>();
  AgentSessionId session_ = 0;
  std::uint64_t seq_ = 0;
  std::string runner_version_ = "0.1.0";  // what the fake runner's Hello says
  bool report_kernel_set_ = false;        // RunStarted.kernel_set from the assignment's flag
};

std::vector<std::int64_t> Ids(const Json& page) {
  std::vector<std::int64_t> out;
  for (const auto& j : page["jobs"]) out.push_back(j["id"].get<std::int64_t>());
  return out;
}

// ---- health, headers, methods ----

TEST_F(HttpRouterTest, HealthzAnswersOkWithoutAToken) {
  EXPECT_EQ(GetJson("/healthz"), Json::parse(R"({"ok": true})"));
}

TEST_F(HttpRouterTest, EveryResponseCarriesTheSecurityHeaders) {
  for (const char* target :
       {"/", "/js/api.js", "/healthz", "/metrics", "/api/v1/jobs", "/api/v1/jobs/99",
        "/api/v1/jobs?limit=0", "/nothing.html", "/api/v1/nothing", "/api/v1/events"}) {
    auto reply = Handle(Get(target));
    const auto& res = reply.response;
    EXPECT_EQ(res["Content-Security-Policy"], kContentSecurityPolicy) << target;
    EXPECT_EQ(res["X-Content-Type-Options"], "nosniff") << target;
    EXPECT_EQ(res["Referrer-Policy"], "no-referrer") << target;
    EXPECT_EQ(res["X-Frame-Options"], "DENY") << target;
    if (reply.feed) reply.feed->Close();
  }
  const std::string csp(kContentSecurityPolicy);
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  auto post = Handle(Get("/api/v1/jobs", beast_http::verb::post));
  EXPECT_EQ(post.response.result(), status::method_not_allowed);
  EXPECT_EQ(post.response[beast_http::field::allow], "GET, HEAD");
  EXPECT_EQ(post.response["Content-Security-Policy"], kContentSecurityPolicy);
}

TEST_F(HttpRouterTest, ApiResponsesAreNotCachedAndHeadHasNoBody) {
  auto get = Handle(Get("/api/v1/jobs"));
  EXPECT_EQ(get.response[beast_http::field::cache_control], "no-store");
  auto head = Handle(Get("/api/v1/jobs", beast_http::verb::head));
  EXPECT_EQ(head.response.result(), status::ok);
  EXPECT_TRUE(head.response.body().empty());
  EXPECT_EQ(head.response[beast_http::field::content_length],
            std::to_string(get.response.body().size()));
}

TEST_F(HttpRouterTest, TheTokenNamesTheCaller) {
  auto viewer = lab_->accounts().AddUser("vera", "viewer");
  ASSERT_TRUE(viewer.ok());
  Request r = Get("/api/v1/boards");
  r.set(beast_http::field::authorization, "Bearer " + viewer->token);
  EXPECT_EQ(Handle(r).response.result(), status::ok);
  auto caller = AuthenticateRequest(r, "peer", lab_->accounts());
  ASSERT_TRUE(caller.ok());
  EXPECT_EQ(caller->token, viewer->token);
  EXPECT_EQ(caller->user, "vera");
  EXPECT_EQ(caller->role, Role::kViewer);
  EXPECT_EQ(GetJson("/api/v1/boards")["boards"].size(), 2u);
}

// Every route x every kind of caller. The HTTP API only reads, so any user may; an agent token
// may not; a request without a valid token gets 401 with WWW-Authenticate. /healthz and the
// page's files (which hold no lab data) need no token.
TEST_F(HttpRouterTest, AuthMatrixEveryRouteEveryCaller) {
  const JobId a = Submit(Conv(1, 1));
  const JobId b = Submit(Conv(1, 1));
  ASSERT_NE(b, 0u);
  std::map<std::string, std::string> tokens;  // caller -> Authorization header ("" = none)
  tokens["no token"] = "";
  tokens["bad token"] = "Bearer mcl_u_0000000000000000000000000000000000000000";
  tokens["garbage"] = "Bearer not-a-token";
  tokens["not bearer"] = "Basic YWRtaW46YWRtaW4=";
  for (const char* role : {"viewer", "member", "admin"}) {
    auto t = lab_->accounts().AddUser(std::string("u-") + role, role);
    ASSERT_TRUE(t.ok());
    tokens[role] = "Bearer " + t->token;
  }
  auto agent = lab_->accounts().AddAgent("lab-1");
  ASSERT_TRUE(agent.ok());
  tokens["agent"] = "Bearer " + agent->token;
  auto revoked = lab_->accounts().AddUser("gone", "admin");
  ASSERT_TRUE(revoked.ok());
  ASSERT_TRUE(lab_->accounts().Revoke(revoked->token).ok());
  tokens["revoked"] = "Bearer " + revoked->token;

  enum class Access { kPublic, kUsers };
  const std::string ids = std::to_string(a) + "," + std::to_string(b);
  const std::vector<std::pair<std::string, Access>> routes = {
      {"/healthz", Access::kPublic},
      {"/", Access::kPublic},
      {"/index.html", Access::kPublic},
      {"/js/api.js", Access::kPublic},
      {"/api/v1/jobs", Access::kUsers},
      {"/api/v1/jobs/" + std::to_string(a), Access::kUsers},
      {"/api/v1/jobs/" + std::to_string(a) + "/samples?case=0", Access::kUsers},
      {"/api/v1/jobs/" + std::to_string(a) + "/export.csv", Access::kUsers},
      {"/api/v1/compare?jobs=" + ids, Access::kUsers},
      {"/api/v1/series?kind=host&op=fully_connected_s8&params=1,8,4", Access::kUsers},
      {"/api/v1/changes", Access::kUsers},
      {"/api/v1/boards", Access::kUsers},
      {"/api/v1/events", Access::kUsers},
      {"/metrics", Access::kUsers},
      {"/api/v1/no-such-route", Access::kUsers},  // unknown API paths say nothing before auth
  };
  for (const auto& [target, access] : routes) {
    for (const auto& [who, header] : tokens) {
      Request r = Get(target);
      r.set(beast_http::field::authorization, header);
      if (header.empty()) r.erase(beast_http::field::authorization);
      Router::Reply reply = router_->Handle(r, "127.0.0.1:1");
      if (reply.feed) reply.feed->Close();
      const status got = reply.response.result();
      const bool user = who == "viewer" || who == "member" || who == "admin";
      SCOPED_TRACE(target + " as " + who + ": " + reply.response.body());
      if (access == Access::kPublic || user) {
        EXPECT_NE(got, status::unauthorized);
        EXPECT_NE(got, status::forbidden);
        EXPECT_LT(static_cast<int>(got), 500);
        if (target == "/healthz" || target == "/api/v1/jobs" || target == "/api/v1/boards" ||
            target == "/metrics" || target == "/api/v1/events" || target == "/index.html") {
          EXPECT_EQ(got, status::ok);
        }
      } else if (who == "agent") {
        EXPECT_EQ(got, status::forbidden);
        EXPECT_NE(reply.response.body().find("agent token"), std::string::npos);
      } else {
        EXPECT_EQ(got, status::unauthorized);
        EXPECT_EQ(reply.response[beast_http::field::www_authenticate], "Bearer realm=\"mculab\"");
      }
    }
  }
}

TEST_F(HttpRouterTest, AUnauthorizedAnswerSaysWhyAndTheTokenIsNotEchoed) {
  Request r = Get("/api/v1/jobs");
  r.erase(beast_http::field::authorization);
  Json none = Json::parse(router_->Handle(r, "p").response.body());
  EXPECT_NE(none["error"].get<std::string>().find("no token"), std::string::npos) << none;
  const std::string unknown = "mcl_u_1111111111111111111111111111111111111111";
  r.set(beast_http::field::authorization, "Bearer " + unknown);
  Json bad = Json::parse(router_->Handle(r, "p").response.body());
  const std::string msg = bad["error"].get<std::string>();
  EXPECT_NE(msg.find("not known"), std::string::npos) << msg;
  EXPECT_EQ(msg.find(unknown), std::string::npos) << "the whole token must not be echoed";
}

// ---- static files ----

TEST_F(HttpRouterTest, ThePageIsServedWithItsContentTypes) {
  struct Case {
    const char* path;
    const char* type;
  };
  for (auto [path, type] :
       {Case{"/", "text/html; charset=utf-8"}, Case{"/index.html", "text/html; charset=utf-8"},
        Case{"/js/api.js", "text/javascript; charset=utf-8"},
        Case{"/js/pages/job.mjs", "text/javascript; charset=utf-8"},
        Case{"/css/app.css", "text/css; charset=utf-8"}, Case{"/favicon.svg", "image/svg+xml"}}) {
    auto res = Handle(Get(path)).response;
    EXPECT_EQ(res.result(), status::ok) << path;
    EXPECT_EQ(res[beast_http::field::content_type], type) << path;
  }
  EXPECT_EQ(Handle(Get("/js/api.js")).response.body(), "export const x = 1;");
}

TEST_F(HttpRouterTest, PathTraversalIsRefused) {
  for (const char* path : {"/../outside.js", "/js/../../outside.js", "/%2e%2e/outside.js",
                           "/js/%2E%2E/%2e%2e/outside.js", "/js/..%2f..%2foutside.js",
                           "/./index.html", "/js/..\\..\\outside.js"}) {
    auto res = Handle(Get(path)).response;
    EXPECT_EQ(res.result(), status::not_found) << path;
    EXPECT_EQ(res.body().find("secret"), std::string::npos) << path;
  }
  EXPECT_EQ(Handle(Get("/js/%zz.js")).response.result(), status::bad_request);
  EXPECT_EQ(Handle(Get("/index.html%00.js")).response.result(), status::bad_request);
}

TEST_F(HttpRouterTest, ToolingAndDotfilesUnderTheWebFolderAreNeverServed) {
  for (const char* path : {"/node_modules/uplot/index.js", "/scripts/vendor.mjs", "/package.json",
                           "/package-lock.json", "/.env", "/notes.txt", "/js/", "/js"}) {
    auto res = Handle(Get(path)).response;
    EXPECT_EQ(res.result(), status::not_found) << path;
    EXPECT_EQ(res.body().find("secret"), std::string::npos) << path;
  }
}

// ---- the history ----

TEST_F(HttpRouterTest, JobsAreListedNewestFirstWithEveryField) {
  const JobId a = RunJob(Conv(2, 5), Constant(100, 5));
  clock_.Advance(std::chrono::seconds(1));
  SubmitRequest r = Conv(1, 3, "corstone300-qemu");
  r.label = "<img src=x onerror=alert(1)>";
  const JobId b = Submit(r);  // stays assigned: the fake agent does not start it
  Json page = GetJson("/api/v1/jobs");
  EXPECT_EQ(page["total"], 2);
  EXPECT_EQ(page["offset"], 0);
  EXPECT_EQ(page["limit"], 50);
  EXPECT_EQ(Ids(page), (std::vector<std::int64_t>{b, a}));
  const Json& done = page["jobs"][1];
  for (const char* key : {"id", "user", "kind", "board", "assigned_board", "op", "label", "state",
                          "created_ms", "started_ms", "finished_ms", "num_cases", "iterations",
                          "warmup", "emulated", "message", "progress_done", "progress_total"}) {
    EXPECT_TRUE(done.contains(key)) << key;
  }
  EXPECT_EQ(done["state"], "succeeded");
  EXPECT_EQ(done["assigned_board"], "host-0");
  EXPECT_EQ(done["progress_done"], 10);
  EXPECT_EQ(done["progress_total"], 10);
  EXPECT_EQ(done["emulated"], false);
  const Json& waiting = page["jobs"][0];
  EXPECT_EQ(waiting["label"], "<img src=x onerror=alert(1)>");
  EXPECT_EQ(waiting["emulated"], true) << "not started yet: labelled by its board kind";
}

TEST_F(HttpRouterTest, FiltersNarrowTheListAndTotalCountsEveryMatch) {
  const JobId host1 = RunJob(Conv(1, 2), Constant(10, 2));
  SubmitRequest fc = Conv(1, 2);
  fc.op = "conv2d_s8";
  fc.cases = {{0, {1, 8, 8, 8, 8, 3, 3, 1, 1, 1, 1}}};
  fc.label = "Nightly 100%_done";
  const JobId conv = RunJob(fc, Constant(10, 2));
  SubmitRequest q = Conv(1, 2, "corstone300-qemu");
  const JobId queued_on_qemu = Submit(q);  // assigned to an547-0, never run

  EXPECT_EQ(Ids(GetJson("/api/v1/jobs?op=conv2d_s8")), (std::vector<std::int64_t>{conv}));
  EXPECT_EQ(Ids(GetJson("/api/v1/jobs?kind=host")), (std::vector<std::int64_t>{conv, host1}));
  EXPECT_EQ(Ids(GetJson("/api/v1/jobs?board=an547-0")),
            (std::vector<std::int64_t>{queued_on_qemu}));
  EXPECT_EQ(Ids(GetJson("/api/v1/jobs?state=assigned,succeeded&user=local")).size(), 3u);
  EXPECT_EQ(Ids(GetJson("/api/v1/jobs?state=succeeded")), (std::vector<std::int64_t>{conv, host1}));
  EXPECT_EQ(GetJson("/api/v1/jobs?user=ana")["total"], 0);
  // label: case-insensitive substring, LIKE's wildcards taken literally.
  EXPECT_EQ(Ids(GetJson("/api/v1/jobs?label=nightly")), (std::vector<std::int64_t>{conv}));
  EXPECT_EQ(Ids(GetJson("/api/v1/jobs?label=100%25_")), (std::vector<std::int64_t>{conv}));
  EXPECT_EQ(GetJson("/api/v1/jobs?label=%25")["total"], 1);
  EXPECT_EQ(GetJson("/api/v1/jobs?label=_")["total"], 1);
  EXPECT_EQ(GetJson("/api/v1/jobs?label=1000")["total"], 0);
  Json limited = GetJson("/api/v1/jobs?kind=host&limit=1");
  EXPECT_EQ(limited["total"], 2) << "total counts every match, not the page";
  EXPECT_EQ(limited["jobs"].size(), 1u);
}

TEST_F(HttpRouterTest, TheDateRangeIsInclusiveOnBothEnds) {
  const std::int64_t t0 = clock_.NowMs();
  std::vector<JobId> ids;
  for (int day = 0; day < 3; ++day) {
    ids.push_back(Submit(Conv(1, 1, "corstone300-qemu")));
    clock_.Advance(std::chrono::hours(24));
  }
  const std::int64_t day = 24 * 3600 * 1000;
  EXPECT_EQ(Ids(GetJson("/api/v1/jobs?from=" + std::to_string(t0 + day) +
                        "&to=" + std::to_string(t0 + 2 * day))),
            (std::vector<std::int64_t>{ids[2], ids[1]}));
  EXPECT_EQ(Ids(GetJson("/api/v1/jobs?to=" + std::to_string(t0))),
            (std::vector<std::int64_t>{ids[0]}));
}

TEST_F(HttpRouterTest, SortingBreaksTiesByIdSoPagesNeitherRepeatNorSkipJobs) {
  std::vector<JobId> all;
  for (int i = 0; i < 7; ++i) {
    SubmitRequest r = Conv(1, 1, i % 2 ? "host" : "corstone300-qemu");
    if (i % 3 == 0) {
      r.op = "conv2d_s8";
      r.cases = {{0, {1, 8, 8, 8, 8, 3, 3, 1, 1, 1, 1}}};
    }
    all.push_back(Submit(r));
  }
  for (const char* sort : {"id", "created", "state", "op", "board", "user"}) {
    for (const char* order : {"asc", "desc"}) {
      std::vector<std::int64_t> seen;
      std::string prev_key;
      for (int offset = 0; offset < 7; offset += 3) {
        Json page = GetJson(std::string("/api/v1/jobs?sort=") + sort + "&order=" + order +
                            "&limit=3&offset=" + std::to_string(offset));
        EXPECT_EQ(page["total"], 7);
        for (std::int64_t id : Ids(page)) seen.push_back(id);
      }
      std::set<std::int64_t> unique(seen.begin(), seen.end());
      EXPECT_EQ(seen.size(), 7u) << sort << " " << order;
      EXPECT_EQ(unique.size(), 7u) << sort << " " << order << ": a job twice";
    }
  }
  // op ascending: conv2d_s8 (ids 1, 4, 7) before fully_connected_s8, ties by id ascending.
  EXPECT_EQ(Ids(GetJson("/api/v1/jobs?sort=op&order=asc")),
            (std::vector<std::int64_t>{all[0], all[3], all[6], all[1], all[2], all[4], all[5]}));
  // board descending: the assigned board (host-0, then an547-0), then the queued jobs with no
  // board, ids descending within each.
  EXPECT_EQ(Ids(GetJson("/api/v1/jobs?sort=board")),
            (std::vector<std::int64_t>{all[1], all[0], all[6], all[5], all[4], all[3], all[2]}));
  EXPECT_EQ(Ids(GetJson("/api/v1/jobs?offset=5")), (std::vector<std::int64_t>{all[1], all[0]}));
  EXPECT_EQ(GetJson("/api/v1/jobs?offset=100")["jobs"].size(), 0u);
  // before: ids below it, as `mculab jobs --before` pages.
  Json before = GetJson("/api/v1/jobs?before=" + std::to_string(all[2]));
  EXPECT_EQ(Ids(before), (std::vector<std::int64_t>{all[1], all[0]}));
  EXPECT_EQ(before["total"], 2);
}

// Every combination of filters, sort key, order and page gives what a plain filter-and-sort of
// the jobs gives (the store reads pages through covering indexes, or through the label index when
// a label matches few jobs; both paths are taken here: "many" is in about 2,700 labels).
TEST_F(HttpRouterTest, PagesAgreeWithAPlainFilterAndSortOverThousandsOfJobs) {
  struct Row {
    JobId id;
    std::string user, kind, op, label, state, board, assigned;
    std::int64_t created;
    std::string Shown() const { return assigned.empty() ? board : assigned; }
  };
  std::mt19937 rng(7);
  auto pick = [&](std::initializer_list<const char*> v) {
    return std::string(*(v.begin() + rng() % v.size()));
  };
  std::vector<Row> rows;
  WriteSet ws;
  for (JobId id = 1000; id < 5000; ++id) {
    Row r{id,
          pick({"ana", "ben", "chen"}),
          pick({"host", "corstone300-qemu"}),
          pick({"conv2d_s8", "fully_connected_s8"}),
          rng() % 10 == 0 ? "rare one" : pick({"", "many a", "Many b", "many c"}),
          pick({"succeeded", "failed", "queued", "cancelled"}),
          pick({"", "", "host-0"}),
          pick({"", "an547-0", "host-0"}),
          1'000'000 + static_cast<std::int64_t>(rng() % 500) * 1000};
    rows.push_back(r);
    Job j;
    j.id = r.id;
    j.user = r.user;
    j.kind = r.kind;
    j.op = r.op;
    j.label = r.label;
    j.state = *ParseJobState(r.state);
    j.board = r.board;
    j.assigned_board = r.assigned;
    j.created_ms = r.created;
    j.iterations = 1;
    j.num_cases = 1;
    ws.new_jobs.push_back({j, {{0, {1, 8, 4}}}});
  }
  ASSERT_TRUE(store_->WriteAndWait(std::move(ws)).ok());

  using Key = std::function<std::string(const Row&)>;
  auto pad = [](std::int64_t v) {
    std::string s = std::to_string(v);
    return std::string(20 - s.size(), '0') + s;
  };
  const std::vector<std::pair<std::string, Key>> sorts = {
      {"id", [&](const Row& r) { return pad(r.id); }},
      {"created", [&](const Row& r) { return pad(r.created); }},
      {"state", [](const Row& r) { return r.state; }},
      {"op", [](const Row& r) { return r.op; }},
      {"board", [](const Row& r) { return r.Shown(); }},
      {"user", [](const Row& r) { return r.user; }}};
  const std::vector<std::string> filters = {"",
                                            "label=many",
                                            "label=rare",
                                            "label=MANY%20A",
                                            "op=conv2d_s8&state=succeeded,failed",
                                            "user=chen&board=host-0",
                                            "kind=host&from=1100000&to=1300000",
                                            "label=zzz",
                                            "state=queued&label=c"};
  for (const std::string& filter : filters) {
    for (const auto& [sort, key] : sorts) {
      for (const char* order : {"asc", "desc"}) {
        for (int offset : {0, 1900}) {
          const std::string q = filter + "&sort=" + sort + "&order=" + order +
                                "&limit=25&offset=" + std::to_string(offset);
          // The model: the same filters and order, in plain C++.
          auto has = [&](const char* name, const std::string& v) {
            return filter.find(std::string(name) + "=" + v) != std::string::npos;
          };
          std::vector<Row> match;
          for (const Row& r : rows) {
            std::string label = r.label;
            std::transform(label.begin(), label.end(), label.begin(), ::tolower);
            if (const auto at = filter.find("label="); at != std::string::npos) {
              std::string want = filter.substr(at + 6, filter.find('&', at) - at - 6);
              if (want == "MANY%20A") want = "many a";
              if (label.find(want) == std::string::npos) continue;
            }
            if (has("op", "conv2d_s8") && r.op != "conv2d_s8") continue;
            if (has("state", "succeeded,failed") && r.state != "succeeded" && r.state != "failed")
              continue;
            if (has("state", "queued") && r.state != "queued") continue;
            if (has("user", "chen") && r.user != "chen") continue;
            if (has("board", "host-0") && r.board != "host-0" && r.assigned != "host-0") continue;
            if (has("kind", "host") && r.kind != "host") continue;
            if (has("from", "1100000") && (r.created < 1'100'000 || r.created > 1'300'000))
              continue;
            match.push_back(r);
          }
          const bool asc = std::string(order) == "asc";
          std::sort(match.begin(), match.end(), [&](const Row& a, const Row& b) {
            const auto ka = std::make_pair(key(a), a.id);
            const auto kb = std::make_pair(key(b), b.id);
            return asc ? ka < kb : kb < ka;
          });
          std::vector<std::int64_t> want;
          for (std::size_t i = offset; i < match.size() && want.size() < 25; ++i) {
            want.push_back(match[i].id);
          }
          Json page = GetJson("/api/v1/jobs?" + q);
          ASSERT_EQ(page["total"], match.size()) << q;
          ASSERT_EQ(Ids(page), want) << q;
        }
      }
    }
  }
}

TEST_F(HttpRouterTest, BadParametersAre400AndTheMessageNamesTheParameter) {
  const JobId id = RunJob(Conv(2, 3), Constant(5, 3));
  const std::string job = "/api/v1/jobs/" + std::to_string(id);
  struct Case {
    std::string target;
    std::string names;
  };
  for (const auto& [target, names] : std::vector<Case>{
           {"/api/v1/jobs?limit=0", "limit"},
           {"/api/v1/jobs?limit=501", "limit"},
           {"/api/v1/jobs?limit=ten", "limit"},
           {"/api/v1/jobs?offset=-1", "offset"},
           {"/api/v1/jobs?offset=99999999999999999999", "offset"},
           {"/api/v1/jobs?sort=speed", "sort"},
           {"/api/v1/jobs?order=up", "order"},
           {"/api/v1/jobs?state=succeeded,done", "state"},
           {"/api/v1/jobs?from=yesterday", "from"},
           {"/api/v1/jobs?to=1e3", "to"},
           {"/api/v1/jobs?user=" + std::string(300, 'u'), "user"},
           {job + "/samples?case=-1", "case"},
           {job + "/samples?case=2", "case 2 is out of range"},
           {job + "/samples?max_points=5", "max_points"},
           {job + "/samples?bins=201", "bins"},
           {"/api/v1/compare?jobs=" + std::to_string(id), "jobs"},
           {"/api/v1/compare", "jobs"},
           {"/api/v1/compare?jobs=1,x", "\"x\" is not a job id"},
           {"/api/v1/compare?jobs=1,2,3,4,5,6,7,8,9", "jobs"},
       }) {
    const std::string message = BadRequest(target);
    EXPECT_NE(message.find(names), std::string::npos) << target << " -> " << message;
  }
}

TEST_F(HttpRouterTest, UnknownJobsAndRoutesAre404) {
  const JobId id = RunJob(Conv(1, 2), Constant(5, 2));
  EXPECT_EQ(GetJson("/api/v1/jobs/404", status::not_found)["error"], "job 404 does not exist");
  EXPECT_EQ(GetJson("/api/v1/jobs/404/samples", status::not_found)["error"],
            "job 404 does not exist");
  EXPECT_EQ(GetJson("/api/v1/jobs/99999999999999999999999", status::not_found)["error"],
            "job 99999999999999999999999 does not exist");
  EXPECT_EQ(
      GetJson("/api/v1/compare?jobs=" + std::to_string(id) + ",404", status::not_found)["error"],
      "job 404 does not exist");
  for (const char* target : {"/api/v1/nothing", "/api/v1/jobs/x", "/api/v1/jobs/1/other",
                             "/api/v2/jobs", "/api/v1/jobs/"}) {
    EXPECT_NE(GetJson(target, status::not_found)["error"].get<std::string>().find("no route"),
              std::string::npos)
        << target;
  }
}

// ---- one job ----

// The page's "Download CSV": the bytes `mculab export` writes (the one writer,
// proto/json/export_csv.h, on the results the CLI gets), named for the job; a job that has not
// succeeded has none.
TEST_F(HttpRouterTest, AJobsCsvIsTheExportsBytes) {
  const JobId id = RunJob(Conv(2, 4), [](std::uint32_t c) {
    return c == 0 ? std::vector<std::int64_t>{10, 20, 30, 41}
                  : std::vector<std::int64_t>{7, 7, 7, 7};
  });
  auto results = LabQueries(*lab_, *store_).GetJobResults(caller_, id, false);
  ASSERT_TRUE(results.ok());
  v1::Results proto;
  wire::ToProto(*results, &proto);
  for (const auto& [query, want] : {std::pair{std::string(), ExportFullCsv(proto)},
                                    std::pair{std::string("?format=csv"), ExportFullCsv(proto)},
                                    std::pair{std::string("?format=ops-csv"), ExportCsv(proto)}}) {
    auto reply = Handle(Get("/api/v1/jobs/" + std::to_string(id) + "/export.csv" + query));
    EXPECT_EQ(reply.response.result(), status::ok) << reply.response.body();
    EXPECT_EQ(reply.response.body(), want) << query;
    EXPECT_EQ(reply.response[beast_http::field::content_type], "text/csv; charset=utf-8");
    EXPECT_EQ(reply.response[beast_http::field::content_disposition],
              "attachment; filename=\"mculab-job-" + std::to_string(id) + ".csv\"");
  }
  EXPECT_NE(ExportFullCsv(proto).find(",median_us,"), std::string::npos) << ExportFullCsv(proto);
  EXPECT_EQ(BadRequest("/api/v1/jobs/" + std::to_string(id) + "/export.csv?format=xlsx"),
            "format must be csv or ops-csv, got \"xlsx\"");
  lab_->agents().DisconnectAgent(session_, "test");
  const JobId queued = Submit(Conv(1, 3));
  EXPECT_EQ(
      GetJson("/api/v1/jobs/" + std::to_string(queued) + "/export.csv",
              status::bad_request)["error"],
      "job " + std::to_string(queued) + " is queued; only a succeeded job has results to export");
}

TEST_F(HttpRouterTest, AJobHasItsProvenanceParametersAndPerCaseStatistics) {
  const JobId id = RunJob(
      Conv(2, 4),
      [](std::uint32_t c) {
        return c == 0 ? std::vector<std::int64_t>{10, 20, 30, 40}
                      : std::vector<std::int64_t>{7, 7, 7, 7};
      },
      /*emulated=*/true);
  Json d = GetJson("/api/v1/jobs/" + std::to_string(id));
  EXPECT_EQ(d["id"], id);
  EXPECT_EQ(d["emulated"], true);
  const Json& p = d["provenance"];
  EXPECT_EQ(p["board"], "host-0");
  EXPECT_EQ(p["board_kind"], "host");
  EXPECT_EQ(p["agent"], "lab-1");
  EXPECT_EQ(p["runner_version"], "0.1.0");
  EXPECT_EQ(p["timer_unit"], "cycles");
  EXPECT_EQ(p["emulated"], true);
  EXPECT_EQ(p["note"], "<b>note</b>");
  EXPECT_EQ(d["param_names"], Json::parse(R"(["N", "in_features", "out_features"])"));
  ASSERT_EQ(d["cases"].size(), 2u);
  const Json& c0 = d["cases"][0];
  EXPECT_EQ(c0["index"], 0);
  EXPECT_EQ(c0["id"], 0);
  EXPECT_EQ(c0["params"], Json::parse("[1, 8, 4]"));
  EXPECT_EQ(c0["metric"], "cycles");
  EXPECT_EQ(c0["unit"], "cycles");
  EXPECT_EQ(c0["n"], 4);
  EXPECT_EQ(c0["min"], 10.0);
  EXPECT_EQ(c0["median"], 25.0);
  EXPECT_EQ(c0["mean"], 25.0);
  EXPECT_EQ(c0["max"], 40.0);
  EXPECT_EQ(c0["checksum"], 0xabc);
  EXPECT_EQ(c0["checksum_ok"], true);
  EXPECT_EQ(c0["overhead"], 12);
  EXPECT_EQ(d["cases"][1]["id"], 10);
  EXPECT_EQ(d["cases"][1]["stddev"], 0.0);
  EXPECT_EQ(d["ops"], Json::array());
  EXPECT_TRUE(d["memory"].is_null());
}

TEST_F(HttpRouterTest, AQueuedJobHasNoProvenanceAndItsCasesHaveNotRun) {
  lab_->agents().DisconnectAgent(session_, "test");
  const JobId id = Submit(Conv(1, 3));  // host-0 is offline now
  Json d = GetJson("/api/v1/jobs/" + std::to_string(id));
  EXPECT_EQ(d["state"], "queued");
  EXPECT_TRUE(d["provenance"].is_null());
  ASSERT_EQ(d["cases"].size(), 1u);
  EXPECT_EQ(d["cases"][0]["n"], 0);
  EXPECT_EQ(d["cases"][0]["params"], Json::parse("[1, 8, 4]"));
  EXPECT_TRUE(d["cases"][0]["checksum_ok"].is_null());
  Json s = GetJson("/api/v1/jobs/" + std::to_string(id) + "/samples");
  EXPECT_EQ(s["n"], 0);
  EXPECT_EQ(s["iterations"], Json::array());
  EXPECT_EQ(s["values"], Json::array());
  EXPECT_EQ(GetJson("/api/v1/compare?jobs=" + std::to_string(id) + "," + std::to_string(id),
                    status::bad_request)["error"],
            "job " + std::to_string(id) + " has no results yet (state queued)");
}

TEST_F(HttpRouterTest, AJobWaitingOnAReservationNamesTheHolderAndTheLeaseEnd) {
  Caller alice;
  alice.user = "alice";
  alice.role = Role::kMember;
  ASSERT_TRUE(lab_->boards().Reserve(alice, {"host-0", 60'000, "profiling", false}).ok());
  SubmitRequest r = Conv(1, 3);
  r.board = "host-0";
  r.kind.clear();
  r.priority = JobPriority::kHigh;
  const JobId id = Submit(std::move(r));
  Json d = GetJson("/api/v1/jobs/" + std::to_string(id));
  EXPECT_EQ(d["state"], "queued");
  EXPECT_EQ(d["board"], "host-0");
  EXPECT_EQ(d["priority"], "high");
  EXPECT_EQ(d["wait"]["position"], 1);
  EXPECT_EQ(d["wait"]["board"], "host-0");
  EXPECT_EQ(d["wait"]["holder"], "alice");
  EXPECT_EQ(d["wait"]["note"], "profiling");
  EXPECT_EQ(d["wait"]["lease_until_ms"], clock_.NowMs() + 60'000);
  EXPECT_EQ(d["wait"]["estimated_start_ms"], clock_.NowMs() + 60'000);
  Json list = GetJson("/api/v1/jobs");
  ASSERT_EQ(list["jobs"].size(), 1u);
  EXPECT_EQ(list["jobs"][0]["wait"]["holder"], "alice");
}

TEST_F(HttpRouterTest, WhileAJobRunsItsCasesAppearAsTheyFinish) {
  const JobId id = Submit(Conv(3, 4));
  seq_ = 0;
  const v1::Assignment a = Start(false);
  SendCase(a, 0, {5, 6, 7, 8});
  SendCase(a, 1, {9, 9}, /*checksum=*/false);  // half of case 1
  Json d = GetJson("/api/v1/jobs/" + std::to_string(id));
  EXPECT_EQ(d["state"], "running");
  EXPECT_EQ(d["progress_done"], 6);
  EXPECT_EQ(d["progress_total"], 12);
  ASSERT_EQ(d["cases"].size(), 3u);  // every case; the unfinished ones have not run yet
  EXPECT_EQ(d["cases"][0]["median"], 6.5);
  EXPECT_EQ(d["cases"][1]["n"], 0) << "half of case 1 is stored: not final yet";
  EXPECT_EQ(d["cases"][2]["n"], 0);
  EXPECT_EQ(d["provenance"]["timer_unit"], "ns");
  Json s = GetJson("/api/v1/jobs/" + std::to_string(id) + "/samples?case=1");
  EXPECT_EQ(s["n"], 2);
  Json none = GetJson("/api/v1/jobs/" + std::to_string(id) + "/samples?case=2&bins=10");
  EXPECT_EQ(none["n"], 0);
  EXPECT_EQ(none["histogram"]["counts"], Json::array());
}

// ---- samples ----

TEST_F(HttpRouterTest, LongRunsAreDownsampledKeepingEachBucketsMinAndMax) {
  constexpr std::uint32_t kN = 5000;
  const JobId id = RunJob(Conv(1, kN), [](std::uint32_t) {
    std::vector<std::int64_t> v(kN);
    for (std::uint32_t i = 0; i < kN; ++i) v[i] = 1000 + (i * 7919) % 13;
    v[1234] = 99999;  // a spike
    v[4321] = 3;      // a dip
    return v;
  });
  Json s = GetJson("/api/v1/jobs/" + std::to_string(id) + "/samples?max_points=100&bins=20");
  EXPECT_EQ(s["job"], id);
  EXPECT_EQ(s["case"], 0);
  EXPECT_EQ(s["unit"], "ns");
  EXPECT_EQ(s["n"], kN);
  EXPECT_EQ(s["downsampled"], true);
  const auto iterations = s["iterations"].get<std::vector<std::int64_t>>();
  const auto values = s["values"].get<std::vector<std::int64_t>>();
  ASSERT_EQ(iterations.size(), values.size());
  EXPECT_LE(values.size(), 100u);
  EXPECT_GT(values.size(), 50u);
  EXPECT_TRUE(std::is_sorted(iterations.begin(), iterations.end()));
  EXPECT_EQ(std::set<std::int64_t>(iterations.begin(), iterations.end()).size(), iterations.size());
  EXPECT_NE(std::find(values.begin(), values.end(), 99999), values.end()) << "the spike survives";
  EXPECT_NE(std::find(values.begin(), values.end(), 3), values.end()) << "the dip survives";
  EXPECT_EQ(iterations[std::find(values.begin(), values.end(), 99999) - values.begin()], 1234);
  // The histogram covers every sample, not the downsampled series.
  const Json& h = s["histogram"];
  EXPECT_EQ(h["lo"], 3.0);
  EXPECT_EQ(h["hi"], 99999.0);
  const auto counts = h["counts"].get<std::vector<std::int64_t>>();
  EXPECT_EQ(counts.size(), 20u);
  EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}), kN);
  EXPECT_EQ(counts.back(), 1) << "the maximum is in the last bin";

  Json whole = GetJson("/api/v1/jobs/" + std::to_string(id) + "/samples?max_points=100000");
  EXPECT_EQ(whole["downsampled"], false);
  EXPECT_EQ(whole["values"].size(), kN);
  EXPECT_FALSE(whole.contains("histogram")) << "bins=0: no histogram";
}

TEST_F(HttpRouterTest, IdenticalValuesGiveAOneBinHistogram) {
  const JobId id = RunJob(Conv(1, 6, "corstone300-qemu"), Constant(4242, 6), true);
  Json s = GetJson("/api/v1/jobs/" + std::to_string(id) + "/samples?bins=40");
  EXPECT_EQ(s["unit"], "cycles");
  EXPECT_EQ(s["histogram"], Json::parse(R"({"lo": 4242.0, "hi": 4242.0, "counts": [6]})"));
}

// ---- compare ----

TEST_F(HttpRouterTest, CompareGivesTheRatioOfMediansWithABootstrapInterval) {
  // Case ids 0 and 10 in both; the base is constant, B is 10% slower on case 0 and noisy but
  // centred on the base on case 10.
  const JobId base = RunJob(Conv(2, 200), Constant(1000, 200));
  const JobId slower = RunJob(Conv(2, 200), [](std::uint32_t c) {
    std::vector<std::int64_t> v(200);
    for (int i = 0; i < 200; ++i) v[i] = c == 0 ? 1100 : 950 + (i * 37) % 101;
    return v;
  });
  Json c = GetJson("/api/v1/compare?jobs=" + std::to_string(base) + "," + std::to_string(slower));
  ASSERT_EQ(c["jobs"].size(), 2u);
  EXPECT_EQ(c["jobs"][0]["id"], base);
  EXPECT_EQ(c["jobs"][1]["id"], slower);
  EXPECT_EQ(c["jobs"][0]["unit"], "ns");
  EXPECT_EQ(c["jobs"][0]["emulated"], false);
  EXPECT_EQ(c["jobs"][0]["board"], "host-0");
  EXPECT_EQ(c["param_names"], Json::parse(R"(["N", "in_features", "out_features"])"));
  ASSERT_EQ(c["cases"].size(), 2u);
  const Json& c0 = c["cases"][0];
  EXPECT_EQ(c0["id"], 0);
  EXPECT_EQ(c0["params"], Json::parse("[1, 8, 4]"));
  EXPECT_EQ(c0["medians"], Json::parse("[1000.0, 1100.0]"));
  EXPECT_TRUE(c0["ratios"][0].is_null());
  EXPECT_DOUBLE_EQ(c0["ratios"][1]["ratio"].get<double>(), 1.1);
  EXPECT_DOUBLE_EQ(c0["ratios"][1]["lo"].get<double>(), 1.1);
  EXPECT_DOUBLE_EQ(c0["ratios"][1]["hi"].get<double>(), 1.1);
  EXPECT_EQ(c0["ratios"][1]["significant"], true);
  const Json& r10 = c["cases"][1]["ratios"][1];
  EXPECT_NEAR(r10["ratio"].get<double>(), 1.0, 0.01);
  EXPECT_LT(r10["lo"].get<double>(), 1.0);
  EXPECT_GT(r10["hi"].get<double>(), 1.0);
  EXPECT_EQ(r10["significant"], false);
  // The same answer every time (fixed seed).
  EXPECT_EQ(GetJson("/api/v1/compare?jobs=" + std::to_string(base) + "," + std::to_string(slower)),
            c);
}

TEST_F(HttpRouterTest, CompareMatchesCasesByIdAndShowsMissingOnesAsNull) {
  const JobId two = RunJob(Conv(2, 3), Constant(100, 3));  // case ids 0, 10
  SubmitRequest r = Conv(1, 3);
  r.cases = {{10, {1, 9, 4}}, {20, {1, 9, 4}}};
  const JobId other = RunJob(r, Constant(200, 3));  // case ids 10, 20
  Json c = GetJson("/api/v1/compare?jobs=" + std::to_string(two) + "," + std::to_string(other));
  ASSERT_EQ(c["cases"].size(), 3u);
  EXPECT_EQ(c["cases"][0]["id"], 0);
  EXPECT_EQ(c["cases"][0]["medians"], Json::parse("[100.0, null]"));
  EXPECT_EQ(c["cases"][0]["ratios"], Json::parse("[null, null]"));
  EXPECT_EQ(c["cases"][1]["id"], 10);
  EXPECT_DOUBLE_EQ(c["cases"][1]["ratios"][1]["ratio"].get<double>(), 2.0);
  EXPECT_EQ(c["cases"][2]["id"], 20) << "cases only a later job has come last";
  EXPECT_EQ(c["cases"][2]["medians"], Json::parse("[null, 200.0]"));
  EXPECT_EQ(c["cases"][2]["params"], Json::parse("[1, 9, 4]"));
}

TEST_F(HttpRouterTest, HostResultsAreLabelledHostNeitherSiliconNorEmulated) {
  lab_->agents().DisconnectAgent(session_, "test");
  const JobId queued = Submit(Conv(1, 3));  // host-0 is offline now: not started
  Json page = GetJson("/api/v1/jobs");
  ASSERT_EQ(page["jobs"][0]["id"], queued);
  EXPECT_EQ(page["jobs"][0]["measured"], "host") << "labelled by the host board of its kind";
  EXPECT_EQ(GetJson("/api/v1/jobs/" + std::to_string(queued))["measured"], "host");
  Json boards = GetJson("/api/v1/boards")["boards"];
  EXPECT_EQ(boards[0]["measured"], "emulated");
  EXPECT_EQ(boards[1]["measured"], "host");
}

TEST_F(HttpRouterTest, ARunOnTheHostRunnerIsLabelledHostFromItsHello) {
  const JobId host = RunJob(Conv(1, 3), Constant(100, 3));
  Json d = GetJson("/api/v1/jobs/" + std::to_string(host));
  EXPECT_EQ(d["measured"], "host");
  EXPECT_EQ(d["provenance"]["measured"], "host");
  EXPECT_EQ(d["provenance"]["emulated"], false);
  const JobId qemu = RunJob(Conv(1, 3), Constant(100, 3), /*emulated=*/true);
  EXPECT_EQ(GetJson("/api/v1/jobs/" + std::to_string(qemu))["provenance"]["measured"], "emulated");
}

TEST_F(HttpRouterTest, CompareRefusesARatioBetweenJobsInDifferentUnits) {
  const JobId ns = RunJob(Conv(1, 3), Constant(100, 3));
  const JobId cycles = RunJob(Conv(1, 3), Constant(300, 3), /*emulated=*/true);
  Json c = GetJson("/api/v1/compare?jobs=" + std::to_string(ns) + "," + std::to_string(cycles));
  EXPECT_EQ(c["jobs"][0]["measured"], "host");
  EXPECT_EQ(c["jobs"][1]["measured"], "emulated");
  ASSERT_TRUE(c["ratio_refused"].is_string()) << c.dump();
  EXPECT_NE(c["ratio_refused"].get<std::string>().find("different units (cycles,ns)"),
            std::string::npos)
      << c["ratio_refused"];
  EXPECT_EQ(c["cases"][0]["medians"], Json::parse("[100.0, 300.0]")) << "medians still shown";
  EXPECT_EQ(c["cases"][0]["ratios"], Json::parse("[null, null]")) << "no verdict";
  const JobId ns2 = RunJob(Conv(1, 3), Constant(200, 3));
  Json same = GetJson("/api/v1/compare?jobs=" + std::to_string(ns) + "," + std::to_string(ns2));
  EXPECT_TRUE(same["ratio_refused"].is_null());
  EXPECT_DOUBLE_EQ(same["cases"][0]["ratios"][1]["ratio"].get<double>(), 2.0);
}

// Two jobs that measured different things get no verdict, with the reason, and still show both
// medians: different operators; the same case id with other parameters.
TEST_F(HttpRouterTest, CompareRefusesARatioBetweenJobsThatMeasuredDifferentThings) {
  const JobId fc = RunJob(Conv(1, 3), Constant(100, 3));
  SubmitRequest conv;
  conv.kind = "host";
  conv.op = "conv2d_s8";
  conv.cases = {{0, {1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1}}};
  conv.iterations = 3;
  const JobId cv = RunJob(conv, Constant(300, 3));
  Json c = GetJson("/api/v1/compare?jobs=" + std::to_string(fc) + "," + std::to_string(cv));
  ASSERT_TRUE(c["ratio_refused"].is_string()) << c.dump();
  EXPECT_NE(c["ratio_refused"].get<std::string>().find("measured different things"),
            std::string::npos)
      << c["ratio_refused"];
  EXPECT_EQ(c["jobs"][0]["workload"], "op fully_connected_s8");
  EXPECT_EQ(c["jobs"][1]["workload"], "op conv2d_s8");
  EXPECT_EQ(c["cases"][0]["medians"], Json::parse("[100.0, 300.0]")) << "medians still shown";
  EXPECT_EQ(c["cases"][0]["ratios"], Json::parse("[null, null]"));

  SubmitRequest wider = Conv(1, 3);
  wider.cases = {{0, {1, 16, 4}}};  // case 0 again, other parameters
  const JobId other = RunJob(wider, Constant(200, 3));
  Json p = GetJson("/api/v1/compare?jobs=" + std::to_string(fc) + "," + std::to_string(other));
  EXPECT_TRUE(p["ratio_refused"].is_null()) << "the same operator";
  ASSERT_TRUE(p["cases"][0]["refused"].is_string()) << p.dump();
  EXPECT_NE(p["cases"][0]["refused"].get<std::string>().find("other parameters"),
            std::string::npos);
  EXPECT_EQ(p["cases"][0]["ratios"], Json::parse("[null, null]"));
}

// `--kernels reference` against the default on the same op: the assignment carries the flag, each
// job's document says what was asked and what the runner reported, and the compare view gives
// their ratio (the same workload) with each side's kernel set.
TEST_F(HttpRouterTest, JobsDifferingOnlyInTheirKernelSetCompareAndEachSideNamesItsSet) {
  report_kernel_set_ = true;
  SubmitRequest ref = Conv(1, 3);
  ref.kernels = "reference";
  const JobId reference = Submit(ref);
  seq_ = 0;
  v1::Assignment a = Start(/*emulated=*/true);
  EXPECT_TRUE(a.reference_kernels());
  SendCase(a, 0, Constant(300, 3)(0));
  Finish(a, reference);
  const JobId fast = Submit(Conv(1, 3));
  seq_ = 0;
  a = Start(/*emulated=*/true);
  EXPECT_FALSE(a.reference_kernels()) << "fast is the default";
  SendCase(a, 0, Constant(100, 3)(0));
  Finish(a, fast);

  Json c =
      GetJson("/api/v1/compare?jobs=" + std::to_string(reference) + "," + std::to_string(fast));
  EXPECT_TRUE(c["ratio_refused"].is_null()) << c.dump();
  EXPECT_EQ(c["jobs"][0]["workload"], c["jobs"][1]["workload"]);
  EXPECT_EQ(c["jobs"][0]["kernel_set"], "reference");
  EXPECT_EQ(c["jobs"][1]["kernel_set"], "helium");
  EXPECT_NEAR(c["cases"][0]["ratios"][1]["ratio"].get<double>(), 1.0 / 3, 1e-9);

  Json r = GetJson("/api/v1/jobs/" + std::to_string(reference));
  EXPECT_EQ(r["kernels"], "reference");
  EXPECT_EQ(r["kernel_set"], "reference");
  EXPECT_EQ(r["provenance"]["kernel_set"], "reference");
  Json f = GetJson("/api/v1/jobs/" + std::to_string(fast));
  EXPECT_EQ(f["kernels"], "fast");
  EXPECT_EQ(f["kernel_set"], "helium");
  EXPECT_EQ(f["provenance"]["kernel_set"], "helium");
  Json page = GetJson("/api/v1/jobs");
  ASSERT_EQ(page["jobs"][0]["id"], fast);
  EXPECT_EQ(page["jobs"][0]["kernels"], "fast");
  EXPECT_EQ(page["jobs"][0]["kernel_set"], "helium");
  EXPECT_EQ(page["jobs"][1]["kernels"], "reference");
  EXPECT_EQ(page["jobs"][1]["kernel_set"], "reference");
}

TEST_F(HttpRouterTest, AnUnknownKernelSetIsRefusedAtSubmit) {
  SubmitRequest r = Conv(1, 3);
  r.kernels = "turbo";
  auto reply = lab_->jobs().Submit(caller_, std::move(r));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(reply.error().message.find("unknown kernel set \"turbo\""), std::string::npos)
      << reply.error().message;
}

// A series names a model or runner by its file name (a rebuilt runner of the same name is the
// change a comparison is for); the hash stands in when no name is known.
TEST(MeasuredWorkload, NamesTheModelOrRunnerByItsFileName) {
  Job model;
  model.op = "model";
  model.blob_artifact = std::string(64, 'a');
  EXPECT_EQ(MeasuredWorkload(model), "model " + std::string(64, 'a')) << "from before names";
  model.model_name = "kws.tflite";
  EXPECT_EQ(MeasuredWorkload(model), "model kws.tflite");
  Job runner;
  runner.op = "custom";
  runner.firmware_artifact = std::string(64, 'b');
  EXPECT_EQ(MeasuredWorkload(runner), "runner " + std::string(64, 'b'));
  EXPECT_EQ(MeasuredWorkload(runner, "runner.elf"), "runner runner.elf");
  runner.blob_artifact = std::string(64, 'c');
  EXPECT_EQ(MeasuredWorkload(runner, "runner.elf", "net.bin"), "runner runner.elf blob net.bin");
  EXPECT_EQ(MeasuredWorkload(runner, "runner.elf"),
            "runner runner.elf blob " + std::string(64, 'c'));
  Job op;
  op.op = "conv2d_s8";
  EXPECT_EQ(MeasuredWorkload(op), "op conv2d_s8");
}

ComparedJob Compared(JobId id, std::string board, std::string unit, bool emulated,
                     std::string measured, std::string workload, std::string kind,
                     std::string kernel_set) {
  ComparedJob j;
  j.id = id;
  j.op = workload.substr(workload.find(' ') + 1);
  j.board = std::move(board);
  j.unit = std::move(unit);
  j.emulated = emulated;
  j.measured = std::move(measured);
  j.workload = std::move(workload);
  j.kind = std::move(kind);
  j.kernel_set = std::move(kernel_set);
  return j;
}

TEST(RatioRefusal, RefusesARatioBetweenEmulatedAndSiliconJobsInTheSameUnit) {
  Comparison c;
  c.jobs = {Compared(1, "an547-0", "cycles", true, "emulated", "op conv2d_s8", "corstone300-qemu",
                     "helium"),
            Compared(2, "h743-0", "cycles", false, "silicon", "op conv2d_s8", "stm32h7", "dsp")};
  c.refused = RatioRefusal(c.jobs);
  EXPECT_NE(c.refused.find("different kinds (emulated,silicon)"), std::string::npos) << c.refused;
  ComparedCase cc;
  cc.medians = {100.0, 50.0};
  cc.ratios = {std::nullopt, RatioInterval{0.5, 0.4, 0.6, true}};
  cc.verdicts = {"", "faster"};
  c.cases = {cc};
  auto view = [](const Comparison& cmp) {
    return Json::parse(Dump(server::wire::ComparisonDocument(cmp)));
  };
  Json j = view(c);
  EXPECT_EQ(j["jobs"][0]["measured"], "emulated");
  EXPECT_EQ(j["jobs"][1]["measured"], "silicon");
  ASSERT_TRUE(j["ratio_refused"].is_string());
  EXPECT_TRUE(j["cases"][0]["ratios"][1].is_null()) << "a refused ratio is never printed";
  c.jobs[0].emulated = false;
  c.jobs[0].measured = "silicon";
  c.refused = RatioRefusal(c.jobs);
  EXPECT_EQ(c.refused, "");
  EXPECT_TRUE(view(c)["ratio_refused"].is_null());
  EXPECT_EQ(view(c)["cases"][0]["ratios"][1]["significant"], true);
  EXPECT_EQ(view(c)["cases"][0]["ratios"][1]["verdict"], "faster");
  c.jobs[1].unit = "ns";
  EXPECT_NE(RatioRefusal(c.jobs).find("different units (cycles,ns)"), std::string::npos);
  c.jobs[1].workload = "op depthwise_conv2d_s8";
  EXPECT_NE(RatioRefusal(c.jobs).find("measured different things"), std::string::npos);
}

// The same model on the two emulated boards: both in instructions, so the ratio stands, but it is
// a ratio of instruction counts and carries no faster/slower verdict; one board kind keeps it.
TEST(RatioRefusal, EmulatedInstructionsOfTwoBoardKindsGetARatioButNoVerdict) {
  Comparison c;
  c.jobs = {
      Compared(1, "an547-0", "instructions", true, "emulated", "model x", "corstone300-qemu",
               "helium"),
      Compared(2, "an500-0", "instructions", true, "emulated", "model x", "an500-qemu", "dsp")};
  c.no_verdict = InstructionRatioNote(c.jobs);
  EXPECT_EQ(RatioRefusal(c.jobs), "");
  EXPECT_NE(c.no_verdict.find("different emulated board kinds (corstone300-qemu, an500-qemu)"),
            std::string::npos)
      << c.no_verdict;
  ComparedCase cc;
  cc.medians = {33869917.0, 36208087.0};
  cc.ratios = {std::nullopt, RatioInterval{1.069, 1.069, 1.069, true}};
  cc.verdicts = {"", ""};
  c.cases = {cc};
  Json j = Json::parse(Dump(server::wire::ComparisonDocument(c)));
  EXPECT_TRUE(j["ratio_refused"].is_null());
  ASSERT_TRUE(j["verdict_refused"].is_string()) << j.dump();
  EXPECT_EQ(j["jobs"][1]["kind"], "an500-qemu");
  EXPECT_DOUBLE_EQ(j["cases"][0]["ratios"][1]["ratio"].get<double>(), 1.069) << "the ratio stands";
  EXPECT_TRUE(j["cases"][0]["ratios"][1]["verdict"].is_null());

  std::vector<ComparedJob> same = c.jobs;
  same[1].kind = "corstone300-qemu";
  EXPECT_EQ(InstructionRatioNote(same), "") << "one board kind: instruction counts compare";
  std::vector<ComparedJob> cycles = c.jobs;
  cycles[0].unit = cycles[1].unit = "cycles";
  EXPECT_EQ(InstructionRatioNote(cycles), "") << "not instructions: the ratio refusal rules apply";
  c.no_verdict.clear();
  EXPECT_TRUE(Json::parse(Dump(server::wire::ComparisonDocument(c)))["verdict_refused"].is_null());
}

// Model jobs: each layer's mean per invocation (pass 0, the timer), matched by case and op index;
// an exact (emulated) ratio gets its verdict, a host one none and no interval.
TEST(CompareLayers, MatchesLayersByOpIndexAndTypeAndJudgesOnlyExactCounts) {
  auto results = [](std::vector<std::pair<std::string, std::uint64_t>> ops) {
    JobResults r;
    CaseOutcome c;
    c.index = 0;
    c.case_id = 0;
    r.cases.push_back(c);
    std::uint32_t i = 0;
    for (const auto& [type, sum] : ops) {
      OpProfileRow row;
      row.op_index = i++;
      row.type = type;
      row.name = type + "_" + std::to_string(row.op_index);
      row.count = 10;
      row.sum = sum;
      r.ops.push_back(row);
      row.metric = 1;  // a counter: not the timer, ignored
      row.sum = 1;
      r.ops.push_back(row);
    }
    return r;
  };
  std::vector<JobResults> d = {results({{"CONV_2D", 1000}, {"SOFTMAX", 100}, {"RESHAPE", 10}}),
                               results({{"CONV_2D", 2000}, {"SOFTMAX", 100}, {"ADD", 10}})};
  std::vector<ComparedJob> jobs(2);
  jobs[0].measured = jobs[1].measured = "emulated";
  auto layers = CompareLayers(d, jobs, false);
  ASSERT_EQ(layers.size(), 3u);
  EXPECT_EQ(layers[0].type, "CONV_2D");
  EXPECT_DOUBLE_EQ(*layers[0].means[0], 100);
  EXPECT_DOUBLE_EQ(layers[0].ratios[1]->ratio, 2.0);
  EXPECT_DOUBLE_EQ(layers[0].ratios[1]->lo, 2.0);
  EXPECT_EQ(layers[0].verdicts[1], "slower");
  EXPECT_EQ(layers[1].verdicts[1], "no change");
  EXPECT_FALSE(layers[2].means[1]) << "another type at that index: no figure";
  EXPECT_FALSE(layers[2].ratios[1]);
  EXPECT_EQ(CompareLayers(d, jobs, true)[0].verdicts[1], "") << "no verdict across board kinds";
  jobs[0].measured = jobs[1].measured = "host";
  layers = CompareLayers(d, jobs, false);
  EXPECT_DOUBLE_EQ(layers[0].ratios[1]->ratio, 2.0);
  EXPECT_TRUE(std::isnan(layers[0].ratios[1]->lo)) << "totals have no interval";
  EXPECT_EQ(layers[0].verdicts[1], "");
  Comparison c;
  c.jobs = jobs;
  c.layers = layers;
  Json j = Json::parse(Dump(server::wire::ComparisonDocument(c)));
  EXPECT_TRUE(j["layers"][0]["ratios"][1]["lo"].is_null()) << j["layers"].dump();
  EXPECT_EQ(j["layers"][0]["means"], Json::parse("[100.0, 200.0]"));
}

// The four verdicts: outside the interval, inside a 1% band around 1, or a wide interval over 1.
TEST(RatioVerdict, SlowerFasterNoChangeOrUnclear) {
  EXPECT_EQ(RatioVerdict({1.2, 1.1, 1.3, true}), "slower");
  EXPECT_EQ(RatioVerdict({0.8, 0.7, 0.9, true}), "faster");
  EXPECT_EQ(RatioVerdict({1.0, 1.0, 1.0, false}), "no change") << "an emulated count that held";
  EXPECT_EQ(RatioVerdict({1.001, 0.995, 1.008, false}), "no change");
  EXPECT_EQ(RatioVerdict({1.05, 0.9, 1.2, false}), "unclear");
  EXPECT_EQ(RatioVerdict({1.002, 1.001, 1.004, true}), "slower") << "small but certain";
}

// ---- boards, events, metrics ----

// ---- the trend view: a case's series over time ----

// Eight jobs of the same sweep on the host board: case 0 near 1000 ns for four jobs, then near
// 1200 ns from the fifth on, whose runner reports another version; case 1 stays at 500 ns.
std::vector<JobId> RunStepSeries(const std::function<JobId(SubmitRequest, const Values&)>& run,
                                 std::string* runner_version) {
  std::vector<JobId> ids;
  for (int job = 0; job < 8; ++job) {
    *runner_version = job < 4 ? "0.1.0" : "0.2.0";
    const std::int64_t level = job < 4 ? 1000 : 1200;
    SubmitRequest r;
    r.kind = "host";
    r.op = "fully_connected_s8";
    r.cases = {{0, {1, 8, 4}}, {10, {1, 9, 4}}};
    r.iterations = 40;
    r.label = job < 4 ? "before" : "after";
    ids.push_back(run(std::move(r), [&](std::uint32_t c) {
      std::vector<std::int64_t> v(40);
      for (int i = 0; i < 40; ++i) v[i] = c == 0 ? level + (i * 37 + job * 11) % 21 - 10 : 500;
      return v;
    }));
  }
  return ids;
}

TEST_F(HttpRouterTest, TheSeriesQueryGivesEachJobsMedianIntervalAndTheStep) {
  const auto ids = RunStepSeries(
      [&](SubmitRequest r, const Values& v) { return RunJob(std::move(r), v); }, &runner_version_);
  LabQueries queries(*lab_, *store_);
  TrendRequest req;
  req.series.kind = "host";
  req.series.op = "fully_connected_s8";
  req.series.params = std::vector<std::int32_t>{1, 8, 4};
  auto trend = queries.GetTrend(caller_, req);
  ASSERT_TRUE(trend.ok()) << trend.error().message;
  ASSERT_EQ(trend->jobs.size(), 8u);
  EXPECT_EQ(trend->unit, "ns");
  EXPECT_EQ(trend->param_names, (std::vector<std::string>{"N", "in_features", "out_features"}));
  for (std::size_t i = 0; i < 8; ++i) {
    const TrendJob& j = trend->jobs[i];
    SCOPED_TRACE(i);
    EXPECT_EQ(j.id, ids[i]);
    EXPECT_EQ(j.case_index, 0u);
    EXPECT_EQ(j.n, 40u);
    EXPECT_NEAR(j.median, i < 4 ? 1000 : 1200, 10);
    EXPECT_LT(j.lo, j.median);
    EXPECT_GT(j.hi, j.median);
    EXPECT_GT(j.lo, j.median - 11);
    EXPECT_EQ(j.board, "host-0");
    EXPECT_EQ(j.runner_version, i < 4 ? "0.1.0" : "0.2.0");
    EXPECT_EQ(j.runner_changed, i == 4);
  }
  ASSERT_EQ(trend->changes.size(), 1u);
  EXPECT_EQ(trend->changes[0].index, 4u);
  EXPECT_EQ(trend->changes[0].before_job, ids[3]);
  EXPECT_EQ(trend->changes[0].after_job, ids[4]);
  EXPECT_NEAR(trend->changes[0].ratio, 1.2, 0.02);

  // The flat case: exact values, intervals of zero width, no change point.
  req.series.params = std::vector<std::int32_t>{1, 9, 4};
  trend = queries.GetTrend(caller_, req);
  ASSERT_TRUE(trend.ok());
  ASSERT_EQ(trend->jobs.size(), 8u);
  EXPECT_EQ(trend->jobs[3].case_index, 1u);
  EXPECT_EQ(trend->jobs[3].lo, 500);
  EXPECT_EQ(trend->jobs[3].hi, 500);
  EXPECT_TRUE(trend->changes.empty());

  // Narrowed to the jobs after the step: too few jobs before it to call it a change.
  req.series.params = std::vector<std::int32_t>{1, 8, 4};
  req.series.label_contains = "after";
  trend = queries.GetTrend(caller_, req);
  ASSERT_TRUE(trend.ok());
  EXPECT_EQ(trend->jobs.size(), 4u);
  EXPECT_TRUE(trend->changes.empty());

  // A case id instead of the parameters.
  req.series.label_contains.clear();
  req.series.params.reset();
  req.series.case_id = 10;
  trend = queries.GetTrend(caller_, req);
  ASSERT_TRUE(trend.ok());
  EXPECT_EQ(trend->jobs.size(), 8u);
  EXPECT_EQ(trend->jobs[0].median, 500);
}

TEST_F(HttpRouterTest, SeriesRouteGivesTheTrendDocument) {
  const auto ids = RunStepSeries(
      [&](SubmitRequest r, const Values& v) { return RunJob(std::move(r), v); }, &runner_version_);
  const std::string target = "/api/v1/series?kind=host&op=fully_connected_s8&params=1,8,4";
  Json t = GetJson(target);
  EXPECT_EQ(t["series"]["kind"], "host");
  EXPECT_EQ(t["series"]["op"], "fully_connected_s8");
  EXPECT_EQ(t["series"]["params"], Json::parse("[1, 8, 4]"));
  EXPECT_EQ(t["series"]["param_names"], Json::parse(R"(["N", "in_features", "out_features"])"));
  EXPECT_TRUE(t["series"]["case"].is_null());
  EXPECT_EQ(t["unit"], "ns");
  EXPECT_EQ(t["detector"]["window"], 3);
  EXPECT_DOUBLE_EQ(t["detector"]["min_step"].get<double>(), 0.01);
  ASSERT_EQ(t["jobs"].size(), 8u);
  const Json& j4 = t["jobs"][4];
  EXPECT_EQ(j4["id"], ids[4]);
  EXPECT_EQ(j4["label"], "after");
  EXPECT_EQ(j4["board"], "host-0");
  EXPECT_EQ(j4["case_id"], 0);
  EXPECT_EQ(j4["n"], 40);
  EXPECT_EQ(j4["measured"], "host");
  EXPECT_EQ(j4["runner_version"], "0.2.0");
  EXPECT_EQ(j4["runner_changed"], true);
  EXPECT_EQ(t["jobs"][3]["runner_changed"], false);
  EXPECT_LT(j4["lo"].get<double>(), j4["median"].get<double>());
  EXPECT_GT(j4["hi"].get<double>(), j4["median"].get<double>());
  ASSERT_EQ(t["changes"].size(), 1u);
  EXPECT_EQ(t["changes"][0]["index"], 4);
  EXPECT_EQ(t["changes"][0]["before_job"], ids[3]);
  EXPECT_EQ(t["changes"][0]["after_job"], ids[4]);
  EXPECT_NEAR(t["changes"][0]["ratio"].get<double>(), 1.2, 0.02);
  // The same answer every time (fixed seeds).
  EXPECT_EQ(GetJson(target), t);
  // A wider window needs more jobs than the series has either side of the step.
  EXPECT_TRUE(GetJson(target + "&window=5")["changes"].empty());
  // Narrowing by user, tag and limit.
  EXPECT_EQ(GetJson(target + "&user=nobody")["jobs"].size(), 0u);
  EXPECT_EQ(GetJson(target + "&tag=cpu=m55")["jobs"].size(), 0u);
  Json last = GetJson(target + "&limit=2");
  ASSERT_EQ(last["jobs"].size(), 2u);
  EXPECT_EQ(last["jobs"][1]["id"], ids[7]);
}

TEST_F(HttpRouterTest, ChangesListTheJobsThatStartANewLevel) {
  const auto ids = RunStepSeries(
      [&](SubmitRequest r, const Values& v) { return RunJob(std::move(r), v); }, &runner_version_);
  Json c = GetJson("/api/v1/changes");
  EXPECT_EQ(c["scanned"], 8);
  EXPECT_EQ(c["truncated"], false);
  EXPECT_EQ(c["total"], 1);
  ASSERT_EQ(c["jobs"].size(), 1u);
  const Json& job = c["jobs"][0];
  EXPECT_EQ(job["id"], ids[4]);
  EXPECT_EQ(job["state"], "succeeded");
  EXPECT_EQ(job["label"], "after");
  ASSERT_EQ(job["changes"].size(), 1u);  // case 10 is flat
  const Json& change = job["changes"][0];
  EXPECT_EQ(change["case_id"], 0);
  EXPECT_EQ(change["params"], Json::parse("[1, 8, 4]"));
  EXPECT_EQ(change["series"]["kind"], "host");
  EXPECT_EQ(change["series"]["params"], Json::parse("[1, 8, 4]"));
  EXPECT_EQ(change["before_job"], ids[3]);
  EXPECT_EQ(change["after_job"], ids[4]);
  EXPECT_NEAR(change["ratio"].get<double>(), 1.2, 0.02);
  // The history's filters narrow what is scanned.
  EXPECT_EQ(GetJson("/api/v1/changes?op=conv2d_s8")["jobs"].size(), 0u);
  EXPECT_EQ(GetJson("/api/v1/changes?label=before")["jobs"].size(), 0u);
  EXPECT_EQ(GetJson("/api/v1/changes?scan=3")["scanned"], 3);  // the newest three: after the step
  EXPECT_EQ(GetJson("/api/v1/changes?scan=3")["jobs"].size(), 0u);
  EXPECT_NE(BadRequest("/api/v1/changes?scan=0").find("scan"), std::string::npos);
  EXPECT_NE(BadRequest("/api/v1/changes?scan=501").find("scan"), std::string::npos);
}

// The changed-jobs answer is kept while nothing is committed, and computed again once a job
// lands: a kept answer from before the commit would miss the new step.
TEST_F(HttpRouterTest, ChangesAreKeptUntilTheNextCommitThenComputedAgain) {
  const auto ids = RunStepSeries(
      [&](SubmitRequest r, const Values& v) { return RunJob(std::move(r), v); }, &runner_version_);
  LabQueries queries(*lab_, *store_);
  auto first = queries.ListChangedJobs(caller_, JobQuery{}, 200);
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_EQ(first->jobs.size(), 1u);
  EXPECT_EQ(first->jobs[0].job.id, ids[4]);
  EXPECT_EQ(queries.changed_jobs_computed(), 1u);
  EXPECT_EQ(queries.trends_computed(), 2u);  // case 0's series and case 10's
  auto again = queries.ListChangedJobs(caller_, JobQuery{}, 200);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->jobs.size(), 1u);
  EXPECT_EQ(queries.changed_jobs_computed(), 1u);  // given again, not computed
  // Another filter is another answer.
  JobQuery by_op;
  by_op.op = "conv2d_s8";
  ASSERT_TRUE(queries.ListChangedJobs(caller_, by_op, 200).ok());
  EXPECT_EQ(queries.changed_jobs_computed(), 2u);
  EXPECT_EQ(GetJson("/api/v1/changes")["jobs"].size(), 1u);
  // A kept answer is still only for callers who may read the history.
  auto agent = queries.ListChangedJobs(testing::AgentCaller("lab-1"), JobQuery{}, 200);
  ASSERT_FALSE(agent.ok());
  EXPECT_EQ(agent.error().code, ErrorCode::kPermissionDenied);
  Caller nobody;
  nobody.role = Role::kNone;
  nobody.problem = "no token was given";
  auto anonymous = queries.ListChangedJobs(nobody, JobQuery{}, 200);
  ASSERT_FALSE(anonymous.ok());
  EXPECT_EQ(anonymous.error().code, ErrorCode::kUnauthenticated);

  // Four more jobs at a new level: the first of them starts one.
  std::vector<JobId> more;
  for (int job = 0; job < 4; ++job) {
    SubmitRequest r;
    r.kind = "host";
    r.op = "fully_connected_s8";
    r.cases = {{0, {1, 8, 4}}, {10, {1, 9, 4}}};
    r.iterations = 40;
    r.label = "later";
    more.push_back(RunJob(std::move(r), [&](std::uint32_t c) {
      std::vector<std::int64_t> v(40);
      for (int i = 0; i < 40; ++i) v[i] = c == 0 ? 1500 + (i * 37 + job * 11) % 21 - 10 : 500;
      return v;
    }));
  }
  auto after = queries.ListChangedJobs(caller_, JobQuery{}, 200);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(queries.changed_jobs_computed(), 3u);
  EXPECT_EQ(queries.trends_computed(), 4u) << "the new jobs are in both series";
  ASSERT_EQ(after->jobs.size(), 2u);
  EXPECT_EQ(after->jobs[0].job.id, more[0]);
  EXPECT_EQ(after->jobs[1].job.id, ids[4]);
  // The route's answer (the router keeps its own) moves on too.
  Json c = GetJson("/api/v1/changes");
  ASSERT_EQ(c["jobs"].size(), 2u);
  EXPECT_EQ(c["jobs"][0]["id"], more[0]);
}

// After a commit only the series of the jobs it wrote are computed again; the answer is the one
// computed from nothing.
TEST_F(HttpRouterTest, ChangesAfterACommitRecomputeOnlyTheSeriesOfTheJobsWritten) {
  const auto ids = RunStepSeries(
      [&](SubmitRequest r, const Values& v) { return RunJob(std::move(r), v); }, &runner_version_);
  LabQueries queries(*lab_, *store_);
  auto same_as_from_nothing = [&](const ChangedJobs& got) {
    LabQueries fresh(*lab_, *store_);
    auto want = fresh.ListChangedJobs(caller_, JobQuery{}, 200);
    ASSERT_TRUE(want.ok()) << want.error().message;
    ASSERT_EQ(got.jobs.size(), want->jobs.size());
    for (std::size_t i = 0; i < got.jobs.size(); ++i) {
      EXPECT_EQ(got.jobs[i].job.id, want->jobs[i].job.id);
      ASSERT_EQ(got.jobs[i].changes.size(), want->jobs[i].changes.size());
      for (std::size_t k = 0; k < got.jobs[i].changes.size(); ++k) {
        EXPECT_EQ(got.jobs[i].changes[k].case_id, want->jobs[i].changes[k].case_id);
        EXPECT_EQ(got.jobs[i].changes[k].change.before_job,
                  want->jobs[i].changes[k].change.before_job);
        EXPECT_EQ(got.jobs[i].changes[k].change.ratio, want->jobs[i].changes[k].change.ratio);
      }
    }
    EXPECT_EQ(got.scanned, want->scanned);
  };
  ASSERT_TRUE(queries.ListChangedJobs(caller_, JobQuery{}, 200).ok());
  ASSERT_EQ(queries.trends_computed(), 2u);

  // A write that touches no job (a board's lease): computed again, every trend kept.
  Board spare;
  spare.name = "spare-0";
  spare.kind = "host";
  spare.agent = "lab-1";
  spare.lease_until_ms = 1;
  WriteSet board_write;
  board_write.boards.push_back(spare);
  ASSERT_TRUE(store_->WriteAndWait(std::move(board_write)).ok());
  auto after_board = queries.ListChangedJobs(caller_, JobQuery{}, 200);
  ASSERT_TRUE(after_board.ok());
  EXPECT_EQ(queries.changed_jobs_computed(), 2u);
  EXPECT_EQ(queries.trends_computed(), 2u);
  same_as_from_nothing(*after_board);

  // A job of another series (another op): its one series is computed, the sweep's two are kept.
  SubmitRequest conv;
  conv.kind = "host";
  conv.op = "conv2d_s8";
  conv.cases = {{3, {1, 8, 8, 8, 8, 3, 3, 1, 1, 1, 1}}};
  conv.iterations = 40;
  RunJob(std::move(conv), [](std::uint32_t) { return std::vector<std::int64_t>(40, 700); });
  auto after_conv = queries.ListChangedJobs(caller_, JobQuery{}, 200);
  ASSERT_TRUE(after_conv.ok()) << after_conv.error().message;
  EXPECT_EQ(queries.trends_computed(), 3u);
  same_as_from_nothing(*after_conv);

  // A job of the sweep at a new level: both of its series again, the conv series kept.
  SubmitRequest r;
  r.kind = "host";
  r.op = "fully_connected_s8";
  r.cases = {{0, {1, 8, 4}}, {10, {1, 9, 4}}};
  r.iterations = 40;
  for (int job = 0; job < 4; ++job) {
    RunJob(SubmitRequest(r), [&](std::uint32_t c) {
      std::vector<std::int64_t> v(40);
      for (int i = 0; i < 40; ++i) v[i] = c == 0 ? 1500 + (i * 37 + job * 11) % 21 - 10 : 500;
      return v;
    });
  }
  auto after_step = queries.ListChangedJobs(caller_, JobQuery{}, 200);
  ASSERT_TRUE(after_step.ok());
  EXPECT_EQ(queries.trends_computed(), 5u);
  ASSERT_EQ(after_step->jobs.size(), 2u);
  EXPECT_EQ(after_step->jobs[1].job.id, ids[4]);
  same_as_from_nothing(*after_step);
}

TEST_F(HttpRouterTest, BadSeriesParametersAre400AndNameTheParameter) {
  const std::string base = "/api/v1/series?kind=host&op=fully_connected_s8";
  EXPECT_NE(BadRequest("/api/v1/series?op=fully_connected_s8&params=1,8,4").find("kind"),
            std::string::npos);
  EXPECT_NE(BadRequest("/api/v1/series?kind=host&params=1,8,4").find("op"), std::string::npos);
  EXPECT_NE(BadRequest(base).find("params: N,in_features,out_features"), std::string::npos);
  EXPECT_NE(BadRequest(base + "&params=1,8").find("3 parameters"), std::string::npos);
  EXPECT_NE(BadRequest(base + "&params=1,x,4").find("params"), std::string::npos);
  EXPECT_NE(BadRequest(base + "&params=1,8,4&case=x").find("case"), std::string::npos);
  EXPECT_NE(BadRequest(base + "&params=1,8,4&tag=cpu").find("tag"), std::string::npos);
  EXPECT_NE(BadRequest(base + "&params=1,8,4&limit=0").find("limit"), std::string::npos);
  EXPECT_NE(BadRequest(base + "&params=1,8,4&window=0").find("window"), std::string::npos);
  EXPECT_NE(BadRequest(base + "&params=1,8,4&min_step=-1").find("min_step"), std::string::npos);
  // A custom runner's series is named by its runner's file name and its case id.
  EXPECT_NE(BadRequest("/api/v1/series?kind=host&op=custom&runner=r").find("case"),
            std::string::npos);
  EXPECT_NE(BadRequest("/api/v1/series?kind=host&op=custom&case=1")
                .find("needs the runner's file name as uploaded (runner): two runners are never "
                      "one series"),
            std::string::npos);
  EXPECT_EQ(GetJson("/api/v1/series?kind=host&op=custom&case=1&runner=r")["jobs"].size(), 0u);
}

TEST_F(HttpRouterTest, BoardsShowStateHealthQueueAndTags) {
  Json boards = GetJson("/api/v1/boards")["boards"];
  ASSERT_EQ(boards.size(), 2u);
  const Json& qemu = boards[0];
  EXPECT_EQ(qemu["name"], "an547-0");
  EXPECT_EQ(qemu["kind"], "corstone300-qemu");
  EXPECT_EQ(qemu["agent"], "lab-1");
  EXPECT_EQ(qemu["state"], "idle");
  EXPECT_EQ(qemu["health"], "good");
  EXPECT_EQ(qemu["emulated"], true);
  EXPECT_EQ(qemu["tags"], Json::object());
  for (const char* key : {"current_job", "queue_length", "holder", "lease_until_ms", "note"}) {
    EXPECT_TRUE(qemu.contains(key)) << key;
  }
  const JobId running = Submit(Conv(1, 1, "corstone300-qemu"));
  Submit(Conv(1, 1, "corstone300-qemu"));
  boards = GetJson("/api/v1/boards")["boards"];
  EXPECT_EQ(boards[0]["state"], "busy");
  EXPECT_EQ(boards[0]["current_job"], running);
  EXPECT_EQ(boards[0]["queue_length"], 1);
}

TEST_F(HttpRouterTest, TheEventStreamIsSubscribedToJobAndBoardChanges) {
  auto reply = Handle(Get("/api/v1/events"));
  ASSERT_TRUE(reply.feed);
  EXPECT_EQ(reply.response.result(), status::ok);
  EXPECT_EQ(reply.response[beast_http::field::content_type], "text/event-stream");
  EXPECT_EQ(reply.response.body(), kEventStreamStart);
  const JobId id = Submit(Conv(1, 1));
  const auto events = reply.feed->TakeAll();
  const std::string text = FormatEvents(events);
  EXPECT_NE(text.find("event: job\ndata: {\"id\":" + std::to_string(id) + ",\"state\":\"queued\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"state\":\"assigned\""), std::string::npos) << text;
  EXPECT_NE(text.find("event: board\ndata: {\"name\":\"host-0\",\"kind\":\"host\","
                      "\"agent\":\"lab-1\",\"state\":\"busy\""),
            std::string::npos)
      << text;
  reply.feed->Close();
  EXPECT_FALSE(Handle(Get("/api/v1/events", beast_http::verb::head)).feed)
      << "HEAD opens no stream";
}

TEST_F(HttpRouterTest, MetricsCountJobsBoardsAndSamples) {
  RunJob(Conv(2, 5), Constant(1, 5));
  Submit(Conv(1, 1, "corstone300-qemu"));
  Submit(Conv(1, 1, "corstone300-qemu"));
  auto res = Handle(Get("/metrics")).response;
  EXPECT_EQ(res.result(), status::ok);
  EXPECT_EQ(res[beast_http::field::content_type], kPrometheusContentType);
  const std::string& text = res.body();
  for (const char* line :
       {"mculab_jobs{state=\"succeeded\"} 1\n", "mculab_jobs{state=\"assigned\"} 1\n",
        "mculab_jobs{state=\"queued\"} 1\n", "mculab_jobs{state=\"failed\"} 0\n",
        "mculab_queue_length 1\n", "mculab_samples_stored_total 10\n",
        "mculab_boards{state=\"busy\"} 1\n", "mculab_boards{state=\"idle\"} 1\n",
        "mculab_boards{state=\"offline\"} 0\n", "# TYPE mculab_samples_stored_total counter\n",
        "mculab_refused_agent_messages_total 0\n", "mculab_ingest_samples_per_second "}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
}

}  // namespace
}  // namespace mculab::server::http
