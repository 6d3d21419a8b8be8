// The run's passes as the agent runs them: for each pass, which events the runner counts
// (CONFIGURE) and which the board backend counts (e.g. the QEMU plugin), and the run-wide metric
// index of each (0 = the timer, i = counters[i - 1]).
//
// Thread-safety: plain values and a pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/boards/board.h"
#include "agent/run/run_types.h"

namespace mculab::agent {

struct AgentPass {
  std::uint32_t index = 0;
  std::vector<std::string> runner_events;
  std::vector<std::string> emulated_events;
  std::vector<std::uint32_t> emulated_metrics;  // per emulated event
};

struct AgentPlan {
  std::vector<std::string> counters;  // RunStartedRecord::counters: every pass's events, once
  std::vector<AgentPass> passes;
  // The metric index of `event`; 0 when the plan does not count it.
  std::uint32_t Metric(const std::string& event) const;
};

// The plan of `a` on a board described by `info`: an assignment without passes is one pass of its
// events; "cycles" (the timer) is in every pass and never a counter.
AgentPlan PlanOf(const RunAssignment& a, const BoardInfo& info);

}  // namespace mculab::agent
