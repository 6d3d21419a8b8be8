// AgentLink against an in-process fake of the server's side of proto/agent.proto, over loopback
// gRPC, with fake boards.
#include "agent/link/agent_link.h"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <set>
#include <thread>

#include "agent.grpc.pb.h"
#include "agent/boards/fake_board.h"
#include "agent/io/fake_probe_lister.h"
#include "agent/io/probe_watcher.h"
#include "agent/io/temp_dir.h"
#include "test_workloads.h"

namespace mculab::agent {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// The server's side: records what the agent sends, acknowledges batches when told to, and lets
// the test push messages and drop the stream.
class FakeServer final : public v1::AgentLink::Service {
 public:
  grpc::Status Connect(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>* stream) override {
    {
      std::lock_guard lock(mu_);
      if (refuse) {
        ++refused;
        cv_.notify_all();
        return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is away (test)");
      }
      ctx_ = ctx;
      stream_ = stream;
    }
    v1::AgentMessage m;
    for (;;) {
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !stop_reading; });
      }
      if (!stream->Read(&m)) break;
      std::unique_lock lock(mu_);
      if (m.has_register_()) {
        registers.push_back(m.register_());
        v1::ServerMessage r;
        r.mutable_registered()->set_agent(m.register_().agent());
        r.mutable_registered()->set_heartbeat_ms(50);
        WriteLocked(r);
      }
      if (m.has_heartbeat()) ++heartbeats;
      if (m.has_heartbeat() && m.heartbeat().stopping()) stopping_seen = true;
      if (m.has_run_started()) started.push_back(m.run_started());
      if (m.has_case_done()) cases.push_back(m.case_done());
      if (m.has_batch()) {
        batches_received.push_back(m.batch());
        auto key = std::make_pair(m.batch().run_id(), m.batch().sequence());
        if (stored.count(key) == 0) stored[key] = m.batch().SerializeAsString();
        if (ack) {
          v1::ServerMessage a;
          a.mutable_ack()->set_run_id(m.batch().run_id());
          a.mutable_ack()->set_sequence(m.batch().sequence());
          WriteLocked(a);
        }
      }
      if (m.has_board_status()) {
        statuses.push_back(m.board_status());
        order.push_back("status " + m.board_status().board() + ": " + m.board_status().offline());
      }
      if (m.has_run_finished()) {
        finished.push_back(m.run_finished());
        stored_at_finish.push_back(stored.size());
        order.push_back("finished " + std::to_string(m.run_finished().run_id()));
        if (close_runs) {
          v1::ServerMessage c;
          c.mutable_run_closed()->set_run_id(m.run_finished().run_id());
          WriteLocked(c);
        }
      }
      cv_.notify_all();
    }
    std::lock_guard lock(mu_);
    stream_ = nullptr;
    ctx_ = nullptr;
    ++disconnects;
    cv_.notify_all();
    return grpc::Status::OK;
  }

  void Push(const v1::ServerMessage& m) {
    std::lock_guard lock(mu_);
    WriteLocked(m);
  }
  void Drop() {
    std::lock_guard lock(mu_);
    if (ctx_) ctx_->TryCancel();
  }
  // Waits (bounded) until pred() holds under the lock.
  template <typename Pred>
  bool WaitFor(Pred pred, std::chrono::seconds timeout = std::chrono::seconds(20)) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return pred(); });
  }
  template <typename F>
  auto Locked(F f) {
    std::lock_guard lock(mu_);
    return f();
  }

  // Guarded by mu_ (read them through Locked/WaitFor).
  std::vector<v1::Register> registers;
  std::vector<v1::RunStarted> started;
  std::vector<v1::CaseDone> cases;
  std::vector<v1::SampleBatch> batches_received;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::string> stored;  // first copy kept
  std::vector<v1::RunFinished> finished;
  std::vector<std::size_t> stored_at_finish;  // distinct batches stored when each arrived
  std::vector<v1::BoardStatus> statuses;
  std::vector<std::string> order;  // board statuses and run ends, as they arrived
  int heartbeats = 0;
  int disconnects = 0;
  bool refuse = false;  // answer Connect with UNAVAILABLE at once (a server that is down)
  int refused = 0;
  bool stopping_seen = false;
  bool ack = true;
  bool close_runs = true;
  bool stop_reading = false;  // a server too busy to read: the agent's writes back up

  void set_stop_reading(bool stop) {
    std::lock_guard lock(mu_);
    stop_reading = stop;
    cv_.notify_all();
  }

 private:
  void WriteLocked(const v1::ServerMessage& m) {
    if (stream_) stream_->Write(m);
  }
  std::mutex mu_;
  std::condition_variable cv_;
  grpc::ServerContext* ctx_ = nullptr;
  grpc::ServerReaderWriter<v1::ServerMessage, v1::AgentMessage>* stream_ = nullptr;
};

