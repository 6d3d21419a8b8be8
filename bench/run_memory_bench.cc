// The server's peak memory over one large run (DESIGN.md §8 "server memory": a peak under
// 64 MiB whatever the run's size). A plain program, one run per process, so its VmHWM is that
// run's:
//
//   run_memory_bench [--samples N] [--load-run]
//
// It opens a store and a Lab as mculab-server does, connects an agent with one host board through
// an in-process channel, submits one job of N samples (cases x 100,000 iterations, the admission
// limit, timer only), sends the batches as the agent does (1,024 samples each, the agent's batch
// size), finishes the run and waits until the job has succeeded: the run's finalisation computes
// its statistics from the store. It then prints VmHWM (peak resident size) and VmRSS (after the
// finalisation gave its memory back). --load-run also reads the whole run into memory afterwards,
// the way the finalisation used to (GetSamples + ComputePassCaseStats), for the baseline figure.
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "agent.pb.h"
#include "db/sqlite_store.h"
#include "server/rpc/agent_wire.h"
#include "server/service/agent_channel.h"
#include "server/service/clock.h"
#include "server/service/lab.h"
#include "server/service/profiles.h"
#include "tests/unit/server/owned_lab.h"

namespace {

namespace fs = std::filesystem;
using namespace mculab;
using namespace mculab::server;

constexpr std::uint32_t kIterations = 100'000;
constexpr std::uint32_t kBatch = 1024;

// The agent's side of the link: keeps the assignment, counts acknowledgements, drops the rest.
class BenchChannel final : public AgentChannel {
 public:
  void Send(const AgentCommand& c) override {
    const v1::ServerMessage m = rpc::ToProto(c);
    std::lock_guard l(mu_);
    if (m.has_assign()) assignment_ = m.assign();
    if (m.has_ack()) ++acks_;
    cv_.notify_all();
  }
  v1::Assignment WaitAssignment() {
    std::unique_lock l(mu_);
    cv_.wait_for(l, std::chrono::seconds(30), [&] { return assignment_.run_id() != 0; });
    return assignment_;
  }
  std::uint64_t acks() {
    std::lock_guard l(mu_);
    return acks_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  v1::Assignment assignment_;
  std::uint64_t acks_ = 0;
};

std::string ProcStatus(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return line.substr(std::string(key).size());
  }
  return "?";
}

double KiB(const std::string& s) { return std::atof(s.c_str()); }

int Fail(const std::string& what) {
  std::fprintf(stderr, "run_memory_bench: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t samples = 2'000'000;
  bool load_run = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--samples" && i + 1 < argc) {
      samples = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--load-run") {
      load_run = true;
    } else {
      return Fail("usage: run_memory_bench [--samples N] [--load-run]");
    }
  }
  spdlog::set_level(spdlog::level::warn);
  const std::uint32_t iterations =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(kIterations, samples));
  const auto cases = static_cast<std::uint32_t>((samples + iterations - 1) / iterations);

  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() / ("mculab-memory-bench-" + std::to_string(rd()));
  fs::create_directories(dir);
  int rc = 0;
  {
    auto store = db::SqliteStore::Open(dir / "mculab.db");
    if (!store.ok()) return Fail(store.error().message);
    SystemClock clock;
    LabConfig config;
    config.health_checks = false;
    config.heartbeat_timeout_ms = 24 * 3'600'000;  // this agent sends no heartbeats
    mculab::server::testing::OwnedLab lab(**store, clock, config, dir);
    if (mculab::Status s = lab.Start(); !s.ok()) return Fail(s.error().message);
    const std::string rss_idle = ProcStatus("VmRSS:");

    auto channel = std::make_shared<BenchChannel>();
    v1::Register reg;
    reg.set_agent("bench-agent");
    auto* board = reg.add_boards();
    board->set_name("host-0");
    board->set_kind("host");
    board->set_serial("SN-host-0");
    Caller agent;
    agent.user = "bench-agent";
    agent.role = Role::kAgent;
    auto session = lab.agents().ConnectAgent(agent, rpc::RegistrationFromProto(reg), channel);
    if (!session.ok()) return Fail(session.error().message);

    SubmitRequest req;
    req.kind = "host";
    req.op = "fully_connected_s8";
    for (std::uint32_t c = 0; c < cases; ++c) {
      req.cases.push_back({c, {1, static_cast<std::int32_t>(8 * (c % 16 + 1)), 4}});
    }
    req.iterations = iterations;
    req.warmup = 1;
    req.timeout_s = 24 * 3600;
    auto submitted = lab.jobs().Submit(Caller{}, req);
    if (!submitted.ok()) return Fail(submitted.error().message);
    const JobId job = submitted->id;
    auto watch = lab.jobs().Watch(Caller{}, job);
    if (!watch.ok()) return Fail(watch.error().message);
    const v1::Assignment a = channel->WaitAssignment();
    if (a.run_id() == 0) return Fail("no assignment");

    const auto t0 = std::chrono::steady_clock::now();
    auto send = [&](const v1::AgentMessage& m) {
      lab.agents().OnAgentMessage(*session, rpc::EventFromProto(m, "bench-agent"));
    };
    for (const char* state : {"preparing", "running"}) {
      v1::AgentMessage m;
      m.mutable_run_state()->set_run_id(a.run_id());
      m.mutable_run_state()->set_state(state);
      send(m);
    }
    {
      v1::AgentMessage m;
      auto* s = m.mutable_run_started();
      s->set_run_id(a.run_id());
      s->set_runner_version("0.2.0");
      s->set_port("host");
      s->set_timer_unit("ns");
      s->set_firmware_sha256(std::string(64, 'f'));
      send(m);
    }
    std::mt19937_64 rng(42);
    std::uint64_t seq = 0;
    for (std::uint32_t c = 0; c < cases; ++c) {
      const std::int64_t centre = 10'000 + 100 * c;
      for (std::uint32_t first = 0; first < iterations; first += kBatch) {
        v1::AgentMessage m;
        auto* b = m.mutable_batch();
        b->set_run_id(a.run_id());
        b->set_sequence(seq++);
        for (std::uint32_t i = first; i < std::min(iterations, first + kBatch); ++i) {
          auto* s = b->add_samples();
          s->set_case_index(c);
          s->set_iteration(i);
          s->set_metric(0);
          s->set_value(centre + static_cast<std::int64_t>(rng() % 997));
        }
        send(m);
      }
      v1::AgentMessage done;
      auto* d = done.mutable_case_done();
      d->set_run_id(a.run_id());
      d->set_case_index(c);
      d->set_checksum(0x1234);
      d->set_expected_checksum(0x1234);
      d->set_checksum_ok(true);
      send(done);
    }
    {
      v1::AgentMessage m;
      auto* f = m.mutable_run_finished();
      f->set_run_id(a.run_id());
      f->set_outcome(v1::RunFinished::SUCCEEDED);
      f->set_batches_sent(static_cast<std::uint32_t>(seq));
      send(m);
    }
    const auto t1 = std::chrono::steady_clock::now();
    JobState last = JobState::kQueued;
    while (true) {
      auto e = (*watch)->Next(std::chrono::minutes(30));
      if (!e) break;
      last = e->state;
      if (IsFinal(last)) break;
    }
    const auto t2 = std::chrono::steady_clock::now();
    if (last != JobState::kSucceeded) {
      rc = Fail(std::string("the job ended ") + std::string(JobStateName(last)));
    }
    auto stats = (*store)->GetCaseStats(job);
    const std::size_t stat_rows = stats.ok() ? stats->size() : 0;
    const std::string hwm = ProcStatus("VmHWM:");
    const std::string rss_after = ProcStatus("VmRSS:");
    std::printf(
        "samples %llu (%u cases x %u iterations); ingest %.1f s; finalisation %.1f s; "
        "%zu statistics rows\n"
        "VmRSS idle %.1f MiB; VmHWM %.1f MiB; VmRSS after the run %.1f MiB\n",
        static_cast<unsigned long long>(static_cast<std::uint64_t>(cases) * iterations), cases,
        iterations, std::chrono::duration<double>(t1 - t0).count(),
        std::chrono::duration<double>(t2 - t1).count(), stat_rows, KiB(rss_idle) / 1024,
        KiB(hwm) / 1024, KiB(rss_after) / 1024);
    if (load_run) {
      auto all = (*store)->GetSamples(a.run_id());
      if (!all.ok()) return Fail(all.error().message);
      auto loaded = ComputePassCaseStats(job, a.run_id(), Provenance{}, *all);
      std::printf("loading the whole run (the old finalisation): %zu rows; VmHWM %.1f MiB\n",
                  loaded.size(), KiB(ProcStatus("VmHWM:")) / 1024);
    }
    lab.Stop();
  }
  fs::remove_all(dir);
  return rc;
}
