#include "agent/run/run_plan.h"

#include <algorithm>
#include <utility>

namespace mculab::agent {
namespace {

bool IsEmulatedEvent(const BoardInfo& info, const std::string& event) {
  for (const CounterUnitInfo& u : info.counter_units) {
    if (!u.external) continue;
    if (std::find(u.events.begin(), u.events.end(), event) != u.events.end()) return true;
  }
  return false;
}

bool IsCounter(const std::string& event) { return !event.empty() && event != "cycles"; }

}  // namespace

std::uint32_t AgentPlan::Metric(const std::string& event) const {
  for (std::size_t i = 0; i < counters.size(); ++i) {
    if (counters[i] == event) return static_cast<std::uint32_t>(i + 1);
  }
  return 0;
}

AgentPlan PlanOf(const RunAssignment& a, const BoardInfo& info) {
  const std::vector<RunPass> specs =
      a.passes.empty() ? std::vector<RunPass>{{0, a.events}} : a.passes;
  AgentPlan plan;
  for (const RunPass& spec : specs) {
    for (const auto& e : spec.events) {
      if (IsCounter(e) && plan.Metric(e) == 0) plan.counters.push_back(e);
    }
  }
  for (const RunPass& spec : specs) {
    AgentPass p;
    p.index = spec.index;
    for (const auto& e : spec.events) {
      if (!IsCounter(e)) continue;
      if (IsEmulatedEvent(info, e)) {
        p.emulated_events.push_back(e);
        p.emulated_metrics.push_back(plan.Metric(e));
      } else {
        p.runner_events.push_back(e);
      }
    }
    plan.passes.push_back(std::move(p));
  }
  return plan;
}

}  // namespace mculab::agent