// Polls a condition the test cannot be notified of (files the agent deletes), bounded.
template <typename Pred>
bool Eventually(Pred pred) {
  for (int i = 0; i < 4000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

v1::ServerMessage Assign(std::uint64_t run, const std::string& board, std::uint32_t iterations) {
  v1::ServerMessage m;
  auto* a = m.mutable_assign();
  a->set_run_id(run);
  a->set_job_id(run * 10);
  a->set_board(board);
  a->set_op("conv2d_s8");
  a->set_iterations(iterations);
  std::uint32_t i = 0;
  for (const auto& c : testing::ConvCases()) {
    auto* oc = a->add_cases();
    oc->set_index(i++);
    oc->set_id(c.id);
    for (auto p : c.params) oc->add_params(p);
  }
  return m;
}

class AgentLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder b;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    // A small, fixed receive window, so a server that stops reading blocks the agent's writes
    // after a few kilobytes instead of after the megabytes gRPC would grow the window to.
    b.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    b.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 16 * 1024);
    b.RegisterService(&server_);
    grpc_server_ = b.BuildAndStart();
    ASSERT_NE(grpc_server_, nullptr);
    auto d = TempDir::Create("mculab-link-test-");
    ASSERT_TRUE(d.ok());
    dir_ = std::move(*d);
    OpenSpool();
  }
  void TearDown() override {
    StopAgent();
    grpc_server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  }
  void OpenSpool() {
    auto s = Spool::Open(dir_->path());
    ASSERT_TRUE(s.ok());
    spool_ = std::move(*s);
  }
  void StartAgent(FakeOptions fake = {}, std::size_t send_queue_bytes = 8u << 20) {
    boards_.clear();
    boards_.push_back(std::make_unique<FakeBoard>(
        [] {
          auto i = testing::Info("fake-0", "fake", true);
          i.tags["cpu"] = "cortex-m55";
          return i;
        }(),
        fake, RealClock()));
    LinkOptions o;
    o.server = "127.0.0.1:" + std::to_string(port_);
    o.agent_name = "test-agent";
    o.version = "0.0-test";
    o.backoff_initial = std::chrono::milliseconds(10);
    o.backoff_max = std::chrono::milliseconds(50);
    o.executor.max_batch_samples = 256;
    o.executor.abort_grace = std::chrono::milliseconds(100);
    o.send_queue_bytes = send_queue_bytes;
    link_ =
        std::make_unique<AgentLink>(o, std::vector<Board*>{boards_[0].get()}, *spool_, RealClock());
    thread_ = std::thread([this] { link_->Run(); });
  }
  void StopAgent() {
    if (!link_) return;
    link_->Stop();
    thread_.join();
    link_.reset();
  }
  std::size_t Batches(std::uint64_t run) {
    return server_.Locked([&] {
      std::size_t n = 0;
      for (const auto& [key, bytes] : server_.stored) n += key.first == run;
      return n;
    });
  }

  FakeServer server_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Spool> spool_;
  std::vector<std::unique_ptr<Board>> boards_;
  std::unique_ptr<AgentLink> link_;
  std::thread thread_;
};

