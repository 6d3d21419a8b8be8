// RunMeasures (run_measures.h): counter units, pass plans, op profiles and memory rows.
#include "server/service/run_measures.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "server/service/profiles.h"

namespace mculab::server {

void RunMeasures::SetBoardUnitsLocked(const std::string& board, BoardUnits units, Effects& fx) {
  units.board = board;
  fx.writes.board_units.push_back(units);
  st_.boards.SetUnits(std::move(units));
}

void RunMeasures::PlanPassesLocked(const ActiveJob& aj, const Board& board, ActiveRun& run,
                                   RunAssignment& a, Effects& fx) {
  a.profile_ops = true;
  a.report_memory = true;
  PassPlan plan;
  const Result<PassPlan>& planned = st_.plans.Plan(aj.events, st_.boards.UnitsOf(board.name));
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

void RunMeasures::AddCaseProfiles(RunId run, CaseDoneReport& m, Effects& fx) {
  for (OpProfileRow& row : m.ops) {
    row.run_id = run;
    fx.writes.op_profiles.push_back(std::move(row));
  }
  for (MemoryFigure& f : m.memory) {
    f.run_id = run;
    fx.writes.memory.push_back(std::move(f));
  }
}

void RunMeasures::AddFirmwareMemory(RunId run, RunStartedReport& m, Effects& fx) {
  for (MemoryFigure& f : m.firmware_memory) {
    f.run_id = run;
    fx.writes.memory.push_back(std::move(f));
  }
}

}  // namespace mculab::server
