// Sample ingest, from raw SQLite up to the whole server path (DESIGN.md §6, §8):
//
//   BM_RawSqliteInsert  the baseline: prepared multi-row INSERTs (1, 64, 256 or 1,024 rows per
//                       statement) into the samples table with every migration's indexes, the
//                       store's transaction size, WAL, synchronous=NORMAL
//   BM_StoreIngest      SqliteStore::Write of 1,024-sample batches (batch row, samples, progress)
//   BM_LabIngest        AgentDesk::OnAgentMessage with agent.proto batches: conversion, store, ack
//   BM_GrpcIngest       an agent stream over loopback gRPC into the Lab, waiting for every ack
//
// The end-to-end figure (a real agent with its spool, gRPC, a real server) is bench/fleet's; the
// target there is >= 0.8 of the fastest BM_RawSqliteInsert, same machine, same run. Items =
// samples.
// The baseline speaks SQLite directly, which product code outside db/ never does.
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>

#include "agent.grpc.pb.h"
#include "db/migrations.h"
#include "db/sqlite_store.h"
#include "server/rpc/agent_link.h"
#include "server/rpc/agent_wire.h"
#include "server/service/clock.h"
#include "server/service/lab.h"
#include "tests/unit/server/owned_lab.h"

namespace {

namespace fs = std::filesystem;
namespace v1 = mculab::v1;
using namespace mculab;

constexpr int kSamplesPerBatch = 1024;  // the agent's batch (ExecutorOptions::max_batch_samples)

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("mculab-bench-" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void Check(int rc, sqlite3* db) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    throw std::runtime_error(sqlite3_errmsg(db));
  }
}

// The baseline: the fastest plain insert SQLite offers into the same table with the same indexes
// (every migration applied, as the server's database has them), WAL, synchronous=NORMAL and
// temp_store=MEMORY as the store sets them, and the store's transaction size
// (SqliteOptions::max_rows_per_transaction). One prepared INSERT of `rows_per_statement` rows
// (multi-row VALUES; SQLite's carray extension is not in Debian's libsqlite3, and a 64-row VALUES
// already binds 384 parameters). Arg 1 is the one-row INSERT for comparison; bench/run.sh takes the
// fastest variant as "raw".
void BM_RawSqliteInsert(benchmark::State& state) {
  const int rows = static_cast<int>(state.range(0));
  const int per_statement = static_cast<int>(state.range(1));
  const int per_transaction = static_cast<int>(db::SqliteOptions{}.max_rows_per_transaction);
  std::string sql =
      "INSERT INTO samples(run_id, pass, case_index, iteration, metric, value) VALUES ";
  for (int i = 0; i < per_statement; ++i) sql += i ? ",(?,?,?,?,?,?)" : "(?,?,?,?,?,?)";
  std::string tail_sql =
      "INSERT INTO samples(run_id, pass, case_index, iteration, metric, value) "
      "VALUES (?,?,?,?,?,?)";
  for (auto _ : state) {
    state.PauseTiming();
    TempDir dir;
    sqlite3* db = nullptr;
    Check(sqlite3_open((dir.path() / "raw.db").c_str(), &db), db);
    Check(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", nullptr, nullptr,
                       nullptr),
          db);
    for (const db::Migration& m : db::EmbeddedMigrations()) {
      Check(sqlite3_exec(db, m.sql.c_str(), nullptr, nullptr, nullptr), db);
    }
    // As the store's writer: statement journals in memory (a multi-row INSERT inside a
    // transaction keeps one; past 64 KiB it spills to a temporary file otherwise).
    Check(sqlite3_exec(db, "PRAGMA temp_store=MEMORY;", nullptr, nullptr, nullptr), db);
    sqlite3_stmt* ins = nullptr;
    sqlite3_stmt* one = nullptr;
    Check(sqlite3_prepare_v2(db, sql.c_str(), -1, &ins, nullptr), db);
    Check(sqlite3_prepare_v2(db, tail_sql.c_str(), -1, &one, nullptr), db);
    state.ResumeTiming();
    int done = 0;
    auto bind = [&](sqlite3_stmt* st, int first_param, int row) {
      sqlite3_bind_int64(st, first_param + 1, 1);
      sqlite3_bind_int64(st, first_param + 2, 0);
      sqlite3_bind_int64(st, first_param + 3, row / 1000);
      sqlite3_bind_int64(st, first_param + 4, row % 1000);
      sqlite3_bind_int64(st, first_param + 5, 0);
      sqlite3_bind_int64(st, first_param + 6, 100000 + row);
    };
    while (done < rows) {
      Check(sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr), db);
      const int end = std::min(rows, done + per_transaction);
      while (done + per_statement <= end) {
        for (int i = 0; i < per_statement; ++i) bind(ins, 6 * i, done + i);
        Check(sqlite3_step(ins), db);
        sqlite3_reset(ins);
        done += per_statement;
      }
      for (; done < end; ++done) {
        bind(one, 0, done);
        Check(sqlite3_step(one), db);
        sqlite3_reset(one);
      }
      Check(sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr), db);
    }
    state.PauseTiming();
    sqlite3_finalize(ins);
    sqlite3_finalize(one);
    sqlite3_close(db);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * rows);
}