TEST_F(AgentLinkTest, RegistersRunsAnAssignmentAndForgetsItOnceClosed) {
  StartAgent();
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.registers.empty(); }));
  server_.Locked([&] {
    const auto& r = server_.registers[0];
    EXPECT_EQ(r.agent(), "test-agent");
    EXPECT_EQ(r.version(), "0.0-test");
    EXPECT_EQ(r.boards_size(), 1);
    EXPECT_EQ(r.boards(0).name(), "fake-0");
    EXPECT_EQ(r.boards(0).kind(), "fake");
    EXPECT_TRUE(r.boards(0).emulated());
    EXPECT_EQ(r.boards(0).tags().at("cpu"), "cortex-m55");
    // Whether it runs uploaded runners, and why not: the server refuses such jobs at submit.
    EXPECT_FALSE(r.boards(0).custom_runners());
    EXPECT_EQ(r.boards(0).custom_runners_off(), "this board's backend does not run custom runners");
    EXPECT_EQ(r.active_runs_size(), 0);
    return 0;
  });
  EXPECT_TRUE(Eventually([&] { return link_->registrations() == 1; }));

  server_.Push(Assign(5, "fake-0", 200));
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.finished.empty(); }));
  server_.Locked([&] {
    const auto& fin = server_.finished[0];
    EXPECT_EQ(fin.run_id(), 5u);
    EXPECT_EQ(fin.outcome(), v1::RunFinished::SUCCEEDED) << fin.message();
    EXPECT_EQ(fin.batches_sent(), 3u);  // 600 timer samples in batches of 256
    EXPECT_EQ(server_.started.size(), 1u);
    EXPECT_EQ(server_.cases.size(), 3u);
    EXPECT_EQ(server_.batches_received.size(), 3u);
    for (std::size_t i = 0; i < server_.batches_received.size(); ++i) {
      EXPECT_EQ(server_.batches_received[i].sequence(), i);
    }
    return 0;
  });
  // Acked batches and the closed run leave nothing behind.
  EXPECT_TRUE(Eventually([&] { return !spool_->Contains(5); }));
  ASSERT_TRUE(server_.WaitFor([&] { return server_.heartbeats > 0; }));
}

TEST_F(AgentLinkTest, ReconnectResendsEverythingUnacknowledgedAndNothingIsStoredTwice) {
  server_.Locked([&] {
    server_.ack = false;  // the "commit" never happens on the first connection
    server_.close_runs = false;
    return 0;
  });
  StartAgent();
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.registers.empty(); }));
  server_.Push(Assign(6, "fake-0", 300));
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.finished.empty(); }));
  const auto first_batches = server_.Locked([&] { return server_.batches_received.size(); });
  EXPECT_EQ(first_batches, 4u);  // 900 samples
  EXPECT_EQ(spool_->PendingBatches(6).size(), 4u);

  server_.Locked([&] {
    server_.ack = true;
    server_.close_runs = true;
    return 0;
  });
  server_.Drop();
  ASSERT_TRUE(server_.WaitFor([&] { return server_.registers.size() >= 2; }));
  server_.Locked([&] {
    EXPECT_THAT(server_.registers[1].active_runs(), Contains(6u));
    return 0;
  });
  ASSERT_TRUE(server_.WaitFor([&] { return server_.finished.size() >= 2; }));
  EXPECT_TRUE(Eventually([&] { return link_->registrations() == 2; }));
  server_.Locked([&] {
    // Every batch came twice, byte for byte the same; a server keyed by (run, sequence) keeps one.
    EXPECT_EQ(server_.batches_received.size(), 8u);
    EXPECT_EQ(server_.stored.size(), 4u);
    for (const auto& b : server_.batches_received) {
      EXPECT_EQ(server_.stored.at({b.run_id(), b.sequence()}), b.SerializeAsString());
    }
    EXPECT_EQ(server_.finished[1].outcome(), v1::RunFinished::SUCCEEDED);
    EXPECT_EQ(server_.finished[1].batches_sent(), 4u);
    EXPECT_EQ(server_.started.size(), 2u);
    EXPECT_EQ(server_.cases.size(), 6u);
    return 0;
  });
  EXPECT_TRUE(Eventually([&] { return !spool_->Contains(6); }));
}

