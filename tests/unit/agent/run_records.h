// Run messages for the agent's unit tests: a sink that records what a run sends, and records with
// every field set (so a translation or an encoding that drops one shows).
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "agent/run/run_types.h"

namespace mculab::agent::testing {

struct RecordingSink : RunSink {
  std::vector<RunMessage> sent;
  void Send(RunMessage m) override { sent.push_back(std::move(m)); }
  // What SendDeferred held back, with its delay (never sent: a test's sink has no timer).
  std::vector<std::pair<RunStateRecord, std::chrono::milliseconds>> deferred;
  void SendDeferred(RunStateRecord state, std::chrono::milliseconds after) override {
    deferred.emplace_back(std::move(state), after);
  }
  // The messages of one kind, in the order sent.
  template <typename T>
  std::vector<T> All() const {
    std::vector<T> out;
    for (const auto& m : sent)
      if (auto* t = std::get_if<T>(&m)) out.push_back(*t);
    return out;
  }
};

inline RunStartedRecord FullRunStarted() {
  RunStartedRecord s;
  s.run_id = 42;
  s.runner_version = "1.2.0 (tflite-helium)";
  s.port = "an547";
  s.cpu = "cortex-m55";
  s.clock_hz = 32'000'000;
  s.emulated = true;
  s.timer_unit = "instructions";
  s.counters = {"instructions", "loads"};
  s.firmware_sha256 = std::string(64, 'f');
  s.workload_sha256 = std::string(64, 'w');
  s.toolchain = "GCC 12.2";
  s.board_serial = "0670FF";
  s.note = "QEMU -icount";
  s.seed = 7;
  s.firmware_memory = {{-1, "elf", "flash.text", 12345, 0}, {-1, "elf", "ram.bss", 99, 0}};
  s.kernel_set = "helium";
  return s;
}

inline CaseDoneRecord FullCaseDone() {
  CaseDoneRecord c;
  c.run_id = 42;
  c.case_index = 3;
  c.checksum = 0xdeadbeef;
  c.expected_checksum = 0xdeadbeee;
  c.checksum_ok = true;
  c.overhead = -5;
  c.counter_overhead = {1, -2};
  c.pass = 1;
  c.ops = {{0, "CONV_2D", "conv", 10, false, {{0, 10, 1000, 90, 110}, {2, 10, 5, 0, 1}}},
           {1, "SOFTMAX", "", 10, true, {}}};
  c.memory = {{3, "runner", "arena", 4096, 8192}};
  c.checksum_unverified = true;
  return c;
}

}  // namespace mculab::agent::testing
