#include "server/service/profiles.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>

#include "common/stats.h"
#include "server/service/results.h"

namespace mculab::server {

BoardUnits UnitsFromProto(
    const std::string& board,
    const google::protobuf::RepeatedPtrField<mculab::v1::CounterUnit>& units) {
  BoardUnits out;
  out.board = board;
  for (const auto& u : units) {
    CounterUnit unit;
    unit.name = u.name();
    unit.max_simultaneous = u.max_simultaneous();
    unit.events.assign(u.events().begin(), u.events().end());
    out.units.push_back(std::move(unit));
    out.emulated.push_back(u.emulated());
  }
  return out;
}

bool AllEmulated(const BoardUnits& units) {
  return !units.emulated.empty() &&
         std::all_of(units.emulated.begin(), units.emulated.end(), [](bool e) { return e; });
}

Result<std::vector<std::string>> NormalizeEvents(const std::vector<std::string>& events) {
  std::vector<std::string> out;
  for (const std::string& raw : events) {
    std::string e;
    for (char c : raw) {
      if (!std::isspace(static_cast<unsigned char>(c))) {
        e += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
    }
    if (e.empty() || e == kCyclesEvent) continue;
    const bool ok = e.size() <= 32 && std::all_of(e.begin(), e.end(), [](char c) {
                      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
                    });
    if (!ok) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "event '" + raw +
                           "' is not an event name (letters, digits and _, at most 32): see "
                           "`mculab events --kind KIND`");
    }
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> RunCounters(const PassPlan& plan) {
  std::vector<std::string> out;
  for (const Pass& p : plan.passes) {
    for (const std::string& e : p.events) {
      if (e == kCyclesEvent) continue;
      if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
    }
  }
  return out;
}

std::vector<OpProfileRow> OpRowsFromProto(RunId run, const mculab::v1::CaseDone& m) {
  std::vector<OpProfileRow> out;
  for (const auto& op : m.ops()) {
    for (const auto& metric : op.metrics()) {
      OpProfileRow r;
      r.run_id = run;
      r.pass = m.pass();
      r.case_index = m.case_index();
      r.op_index = op.op_index();
      r.metric = metric.metric();
      r.type = op.type();
      r.name = op.name();
      r.count = metric.count();
      r.sum = metric.sum();
      r.min = metric.min();
      r.max = metric.max();
      r.unclosed = op.unclosed();
      out.push_back(std::move(r));
    }
  }
  return out;
}

std::vector<MemoryFigure> MemoryFromProto(
    RunId run, const google::protobuf::RepeatedPtrField<mculab::v1::MemoryFigure>& figures) {
  std::vector<MemoryFigure> out;
  for (const auto& f : figures) {
    out.push_back(
        MemoryFigure{run, f.case_index(), f.source(), f.category(), f.used(), f.reserved()});
  }
  return out;
}

std::vector<CaseStats> ComputePassCaseStats(JobId job, RunId run, const Provenance& provenance,
                                            std::span<const Sample> samples) {
  std::vector<Sample> kept;
  kept.reserve(samples.size());
  for (const Sample& s : samples) {
    if (s.metric != 0 || s.pass == 0) kept.push_back(s);
  }
  return ComputeCaseStats(job, run, provenance, kept);
}

std::vector<std::vector<double>> CyclesByPass(std::span<const Sample> samples, std::uint32_t passes,
                                              std::uint32_t cases) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<double>> values;
  for (const Sample& s : samples) {
    if (s.metric == 0) values[{s.pass, s.case_index}].push_back(static_cast<double>(s.value));
  }
  std::vector<std::vector<double>> out(
      passes, std::vector<double>(cases, std::numeric_limits<double>::quiet_NaN()));
  for (auto& [key, v] : values) {
    if (key.first < passes && key.second < cases) out[key.first][key.second] = Summarize(v).median;
  }
  return out;
}

}  // namespace mculab::server