TEST_F(AgentLinkTest, RestartedAgentFinishesTheRunItLostAndResendsItsBatches) {
  // What an agent killed mid-run leaves in its spool: a start and two batches, no end.
  ASSERT_TRUE(spool_->BeginRun(9).ok());
  RunStartedRecord rs;
  rs.run_id = 9;
  ASSERT_TRUE(spool_->PutStarted(rs).ok());
  for (std::uint64_t s = 0; s < 2; ++s) {
    SampleBatchRecord b;
    b.run_id = 9;
    b.sequence = s;
    b.rows.push_back(SampleRow{0, 0, 0, static_cast<std::int64_t>(s)});
    ASSERT_TRUE(spool_->PutBatch(b).ok());
  }
  StartAgent();
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.finished.empty(); }));
  server_.Locked([&] {
    EXPECT_THAT(server_.registers[0].active_runs(), Contains(9u));
    EXPECT_EQ(server_.stored.size(), 2u);
    EXPECT_EQ(server_.finished[0].run_id(), 9u);
    EXPECT_EQ(server_.finished[0].outcome(), v1::RunFinished::INFRA_FAILED);
    EXPECT_THAT(server_.finished[0].message(), HasSubstr("restarted during the run"));
    EXPECT_EQ(server_.finished[0].batches_sent(), 2u);
    return 0;
  });
  EXPECT_TRUE(Eventually([&] { return !spool_->Contains(9); }));
}

TEST_F(AgentLinkTest, CancelStopsARunningRun) {
  StartAgent({.fault = FakeFault::kHang});
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.registers.empty(); }));
  server_.Push(Assign(7, "fake-0", 50));
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.started.empty(); }));
  v1::ServerMessage c;
  c.mutable_cancel()->set_run_id(7);
  c.mutable_cancel()->set_reason("user");
  server_.Push(c);
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.finished.empty(); }));
  server_.Locked([&] {
    EXPECT_EQ(server_.finished[0].outcome(), v1::RunFinished::CANCELLED);
    return 0;
  });
  auto log = static_cast<FakeBoard*>(boards_[0].get())->last_run();
  EXPECT_TRUE(log->abort_received());
  EXPECT_TRUE(log->killed);
}

TEST_F(AgentLinkTest, AssignmentToAnUnknownBoardIsAnInfrastructureFailure) {
  StartAgent();
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.registers.empty(); }));
  server_.Push(Assign(8, "nucleo-9", 5));
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.finished.empty(); }));
  server_.Locked([&] {
    EXPECT_EQ(server_.finished[0].outcome(), v1::RunFinished::INFRA_FAILED);
    EXPECT_THAT(server_.finished[0].message(), HasSubstr("no board named nucleo-9"));
    return 0;
  });
}

TEST_F(AgentLinkTest, StopEndsARunningRunAsInfrastructureFailureSoItIsRequeued) {
  StartAgent({.fault = FakeFault::kHang});
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.registers.empty(); }));
  server_.Push(Assign(11, "fake-0", 50));
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.started.empty(); }));
  StopAgent();
  server_.Locked([&] {
    EXPECT_EQ(server_.finished.size(), 1u);
    if (!server_.finished.empty()) {
      EXPECT_EQ(server_.finished[0].outcome(), v1::RunFinished::INFRA_FAILED);
      EXPECT_THAT(server_.finished[0].message(), HasSubstr("agent was stopped"));
    }
    // The server was told first, so it gives the board no new work meanwhile.
    EXPECT_TRUE(server_.stopping_seen);
    return 0;
  });
}

