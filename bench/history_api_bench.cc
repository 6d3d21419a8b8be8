// The web page's API over a large history (target: every view's p95 < 10 ms at 1,000,000 jobs;
// DESIGN.md §8 asked for < 50 ms at 100,000). Every request goes through the HTTP route function
// (http::Router::Handle: authentication, parameter parsing, the store's query, JSON), without
// sockets.
//
//   BM_HistoryPage/N   one page of GET /api/v1/jobs, for the views the history page asks for
//                      (N indexes kHistoryViews: default, filtered, sorted, deep pages, ...)
//   BM_JobDetail       GET /api/v1/jobs/{id} of a finished job with 4 cases
//   BM_CaseSamples     GET /api/v1/jobs/{id}/samples (2,000 points, 40 bins) of a 4 x 2,000 job
//   BM_Compare         GET /api/v1/compare of two such jobs (bootstrap over every sample)
//
// The store is filled once with MCULAB_BENCH_JOBS jobs (default 1,000,000): 4 cases each, a run
// with provenance, case statistics and checksums, a realistic mix of users, kinds, ops, labels
// and states, one job a minute. Each benchmark reports p50/p95/p99 latency as counters (ms).
// Requests carry a viewer's bearer token, as the page's do.
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
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
using server::http::Request;
using server::http::Router;

constexpr std::int64_t kBaseMs = 1'760'000'000'000;
constexpr std::int64_t kMinute = 60'000;
constexpr std::uint32_t kSeriesIterations = 2000;

struct Kind {
  const char* kind;
  const char* board;
  bool emulated;
  const char* unit;
};
constexpr Kind kKinds[] = {{"corstone300-qemu", "an547-0", true, "cycles"},
                           {"host", "host-0", false, "ns"},
                           {"stm32h743-nucleo", "h743-0", false, "cycles"}};
const char* const kUsers[] = {"ana", "ben", "chen", "dara", "eve", "farid", "gita"};
const char* const kLabels[] = {
    "", "", "", "baseline", "nightly", "try 1", "after im2col change", "unroll x4", "O2 vs O3"};

std::int64_t JobCount() {
  const char* v = std::getenv("MCULAB_BENCH_JOBS");
  return v != nullptr ? std::max<std::int64_t>(100, std::atoll(v)) : 1'000'000;
}

// The lab every benchmark reads: filled once, on first use.
struct BenchLab {
  fs::path dir;
  std::unique_ptr<db::SqliteStore> store;
  server::SystemClock clock;
  std::unique_ptr<server::testing::OwnedLab> lab;
  std::unique_ptr<Router> router;
  std::int64_t jobs = 0;
  std::int64_t series_a = 0, series_b = 0;  // jobs with stored samples
  std::string token;                        // a viewer's

  BenchLab() {
    std::random_device rd;
    dir = fs::temp_directory_path() / ("mculab-history-bench-" + std::to_string(rd()));
    fs::create_directories(dir);
    auto s = db::SqliteStore::Open(dir / "mculab.db", FillOptions());
    if (!s.ok()) throw std::runtime_error(s.error().message);
    store = std::move(*s);
    jobs = JobCount();
    Fill();
    lab = std::make_unique<server::testing::OwnedLab>(*store, clock, server::LabConfig{}, dir);
    if (Status st = lab->Start(); !st.ok()) throw std::runtime_error(st.error().message);
    auto viewer = lab->accounts().AddUser("bench", "viewer");
    if (!viewer.ok()) throw std::runtime_error(viewer.error().message);
    token = viewer->token;
    router = std::make_unique<Router>(*lab, *store, clock, server::http::RouterOptions{});
  }
  ~BenchLab() {
    lab->Stop();
    lab.reset();
    store.reset();
    fs::remove_all(dir);
  }

