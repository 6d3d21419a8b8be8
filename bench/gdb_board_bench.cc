// The gdb board against QEMU's gdbstub next to the direct QEMU board (DESIGN.md §8, what
// was asked: "time from assignment to the runner's HELLO through the gdb backend, next to the
// direct QEMU board, and the RTT link's throughput"). Measured, never asserted.
//
//   gdb_board_bench           MCULAB_BENCH_RUNS (default 20) runs per board: the an547 runner
//                             (direct and over GDB with its UART) and the an500 RTT runner.
// Per board: Start() (spawn, connect, load) + HELLO, median and p90 over the runs; for the RTT
// link also the bytes per second of a long run's session and the stops' cost.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "agent/boards/gdb_board.h"
#include "agent/boards/qemu_board.h"
#include "agent/io/clock.h"
#include "agent/runner/runner_session.h"
#include "common/workload_builder.h"
#include "mculab/ops.h"

namespace mculab::agent {
namespace {

using Ms = std::chrono::duration<double, std::milli>;

std::vector<WorkloadCase> Cases() {
  return {{10, {1, 4, 8, 8, 4, 3, 3, 1, 1, 1, 1}}, {11, {1, 8, 6, 6, 8, 1, 1, 0, 0, 1, 1}}};
}

struct NullListener : SessionListener {
  std::size_t samples = 0;
  void OnStarted(const Hello&, const std::vector<std::string>&) override {}
  void OnSample(const SampleMsg&) override { ++samples; }
  void OnCaseEnd(const CaseResult&) override {}
  void OnLog(const LogMsg&) override {}
  void OnError(const ErrorMsg&) override {}
  void OnDone(const Done&) override {}
};

struct OneRun {
  double to_hello_ms = 0;  // Start() + the session's time to HELLO
  double session_ms = 0;
  std::size_t samples = 0;
  std::string diagnostics;
  bool ok = false;
  std::string message;
};

OneRun RunOnce(Board& board, std::uint32_t iterations) {
  OneRun r;
  auto workload = BuildWorkload(MCULAB_OP_CONV2D_S8, Cases(), 1234);
  RunSpec spec;
  spec.workload = *workload;
  const auto t0 = std::chrono::steady_clock::now();
  auto proc = board.Start(spec);
  const double start_ms = Ms(std::chrono::steady_clock::now() - t0).count();
  if (!proc) {
    r.message = proc.error().message;
    return r;
  }
  SessionConfig c;
  c.op = MCULAB_OP_CONV2D_S8;
  c.cases = Cases();
  c.seed = 1234;
  c.iterations = iterations;
  c.warmup = 1;
  c.workload_len = static_cast<std::uint32_t>(spec.workload.size());
  c.run_timeout = std::chrono::seconds(300);
  c.log_prefix = board.Info().name;
  NullListener l;
  CancelToken none;
  auto res = RunSession(**proc, RealClock(), c, l, none);
  r.session_ms = Ms(res.stats.to_done).count();
  r.to_hello_ms = start_ms + Ms(res.stats.to_hello).count();
  r.samples = l.samples;
  (*proc)->Kill();
  r.diagnostics = (*proc)->Diagnostics();
  r.ok = res.outcome == RunOutcome::kSucceeded;
  r.message = res.message;
  return r;
}

double Pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

GdbBoardOptions GdbOptions(const std::string& elf, bool rtt) {
  GdbBoardOptions o;
  o.server_command = std::string("qemu-system-arm -M ") + (rtt ? "mps2-an500" : "mps3-an547") +
                     " -S -icount shift=5,sleep=off -display none -monitor none "
                     "-chardev socket,id=gdb,path={gdb},server=on,wait=off -gdb chardev:gdb ";
  o.server_command += rtt ? "-serial null"
                          : "-chardev socket,id=link,path={link},server=on,wait=on "
                            "-serial chardev:link";
  o.gdb_link = "unix";
  o.link = rtt ? "rtt" : "unix";
  o.firmware = elf;
  o.workload_addr = 0x60000000;
  return o;
}

int Main() {
  const std::string elf = MCULAB_AN547_ELF;
  const char* runs_env = std::getenv("MCULAB_BENCH_RUNS");
  const int runs = runs_env ? std::atoi(runs_env) : 20;
  BoardInfo info;
  info.name = "bench";
  info.kind = "corstone300-qemu";
  info.emulated = true;
  QemuOptions qo;
  qo.firmware = elf;
  // Both boards as an agent runs them: QEMU in the job sandbox.
  auto sandbox = Sandbox::Create(MakeSandboxConfig("auto"));
  if (!sandbox) {
    std::fprintf(stderr, "sandbox: %s\n", sandbox.error().message.c_str());
    return 1;
  }
  QemuBoard direct(info, qo, RealClock(), *sandbox);
  GdbBoard uart(info, GdbOptions(elf, false), RealClock(), *sandbox);
  GdbBoard rtt(info, GdbOptions(MCULAB_AN500_RTT_ELF, true), RealClock(), *sandbox);
  struct Named {
    const char* name;
    Board* board;
  } boards[] = {{"qemu (direct, -kernel)", &direct},
                {"gdb: QEMU gdbstub, UART socket", &uart},
                {"gdb: QEMU gdbstub, RTT over GDB (an500-rtt)", &rtt}};
  std::printf("Start() + HELLO, %d runs each (2 conv2d cases x 5 iterations)\n", runs);
  std::printf("| board | median ms | p90 ms |\n|---|---|---|\n");
  for (auto& b : boards) {
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
      auto r = RunOnce(*b.board, 5);
      if (!r.ok) {
        std::fprintf(stderr, "%s: run failed: %s\n", b.name, r.message.c_str());
        return 1;
      }
      t.push_back(r.to_hello_ms);
    }
    std::printf("| %s | %.1f | %.1f |\n", b.name, Pct(t, 0.5), Pct(t, 0.9));
  }
  // Throughput: a long run over each link.
  std::printf("\nA long run (2 cases x 2000 iterations): session time from start to DONE\n");
  for (auto* b : {&boards[0], &boards[1], &boards[2]}) {
    auto r = RunOnce(*b->board, 2000);
    if (!r.ok) {
      std::fprintf(stderr, "%s: run failed: %s\n", b->name, r.message.c_str());
      return 1;
    }
    std::printf("%s: %zu samples in %.1f ms%s%s\n", b->name, r.samples, r.session_ms,
                r.diagnostics.find("RTT link") != std::string::npos ? "; " : "",
                r.diagnostics.find("RTT link") != std::string::npos
                    ? r.diagnostics
                          .substr(r.diagnostics.find("RTT link"),
                                  r.diagnostics.find(';', r.diagnostics.find("RTT link")) -
                                      r.diagnostics.find("RTT link"))
                          .c_str()
                    : "");
  }
  return 0;
}

}  // namespace
}  // namespace mculab::agent

int main() { return mculab::agent::Main(); }
