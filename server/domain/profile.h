// Counters, passes, op profiles and memory in a run's results: the events a job asked for, what
// each pass of a run counted, per-operator profiles and memory figures; and a board's counter units
// as stored. Pure: standard library only. Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/domain/job.h"
#include "server/domain/pass_planner.h"

namespace mculab::server {

// The events a job asked for at submit (besides cycles), as given.
struct JobEvents {
  JobId job_id = 0;
  std::vector<std::string> events;
};

// A board's counter units in board order (the pass planner's input), and whether each is
// emulated (the QEMU plugin) or silicon.
struct BoardUnits {
  std::string board;
  std::vector<CounterUnit> units;
  std::vector<bool> emulated;  // per unit
};

// What one pass of a run counts: "cycles", then its events.
struct RunPass {
  RunId run_id = 0;
  std::uint32_t pass = 0;
  std::vector<std::string> events;
};

// One operator's aggregate of one metric in one case of one pass.
struct OpProfileRow {
  RunId run_id = 0;
  std::uint32_t pass = 0;
  std::uint32_t case_index = 0;
  std::uint32_t op_index = 0;
  std::uint32_t metric = 0;  // 0 = the timer, then the run's counters
  std::string type;
  std::string name;
  std::uint64_t count = 0;
  std::uint64_t sum = 0, min = 0, max = 0;
  bool unclosed = false;
};

// A memory figure in bytes: from the runner ELF (source "elf", case_index -1) or the runner's
// MEMORY report (source "runner", per case).
struct MemoryFigure {
  RunId run_id = 0;
  std::int32_t case_index = -1;
  std::string source;
  std::string category;
  std::uint64_t used = 0;
  std::uint64_t reserved = 0;
};

}  // namespace mculab::server
