// Lab: counters, passes, op profiles and memory. Boards register counter units (a job's events are
// checked against them at submit: domain/admission.h); each run is planned into passes on its board
// (server/domain/pass_planner.h), run back to back by the agent; op profiles and memory figures
// arrive with each case's end and the firmware's memory with the run's start; a finished run is
// flagged when its passes disagree on cycles.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "server/service/lab.h"
#include "server/service/profiles.h"
#include "server/service/results.h"

namespace mculab::server {
namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

void Lab::SetBoardUnitsLocked(const std::string& board, BoardUnits units, Effects& fx) {
  units.board = board;
  fx.writes.board_units.push_back(units);
  boards_.SetUnits(std::move(units));
}

void Lab::PlanPassesLocked(const ActiveJob& aj, const Board& board, ActiveRun& run,
                           RunAssignment& a, Effects& fx) {
  a.profile_ops = true;
  a.report_memory = true;
  PassPlan plan;
  const Result<PassPlan>& planned = plans_.Plan(aj.events, boards_.UnitsOf(board.name));
  if (planned.ok()) {
    plan = *planned;
  } else {
    // Checked at submit; a board whose units changed since then counts cycles only, and the
    // agent's runner says which event it can not count.
    spdlog::warn("job {} on board {}: {}", aj.job.id, board.name, planned.error().message);
    plan.passes.push_back(Pass{{std::string(kCyclesEvent)}, {}});
    a.events.insert(a.events.end(), aj.events.begin(), aj.events.end());
  }
  run.passes = static_cast<std::uint32_t>(plan.passes.size());
  for (std::size_t i = 0; i < plan.passes.size(); ++i) {
    PassAssignment& p = a.passes.emplace_back();
    p.index = static_cast<std::uint32_t>(i);
    for (const std::string& e : plan.passes[i].events) {
      if (e != kCyclesEvent) p.events.push_back(e);
    }
    fx.writes.run_passes.push_back(
        RunPass{run.run.id, static_cast<std::uint32_t>(i), plan.passes[i].events});
  }
  if (planned.ok()) {
    for (std::string& e : RunCounters(plan)) a.events.push_back(std::move(e));
  }
}

void Lab::AddCaseProfiles(RunId run, CaseDoneReport& m, Effects& fx) {
  for (OpProfileRow& row : m.ops) {
    row.run_id = run;
    fx.writes.op_profiles.push_back(std::move(row));
  }
  for (MemoryFigure& f : m.memory) {
    f.run_id = run;
    fx.writes.memory.push_back(std::move(f));
  }
}

void Lab::AddFirmwareMemory(RunId run, RunStartedReport& m, Effects& fx) {
  for (MemoryFigure& f : m.firmware_memory) {
    f.run_id = run;
    fx.writes.memory.push_back(std::move(f));
  }
}

Result<EventsView> Lab::ListEvents(const Caller& caller, const std::string& kind,
                                   const std::string& board) {
  if (Status s = RequireRole(caller, Role::kViewer, "list the events boards count"); !s.ok()) {
    return s.error();
  }
  if (kind.empty() && board.empty()) {
    return MakeError(ErrorCode::kInvalidArgument, "give a board kind (--kind) or a board name");
  }
  std::lock_guard l(mu_);
  EventsView view;
  std::vector<std::string> kinds;
  for (const auto& [name, b] : boards_.all()) {
    if (std::find(kinds.begin(), kinds.end(), b.kind) == kinds.end()) kinds.push_back(b.kind);
    if (!board.empty() ? name != board : b.kind != kind) continue;
    view.boards.push_back(name);
    view.emulated = view.emulated || b.emulated;
    view.measured =
        MeasuredOfBoard(view.emulated, view.measured == kMeasuredHost || IsHostBoard(b));
    const BoardUnits* units = boards_.RegisteredUnits(name);
    if (view.units.board.empty() && units != nullptr && !units->units.empty()) {
      view.units = *units;
    }
  }
  if (view.boards.empty()) {
    return MakeError(ErrorCode::kNotFound,
                     board.empty() ? "no board of kind '" + kind + "'; the lab has: " + Join(kinds)
                                   : "no board named '" + board + "'");
  }
  view.countable = CountableEvents(view.units.units);
  return view;
}

}  // namespace mculab::server