TEST_F(AgentLinkTest, RunGoesOnWhileTheServerIsAwayAndEverythingIsResentAfterTheReconnect) {
  StartAgent({.sample_delay = std::chrono::milliseconds(2)});
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.registers.empty(); }));
  server_.Push(Assign(12, "fake-0", 200));  // 3 cases x 200 samples, about 1.2 s
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.batches_received.empty(); }));
  // The server goes down mid-run and refuses connections for a while.
  server_.Locked([&] {
    server_.refuse = true;
    return 0;
  });
  server_.Drop();
  ASSERT_TRUE(server_.WaitFor([&] { return server_.refused >= 2; }));
  // The run keeps going without the server and spools its end.
  ASSERT_TRUE(Eventually([&] { return spool_->HasFinished(12); }));
  EXPECT_FALSE(spool_->PendingBatches(12).empty());
  server_.Locked([&] {
    EXPECT_TRUE(server_.finished.empty());
    server_.refuse = false;
    return 0;
  });
  // Back: the agent registers with the run, resends what was not acknowledged and the end.
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.finished.empty(); }));
  server_.Locked([&] {
    EXPECT_THAT(server_.registers.back().active_runs(), Contains(12u));
    const auto& fin = server_.finished[0];
    EXPECT_EQ(fin.outcome(), v1::RunFinished::SUCCEEDED) << fin.message();
    EXPECT_GE(server_.started.size(), 1u);
    std::set<std::uint32_t> cases;
    for (const auto& c : server_.cases) cases.insert(c.case_index());
    EXPECT_EQ(cases, (std::set<std::uint32_t>{0, 1, 2}));
    // Every sequence up to batches_sent arrived; together they hold each sample exactly once.
    std::set<std::pair<std::uint32_t, std::uint32_t>> samples;
    std::size_t rows = 0;
    for (std::uint64_t seq = 0; seq < fin.batches_sent(); ++seq) {
      auto it = server_.stored.find({12u, seq});
      EXPECT_NE(it, server_.stored.end()) << "batch " << seq << " never arrived";
      if (it == server_.stored.end()) continue;
      v1::SampleBatch b;
      b.ParseFromString(it->second);
      for (const auto& s : b.samples()) {
        samples.insert({s.case_index(), s.iteration()});
        ++rows;
      }
    }
    EXPECT_EQ(rows, 600u);
    EXPECT_EQ(samples.size(), 600u);
    return 0;
  });
  EXPECT_TRUE(Eventually([&] { return !spool_->Contains(12); }));
}