server::SampleBatch MakeBatch(server::RunId run, std::uint64_t seq) {
  server::SampleBatch b;
  b.run_id = run;
  b.sequence = seq;
  b.samples.reserve(kSamplesPerBatch);
  for (int i = 0; i < kSamplesPerBatch; ++i) {
    b.samples.push_back(server::Sample{0, static_cast<std::uint32_t>(seq % 16),
                                       static_cast<std::uint32_t>(i), 0, 100000 + i});
  }
  b.iterations = kSamplesPerBatch;
  return b;
}

void BM_StoreIngest(benchmark::State& state) {
  const int batches = static_cast<int>(state.range(0)) / kSamplesPerBatch;
  for (auto _ : state) {
    state.PauseTiming();
    TempDir dir;
    auto store = db::SqliteStore::Open(dir.path() / "mculab.db");
    std::atomic<int> acked{0};
    state.ResumeTiming();
    for (int i = 0; i < batches; ++i) {
      db::WriteSet ws;
      ws.batch = MakeBatch(1, static_cast<std::uint64_t>(i));
      (*store)->WaitForRoom();
      (*store)->Write(std::move(ws), [&](const db::WriteOutcome& o) {
        if (o.status.ok()) ++acked;
      });
    }
    (*store)->Flush();
    state.PauseTiming();
    if (acked != batches) state.SkipWithError("not every batch was committed");
    (*store)->Close();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * batches * kSamplesPerBatch);
}

