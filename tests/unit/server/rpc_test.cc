// The gRPC services in-process: a real server on a loopback port, the Lab on a real store, and
// the generated stubs as client and agent. Checks translation and error mapping, not use cases.
#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <filesystem>
#include <random>

#include "agent.grpc.pb.h"
#include "db/sqlite_store.h"
#include "fakes.h"
#include "lab.grpc.pb.h"
#include "server/rpc/agent_link.h"
#include "server/rpc/connection_guard.h"
#include "server/rpc/lab_service.h"
#include "server/rpc/server.h"
#include "server/rpc/status.h"
#include "tests/unit/server/owned_lab.h"

namespace mculab::server::rpc {
namespace {

namespace v1 = mculab::v1;

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("mculab-rpc-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Tokens the fixture made: client calls carry the admin's, agent streams their agent's.
Accounts* g_accounts = nullptr;
std::string g_admin_token;

class AdminContext : public grpc::ClientContext {
 public:
  AdminContext() { AddMetadata("authorization", "Bearer " + g_admin_token); }
};

void AddAgentToken(grpc::ClientContext& ctx, const std::string& agent) {
  auto t = g_accounts->AddAgent(agent);
  ASSERT_TRUE(t.ok());
  ctx.AddMetadata("authorization", "Bearer " + t->token);
}

// One agent's stream, driven by the test.
class AgentStream {
 public:
  AgentStream(v1::AgentLink::Stub& stub, const std::string& name,
              const std::vector<std::pair<std::string, std::string>>& boards) {
    AddAgentToken(ctx_, name);
    stream_ = stub.Connect(&ctx_);
    v1::AgentMessage m;
    m.mutable_register_()->set_agent(name);
    for (const auto& [board, kind] : boards) {
      auto* b = m.mutable_register_()->add_boards();
      b->set_name(board);
      b->set_kind(kind);
    }
    EXPECT_TRUE(stream_->Write(m));
    v1::ServerMessage reply;
    EXPECT_TRUE(stream_->Read(&reply));
    EXPECT_TRUE(reply.has_registered());
  }
  bool Write(const v1::AgentMessage& m) { return stream_->Write(m); }
  // The next message of the kind `pred` accepts, skipping others (acks, ...).
  v1::ServerMessage ReadUntil(const std::function<bool(const v1::ServerMessage&)>& pred) {
    v1::ServerMessage m;
    while (stream_->Read(&m)) {
      if (pred(m)) return m;
    }
    ADD_FAILURE() << "the stream ended";
    return m;
  }
  // Reads until the server ends the stream (without half-closing first).
  grpc::Status WaitForEnd() {
    v1::ServerMessage m;
    while (stream_->Read(&m)) {
    }
    return stream_->Finish();
  }
  grpc::Status Close() {
    stream_->WritesDone();
    v1::ServerMessage m;
    while (stream_->Read(&m)) {
    }
    return stream_->Finish();
  }

 private:
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::ServerMessage>> stream_;
};

class RpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = db::SqliteStore::Open(dir_.path() / "mculab.db");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    config_.max_artifact_bytes = 1000;
    config_.health_checks = false;  // a health check would add a job of its own
    lab_ =
        std::make_unique<mculab::server::testing::OwnedLab>(*store_, clock_, config_, dir_.path());
    ASSERT_TRUE(lab_->Start().ok());
    g_accounts = &lab_->accounts();
    auto admin = lab_->accounts().AddUser("admin", "admin");
    ASSERT_TRUE(admin.ok());
    g_admin_token = admin->token;
    StartServer();
  }

  void TearDown() override {
    lab_->Stop();
    server_->Stop(std::chrono::seconds(1));
    store_->Close();
  }

  static v1::SubmitJobRequest FcJob(std::uint32_t iterations = 2) {
    v1::SubmitJobRequest r;
    r.set_kind("host");
    r.set_op("fully_connected_s8");
    auto* c = r.add_cases();
    c->set_id(5);
    c->add_params(1);
    c->add_params(8);
    c->add_params(4);
    r.set_iterations(iterations);
    return r;
  }

