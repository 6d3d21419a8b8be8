// The history API while samples pour in: a history read must not wait for the ingest backlog.
// A plain program, one process:
//
//   history_ingest_bench [--jobs N] [--samples M] [--requests R] [--nice-ingest K]
//
// Fills a store with N jobs (default 100,000), then measures the history API through the HTTP
// route function (http::Router::Handle, with a viewer's token, no sockets) for each view below:
// first idle, R requests per view (default 200, the views in turn), then while another thread
// stores M samples (default 1,000,000) as the server does, batches of 1,024 queued to the store's
// writer with WaitForRoom, until the ingest has ended and every view had R requests. It prints
// p50/p95 per view and phase, the ratio of the p95s, and the ingest's rate. Target: p95 under
// ingest within 2x of p95 idle, same run. Beside each wall-clock figure it prints the CPU time the
// request thread itself spent (CLOCK_THREAD_CPUTIME_ID): when the CPU time stays while the wall
// time grows, the request waited for a core, not for the store. --nice-ingest K runs the ingest
// thread and the store's writer thread (named mculab-writer) at nice K during the ingest, to show
// how much of the rise is CPU sharing. The load average is printed before and after.
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "db/sqlite_store.h"
#include "server/http/router.h"
#include "server/service/clock.h"
#include "server/service/lab.h"
#include "tests/unit/server/owned_lab.h"

namespace {

namespace fs = std::filesystem;
using namespace mculab;

// The store as the server opens it, but with a writer's page cache that holds the indexes being
// filled: with SQLite's default 2 MiB, inserting a million jobs into their history indexes
// rereads index pages from disk (superlinear: 22 s for 100,000 jobs, 746 s for 1,000,000).
db::SqliteOptions FillOptions() {
  db::SqliteOptions o;
  o.writer_cache_kib = 1 << 20;  // 1 GiB, taken as pages are touched
  return o;
}
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kBaseMs = 1'760'000'000'000;

int Fail(const std::string& what) {
  std::fprintf(stderr, "history_ingest_bench: %s\n", what.c_str());
  std::exit(1);
}

void Check(const mculab::Status& s) {
  if (!s.ok()) Fail(s.error().message);
}

void Fill(db::SqliteStore& store, std::int64_t jobs) {
  const char* const users[] = {"ana", "ben", "chen", "dara", "eve"};
  const char* const labels[] = {"", "", "baseline", "nightly", "after im2col change", "unroll x4"};
  std::mt19937_64 rng(7);
  server::WriteSet ws;
  for (std::int64_t id = 1; id <= jobs; ++id) {
    server::Job j;
    j.id = id;
    j.user = users[rng() % 5];
    j.kind = rng() % 2 ? "host" : "corstone300-qemu";
    j.op = rng() % 10 < 7 ? "conv2d_s8" : "fully_connected_s8";
    j.label = labels[rng() % 6];
    j.state = rng() % 10 < 9 ? server::JobState::kSucceeded : server::JobState::kFailed;
    j.iterations = 50;
    j.num_cases = 1;
    j.created_ms = kBaseMs + id * 60'000;
    j.started_ms = j.created_ms + 1000;
    j.finished_ms = j.started_ms + 30'000;
    j.attempts = 1;
    j.assigned_board = j.kind == "host" ? "host-0" : "an547-0";
    j.last_run_id = id;
    ws.new_jobs.push_back({j, {{0, {1, 8, 4}}}});
    server::Run r;
    r.id = id;
    r.job_id = id;
    r.attempt = 1;
    r.board = j.assigned_board;
    r.agent = "lab-1";
    r.state = server::RunState::kSucceeded;
    r.started = true;
    ws.runs.push_back(r);
    if (ws.Rows() >= 20'000 || id == jobs) {
      Check(store.WriteAndWait(std::move(ws)));
      ws = server::WriteSet{};
    }
  }
}

struct View {
  const char* name;
  std::string target;
};

struct Figures {
  double p50 = 0, p95 = 0;
};

// One request's wall-clock and own CPU time.
struct Timing {
  double wall_ms = 0, cpu_ms = 0;
};

double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

std::string LoadAverage() {
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) return "unknown";
  char text[64];
  std::snprintf(text, sizeof text, "%.2f %.2f %.2f", load[0], load[1], load[2]);
  return text;
}

