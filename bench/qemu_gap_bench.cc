// The gap between consecutive jobs on one QEMU board, cold (a QEMU started per job: -kernel and
// the loader device) against warm (the next QEMU started halted while the current job runs, the
// runner loaded over its gdbstub and booted to its HELLO ahead, the workload written when the
// job comes). Measured, never asserted.
//
//   qemu_gap_bench     MCULAB_BENCH_RUNS (default 20) jobs back to back per board;
//                      MCULAB_BENCH_ITERATIONS (default 50) iterations of 2 conv2d cases per job;
//                      MCULAB_BENCH_IDLE_MS (default 0): the board idles this long between a
//                      job's end and the next job's arrival (not counted in the gap)
//
// The gap of job i is from job i-1's DONE to job i's HELLO, as an agent with the next job already
// assigned sees it: the previous runner's teardown (halt, kill and reap QEMU), Start() (cold:
// temp dir, spawn, connect; warm: load over GDB), then the runner's boot to HELLO. Each part is
// reported with its median and p90.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "agent/boards/qemu_board.h"
#include "agent/io/clock.h"
#include "agent/runner/runner_session.h"
#include "common/workload_builder.h"
#include "mculab/ops.h"

namespace mculab::agent {
namespace {

using Clk = std::chrono::steady_clock;
using Ms = std::chrono::duration<double, std::milli>;

std::vector<WorkloadCase> Cases() {
  return {{10, {1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1}}, {11, {1, 8, 6, 6, 8, 1, 1, 0, 0, 1, 1}}};
}

struct NullListener : SessionListener {
  std::vector<std::uint64_t> timers;
  Clk::time_point hello{};  // when HELLO was decoded (the session's own figure is in whole ms)
  void OnStarted(const Hello&, const std::vector<std::string>&) override { hello = Clk::now(); }
  void OnSample(const SampleMsg& s) override { timers.push_back(s.timer); }
  void OnCaseEnd(const CaseResult&) override {}
  void OnLog(const LogMsg&) override {}
  void OnError(const ErrorMsg&) override {}
  void OnDone(const Done&) override {}
};

struct Gaps {
  std::vector<double> teardown, start, boot, total;
  std::vector<double> wait_server, load;    // warm: Start() split
  std::uint64_t load_packets = 0;           // warm: GDB packets of the last load
  std::vector<std::uint64_t> first_timers;  // job 0's samples, to compare boards
  bool same_counts = true;                  // every job's samples equal job 0's
};

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

bool RunJobs(QemuBoard& board, int runs, std::uint32_t iterations, int idle_ms, Gaps& g) {
  auto workload = BuildWorkload(MCULAB_OP_CONV2D_S8, Cases(), 1234);
  RunSpec spec;
  spec.workload = *workload;
  SessionConfig c;
  c.op = MCULAB_OP_CONV2D_S8;
  c.cases = Cases();
  c.seed = 1234;
  c.iterations = iterations;
  c.warmup = 1;
  c.workload_len = static_cast<std::uint32_t>(spec.workload.size());
  c.run_timeout = std::chrono::seconds(300);
  c.log_prefix = board.Info().name;
  std::unique_ptr<RunnerProcess> prev;
  Clk::time_point prev_done{};
  for (int i = 0; i < runs; ++i) {
    if (i > 0 && idle_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
    const auto t0 = Clk::now();
    prev.reset();  // the previous job's runner: halted, QEMU killed and reaped
    const auto t1 = Clk::now();
    auto proc = board.Start(spec);
    const auto t2 = Clk::now();
    if (!proc) {
      std::fprintf(stderr, "%s: Start: %s\n", board.Info().name.c_str(),
                   proc.error().message.c_str());
      return false;
    }
    NullListener l;
    CancelToken none;
    auto res = RunSession(**proc, RealClock(), c, l, none);
    if (res.outcome != RunOutcome::kSucceeded) {
      std::fprintf(stderr, "%s: job %d: %s\n", board.Info().name.c_str(), i, res.message.c_str());
      return false;
    }
    const double boot = Ms(l.hello - t2).count();
    if (i > 0) {
      // prev_done -> t0 is this loop's own bookkeeping (nothing an agent waits for).
      g.teardown.push_back(Ms(t1 - t0).count());
      g.start.push_back(Ms(t2 - t1).count());
      g.boot.push_back(boot);
      g.total.push_back(Ms(t1 - t0).count() + Ms(t2 - t1).count() + boot);
      const auto w = board.last_warm_times();
      g.wait_server.push_back(Ms(w.wait).count());
      g.load.push_back(Ms(w.load).count());
      g.load_packets = w.load_packets;
    }
    if (i == 0) {
      g.first_timers = l.timers;
    } else if (l.timers != g.first_timers) {
      g.same_counts = false;
    }
    prev_done = Clk::now();
    prev = std::move(*proc);
  }
  (void)prev_done;
  return true;
}

int Main() {
  const char* runs_env = std::getenv("MCULAB_BENCH_RUNS");
  const int runs = std::max(2, runs_env ? std::atoi(runs_env) : 20);
  const char* it_env = std::getenv("MCULAB_BENCH_ITERATIONS");
  const auto iterations = static_cast<std::uint32_t>(it_env ? std::atoi(it_env) : 50);
  const char* idle_env = std::getenv("MCULAB_BENCH_IDLE_MS");
  const int idle_ms = idle_env ? std::atoi(idle_env) : 0;
  auto sandbox = Sandbox::Create(MakeSandboxConfig("auto"));
  if (!sandbox) {
    std::fprintf(stderr, "sandbox: %s\n", sandbox.error().message.c_str());
    return 1;
  }
  BoardInfo info;
  info.kind = "corstone300-qemu";
  info.emulated = true;
  QemuOptions qo;
  qo.firmware = MCULAB_AN547_ELF;
  info.name = "cold";
  QemuBoard cold(info, qo, RealClock(), *sandbox);
  qo.warm = true;
  info.name = "warm";
  QemuBoard warm(info, qo, RealClock(), *sandbox);
  std::printf(
      "Gap between jobs on one QEMU an547 board: previous job's DONE -> next job's HELLO\n"
      "%d jobs per board (2 conv2d cases x %u iterations), %d ms idle between jobs, QEMU in "
      "the job sandbox\n\n",
      runs, iterations, idle_ms);
  std::printf("| board | part | median ms | p90 ms |\n|---|---|---|---|\n");
  Gaps gc, gw;
  if (!RunJobs(cold, runs, iterations, idle_ms, gc)) return 1;
  if (!RunJobs(warm, runs, iterations, idle_ms, gw)) return 1;
  for (auto [name, g] : {std::pair<const char*, Gaps*>{"cold", &gc}, {"warm", &gw}}) {
    std::printf("| %s | teardown of the previous runner | %.2f | %.2f |\n", name,
                Pct(g->teardown, 0.5), Pct(g->teardown, 0.9));
    std::printf("| %s | Start() | %.2f | %.2f |\n", name, Pct(g->start, 0.5), Pct(g->start, 0.9));
    if (g == &gw) {
      std::printf("| %s | Start(): waiting for the QEMU started ahead | %.2f | %.2f |\n", name,
                  Pct(g->wait_server, 0.5), Pct(g->wait_server, 0.9));
      std::printf("| %s | Start(): workload + continue written to QEMU's gdbstub | %.2f | %.2f |\n",
                  name, Pct(g->load, 0.5), Pct(g->load, 0.9));
    }
    std::printf("| %s | Start() -> HELLO read | %.2f | %.2f |\n", name, Pct(g->boot, 0.5),
                Pct(g->boot, 0.9));
    std::printf("| %s | **gap** | **%.2f** | **%.2f** |\n", name, Pct(g->total, 0.5),
                Pct(g->total, 0.9));
  }
  std::printf(
      "\nwarm jobs that found their QEMU started: %d of %d; GDB packets per warm load: %llu\n",
      warm.warm_starts(), runs - 1, static_cast<unsigned long long>(gw.load_packets));
  std::printf("counts: every cold job equal: %s; every warm job equal: %s; warm == cold: %s\n",
              gc.same_counts ? "yes" : "NO", gw.same_counts ? "yes" : "NO",
              gw.first_timers == gc.first_timers ? "yes" : "NO");
  return gc.same_counts && gw.same_counts && gw.first_timers == gc.first_timers ? 0 : 1;
}

}  // namespace
}  // namespace mculab::agent

int main() { return mculab::agent::Main(); }