TEST_F(AgentLinkTest, ServerThatStopsReadingStallsNoBoardAndLosesNothing) {
  constexpr std::size_t kQueueBytes = 16 * 1024;  // about five batches of 256 samples
  StartAgent({}, kQueueBytes);
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.registers.empty(); }));
  server_.set_stop_reading(true);
  // 3 cases x 6,000 iterations: about 70 batches, far more than the queue and the window hold.
  server_.Push(Assign(14, "fake-0", 6000));
  // The board's reads go on: the run ends and spools its end while the server reads nothing.
  ASSERT_TRUE(Eventually([&] { return spool_->HasFinished(14); }));
  const SendQueueStats backed_up = link_->send_stats();
  EXPECT_LE(backed_up.peak_queued_bytes, kQueueBytes);
  EXPECT_GT(backed_up.left_in_spool, 0u);  // the bound was reached: the rest waits in the spool
  server_.Locked([&] {
    EXPECT_TRUE(server_.finished.empty());
    return 0;
  });

  server_.set_stop_reading(false);
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.finished.empty(); }));
  server_.Locked([&] {
    const auto& fin = server_.finished[0];
    EXPECT_EQ(fin.outcome(), v1::RunFinished::SUCCEEDED) << fin.message();
    std::set<std::uint32_t> cases;
    for (const auto& c : server_.cases) cases.insert(c.case_index());
    EXPECT_EQ(cases, (std::set<std::uint32_t>{0, 1, 2}));
    // Every batch arrived, and each sample exactly once once repeats are ignored.
    std::set<std::pair<std::uint32_t, std::uint32_t>> samples;
    std::size_t rows = 0;
    for (std::uint64_t seq = 0; seq < fin.batches_sent(); ++seq) {
      auto it = server_.stored.find({14u, seq});
      EXPECT_NE(it, server_.stored.end()) << "batch " << seq << " never arrived";
      if (it == server_.stored.end()) continue;
      v1::SampleBatch b;
      b.ParseFromString(it->second);
      for (const auto& s : b.samples()) {
        samples.insert({s.case_index(), s.iteration()});
        ++rows;
      }
    }
    EXPECT_EQ(rows, 18'000u);
    EXPECT_EQ(samples.size(), 18'000u);
    // The run's end came after all of its batches.
    EXPECT_EQ(server_.stored_at_finish[0], fin.batches_sent());
    return 0;
  });
  EXPECT_TRUE(Eventually([&] { return !spool_->Contains(14); }));
}

TEST_F(AgentLinkTest, AProbeThatDisappearsRequeuesTheRunAndTheBoardReturnsWithIt) {
  StartAgent({.fault = FakeFault::kHang});
  // Live (a heartbeat came): a board status is not dropped as before the replay.
  ASSERT_TRUE(server_.WaitFor([&] { return server_.heartbeats > 0; }));
  ProbeInfo probe;
  probe.vendor_id = 0x0483;
  probe.product_id = 0x374b;
  probe.serial = "0669FF383333524E43123456";
  FakeProbeLister lister({probe});
  ProbePresence presence(lister, {{"fake-0", probe.serial}});
  ProbeWatcher watcher(presence, std::chrono::milliseconds(10), [&](const BoardProbeState& s) {
    link_->SetBoardOffline(s.board, s.online ? "" : "probe " + s.serial + " unplugged");
  });
  watcher.Start();
  ASSERT_TRUE(server_.WaitFor([&] { return server_.statuses.size() == 1; }));  // found: online
  server_.Push(Assign(21, "fake-0", 50));
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.started.empty(); }));

  lister.Set({});  // unplugged mid-run
  ASSERT_TRUE(server_.WaitFor([&] { return !server_.finished.empty(); }));
  server_.Locked([&] {
    EXPECT_EQ(server_.finished[0].outcome(), v1::RunFinished::INFRA_FAILED);
    EXPECT_THAT(server_.finished[0].message(), HasSubstr("debug probe disappeared"));
    // The server hears of the board first, so it does not hand it the requeued job.
    EXPECT_THAT(server_.order,
                ::testing::ElementsAre(
                    "status fake-0: ", "status fake-0: probe 0669FF383333524E43123456 unplugged",
                    "finished 21"));
    return 0;
  });
  // An assignment that still reaches the board is refused the same way.
  server_.Push(Assign(22, "fake-0", 5));
  ASSERT_TRUE(server_.WaitFor([&] { return server_.finished.size() == 2; }));
  server_.Locked([&] {
    EXPECT_EQ(server_.finished[1].outcome(), v1::RunFinished::INFRA_FAILED);
    EXPECT_THAT(server_.finished[1].message(), HasSubstr("board fake-0 is offline: probe"));
    return 0;
  });
  // A reconnect registers the board as offline.
  server_.Drop();
  ASSERT_TRUE(server_.WaitFor([&] { return server_.registers.size() == 2; }));
  const int beats = server_.Locked([&] { return server_.heartbeats; });
  ASSERT_TRUE(server_.WaitFor([&] { return server_.heartbeats > beats; }));
  server_.Locked([&] {
    EXPECT_THAT(server_.registers[1].boards(0).offline(), HasSubstr("unplugged"));
    return 0;
  });

  lister.Set({probe});  // plugged in again
  ASSERT_TRUE(server_.WaitFor([&] { return server_.statuses.size() == 3; }));
  server_.Locked([&] {
    EXPECT_EQ(server_.statuses[2].offline(), "");
    return 0;
  });
  server_.Push(Assign(23, "fake-0", 50));
  ASSERT_TRUE(server_.WaitFor([&] { return server_.started.size() == 2; }));
  watcher.Stop();
}

}  // namespace
}  // namespace mculab::agent
