// Lab: counters, passes, op profiles and memory. Boards register counter units; a job's events are
// checked against them at submit; each run is planned into passes on its board
// (server/domain/pass_planner.h), run back to back by the agent; op profiles and memory figures
// arrive with each case's end and the firmware's memory with the run's start; a finished run is
// flagged when its passes disagree on cycles.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "server/service/lab.h"
#include "server/service/profiles.h"

namespace mculab::server {
namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

Status Lab::CheckEventsLocked(const SubmitRequest& request) const {
  if (request.events.empty()) return {};
  bool any = false;
  for (const auto& [name, board] : boards_) {
    if (!request.board.empty() ? name != request.board : board.kind != request.kind) continue;
    any = true;
    auto it = board_units_.find(name);
    const std::vector<CounterUnit> none;
    const auto& units = it != board_units_.end() ? it->second.units : none;
    if (auto plan = PlanPasses(request.events, units); !plan.ok()) {
      return MakeError(ErrorCode::kInvalidArgument, "board " + name + ": " + plan.error().message);
    }
  }
  if (!any) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "no board to count events on for '" +
                         (request.board.empty() ? request.kind : request.board) + "'");
  }
  return {};
}

void Lab::SetBoardUnitsLocked(
    const std::string& board,
    const google::protobuf::RepeatedPtrField<mculab::v1::CounterUnit>& units, Tx& tx) {
  BoardUnits b = UnitsFromProto(board, units);
  tx.writes.board_units.push_back(b);
  board_units_[board] = std::move(b);
}

void Lab::PlanPassesLocked(const ActiveJob& aj, const Board& board, ActiveRun& run,
                           mculab::v1::Assignment& a, Tx& tx) {
  a.set_profile_ops(true);
  a.set_report_memory(true);
  PassPlan plan;
  auto it = board_units_.find(board.name);
  const std::vector<CounterUnit> none;
  auto planned = PlanPasses(aj.events, it != board_units_.end() ? it->second.units : none);
  if (planned.ok()) {
    plan = std::move(*planned);
  } else {
    // Checked at submit; a board whose units changed since then counts cycles only, and the
    // agent's runner says which event it can not count.
    spdlog::warn("job {} on board {}: {}", aj.job.id, board.name, planned.error().message);
    plan.passes.push_back(Pass{{std::string(kCyclesEvent)}, {}});
    for (const auto& e : aj.events) a.add_events(e);
  }
  run.passes = static_cast<std::uint32_t>(plan.passes.size());
  for (std::size_t i = 0; i < plan.passes.size(); ++i) {
    auto* p = a.add_passes();
    p->set_index(static_cast<std::uint32_t>(i));
    for (const std::string& e : plan.passes[i].events) {
      if (e != kCyclesEvent) p->add_events(e);
    }
    tx.writes.run_passes.push_back(
        RunPass{run.run.id, static_cast<std::uint32_t>(i), plan.passes[i].events});
  }
  if (planned.ok()) {
    for (const std::string& e : RunCounters(plan)) a.add_events(e);
  }
}

void Lab::AddCaseProfiles(RunId run, const mculab::v1::CaseDone& m, Tx& tx) {
  for (auto& row : OpRowsFromProto(run, m)) tx.writes.op_profiles.push_back(std::move(row));
  for (auto& f : MemoryFromProto(run, m.memory())) tx.writes.memory.push_back(std::move(f));
}

void Lab::AddFirmwareMemory(RunId run, const mculab::v1::RunStarted& m, Tx& tx) {
  for (auto& f : MemoryFromProto(run, m.firmware_memory()))
    tx.writes.memory.push_back(std::move(f));
}

std::string Lab::PassAgreementFlag(const Provenance& provenance, std::uint32_t passes,
                                   const std::vector<std::vector<double>>& cycles_by_pass) const {
  if (passes < 2) return "";
  const PassAgreement agreement =
      CheckPassAgreement(cycles_by_pass, config_.pass_cycles_tolerance, provenance.emulated);
  return agreement.Summary();
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
  for (const auto& [name, b] : boards_) {
    if (std::find(kinds.begin(), kinds.end(), b.kind) == kinds.end()) kinds.push_back(b.kind);
    if (!board.empty() ? name != board : b.kind != kind) continue;
    view.boards.push_back(name);
    view.emulated = view.emulated || b.emulated;
    auto it = board_units_.find(name);
    if (view.units.board.empty() && it != board_units_.end() && !it->second.units.empty()) {
      view.units = it->second;
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