  grpc::Status Submit(const v1::SubmitJobRequest& r, v1::SubmitJobReply* reply) {
    AdminContext ctx;
    return lab_stub_->SubmitJob(&ctx, r, reply);
  }

  // The server on the fixture's Lab, and the stubs on one channel to it.
  void StartServer() {
    auto server = RpcServer::Start(*lab_, *store_, "127.0.0.1:0");
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
    auto channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
    lab_stub_ = v1::Lab::NewStub(channel);
    agent_stub_ = v1::AgentLink::NewStub(channel);
  }

  // Replaces the fixture's Lab and server by ones with config_ (the store stays).
  void RestartWithConfig() {
    lab_->Stop();
    server_->Stop(std::chrono::seconds(1));
    server_.reset();
    lab_.reset();
    lab_ =
        std::make_unique<mculab::server::testing::OwnedLab>(*store_, clock_, config_, dir_.path());
    ASSERT_TRUE(lab_->Start().ok());
    g_accounts = &lab_->accounts();
    StartServer();
  }

  TempDir dir_;
  testing::FakeClock clock_;
  LabConfig config_;
  std::unique_ptr<db::SqliteStore> store_;
  std::unique_ptr<mculab::server::testing::OwnedLab> lab_;
  std::unique_ptr<RpcServer> server_;
  std::unique_ptr<v1::Lab::Stub> lab_stub_;
  std::unique_ptr<v1::AgentLink::Stub> agent_stub_;
};

TEST_F(RpcTest, JobGoesFromSubmitThroughTheAgentStreamToResults) {
  AgentStream agent(*agent_stub_, "lab-1", {{"host-0", "host"}});
  {
    AdminContext ctx;
    v1::ListBoardsReply boards;
    ASSERT_TRUE(lab_stub_->ListBoards(&ctx, {}, &boards).ok());
    ASSERT_EQ(boards.boards_size(), 1);
    EXPECT_EQ(boards.boards(0).state(), "idle");
    EXPECT_EQ(boards.boards(0).health(), "good");
  }
  v1::SubmitJobReply reply;
  ASSERT_TRUE(Submit(FcJob(), &reply).ok());
  EXPECT_EQ(reply.state(), "assigned");
  v1::ServerMessage assign = agent.ReadUntil([](auto& m) { return m.has_assign(); });
  const std::uint64_t run = assign.assign().run_id();
  EXPECT_EQ(assign.assign().job_id(), reply.id());

  AdminContext watch_ctx;
  v1::WatchJobRequest watch_req;
  watch_req.set_id(reply.id());
  auto watch = lab_stub_->WatchJob(&watch_ctx, watch_req);

  v1::AgentMessage m;
  m.mutable_run_state()->set_run_id(run);
  m.mutable_run_state()->set_state("running");
  ASSERT_TRUE(agent.Write(m));
  m.Clear();
  m.mutable_run_started()->set_run_id(run);
  m.mutable_run_started()->set_timer_unit("cycles");
  m.mutable_run_started()->set_emulated(true);
  m.mutable_run_started()->add_counters("instructions");
  m.mutable_run_started()->set_seed(42);
  ASSERT_TRUE(agent.Write(m));
  m.Clear();
  auto* batch = m.mutable_batch();
  batch->set_run_id(run);
  batch->set_sequence(0);
  for (std::uint32_t i = 0; i < 2; ++i) {
    auto* s = batch->add_samples();
    s->set_iteration(i);
    s->set_value(10 + 10 * i);
    auto* c = batch->add_samples();
    c->set_iteration(i);
    c->set_metric(1);
    c->set_value(500);
  }
  ASSERT_TRUE(agent.Write(m));
  m.Clear();
  m.mutable_case_done()->set_run_id(run);
  m.mutable_case_done()->set_checksum_ok(true);
  ASSERT_TRUE(agent.Write(m));
  m.Clear();
  m.mutable_run_finished()->set_run_id(run);
  m.mutable_run_finished()->set_outcome(v1::RunFinished::SUCCEEDED);
  m.mutable_run_finished()->set_batches_sent(1);
  ASSERT_TRUE(agent.Write(m));
  v1::ServerMessage ack = agent.ReadUntil([](auto& x) { return x.has_ack(); });
  EXPECT_EQ(ack.ack().run_id(), run);
  agent.ReadUntil([](auto& x) { return x.has_run_closed(); });

  v1::JobEvent event;
  std::string last;
  while (watch->Read(&event)) last = event.state();
  EXPECT_TRUE(watch->Finish().ok());
  EXPECT_EQ(last, "succeeded");

  AdminContext ctx;
  v1::GetResultsRequest req;
  req.set_id(reply.id());
  req.set_include_samples(true);
  v1::Results results;
  ASSERT_TRUE(lab_stub_->GetResults(&ctx, req, &results).ok());
  EXPECT_EQ(results.job().state(), "succeeded");
  EXPECT_EQ(results.job().progress_done(), 2u);
  EXPECT_EQ(results.job().progress_total(), 2u);
  EXPECT_EQ(results.provenance().board(), "host-0");
  EXPECT_EQ(results.provenance().agent(), "lab-1");
  EXPECT_TRUE(results.provenance().emulated());
  ASSERT_EQ(results.provenance().counters_size(), 1);
  EXPECT_EQ(results.provenance().counters(0), "instructions");
  EXPECT_EQ(results.provenance().seed(), 42u);
  // One row per case (the timer), so the CLI's table and CSV export list each case once.
  ASSERT_EQ(results.cases_size(), 1);
  EXPECT_EQ(results.cases(0).case_id(), 5);
  EXPECT_EQ(results.cases(0).unit(), "cycles");
  EXPECT_EQ(results.cases(0).n(), 2u);
  EXPECT_DOUBLE_EQ(results.cases(0).median(), 15);
  EXPECT_TRUE(results.cases(0).checksum_ok());
  ASSERT_EQ(results.counters_size(), 1);
  EXPECT_EQ(results.counters(0).case_id(), 5);
  EXPECT_EQ(results.counters(0).metric(), "instructions");
  EXPECT_DOUBLE_EQ(results.counters(0).median(), 500);
  ASSERT_EQ(results.samples_size(), 2);
  EXPECT_EQ(results.samples(0).metric(), "cycles");
  EXPECT_EQ(results.samples(0).values_size(), 2);
  EXPECT_EQ(results.param_names_size(), 3);
  EXPECT_TRUE(agent.Close().ok());
}

TEST_F(RpcTest, ServiceErrorsBecomeTheMatchingGrpcCodes) {
  AgentStream agent(*agent_stub_, "lab-1", {{"host-0", "host"}});
  v1::SubmitJobReply reply;
  v1::SubmitJobRequest bad_op = FcJob();
  bad_op.set_op("nope");
  grpc::Status s = Submit(bad_op, &reply);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("unknown op 'nope'"), std::string::npos);
  v1::SubmitJobRequest bad_kind = FcJob();
  bad_kind.set_kind("nucleo");
  EXPECT_EQ(Submit(bad_kind, &reply).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  AdminContext ctx;
  v1::GetJobRequest get;
  get.set_id(99);
  v1::Job job;
  EXPECT_EQ(lab_stub_->GetJob(&ctx, get, &job).error_code(), grpc::StatusCode::NOT_FOUND);
  AdminContext watch_ctx;
  v1::WatchJobRequest watch_req;
  watch_req.set_id(99);
  auto watch = lab_stub_->WatchJob(&watch_ctx, watch_req);
  v1::JobEvent e;
  EXPECT_FALSE(watch->Read(&e));
  EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(RpcTest, BusyPortIsAnErrorThatSaysWhy) {
  auto second = RpcServer::Start(*lab_, *store_, server_->address());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(second.error().message,
            "cannot listen on " + server_->address() + ": Address already in use");
  auto bad = RpcServer::Start(*lab_, *store_, "no-port");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(RpcTest, EveryErrorCodeHasItsGrpcCode) {
  EXPECT_EQ(ToGrpcCode(ErrorCode::kInvalidArgument), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(ToGrpcCode(ErrorCode::kNotFound), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(ToGrpcCode(ErrorCode::kAlreadyExists), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(ToGrpcCode(ErrorCode::kFailedPrecondition), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(ToGrpcCode(ErrorCode::kResourceExhausted), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(ToGrpcCode(ErrorCode::kUnauthenticated), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(ToGrpcCode(ErrorCode::kPermissionDenied), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(ToGrpcCode(ErrorCode::kUnavailable), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(ToGrpcCode(ErrorCode::kDataLoss), grpc::StatusCode::DATA_LOSS);
  EXPECT_EQ(ToGrpcCode(ErrorCode::kInternal), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(ToGrpcCode(ErrorCode::kCancelled), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(ToGrpcCode(ErrorCode::kDeadlineExceeded), grpc::StatusCode::DEADLINE_EXCEEDED);
}

TEST_F(RpcTest, ArtifactUploadedInChunksIsStoredByHashAndOversizeIsResourceExhausted) {
  {
    AdminContext ctx;
    v1::ArtifactRef ref;
    auto writer = lab_stub_->UploadArtifact(&ctx, &ref);
    v1::ArtifactChunk chunk;
    chunk.set_name("cases.csv");
    chunk.set_total_size(8);
    chunk.set_data("id,N\n");
    ASSERT_TRUE(writer->Write(chunk));
    chunk.Clear();
    chunk.set_data("0,1");
    ASSERT_TRUE(writer->Write(chunk));
    writer->WritesDone();
    ASSERT_TRUE(writer->Finish().ok());
    EXPECT_EQ(ref.size(), 8u);
    EXPECT_EQ(ref.sha256(), Sha256Hex(std::string_view("id,N\n0,1")));
  }
  {
    AdminContext ctx;
    v1::ArtifactRef ref;
    auto writer = lab_stub_->UploadArtifact(&ctx, &ref);
    v1::ArtifactChunk chunk;
    chunk.set_name("huge.elf");
    chunk.set_data(std::string(600, 'x'));
    writer->Write(chunk);
    chunk.Clear();
    chunk.set_data(std::string(600, 'x'));
    writer->Write(chunk);
    writer->WritesDone();
    grpc::Status s = writer->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_NE(s.error_message().find("max_artifact_bytes"), std::string::npos);
  }
}

TEST_F(RpcTest, AgentStreamMustStartWithRegister) {
  grpc::ClientContext ctx;
  AddAgentToken(ctx, "lab-1");
  auto stream = agent_stub_->Connect(&ctx);
  v1::AgentMessage m;
  m.mutable_heartbeat();
  stream->Write(m);
  stream->WritesDone();
  v1::ServerMessage reply;
  EXPECT_FALSE(stream->Read(&reply));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(RpcTest, ClosedAgentStreamRequeuesItsJobAndTakesTheBoardOffline) {
  auto agent = std::make_unique<AgentStream>(
      *agent_stub_, "lab-1", std::vector<std::pair<std::string, std::string>>{{"host-0", "host"}});
  v1::SubmitJobReply reply;
  ASSERT_TRUE(Submit(FcJob(), &reply).ok());
  agent->ReadUntil([](auto& m) { return m.has_assign(); });
  AdminContext watch_ctx;
  v1::WatchJobRequest watch_req;
  watch_req.set_id(reply.id());
  auto watch = lab_stub_->WatchJob(&watch_ctx, watch_req);
  v1::JobEvent e;
  ASSERT_TRUE(watch->Read(&e));
  EXPECT_EQ(e.state(), "assigned");
  EXPECT_TRUE(agent->Close().ok());
  ASSERT_TRUE(watch->Read(&e));
  EXPECT_EQ(e.state(), "queued");
  EXPECT_NE(e.message().find("disconnected"), std::string::npos) << e.message();
  watch_ctx.TryCancel();
  while (watch->Read(&e)) {
  }
  EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::CANCELLED);
  AdminContext ctx;
  v1::ListBoardsReply boards;
  ASSERT_TRUE(lab_stub_->ListBoards(&ctx, {}, &boards).ok());
  EXPECT_EQ(boards.boards(0).state(), "offline");
  EXPECT_EQ(boards.boards(0).health(), "unknown");
  EXPECT_EQ(boards.boards(0).queue_length(), 1u);
}

TEST_F(RpcTest, SilentAgentIsHungUpAfterTheHeartbeatTimeoutAndMayRegisterAgain) {
  AgentStream agent(*agent_stub_, "lab-1", {{"host-0", "host"}});
  v1::SubmitJobReply reply;
  ASSERT_TRUE(Submit(FcJob(), &reply).ok());
  agent.ReadUntil([](auto& m) { return m.has_assign(); });
  // Nothing from the agent for the timeout (3 x heartbeat_ms): the server ends its stream.
  clock_.Advance(std::chrono::milliseconds(config_.HeartbeatTimeoutMs()));
  EXPECT_EQ(agent.WaitForEnd().error_code(), grpc::StatusCode::CANCELLED);
  AdminContext ctx;
  v1::ListBoardsReply boards;
  ASSERT_TRUE(lab_stub_->ListBoards(&ctx, {}, &boards).ok());
  EXPECT_EQ(boards.boards(0).state(), "offline");
  EXPECT_EQ(boards.boards(0).health(), "unknown");
  // The agent, still alive, registers again and gets the requeued job.
  AgentStream again(*agent_stub_, "lab-1", {{"host-0", "host"}});
  v1::ServerMessage assign = again.ReadUntil([](auto& m) { return m.has_assign(); });
  EXPECT_EQ(assign.assign().job_id(), reply.id());
}

TEST_F(RpcTest, CancelOverGrpcReturnsTheCancelledJob) {
  AgentStream agent(*agent_stub_, "lab-1", {{"host-0", "host"}});
  v1::SubmitJobReply reply;
  ASSERT_TRUE(Submit(FcJob(), &reply).ok());
  AdminContext ctx;
  v1::CancelJobRequest req;
  req.set_id(reply.id());
  v1::Job job;
  ASSERT_TRUE(lab_stub_->CancelJob(&ctx, req, &job).ok());
  EXPECT_EQ(job.state(), "cancelled");
  v1::ServerMessage cancel = agent.ReadUntil([](auto& m) { return m.has_cancel(); });
  EXPECT_EQ(cancel.cancel().reason(), "cancelled by admin");  // the token's user
  AdminContext list_ctx;
  v1::ListJobsRequest list;
  list.set_state("cancelled");
  v1::ListJobsReply jobs;
  ASSERT_TRUE(lab_stub_->ListJobs(&list_ctx, list, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 1);
  EXPECT_EQ(jobs.jobs(0).id(), reply.id());
  EXPECT_EQ(jobs.total(), 1u);
  EXPECT_EQ(jobs.limit(), 50u) << "limit 0 asks for the default page";
  EXPECT_FALSE(jobs.jobs(0).measured().empty());
}

// ---- abuse: streams without a role, stalled uploads, revoked tokens ----

TEST_F(RpcTest, AnUploadWithoutATokenIsRefusedBeforeTheServerReadsAnything) {
  // The client opens the stream and sends nothing: a server that read first would wait for a
  // chunk until the client's deadline.
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  v1::ArtifactRef ref;
  auto writer = lab_stub_->UploadArtifact(&ctx, &ref);
  grpc::Status s = writer->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
}

TEST_F(RpcTest, AViewersUploadIsRefusedBeforeTheServerReadsAnything) {
  auto viewer = lab_->accounts().AddUser("watcher", "viewer");
  ASSERT_TRUE(viewer.ok());
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  ctx.AddMetadata("authorization", "Bearer " + viewer->token);
  v1::ArtifactRef ref;
  auto writer = lab_stub_->UploadArtifact(&ctx, &ref);
  grpc::Status s = writer->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
}

TEST(RpcUploadDeadline, AStalledUploadIsCancelledAtTheServersUploadTimeout) {
  TempDir dir;
  auto store = db::SqliteStore::Open(dir.path() / "mculab.db");
  ASSERT_TRUE(store.ok());
  testing::FakeClock clock;
  LabConfig config;
  config.upload_timeout_s = 1;
  mculab::server::testing::OwnedLab lab(**store, clock, config, dir.path());
  ASSERT_TRUE(lab.Start().ok());
  auto member = lab.accounts().AddUser("slow", "member");
  ASSERT_TRUE(member.ok());
  auto server = RpcServer::Start(lab, **store, "127.0.0.1:0");
  ASSERT_TRUE(server.ok());
  auto stub = v1::Lab::NewStub(
      grpc::CreateChannel((*server)->address(), grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    ctx.AddMetadata("authorization", "Bearer " + member->token);
    v1::ArtifactRef ref;
    auto writer = stub->UploadArtifact(&ctx, &ref);
    v1::ArtifactChunk chunk;
    chunk.set_name("cases.csv");
    chunk.set_data("id,N\n");
    ASSERT_TRUE(writer->Write(chunk));
    // Never half-closes: only the server's own deadline ends the call before the client's.
    grpc::Status s = writer->Finish();
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  }
  lab.Stop();
  (*server)->Stop(std::chrono::seconds(1));
  (*store)->Close();
}

TEST_F(RpcTest, RevokingAWatchersTokenEndsItsWatchJobStream) {
  AgentStream agent(*agent_stub_, "lab-1", {{"host-0", "host"}});
  v1::SubmitJobReply submitted;
  ASSERT_TRUE(Submit(FcJob(), &submitted).ok());
  auto viewer = lab_->accounts().AddUser("watcher", "viewer");
  ASSERT_TRUE(viewer.ok());
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  ctx.AddMetadata("authorization", "Bearer " + viewer->token);
  v1::WatchJobRequest req;
  req.set_id(submitted.id());
  auto reader = lab_stub_->WatchJob(&ctx, req);
  v1::JobEvent e;
  ASSERT_TRUE(reader->Read(&e));  // the job's state now: the stream is open
  ASSERT_TRUE(lab_->accounts().Revoke(viewer->token).ok());
  while (reader->Read(&e)) {
  }
  grpc::Status s = reader->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
  EXPECT_NE(s.error_message().find("revoked"), std::string::npos) << s.error_message();
}

TEST_F(RpcTest, RevokingAnAgentsTokenEndsItsLinkAndTakesItsBoardsOffline) {
  grpc::ClientContext ctx;
  auto token = lab_->accounts().AddAgent("lab-r");
  ASSERT_TRUE(token.ok());
  ctx.AddMetadata("authorization", "Bearer " + token->token);
  auto stream = agent_stub_->Connect(&ctx);
  v1::AgentMessage m;
  m.mutable_register_()->set_agent("lab-r");
  auto* b = m.mutable_register_()->add_boards();
  b->set_name("host-r");
  b->set_kind("host");
  ASSERT_TRUE(stream->Write(m));
  v1::ServerMessage reply;
  ASSERT_TRUE(stream->Read(&reply));
  ASSERT_TRUE(reply.has_registered());
  ASSERT_TRUE(lab_->accounts().Revoke(token->token).ok());
  while (stream->Read(&reply)) {
  }
  EXPECT_FALSE(stream->Finish().ok());
  auto boards = lab_->boards().ListBoards(Caller{});
  ASSERT_TRUE(boards.ok());
  for (const auto& v : *boards) {
    if (v.board.name == "host-r") {
      EXPECT_EQ(v.board.state, BoardState::kOffline);
    }
  }
}

}  // namespace
}  // namespace mculab::server::rpc

namespace mculab::server::rpc {
namespace {

// grpc_max_concurrent_streams (config) caps the streams of one connection: with 2, two WatchJob
// streams are open and a third on the same connection is not started (its deadline passes
// without a first event) until one of them ends; then a new one starts at once.
TEST_F(RpcTest, StreamsPerConnectionAreCappedByTheConfig) {
  config_.grpc_max_concurrent_streams = 2;
  RestartWithConfig();

  // The agent on a connection of its own (not a shared subchannel), so that its stream does not
  // count against the cap.
  grpc::ChannelArguments own_connection;
  own_connection.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto agent_channel = grpc::CreateCustomChannel(
      server_->address(), grpc::InsecureChannelCredentials(), own_connection);
  auto agent_stub = v1::AgentLink::NewStub(agent_channel);
  AgentStream agent(*agent_stub, "lab-1", {{"host-0", "host"}});
  v1::SubmitJobReply submitted;
  const grpc::Status st = Submit(FcJob(), &submitted);
  ASSERT_TRUE(st.ok()) << st.error_code() << " " << st.error_message();
  v1::WatchJobRequest req;
  req.set_id(submitted.id());
  std::vector<std::unique_ptr<AdminContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::JobEvent>>> open;
  for (int i = 0; i < 2; ++i) {
    contexts.push_back(std::make_unique<AdminContext>());
    open.push_back(lab_stub_->WatchJob(contexts.back().get(), req));
    v1::JobEvent e;
    ASSERT_TRUE(open.back()->Read(&e)) << "stream " << i;
  }
  {
    AdminContext third;
    third.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    auto reader = lab_stub_->WatchJob(&third, req);
    v1::JobEvent e;
    EXPECT_FALSE(reader->Read(&e)) << "a third stream started on a connection capped at 2";
    EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  contexts[0]->TryCancel();
  (void)open[0]->Finish();
  AdminContext fourth;
  auto reader = lab_stub_->WatchJob(&fourth, req);
  v1::JobEvent e;
  EXPECT_TRUE(reader->Read(&e)) << "a stream ended, so a new one must start";
  fourth.TryCancel();
  (void)reader->Finish();
  contexts[1]->TryCancel();
  (void)open[1]->Finish();
}

}  // namespace
}  // namespace mculab::server::rpc

namespace mculab::server::rpc {
namespace {

TEST(PeerKey, NamesTheSocketAsTheGuardDoes) {
  EXPECT_EQ(PeerKey("ipv4:127.0.0.1:5000"), "127.0.0.1:5000");
  EXPECT_EQ(PeerKey("ipv6:%5B::1%5D:5000"), "[::1]:5000");
  EXPECT_EQ(PeerKey("ipv6:[::1]:5000"), "[::1]:5000");
  EXPECT_EQ(PeerKey("unix:/tmp/s"), "");
}

// Whether a plain TCP connection to `address` that sends nothing is closed by the server within
// `seconds`.
bool ClosedWithin(const std::string& address, int seconds) {
  const auto colon = address.rfind(':');
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  bool closed = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
    char buf[256];
    ssize_t n;
    while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) {
    }
    closed = n == 0 || errno == ECONNRESET;
  }
  ::close(fd);
  return closed;
}

TEST_F(RpcTest, AConnectionWithoutAnAuthenticatedCallIsClosedAtTheAuthTimeout) {
  config_.grpc_auth_timeout_ms = 300;
  RestartWithConfig();
  AdminContext first;
  v1::ListBoardsReply boards;
  ASSERT_TRUE(lab_stub_->ListBoards(&first, {}, &boards).ok());

  EXPECT_TRUE(ClosedWithin(server_->address(), 5)) << "a socket that sends nothing is ended";
  AdminContext later;  // the authenticated connection outlives the timeout
  EXPECT_TRUE(lab_stub_->ListBoards(&later, {}, &boards).ok());
  EXPECT_EQ(server_->restarts(), 0);
}

}  // namespace
}  // namespace mculab::server::rpc
