// The auth matrix: every RPC of mculab.v1.Lab and mculab.v1.AgentLink x {no token, bad
// token, revoked token, viewer, member, another member, admin, agent token, another agent's
// token} against a real in-process gRPC server and a real
// SQLite store. The table is checked against the services' descriptors: an RPC without a row
// fails the test, so a new RPC cannot ship without deciding who may call it. Also: the public
// health check, agent tokens bound to their host, and TLS (a self-signed certificate made with
// openssl here), including a client that trusts the wrong CA.
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/rpc_method.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "agent.grpc.pb.h"
#include "db/sqlite_store.h"
#include "fakes.h"
#include "lab.grpc.pb.h"
#include "server/rpc/server.h"
#include "server/service/alerts.h"
#include "server/service/notifier.h"
#include "server/service/queries.h"
#include "tests/unit/server/owned_lab.h"

namespace mculab::server::rpc {
namespace {

namespace v1 = mculab::v1;
using testing::FakeAgentChannel;
using testing::FakeClock;

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("mculab-auth-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A self-signed certificate for localhost/127.0.0.1 in dir/<name>.pem and dir/<name>.key.
bool MakeCertificate(const std::filesystem::path& dir, const std::string& name) {
  const std::string cmd =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost "
      "-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout '" +
      (dir / (name + ".key")).string() + "' -out '" + (dir / (name + ".pem")).string() +
      "' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

enum class Expect { kAllowed, kUnauthenticated, kPermissionDenied };

const char* ExpectName(Expect e) {
  switch (e) {
    case Expect::kAllowed:
      return "allowed";
    case Expect::kUnauthenticated:
      return "UNAUTHENTICATED";
    case Expect::kPermissionDenied:
      return "PERMISSION_DENIED";
  }
  return "?";
}

Expect Got(const grpc::Status& s) {
  if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED) return Expect::kUnauthenticated;
  if (s.error_code() == grpc::StatusCode::PERMISSION_DENIED) return Expect::kPermissionDenied;
  return Expect::kAllowed;  // OK, or an error about the request itself
}

// "other member" owns nothing the rows touch (the jobs are "owner"'s), like "member"; "other
// agent" holds a valid agent token of another host (it may not act as matrix-agent).
const std::vector<std::string> kCallers = {"no token", "bad token", "revoked",
                                           "viewer",   "member",    "other member",
                                           "admin",    "agent",     "other agent"};

// Who may do what, by role: "viewer reads", "member writes", "admin only", "agents only".
std::map<std::string, Expect> Least(const std::string& least) {
  std::map<std::string, Expect> m;
  m["no token"] = Expect::kUnauthenticated;
  m["bad token"] = Expect::kUnauthenticated;
  m["revoked"] = Expect::kUnauthenticated;
  const std::vector<std::string> roles = {"viewer", "member", "admin"};
  bool ok = false;
  for (const std::string& r : roles) {
    ok = ok || r == least;
    m[r] = ok ? Expect::kAllowed : Expect::kPermissionDenied;
  }
  m["other member"] = m["member"];
  m["agent"] = least == "agent" ? Expect::kAllowed : Expect::kPermissionDenied;
  m["other agent"] = Expect::kPermissionDenied;
  if (least == "agent") {
    for (const std::string& r : roles) m[r] = Expect::kPermissionDenied;
    m["other member"] = Expect::kPermissionDenied;
  }
  return m;
}

class AuthMatrixTest : public ::testing::Test {
 protected:
  void StartServer(LabConfig config = {}) {
    auto store = db::SqliteStore::Open(dir_.path() / "mculab.db");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    lab_ =
        std::make_unique<mculab::server::testing::OwnedLab>(*store_, clock_, config, dir_.path());
    ASSERT_TRUE(lab_->Start().ok());
    // The alerts as the server has them, with no webhook (nothing is posted).
    notifier_ = std::make_unique<Notifier>(NotifyOptions{}, nullptr, clock_);
    alert_queries_ = std::make_unique<LabQueries>(*lab_, *store_);
    alerts_ = std::make_unique<Alerts>(*lab_, *alert_queries_, *store_, *store_, *notifier_, clock_,
                                       AlertsOptions{});
    auto server = RpcServer::Start(*lab_, *store_, "127.0.0.1:0", alerts_.get());
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
  }

  void SetUp() override {
    if (std::string(::testing::UnitTest::GetInstance()->current_test_info()->name())
            .starts_with("Tls")) {
      return;  // starts its own server
    }
    StartServer();
    Connect(grpc::InsecureChannelCredentials());
    for (const char* role : {"viewer", "member", "admin"}) {
      auto t = lab_->accounts().AddUser(std::string("u-") + role, role);
      ASSERT_TRUE(t.ok());
      tokens_[role] = t->token;
    }
    auto other = lab_->accounts().AddUser("u-other", "member");
    ASSERT_TRUE(other.ok());
    tokens_["other member"] = other->token;
    // Revoked before its first use (a token in use is cached for up to 2 s: see
    // ARevokedTokenIsRefused and the stream tests for revocation of a token in use).
    auto revoked = lab_->accounts().AddUser("u-revoked", "admin");
    ASSERT_TRUE(revoked.ok());
    ASSERT_TRUE(lab_->accounts().Revoke(revoked->token).ok());
    tokens_["revoked"] = revoked->token;
    auto agent = lab_->accounts().AddAgent("matrix-agent");
    ASSERT_TRUE(agent.ok());
    tokens_["agent"] = agent->token;
    auto other_agent = lab_->accounts().AddAgent("other-agent");
    ASSERT_TRUE(other_agent.ok());
    tokens_["other agent"] = other_agent->token;
    tokens_["no token"] = "";
    tokens_["bad token"] = "mcl_u_0123456789012345678901234567890123456789";
    // A board (on an in-process agent) so that jobs can be submitted; jobs owned by "owner".
    v1::Register reg;
    reg.set_agent("lab-1");
    reg.add_boards()->set_name("host-0");
    reg.mutable_boards(0)->set_kind("host");
    ASSERT_TRUE(
        lab_->agents()
            .ConnectAgent(testing::AgentCaller("lab-1"), testing::RegistrationOf(reg), agent_)
            .ok());
    Caller owner;
    owner.user = "owner";
    owner.role = Role::kMember;
    auto running = lab_->jobs().Submit(owner, Job());
    auto done = lab_->jobs().Submit(owner, Job());
    ASSERT_TRUE(running.ok() && done.ok());
    running_job_ = running->id;
    done_job_ = done->id;
    ASSERT_TRUE(lab_->jobs().Cancel(owner, done_job_).ok());
  }

  void TearDown() override {
    if (lab_) lab_->Stop();
    if (server_) server_->Stop(std::chrono::seconds(1));
    if (store_) store_->Close();
  }

  void Connect(std::shared_ptr<grpc::ChannelCredentials> creds,
               const std::string& target_host = "127.0.0.1") {
    const std::string port = server_->address().substr(server_->address().rfind(':') + 1);
    channel_ = grpc::CreateChannel(target_host + ":" + port, creds);
    lab_stub_ = v1::Lab::NewStub(channel_);
    agent_stub_ = v1::AgentLink::NewStub(channel_);
  }

  std::unique_ptr<grpc::ClientContext> Context(const std::string& token) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    return ctx;
  }

  static v1::SubmitJobRequest JobProto() {
    v1::SubmitJobRequest r;
    r.set_kind("host");
    r.set_op("fully_connected_s8");
    auto* c = r.add_cases();
    c->set_id(1);
    c->add_params(1);
    c->add_params(8);
    c->add_params(4);
    r.set_iterations(1);
    return r;
  }
  static SubmitRequest Job() {
    SubmitRequest r;
    r.kind = "host";
    r.op = "fully_connected_s8";
    r.cases = {{0, {1, 8, 4}}};
    r.iterations = 1;
    return r;
  }

  // Connect as `agent_name` with `token`; the stream's outcome (OK once Registered arrived).
  grpc::Status ConnectAgent(const std::string& token, const std::string& agent_name) {
    auto ctx = Context(token);
    auto stream = agent_stub_->Connect(ctx.get());
    v1::AgentMessage m;
    m.mutable_register_()->set_agent(agent_name);
    auto* b = m.mutable_register_()->add_boards();
    b->set_name("board-of-" + agent_name);
    b->set_kind("host");
    stream->Write(m);
    v1::ServerMessage reply;
    if (stream->Read(&reply) && reply.has_registered()) {
      stream->WritesDone();
      while (stream->Read(&reply)) {
      }
      (void)stream->Finish();
      return grpc::Status::OK;
    }
    stream->WritesDone();
    return stream->Finish();
  }

  struct Row {
    std::function<grpc::Status(const std::string& token)> call;
    std::map<std::string, Expect> expect;
  };

  // Every RPC by its full name. A new RPC needs a row here (the test fails without one).
  std::map<std::string, Row> Table() {
    std::map<std::string, Row> t;
    t["mculab.v1.Lab.ListBoards"] = {[&](const std::string& tok) {
                                       v1::ListBoardsReply r;
                                       return lab_stub_->ListBoards(Context(tok).get(), {}, &r);
                                     },
                                     Least("viewer")};
    t["mculab.v1.Lab.UploadArtifact"] = {[&](const std::string& tok) {
                                           auto ctx = Context(tok);
                                           v1::ArtifactRef ref;
                                           auto w = lab_stub_->UploadArtifact(ctx.get(), &ref);
                                           v1::ArtifactChunk chunk;
                                           chunk.set_name("cases.csv");
                                           chunk.set_data("id\n1\n");
                                           chunk.set_total_size(5);
                                           w->Write(chunk);
                                           w->WritesDone();
                                           return w->Finish();
                                         },
                                         Least("member")};
    t["mculab.v1.Lab.SubmitJob"] = {[&](const std::string& tok) {
                                      v1::SubmitJobReply r;
                                      return lab_stub_->SubmitJob(Context(tok).get(), JobProto(),
                                                                  &r);
                                    },
                                    Least("member")};
    t["mculab.v1.Lab.WatchJob"] = {[&](const std::string& tok) {
                                     auto ctx = Context(tok);
                                     v1::WatchJobRequest req;
                                     req.set_id(done_job_);  // finished: the watch ends
                                     auto reader = lab_stub_->WatchJob(ctx.get(), req);
                                     v1::JobEvent e;
                                     while (reader->Read(&e)) {
                                     }
                                     return reader->Finish();
                                   },
                                   Least("viewer")};
    t["mculab.v1.Lab.GetJob"] = {[&](const std::string& tok) {
                                   v1::GetJobRequest req;
                                   req.set_id(running_job_);
                                   v1::Job r;
                                   return lab_stub_->GetJob(Context(tok).get(), req, &r);
                                 },
                                 Least("viewer")};
    t["mculab.v1.Lab.ListJobs"] = {[&](const std::string& tok) {
                                     v1::ListJobsReply r;
                                     return lab_stub_->ListJobs(Context(tok).get(), {}, &r);
                                   },
                                   Least("viewer")};
    // Someone else's job ("owner"'s): only an admin may cancel it (a member their own: the Lab's
    // unit tests).
    t["mculab.v1.Lab.CancelJob"] = {[&](const std::string& tok) {
                                      v1::CancelJobRequest req;
                                      req.set_id(running_job_);
                                      v1::Job r;
                                      return lab_stub_->CancelJob(Context(tok).get(), req, &r);
                                    },
                                    Least("admin")};
    t["mculab.v1.Lab.GetResults"] = {[&](const std::string& tok) {
                                       v1::GetResultsRequest req;
                                       req.set_id(done_job_);
                                       v1::Results r;
                                       return lab_stub_->GetResults(Context(tok).get(), req, &r);
                                     },
                                     Least("viewer")};
    // Reservations: members hold boards (another user's reservation or a busy board is an error
    // about the request, not about the caller).
    t["mculab.v1.Lab.Reserve"] = {[&](const std::string& tok) {
                                    v1::ReserveRequest req;
                                    req.set_board("host-0");
                                    req.set_duration_ms(60'000);
                                    v1::Board r;
                                    return lab_stub_->Reserve(Context(tok).get(), req, &r);
                                  },
                                  Least("member")};
    t["mculab.v1.Lab.RenewReservation"] = {[&](const std::string& tok) {
                                             v1::RenewReservationRequest req;
                                             req.set_board("host-0");
                                             req.set_duration_ms(60'000);
                                             v1::Board r;
                                             return lab_stub_->RenewReservation(Context(tok).get(),
                                                                                req, &r);
                                           },
                                           Least("member")};
    t["mculab.v1.Lab.Release"] = {[&](const std::string& tok) {
                                    v1::ReleaseRequest req;
                                    req.set_board("host-0");
                                    v1::Board r;
                                    return lab_stub_->Release(Context(tok).get(), req, &r);
                                  },
                                  Least("member")};
    t["mculab.v1.Lab.SetMaintenance"] = {[&](const std::string& tok) {
                                           v1::SetMaintenanceRequest req;
                                           req.set_board("host-0");
                                           req.set_on(false);
                                           v1::Board r;
                                           return lab_stub_->SetMaintenance(Context(tok).get(), req,
                                                                            &r);
                                         },
                                         Least("admin")};
    t["mculab.v1.Lab.BoardHistory"] = {[&](const std::string& tok) {
                                         v1::BoardHistoryRequest req;
                                         req.set_board("host-0");
                                         v1::BoardHistoryReply r;
                                         return lab_stub_->BoardHistory(Context(tok).get(), req,
                                                                        &r);
                                       },
                                       Least("viewer")};
    t["mculab.v1.Lab.ListEvents"] = {[&](const std::string& tok) {
                                       v1::ListEventsRequest req;
                                       req.set_kind("host");
                                       v1::ListEventsReply r;
                                       return lab_stub_->ListEvents(Context(tok).get(), req, &r);
                                     },
                                     Least("viewer")};
    t["mculab.v1.Lab.GetSeries"] = {[&](const std::string& tok) {
                                      v1::GetSeriesRequest req;
                                      req.set_kind("host");
                                      req.set_op("fully_connected_s8");
                                      req.set_has_params(true);
                                      for (int p : {1, 8, 4}) req.add_params(p);
                                      v1::Series r;
                                      return lab_stub_->GetSeries(Context(tok).get(), req, &r);
                                    },
                                    Least("viewer")};
    t["mculab.v1.Lab.Compare"] = {[&](const std::string& tok) {
                                    v1::CompareRequest req;
                                    req.add_ids(1);
                                    req.add_ids(2);
                                    v1::Comparison r;
                                    return lab_stub_->Compare(Context(tok).get(), req, &r);
                                  },
                                  Least("viewer")};
    // Alerts: following reads no more than a viewer may; reporting a failed gate posts, as a
    // member's submit does; unfollowing a follow that is not there is NOT_FOUND once allowed.
    t["mculab.v1.Lab.Follow"] = {[&](const std::string& tok) {
                                   v1::FollowRequest req;
                                   req.set_branch("main");
                                   v1::FollowInfo r;
                                   return lab_stub_->Follow(Context(tok).get(), req, &r);
                                 },
                                 Least("viewer")};
    t["mculab.v1.Lab.ListFollows"] = {[&](const std::string& tok) {
                                        v1::ListFollowsReply r;
                                        return lab_stub_->ListFollows(Context(tok).get(), {}, &r);
                                      },
                                      Least("viewer")};
    t["mculab.v1.Lab.Unfollow"] = {[&](const std::string& tok) {
                                     v1::UnfollowRequest req;
                                     req.set_id(999);
                                     v1::UnfollowReply r;
                                     return lab_stub_->Unfollow(Context(tok).get(), req, &r);
                                   },
                                   Least("viewer")};
    t["mculab.v1.Lab.ReportGate"] = {[&](const std::string& tok) {
                                       v1::ReportGateRequest req;
                                       req.set_job(static_cast<std::uint64_t>(done_job_));
                                       req.set_baseline(static_cast<std::uint64_t>(done_job_));
                                       req.set_summary("gate failed");
                                       v1::ReportGateReply r;
                                       return lab_stub_->ReportGate(Context(tok).get(), req, &r);
                                     },
                                     Least("member")};
    // Approving a new board is the admin's (host-0 waits for nothing: a precondition error).
    t["mculab.v1.Lab.ApproveBoard"] = {[&](const std::string& tok) {
                                         v1::ApproveBoardRequest req;
                                         req.set_board("host-0");
                                         v1::Board r;
                                         return lab_stub_->ApproveBoard(Context(tok).get(), req,
                                                                        &r);
                                       },
                                       Least("admin")};
    // Giving a board to another agent is the admin's (here to its own agent: no change).
    t["mculab.v1.Lab.AssignBoard"] = {[&](const std::string& tok) {
                                        v1::AssignBoardRequest req;
                                        req.set_board("host-0");
                                        req.set_agent("lab-1");
                                        v1::Board r;
                                        return lab_stub_->AssignBoard(Context(tok).get(), req, &r);
                                      },
                                      Least("admin")};
    // Agents fetch the custom runners and blobs of their own active runs only; admins may too (to
    // check what a job ran). Users' tokens may not read others' uploads this way, and an agent
    // holding no run that references the artifact (matrix-agent holds none) is refused whether
    // or not it exists (the Lab's unit tests show the holder's fetch).
    {
      auto who = Least("admin");
      who["agent"] = Expect::kPermissionDenied;
      t["mculab.v1.AgentLink.FetchArtifact"] = {
          [&](const std::string& tok) {
            auto ctx = Context(tok);
            v1::FetchArtifactRequest req;
            req.set_sha256(std::string(64, 'a'));  // none such: NOT_FOUND once allowed
            auto reader = agent_stub_->FetchArtifact(ctx.get(), req);
            v1::ArtifactData d;
            while (reader->Read(&d)) {
            }
            return reader->Finish();
          },
          who};
    }
    t["mculab.v1.AgentLink.Connect"] = {
        [&](const std::string& tok) { return ConnectAgent(tok, "matrix-agent"); }, Least("agent")};
    return t;
  }

  TempDir dir_;
  FakeClock clock_;
  std::unique_ptr<db::SqliteStore> store_;
  std::unique_ptr<mculab::server::testing::OwnedLab> lab_;
  std::unique_ptr<Notifier> notifier_;
  std::unique_ptr<LabQueries> alert_queries_;
  std::unique_ptr<Alerts> alerts_;
  std::unique_ptr<RpcServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Lab::Stub> lab_stub_;
  std::unique_ptr<v1::AgentLink::Stub> agent_stub_;
  std::shared_ptr<FakeAgentChannel> agent_ = std::make_shared<FakeAgentChannel>();
  std::map<std::string, std::string> tokens_;
  JobId running_job_ = 0;
  JobId done_job_ = 0;
};

TEST_F(AuthMatrixTest, EveryRpcEveryCaller) {
  auto table = Table();
  int checked = 0;
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  for (const char* service_name : {"mculab.v1.Lab", "mculab.v1.AgentLink"}) {
    const google::protobuf::ServiceDescriptor* service = pool->FindServiceByName(service_name);
    ASSERT_NE(service, nullptr) << service_name;
    for (int i = 0; i < service->method_count(); ++i) {
      const std::string name = service->method(i)->full_name();
      auto row = table.find(name);
      if (row == table.end()) {
        ADD_FAILURE() << "RPC " << name
                      << " has no row in the auth matrix: decide who may call it and add one";
        continue;
      }
      for (const std::string& who : kCallers) {
        const grpc::Status s = row->second.call(tokens_.at(who));
        const Expect want = row->second.expect.at(who);
        EXPECT_EQ(ExpectName(Got(s)), std::string(ExpectName(want)))
            << name << " as " << who << ": " << s.error_code() << " " << s.error_message();
        ++checked;
      }
      table.erase(row);
    }
  }
  for (const auto& [name, row] : table) ADD_FAILURE() << "row " << name << " names no RPC";
  EXPECT_GE(checked, 9 * 9);
}

// "lab" names the server's own health checks: nobody may be made user "lab", and a token cannot
// make a caller "lab" (the name is reserved for every kind of token).
TEST_F(AuthMatrixTest, NoTokenCanActAsTheUserLab) {
  auto user = lab_->accounts().AddUser("lab", "admin");
  ASSERT_FALSE(user.ok());
  EXPECT_NE(user.error().message.find("reserved"), std::string::npos) << user.error().message;
  auto agent = lab_->accounts().AddAgent("lab");
  if (agent.ok()) {
    // An agent named "lab" is only good for the agent link: it cannot submit as "lab".
    v1::SubmitJobReply r;
    grpc::Status s = lab_stub_->SubmitJob(Context(agent->token).get(), JobProto(), &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  }
  // Jobs a member submits carry the member's name, never "lab".
  v1::SubmitJobReply r;
  ASSERT_TRUE(lab_stub_->SubmitJob(Context(tokens_["member"]).get(), JobProto(), &r).ok());
  v1::GetJobRequest req;
  req.set_id(r.id());
  v1::Job job;
  ASSERT_TRUE(lab_stub_->GetJob(Context(tokens_["member"]).get(), req, &job).ok());
  EXPECT_EQ(job.user(), "u-member");
}

TEST_F(AuthMatrixTest, RefusalsSayWhyAndWhatToDo) {
  v1::ListBoardsReply r;
  grpc::Status none = lab_stub_->ListBoards(Context("").get(), {}, &r);
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(none.error_message().find("no token was given"), std::string::npos)
      << none.error_message();
  grpc::Status agent = lab_stub_->ListBoards(Context(tokens_["agent"]).get(), {}, &r);
  EXPECT_NE(agent.error_message().find("only good for the agent link"), std::string::npos)
      << agent.error_message();
  v1::SubmitJobReply sr;
  grpc::Status viewer = lab_stub_->SubmitJob(Context(tokens_["viewer"]).get(), JobProto(), &sr);
  EXPECT_EQ(viewer.error_message(), "submitting a job needs the member role; u-viewer is viewer");
  grpc::Status user = ConnectAgent(tokens_["admin"], "matrix-agent");
  EXPECT_NE(user.error_message().find("needs an agent token"), std::string::npos)
      << user.error_message();
}

TEST_F(AuthMatrixTest, AnAgentTokenIsBoundToItsHost) {
  grpc::Status other = ConnectAgent(tokens_["agent"], "someone-else");
  EXPECT_EQ(other.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(other.error_message().find("belongs to agent matrix-agent, not someone-else"),
            std::string::npos)
      << other.error_message();
  EXPECT_TRUE(ConnectAgent(tokens_["agent"], "matrix-agent").ok());
}

TEST_F(AuthMatrixTest, ARevokedTokenIsRefused) {
  v1::ListBoardsReply r;
  ASSERT_TRUE(lab_stub_->ListBoards(Context(tokens_["member"]).get(), {}, &r).ok());
  ASSERT_TRUE(lab_->accounts().Revoke(tokens_["member"]).ok());
  grpc::Status s = lab_stub_->ListBoards(Context(tokens_["member"]).get(), {}, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(s.error_message().find("revoked"), std::string::npos) << s.error_message();
}

// grpc.health.v1.Health/Check, called without a token: SERVING (the reply is field 1 = 1).
grpc::Status HealthCheck(grpc::Channel& channel, std::string* reply_bytes) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  const grpc::internal::RpcMethod method("/grpc.health.v1.Health/Check",
                                         grpc::internal::RpcMethod::NORMAL_RPC);
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1);
  grpc::ByteBuffer response;
  grpc::Status s = grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
      &channel, method, &ctx, request, &response);
  std::vector<grpc::Slice> slices;
  if (s.ok() && response.Dump(&slices).ok()) {
    for (const grpc::Slice& sl : slices) {
      reply_bytes->append(reinterpret_cast<const char*>(sl.begin()), sl.size());
    }
  }
  return s;
}

TEST_F(AuthMatrixTest, TheHealthCheckNeedsNoToken) {
  std::string reply;
  grpc::Status s = HealthCheck(*channel_, &reply);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(reply, std::string("\x08\x01", 2));  // status: SERVING
}

TEST_F(AuthMatrixTest, TlsWithTheRightCaWorksAndAWrongOrMissingCaFailsClearly) {
  ASSERT_TRUE(MakeCertificate(dir_.path(), "server")) << "openssl is needed for this test";
  ASSERT_TRUE(MakeCertificate(dir_.path(), "other"));
  LabConfig config;
  config.tls_cert = dir_.path() / "server.pem";
  config.tls_key = dir_.path() / "server.key";
  StartServer(config);  // SetUp started nothing for this test
  ASSERT_TRUE(server_->tls());
  auto admin = lab_->accounts().AddUser("tls-admin", "admin");
  ASSERT_TRUE(admin.ok());

  grpc::SslCredentialsOptions right;
  right.pem_root_certs = ReadAll(dir_.path() / "server.pem");
  Connect(grpc::SslCredentials(right), "localhost");
  v1::ListBoardsReply r;
  grpc::Status ok = lab_stub_->ListBoards(Context(admin->token).get(), {}, &r);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  std::string health;
  EXPECT_TRUE(HealthCheck(*channel_, &health).ok());

  grpc::SslCredentialsOptions wrong;
  wrong.pem_root_certs = ReadAll(dir_.path() / "other.pem");
  Connect(grpc::SslCredentials(wrong), "localhost");
  grpc::Status bad = lab_stub_->ListBoards(Context(admin->token).get(), {}, &r);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::UNAVAILABLE) << bad.error_message();

  Connect(grpc::InsecureChannelCredentials());
  grpc::Status plain = lab_stub_->ListBoards(Context(admin->token).get(), {}, &r);
  EXPECT_EQ(plain.error_code(), grpc::StatusCode::UNAVAILABLE) << plain.error_message();
}

TEST(TlsConfigTest, AMissingCertificateFileIsAClearStartError) {
  TempDir dir;
  auto store = db::SqliteStore::Open(dir.path() / "mculab.db");
  ASSERT_TRUE(store.ok());
  FakeClock clock;
  LabConfig config;
  config.tls_cert = dir.path() / "nope.pem";
  config.tls_key = dir.path() / "nope.key";
  mculab::server::testing::OwnedLab lab(**store, clock, config, dir.path());
  ASSERT_TRUE(lab.Start().ok());
  auto server = RpcServer::Start(lab, **store, "127.0.0.1:0");
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.error().message.find("cannot read tls_cert"), std::string::npos)
      << server.error().message;
  lab.Stop();
  (*store)->Close();
}

}  // namespace
}  // namespace mculab::server::rpc
