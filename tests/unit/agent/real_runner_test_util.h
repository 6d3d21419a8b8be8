// Runs a real runner (host process or QEMU) through a Board and a RunnerSession, for the tests
// that check the agent against the firmware helper's real runners.
#pragma once

#include <chrono>
#include <stdexcept>

#include "agent/boards/board.h"
#include "agent/io/clock.h"
#include "agent/io/sandbox.h"
#include "agent/runner/runner_session.h"
#include "test_workloads.h"

namespace mculab::agent::testing {

struct CollectingListener : SessionListener {
  std::optional<Hello> hello;
  std::vector<SampleMsg> samples;
  std::vector<CaseResult> cases;
  std::vector<std::string> logs;
  std::function<void(const SampleMsg&)> on_sample;
  void OnStarted(const Hello& h, const std::vector<std::string>&) override { hello = h; }
  void OnSample(const SampleMsg& s) override {
    samples.push_back(s);
    if (on_sample) on_sample(s);
  }
  void OnCaseEnd(const CaseResult& r) override { cases.push_back(r); }
  void OnLog(const LogMsg& l) override { logs.push_back(l.text); }
  void OnError(const ErrorMsg&) override {}
  void OnDone(const Done&) override {}
};

// The job sandbox as the agent makes it (bubblewrap, or namespaces where bubblewrap cannot work,
// e.g. in a chroot; "nobody" when the tests run as root): the real runners are tested inside it.
inline Sandbox DefaultSandbox() {
  auto s = Sandbox::Create(MakeSandboxConfig("auto"));
  if (!s) throw std::runtime_error("cannot make the job sandbox: " + s.error().message);
  return *s;
}

struct RealRun {
  SessionResult result;
  CollectingListener listener;
  RunProvenance provenance;
  std::chrono::milliseconds wall{0};
  std::chrono::milliseconds start{0};  // board.Start(): temp files, spawn, connect
};

inline RealRun RunOnBoard(Board& board, std::uint32_t iterations,
                          std::chrono::milliseconds timeout = std::chrono::seconds(60),
                          CancelToken* cancel = nullptr,
                          std::function<void(const SampleMsg&)> on_sample = {}) {
  RealRun run;
  run.listener.on_sample = std::move(on_sample);
  const auto t0 = std::chrono::steady_clock::now();
  auto workload = BuildWorkload(MCULAB_OP_CONV2D_S8, ConvCases(), kSeed);
  RunSpec spec;
  spec.workload = *workload;
  auto proc = board.Start(spec);
  run.start =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  if (!proc) {
    run.result.outcome = RunOutcome::kInfraFailed;
    run.result.message = "start: " + proc.error().message;
    return run;
  }
  run.provenance = (*proc)->provenance();
  SessionConfig c;
  c.op = MCULAB_OP_CONV2D_S8;
  c.cases = ConvCases();
  c.seed = kSeed;
  c.iterations = iterations;
  c.warmup = 1;
  c.workload_len = static_cast<std::uint32_t>(spec.workload.size());
  c.run_timeout = timeout;
  c.log_prefix = board.Info().name;
  CancelToken none;
  run.result = RunSession(**proc, RealClock(), c, run.listener, cancel ? *cancel : none);
  proc->reset();
  run.wall =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  return run;
}

}  // namespace mculab::agent::testing
