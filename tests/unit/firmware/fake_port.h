// A port for the runner core inside a test process (core/port.h): the link is two byte buffers,
// the timer is a counter the workload advances by hand, and the counter units are whatever the test
// installs. With it a test runs a whole session in-process (mculab_core_run) and checks every
// frame, value for value. Like leveldb's test Envs: a fake of the seam, not a mock of the core.
//
// Thread-safety: one session at a time, on the calling thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/runner_messages.h"
#include "mculab/counters.h"

namespace mculab::test_support {

struct FakePort {
  Bytes to_runner;  // what the core reads (CONFIGURE, RUN, ...), consumed from read_pos
  std::size_t read_pos = 0;
  std::size_t poll_from = 0;  // poll_byte() sees bytes only from this offset (ABORT tests)
  Bytes from_runner;          // every byte the core wrote
  std::uint64_t now = 1000;   // the timer: each read returns it and adds 1
  std::uint64_t timer_reads = 0;
  std::uint32_t aligns = 0;
  bool emulated = false;
  std::vector<mculab_counter_unit*> units;
  Bytes workload;  // the workload region
  std::vector<std::uint8_t> arena = std::vector<std::uint8_t>(1 << 20);
};

// The port the fake functions use; Reset() gives a fresh one.
FakePort& Port();
void ResetPort();

// A counter unit whose event `id` counts `id` per timer tick while started: value = id x ticks.
class FakeUnit {
 public:
  FakeUnit(std::string name, std::uint8_t max_simultaneous, std::vector<mculab_event> events,
           std::uint8_t flags = 0);
  mculab_counter_unit* unit() { return &unit_; }
  std::vector<std::uint16_t> selected;  // ids the last select() got
  std::vector<std::string> calls;       // "select", "start@T", "stop@T", "read@T"
  bool refuse_select = false;

 private:
  static int Select(mculab_counter_unit* u, const std::uint16_t* ids, unsigned n);
  static void Start(mculab_counter_unit* u);
  static void Stop(mculab_counter_unit* u);
  static void Read(mculab_counter_unit* u, std::uint64_t* values);

  std::string name_;
  std::vector<mculab_event> events_;
  mculab_counter_unit unit_{};
  std::uint64_t started_ = 0, stopped_ = 0;
  bool running_ = false;
};

}  // namespace mculab::test_support