// Sets the nice value of this process's thread named `name` (the first one found).
void NiceThreadNamed(const std::string& name, int nice) {
  for (const auto& task : fs::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string line;
    if (std::getline(comm, line) && line == name) {
      setpriority(PRIO_PROCESS, static_cast<id_t>(std::stol(task.path().filename())), nice);
      return;
    }
  }
  Fail("no thread named " + name);
}

std::vector<double> Column(const std::vector<Timing>& t, double Timing::*field) {
  std::vector<double> out;
  for (const Timing& x : t) out.push_back(x.*field);
  return out;
}

Figures Percentiles(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto at = [&](double p) {
    return ms.empty() ? 0.0 : ms[std::min(ms.size() - 1, static_cast<std::size_t>(p * ms.size()))];
  };
  return {at(0.5), at(0.95)};
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t jobs = 100'000;
  std::uint64_t samples = 1'000'000;
  std::size_t requests = 200;
  std::optional<int> nice_ingest;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--jobs") {
      jobs = std::max<std::int64_t>(100, std::atoll(argv[i + 1]));
    } else if (a == "--samples") {
      samples = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (a == "--requests") {
      requests = std::max<std::size_t>(20, std::strtoull(argv[i + 1], nullptr, 10));
    } else if (a == "--nice-ingest") {
      nice_ingest = std::atoi(argv[i + 1]);
    } else {
      Fail("usage: history_ingest_bench [--jobs N] [--samples M] [--requests R] [--nice-ingest K]");
    }
  }
  spdlog::set_level(spdlog::level::warn);
  const std::string load_before = LoadAverage();
  std::random_device rd;
  const fs::path dir =
      fs::temp_directory_path() / ("mculab-history-ingest-" + std::to_string(rd()));
  fs::create_directories(dir);
  {
    auto opened = db::SqliteStore::Open(dir / "mculab.db", FillOptions());
    if (!opened.ok()) Fail(opened.error().message);
    db::SqliteStore& store = **opened;
    const auto fill_start = Clock::now();
    Check(store.BeginBulkLoad());  // the jobs' indexes are built once, after the jobs
    Fill(store, jobs);
    Check(store.EndBulkLoad());
    std::printf("%lld jobs stored in %.1f s\n", static_cast<long long>(jobs),
                std::chrono::duration<double>(Clock::now() - fill_start).count());
    server::SystemClock clock;
    server::LabConfig config;
    config.health_checks = false;
    server::testing::OwnedLab lab(store, clock, config, dir);
    Check(lab.Start());
    auto viewer = lab.accounts().AddUser("bench", "viewer");
    if (!viewer.ok()) Fail(viewer.error().message);
    server::http::Router router(lab, store, clock, server::http::RouterOptions{});

    const std::vector<View> views = {
        {"default page", "/api/v1/jobs?sort=id&order=desc&limit=50"},
        {"op + state filter", "/api/v1/jobs?op=conv2d_s8&state=failed&sort=created&limit=50"},
        {"label search", "/api/v1/jobs?label=im2col&sort=id&order=desc&limit=50"},
        {"one job", "/api/v1/jobs/" + std::to_string(jobs / 2)},
    };
    auto request = [&](const View& v) {
      server::http::Request r{server::http::beast_http::verb::get, v.target, 11};
      r.set(server::http::beast_http::field::host, "bench");
      r.set(server::http::beast_http::field::authorization, "Bearer " + viewer->token);
      const double c0 = ThreadCpuMs();
      const auto t0 = Clock::now();
      auto reply = router.Handle(r);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      const double cpu = ThreadCpuMs() - c0;
      if (reply.response.result_int() != 200) {
        Fail(v.target + ": HTTP " + std::to_string(reply.response.result_int()));
      }
      return Timing{ms, cpu};
    };

    std::vector<std::vector<Timing>> idle(views.size()), busy(views.size());
    std::fprintf(stderr, "history_ingest_bench: idle requests starting\n");
    // Round robin over the views, as under the ingest below: a view asked a thousand times in a
    // row would run from warm processor caches that the interleaved phase never has.
    for (std::size_t i = 0; i < requests; ++i) {
      for (std::size_t k = 0; k < views.size(); ++k) idle[k].push_back(request(views[k]));
    }

    // The ingest: one run's samples, batches of 1,024 as the agent sends them, queued as the
    // Lab queues them (WaitForRoom first, then Write; acknowledged by the commit callback).
    std::fprintf(stderr, "history_ingest_bench: ingest starting\n");  // for a profiler to attach
    std::atomic<bool> ingesting{true};
    std::atomic<std::uint64_t> committed{0};
    const auto i0 = Clock::now();
    std::thread ingest([&] {
      if (nice_ingest) {
        setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), *nice_ingest);
        NiceThreadNamed("mculab-writer", *nice_ingest);
      }
      const server::RunId run = jobs + 1;
      std::mt19937_64 rng(11);
      std::uint64_t seq = 0;
      for (std::uint64_t done = 0; done < samples;) {
        server::WriteSet ws;
        ws.batch.emplace();
        ws.batch->run_id = run;
        ws.batch->sequence = seq++;
        const std::uint64_t n = std::min<std::uint64_t>(1024, samples - done);
        for (std::uint64_t i = 0; i < n; ++i) {
          ws.batch->samples.push_back(
              {0, 0, static_cast<std::uint32_t>(done + i), 0, 1000 + static_cast<int>(rng() % 97)});
        }
        ws.batch->iterations = n;
        done += n;
        store.WaitForRoom();
        store.Write(std::move(ws), [&committed, n](const server::WriteOutcome& o) {
          if (o.status.ok()) committed += n;
        });
      }
      store.Flush();
      ingesting = false;
    });
    std::size_t rounds = 0;
    while (ingesting || rounds < requests) {
      for (std::size_t k = 0; k < views.size(); ++k) busy[k].push_back(request(views[k]));
      ++rounds;
    }
    ingest.join();
    const double ingest_s = std::chrono::duration<double>(Clock::now() - i0).count();

    std::printf(
        "history_ingest_bench: %lld jobs; %llu samples ingested in %.1f s (%.0f k/s); "
        "%zu requests per view idle, %zu under ingest; ingest thread and writer at nice %s; "
        "load average %s before, %s after\n",
        static_cast<long long>(jobs), static_cast<unsigned long long>(committed.load()), ingest_s,
        static_cast<double>(committed.load()) / ingest_s / 1000, requests, rounds,
        nice_ingest ? std::to_string(*nice_ingest).c_str() : "0", load_before.c_str(),
        LoadAverage().c_str());
    std::printf(
        "| view | idle p50 ms | idle p95 ms | ingest p50 ms | ingest p95 ms | p95 ratio | "
        "CPU idle p95 ms | CPU ingest p95 ms | CPU p95 ratio |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    double worst = 0;
    for (std::size_t k = 0; k < views.size(); ++k) {
      const Figures a = Percentiles(Column(idle[k], &Timing::wall_ms));
      const Figures b = Percentiles(Column(busy[k], &Timing::wall_ms));
      const Figures ca = Percentiles(Column(idle[k], &Timing::cpu_ms));
      const Figures cb = Percentiles(Column(busy[k], &Timing::cpu_ms));
      const double ratio = a.p95 > 0 ? b.p95 / a.p95 : 0;
      worst = std::max(worst, ratio);
      std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", views[k].name,
                  a.p50, a.p95, b.p50, b.p95, ratio, ca.p95, cb.p95,
                  ca.p95 > 0 ? cb.p95 / ca.p95 : 0);
    }
    std::printf("worst p95 ratio (ingest / idle): %.2f (target <= 2)\n", worst);
    lab.Stop();
  }
  fs::remove_all(dir);
  return 0;
}