// Counts acknowledgements; the Lab calls Send with its lock held, so this only counts.
class CountingChannel final : public server::AgentChannel {
 public:
  void Send(const server::AgentCommand& c) override {
    const v1::ServerMessage m = server::rpc::ToProto(c);
    if (m.has_assign()) {
      std::lock_guard l(mu_);
      assignment_ = m.assign();
      cv_.notify_all();
    }
    if (m.has_ack()) {
      std::lock_guard l(mu_);
      ++acks_;
      cv_.notify_all();
    }
  }
  v1::Assignment WaitAssignment() {
    std::unique_lock l(mu_);
    cv_.wait(l, [&] { return assignment_.run_id() != 0; });
    return assignment_;
  }
  void WaitAcks(int n) {
    std::unique_lock l(mu_);
    cv_.wait(l, [&] { return acks_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  v1::Assignment assignment_;
  int acks_ = 0;
};

// A lab whose one host board runs one job; StartJob returns its run id.
struct LabFixture {
  explicit LabFixture(const fs::path& home)
      : store(db::SqliteStore::Open(home / "mculab.db").value()),
        lab(*store, clock, server::LabConfig{}, home) {
    if (!lab.Start().ok()) throw std::runtime_error("lab did not start");
  }
  server::RunId StartJob(const std::shared_ptr<server::AgentChannel>& channel,
                         CountingChannel& counter, int samples) {
    v1::Register reg;
    reg.set_agent("bench");
    auto* b = reg.add_boards();
    b->set_name("host-0");
    b->set_kind("host");
    server::Caller agent_caller;
    agent_caller.user = reg.agent();
    agent_caller.role = server::Role::kAgent;
    session =
        *lab.agents().ConnectAgent(agent_caller, server::rpc::RegistrationFromProto(reg), channel);
    server::SubmitRequest r;
    r.kind = "host";
    r.op = "fully_connected_s8";
    for (int c = 0; c < 16; ++c) r.cases.push_back({c, {1, 8, 4}});
    r.iterations = static_cast<std::uint32_t>(samples / 16 + 1);
    if (!lab.jobs().Submit({}, r).ok()) throw std::runtime_error("submit failed");
    return static_cast<server::RunId>(counter.WaitAssignment().run_id());
  }
  server::SystemClock clock;
  std::unique_ptr<db::SqliteStore> store;
  server::testing::OwnedLab lab;
  server::AgentSessionId session = 0;
};

v1::AgentMessage ProtoBatch(server::RunId run, std::uint64_t seq) {
  v1::AgentMessage m;
  auto* b = m.mutable_batch();
  b->set_run_id(static_cast<std::uint64_t>(run));
  b->set_sequence(seq);
  for (int i = 0; i < kSamplesPerBatch; ++i) {  // the column form, as the agent sends them
    b->add_case_index(static_cast<std::uint32_t>(seq % 16));
    b->add_iteration(static_cast<std::uint32_t>(i));
    b->add_metric(0);
    b->add_value(100000 + i);
  }
  return m;
}

void BM_LabIngest(benchmark::State& state) {
  const int samples = static_cast<int>(state.range(0));
  const int batches = samples / kSamplesPerBatch;
  for (auto _ : state) {
    state.PauseTiming();
    TempDir dir;
    LabFixture f(dir.path());
    auto channel = std::make_shared<CountingChannel>();
    const server::RunId run = f.StartJob(channel, *channel, samples);
    std::vector<v1::AgentMessage> messages;
    for (int i = 0; i < batches; ++i) messages.push_back(ProtoBatch(run, i));
    state.ResumeTiming();
    for (const auto& m : messages)
      f.lab.agents().OnAgentMessage(f.session, server::rpc::EventFromProto(m, "bench"));
    channel->WaitAcks(batches);
    state.PauseTiming();
    f.lab.Stop();
    f.store->Close();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * batches * kSamplesPerBatch);
}

void BM_GrpcIngest(benchmark::State& state) {
  const int samples = static_cast<int>(state.range(0));
  const int batches = samples / kSamplesPerBatch;
  for (auto _ : state) {
    state.PauseTiming();
    TempDir dir;
    auto store = db::SqliteStore::Open(dir.path() / "mculab.db").value();
    server::SystemClock clock;
    server::testing::OwnedLab lab(*store, clock, server::LabConfig{}, dir.path());
    if (!lab.Start().ok()) state.SkipWithError("lab did not start");
    server::rpc::AgentLinkService service(lab);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    auto server = builder.BuildAndStart();
    auto stub = v1::AgentLink::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                                           grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    auto token = lab.accounts().AddAgent("bench");
    if (!token.ok()) state.SkipWithError("no agent token");
    ctx.AddMetadata("authorization", "Bearer " + token->token);
    auto stream = stub->Connect(&ctx);
    v1::AgentMessage reg;
    reg.mutable_register_()->set_agent("bench");
    auto* b = reg.mutable_register_()->add_boards();
    b->set_name("host-0");
    b->set_kind("host");
    stream->Write(reg);
    v1::ServerMessage in;
    stream->Read(&in);  // Registered
    server::SubmitRequest r;
    r.kind = "host";
    r.op = "fully_connected_s8";
    for (int c = 0; c < 16; ++c) r.cases.push_back({c, {1, 8, 4}});
    r.iterations = static_cast<std::uint32_t>(samples / 16 + 1);
    (void)lab.jobs().Submit({}, r);
    while (stream->Read(&in) && !in.has_assign()) {
    }
    const auto run = static_cast<server::RunId>(in.assign().run_id());
    std::vector<v1::AgentMessage> messages;
    for (int i = 0; i < batches; ++i) messages.push_back(ProtoBatch(run, i));
    state.ResumeTiming();
    // Like the agent: writes on one thread, acknowledgements read on another.
    int acks = 0;
    std::thread reader([&] {
      v1::ServerMessage m;
      while (acks < batches && stream->Read(&m)) acks += m.has_ack() ? 1 : 0;
    });
    for (const auto& m : messages) stream->Write(m);
    reader.join();
    state.PauseTiming();
    if (acks != batches)
      state.SkipWithError("the stream ended before every batch was acknowledged");
    lab.Stop();  // first, so the stream's end is not an agent failure
    stream->WritesDone();
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    (void)stream->Finish();
    store->Close();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * batches * kSamplesPerBatch);
}

// 1,048,576 samples = 4,096 batches by default; MCULAB_BENCH_SAMPLES makes it smaller for the CI
// smoke run (rounded down to whole batches, at least one).
int SampleCount() {
  const char* env = std::getenv("MCULAB_BENCH_SAMPLES");
  const long n = env ? std::atol(env) : (1L << 20);
  return static_cast<int>(std::max<long>(kSamplesPerBatch, n - n % kSamplesPerBatch));
}
const int kSamples = SampleCount();
BENCHMARK(BM_RawSqliteInsert)
    ->ArgNames({"samples", "rows_per_insert"})
    ->Args({kSamples, 1})
    ->Args({kSamples, 64})
    ->Args({kSamples, 256})
    ->Args({kSamples, 1024})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_StoreIngest)->Arg(kSamples)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_LabIngest)->Arg(kSamples)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GrpcIngest)->Arg(kSamples)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