  void Fill() {
    const auto t0 = std::chrono::steady_clock::now();
    std::mt19937_64 rng(42);
    auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    server::WriteSet boards;
    for (const Kind& k : kKinds) {
      server::Board b;
      b.name = k.board;
      b.kind = k.kind;
      b.agent = "lab-1";
      b.emulated = k.emulated;
      b.state = server::BoardState::kIdle;
      boards.boards.push_back(b);
    }
    Check(store->WriteAndWait(std::move(boards)));
    Check(store->BeginBulkLoad());  // the jobs' indexes are built once, after the jobs
    series_a = jobs - 1;
    series_b = jobs;
    server::WriteSet ws;
    for (std::int64_t id = 1; id <= jobs; ++id) {
      const bool series = id == series_a || id == series_b;
      const Kind& k = series ? kKinds[1] : kKinds[pick(3)];
      server::Job j;
      j.id = id;
      j.user = kUsers[pick(7)];
      j.kind = k.kind;
      j.op = series || pick(10) < 7 ? "conv2d_s8" : "fully_connected_s8";
      j.label = id == jobs / 3 ? "ticket 4711 regression" : kLabels[pick(9)];
      const std::size_t u = pick(100);
      j.state = series || u < 86 ? server::JobState::kSucceeded
                : u < 93         ? server::JobState::kFailed
                : u < 97         ? server::JobState::kCancelled
                                 : server::JobState::kTimedOut;
      if (id > jobs - 50 && !series) j.state = server::JobState::kQueued;
      const bool queued = j.state == server::JobState::kQueued;
      j.iterations =
          series ? kSeriesIterations : std::array<std::uint32_t, 3>{20, 50, 100}[pick(3)];
      j.warmup = 2;
      j.num_cases = 4;
      j.timeout_s = 600;
      j.created_ms = kBaseMs + id * kMinute;
      j.started_ms = queued ? 0 : j.created_ms + 2000;
      j.finished_ms = queued ? 0 : j.started_ms + 30'000;
      j.attempts = queued ? 0 : 1;
      j.assigned_board = queued ? "" : k.board;
      j.last_run_id = queued ? 0 : id;
      if (j.state == server::JobState::kFailed) j.message = "checksum mismatch on case 2";
      std::vector<server::CaseSpec> cases;
      for (int c = 0; c < 4; ++c) {
        if (j.op == "conv2d_s8") {
          cases.push_back({c, {1, 8 << (c % 2), 16, 16, 8, 3, 3, 1, 1, 1, 1}});
        } else {
          cases.push_back({c, {1, 64 << c, 32}});
        }
      }
      ws.new_jobs.push_back({j, cases});
      if (!queued) {
        server::Run r;
        r.id = id;
        r.job_id = id;
        r.attempt = 1;
        r.board = k.board;
        r.agent = "lab-1";
        r.state = j.state == server::JobState::kSucceeded ? server::RunState::kSucceeded
                                                          : server::RunState::kWorkloadFailed;
        r.created_ms = j.started_ms;
        r.finished_ms = j.finished_ms;
        r.started = true;
        r.provenance.runner_version = "0.2.0";
        r.provenance.port = k.emulated ? "an547" : "host";
        r.provenance.emulated = k.emulated;
        r.provenance.timer_unit = k.unit;
        r.provenance.firmware_sha256 = std::string(64, 'a');
        ws.runs.push_back(r);
        for (std::uint32_t c = 0; c < 4; ++c) {
          ws.case_results.push_back({id, c, 0x1234, 0x1234, true, 30});
          if (j.state != server::JobState::kSucceeded) continue;
          server::CaseStats st;
          st.job_id = id;
          st.run_id = id;
          st.case_index = c;
          st.metric = k.unit;
          st.unit = k.unit;
          st.n = j.iterations;
          st.min = 1000;
          st.median = 1100 + c;
          st.mean = 1110;
          st.p90 = 1200;
          st.p99 = 1300;
          st.stddev = 40;
          st.cv = 0.036;
          st.max = 1400;
          ws.case_stats.push_back(st);
        }
      }
      if (ws.Rows() >= 20'000 || id == jobs) {
        Check(store->WriteAndWait(std::move(ws)));
        ws = server::WriteSet{};
      }
    }
    Check(store->EndBulkLoad());
    // Raw samples of the two series jobs, for the samples and compare benchmarks.
    std::uint64_t seq = 0;
    for (std::int64_t job : {series_a, series_b}) {
      std::normal_distribution<double> noise(0, 30);
      for (std::uint32_t c = 0; c < 4; ++c) {
        server::WriteSet b;
        b.batch.emplace();
        b.batch->run_id = job;
        b.batch->sequence = seq++;
        for (std::uint32_t i = 0; i < kSeriesIterations; ++i) {
          b.batch->samples.push_back(
              {0, c, i, 0, static_cast<std::int64_t>(1000 * (c + 1) + noise(rng))});
        }
        b.batch->iterations = kSeriesIterations;
        Check(store->WriteAndWait(std::move(b)));
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::uintmax_t bytes = 0;
    for (const char* f : {"mculab.db", "mculab.db-wal"}) {
      std::error_code ec;
      const auto n = fs::file_size(dir / f, ec);
      if (!ec) bytes += n;
    }
    spdlog::info("history bench: {} jobs stored in {:.1f} s; database {:.1f} MiB", jobs, s,
                 static_cast<double>(bytes) / (1 << 20));
  }

  static void Check(const Status& s) {
    if (!s.ok()) throw std::runtime_error(s.error().message);
  }
};

BenchLab& Lab() {
  static BenchLab lab;
  return lab;
}

Request Get(const std::string& target, const std::string& token) {
  Request r{server::http::beast_http::verb::get, target, 11};
  r.set(server::http::beast_http::field::host, "bench");
  r.set(server::http::beast_http::field::authorization, "Bearer " + token);
  return r;
}

// Runs `target` once per iteration and reports latency percentiles. `before`, when set, runs
// before each request, outside the timed part.
void Measure(benchmark::State& state, const std::string& target,
             const std::function<void()>& before = nullptr) {
  BenchLab& lab = Lab();
  const Request req = Get(target, lab.token);
  {
    const auto t0 = std::chrono::steady_clock::now();
    auto warm = lab.router->Handle(req);
    state.counters["first_ms"] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (warm.response.result_int() != 200) {
      state.SkipWithError((target + ": HTTP " + std::to_string(warm.response.result_int()) + " " +
                           warm.response.body())
                              .c_str());
      return;
    }
  }
  std::vector<double> ms;
  std::size_t bytes = 0;
  for (auto _ : state) {
    if (before) {
      state.PauseTiming();
      before();
      state.ResumeTiming();
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto reply = lab.router->Handle(req);
    const auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(reply);
    bytes = reply.response.body().size();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double p) {
    return ms.empty() ? 0.0 : ms[std::min(ms.size() - 1, static_cast<std::size_t>(p * ms.size()))];
  };
  state.counters["p50_ms"] = pct(0.50);
  state.counters["p95_ms"] = pct(0.95);
  state.counters["p99_ms"] = pct(0.99);
  state.counters["bytes"] = static_cast<double>(bytes);
  state.SetLabel(target);
}

struct View {
  const char* name;
  std::string query;
};

std::vector<View> HistoryViews() {
  const std::int64_t jobs = JobCount();
  const std::int64_t mid = kBaseMs + (jobs / 2) * kMinute;
  const std::int64_t day = 24 * 60 * kMinute;
  return {
      {"default (newest first)", "sort=id&order=desc&limit=50&offset=0"},
      {"op + state filter", "op=conv2d_s8&state=succeeded&sort=id&order=desc&limit=50&offset=0"},
      {"user + kind filter", "user=chen&kind=host&sort=created&order=desc&limit=50&offset=0"},
      {"sorted by user", "sort=user&order=asc&limit=50&offset=0"},
      {"sorted by board, page 500", "sort=board&order=desc&limit=50&offset=25000"},
      {"last page", "sort=id&order=desc&limit=50&offset=" + std::to_string(jobs - 50)},
      {"label substring", "label=im2col&sort=id&order=desc&limit=50&offset=0"},
      {"board filter", "board=an547-0&sort=state&order=asc&limit=50&offset=0"},
      {"one day", "from=" + std::to_string(mid) + "&to=" + std::to_string(mid + day - 1) +
                      "&sort=created&order=asc&limit=50&offset=0"},
      {"failed + cancelled", "state=failed,cancelled&sort=op&order=desc&limit=50&offset=0"},
      {"500 per page", "sort=id&order=desc&limit=500&offset=0"},
      // Worst cases: a label no job has (every index entry is checked), and a deep page of a
      // filtered list in another order.
      {"label no job has, by created", "label=no-such-label&sort=created&order=desc&limit=50"},
      {"label one job has, by created", "label=4711&sort=created&order=desc&limit=50"},
      // Two characters: no trigram to look up, every label is read.
      {"two-character label, by id", "label=x4&sort=id&order=desc&limit=50"},
      {"op filter, page 500 by created",
       "op=fully_connected_s8&sort=created&order=asc&limit=50&offset=25000"},
  };
}

void BM_HistoryPage(benchmark::State& state) {
  const View v = HistoryViews().at(static_cast<std::size_t>(state.range(0)));
  Measure(state, "/api/v1/jobs?" + v.query);
  state.SetLabel(v.name);
}
BENCHMARK(BM_HistoryPage)->DenseRange(0, 14)->Iterations(200)->Unit(benchmark::kMillisecond);

void BM_JobDetail(benchmark::State& state) {
  Measure(state, "/api/v1/jobs/" + std::to_string(JobCount() / 2));
}
BENCHMARK(BM_JobDetail)->Iterations(2000)->Unit(benchmark::kMicrosecond);

void BM_CaseSamples(benchmark::State& state) {
  Measure(state, "/api/v1/jobs/" + std::to_string(Lab().series_a) +
                     "/samples?case=1&max_points=2000&bins=40");
}
BENCHMARK(BM_CaseSamples)->Iterations(200)->Unit(benchmark::kMillisecond);

void BM_Compare(benchmark::State& state) {
  Measure(state, "/api/v1/compare?jobs=" + std::to_string(Lab().series_a) + "," +
                     std::to_string(Lab().series_b));
}
BENCHMARK(BM_Compare)->Iterations(50)->Unit(benchmark::kMillisecond);

// GET /api/v1/changes (the newest 200 succeeded jobs, each case's series): first_ms is the first
// answer, computed with nothing kept; then the answer kept while nothing is committed
// (BM_ChangesKept), and computed again after a commit before every request, with each finished
// job's trend point kept (BM_ChangesAfterCommit: a write that touches no job, so every series'
// trend is kept; BM_ChangesAfterJob: a job of one series succeeds).
void BM_ChangesKept(benchmark::State& state) { Measure(state, "/api/v1/changes"); }
BENCHMARK(BM_ChangesKept)->Iterations(200)->Unit(benchmark::kMillisecond);

void BM_ChangesAfterCommit(benchmark::State& state) {
  BenchLab& lab = Lab();
  server::Board b;
  b.name = "bench-spare-0";
  b.kind = "host";
  b.agent = "lab-1";
  std::int64_t n = 0;
  Measure(state, "/api/v1/changes", [&] {
    b.lease_until_ms = ++n;  // any state write moves the store's state version
    server::WriteSet ws;
    ws.boards.push_back(b);
    BenchLab::Check(lab.store->WriteAndWait(std::move(ws)));
  });
}
BENCHMARK(BM_ChangesAfterCommit)->Iterations(20)->Unit(benchmark::kMillisecond);

// The same after a job of one of the scanned series succeeds before every request (a new job,
// its run and statistics in one write): that series' trend is computed again, the others kept.
void BM_ChangesAfterJob(benchmark::State& state) {
  BenchLab& lab = Lab();
  auto max = lab.store->MaxJobId();
  BenchLab::Check(max.ok() ? Status{} : max.error());
  server::JobId next = *max;
  auto max_run = lab.store->MaxRunId();
  BenchLab::Check(max_run.ok() ? Status{} : max_run.error());
  server::RunId next_run = *max_run;
  Measure(state, "/api/v1/changes", [&] {
    server::WriteSet ws;
    server::Job j;
    j.id = ++next;
    j.user = "ana";
    j.kind = kKinds[1].kind;
    j.op = "conv2d_s8";
    j.label = "nightly";
    j.state = server::JobState::kSucceeded;
    j.iterations = 20;
    j.warmup = 2;
    j.num_cases = 1;
    j.timeout_s = 600;
    j.created_ms = kBaseMs + j.id * kMinute;
    j.started_ms = j.created_ms + 2000;
    j.finished_ms = j.started_ms + 30'000;
    j.attempts = 1;
    j.assigned_board = kKinds[1].board;
    j.last_run_id = ++next_run;
    ws.new_jobs.push_back({j, {{0, {1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1}}}});
    server::Run r;
    r.id = j.last_run_id;
    r.job_id = j.id;
    r.attempt = 1;
    r.board = j.assigned_board;
    r.agent = "lab-1";
    r.state = server::RunState::kSucceeded;
    r.created_ms = j.started_ms;
    r.finished_ms = j.finished_ms;
    r.started = true;
    r.provenance.timer_unit = kKinds[1].unit;
    ws.runs.push_back(r);
    server::CaseStats st;
    st.job_id = j.id;
    st.run_id = r.id;
    st.metric = st.unit = kKinds[1].unit;
    st.n = j.iterations;
    st.min = st.median = st.mean = st.p90 = st.p99 = st.max = 1100;
    ws.case_stats.push_back(st);
    BenchLab::Check(lab.store->WriteAndWait(std::move(ws)));
  });
}
BENCHMARK(BM_ChangesAfterJob)->Iterations(20)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
