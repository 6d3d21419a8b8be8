#include "server/domain/run.h"

namespace mculab::server {

std::string_view RunStateName(RunState state) {
  switch (state) {
    case RunState::kAssigned:
      return "assigned";
    case RunState::kPreparing:
      return "preparing";
    case RunState::kRunning:
      return "running";
    case RunState::kSucceeded:
      return "succeeded";
    case RunState::kWorkloadFailed:
      return "workload_failed";
    case RunState::kInfraFailed:
      return "infra_failed";
    case RunState::kCancelled:
      return "cancelled";
    case RunState::kTimedOut:
      return "timed_out";
  }
  return "unknown";
}

std::optional<RunState> ParseRunState(std::string_view name) {
  for (RunState s : kAllRunStates)
    if (RunStateName(s) == name) return s;
  return std::nullopt;
}

bool IsLegalTransition(RunState from, RunState to) {
  for (const RunTransitionRule& r : kRunTransitions) {
    if (r.from == from && r.to == to) return true;
  }
  return false;
}

Status ApplyTransition(Run& run, RunState to, std::string message, std::int64_t now_ms) {
  if (!IsLegalTransition(run.state, to)) {
    return MakeError(ErrorCode::kFailedPrecondition, "run " + std::to_string(run.id) +
                                                         " cannot go from " +
                                                         std::string(RunStateName(run.state)) +
                                                         " to " + std::string(RunStateName(to)));
  }
  run.state = to;
  if (IsFinal(to)) {
    run.finished_ms = now_ms;
    run.message = std::move(message);
  }
  return {};
}

bool IsFinal(RunState state) {
  return state != RunState::kAssigned && state != RunState::kPreparing &&
         state != RunState::kRunning;
}

std::string MetricName(const Provenance& p, std::uint32_t metric) {
  if (metric == 0) return p.timer_unit.empty() ? "timer" : p.timer_unit;
  if (metric - 1 < p.counters.size()) return p.counters[metric - 1];
  return "metric" + std::to_string(metric);
}

}  // namespace mculab::server
