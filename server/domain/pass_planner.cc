#include "server/domain/pass_planner.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string_view>

namespace mculab::server {

namespace {

// Event slots a unit has for requested events.
std::uint32_t EventSlots(const CounterUnit& unit) {
  if (unit.has_cycle_counter) return unit.max_simultaneous;
  return unit.max_simultaneous > 0 ? unit.max_simultaneous - 1 : 0;
}

// Where each countable event is counted: (unit index, index in the unit's catalogue), the first
// unit in board order that has a slot for it.
std::map<std::string, std::pair<std::size_t, std::size_t>, std::less<>> Catalogue(
    std::span<const CounterUnit> units) {
  std::map<std::string, std::pair<std::size_t, std::size_t>, std::less<>> where;
  for (std::size_t u = 0; u < units.size(); ++u) {
    if (EventSlots(units[u]) == 0) continue;
    for (std::size_t e = 0; e < units[u].events.size(); ++e) {
      const std::string& name = units[u].events[e];
      if (name == kCyclesEvent) continue;
      where.emplace(name, std::make_pair(u, e));
    }
  }
  return where;
}

std::string Join(const std::vector<std::string>& names, std::string_view quote) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out.append(quote).append(n).append(quote);
  }
  return out;
}

// A figure for people: shortest round trip ("1000", "1000.5"), or `digits` significant digits.
std::string Number(double v, int digits = 0) {
  char buf[64];
  auto r = digits > 0 ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, digits)
                      : std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

std::vector<std::string> CountableEvents(std::span<const CounterUnit> units) {
  std::vector<std::string> out = {std::string(kCyclesEvent)};
  const auto where = Catalogue(units);
  for (std::size_t u = 0; u < units.size(); ++u) {
    for (std::size_t e = 0; e < units[u].events.size(); ++e) {
      auto it = where.find(units[u].events[e]);
      if (it != where.end() && it->second == std::make_pair(u, e)) out.push_back(it->first);
    }
  }
  return out;
}

namespace {

// Where `name` is counted: the first unit in board order with a slot for requested events that
// lists it, and its first index there (as Catalogue places it); nullopt when no unit counts it.
// A linear search: a board has a few units of a few events, and a plan is made per placement.
std::optional<std::pair<std::size_t, std::size_t>> Place(std::string_view name,
                                                         std::span<const CounterUnit> units) {
  if (name == kCyclesEvent) return std::nullopt;
  for (std::size_t u = 0; u < units.size(); ++u) {
    if (EventSlots(units[u]) == 0) continue;
    const auto& events = units[u].events;
    for (std::size_t e = 0; e < events.size(); ++e) {
      if (events[e] == name) return std::make_pair(u, e);
    }
  }
  return std::nullopt;
}

}  // namespace

const Result<PassPlan>& PassPlanCache::Plan(std::span<const std::string> requested,
                                            std::span<const CounterUnit> units) {
  const KeyView view{requested, units};
  if (auto it = plans_.find(view); it != plans_.end()) return it->second;
  if (plans_.size() >= kMaxEntries) plans_.clear();
  Key key{{requested.begin(), requested.end()}, {units.begin(), units.end()}};
  return plans_.emplace(std::move(key), PlanPasses(requested, units)).first->second;
}

Result<PassPlan> PlanPasses(std::span<const std::string> requested,
                            std::span<const CounterUnit> units) {
  // (unit, catalogue index) of each requested event: ascending, each once. One vector, so a plan
  // (made for every placement) allocates little.
  std::vector<std::pair<std::size_t, std::size_t>> wanted;
  wanted.reserve(requested.size());
  std::vector<std::string> unknown;  // request order, each once
  for (const std::string& name : requested) {
    if (name == kCyclesEvent) continue;
    if (auto at = Place(name, units)) {
      wanted.push_back(*at);
    } else if (std::find(unknown.begin(), unknown.end(), name) == unknown.end()) {
      unknown.push_back(name);
    }
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  if (!unknown.empty()) {
    std::string message = unknown.size() == 1 ? "event " : "events ";
    message += Join(unknown, "'");
    message += " can not be counted on this board; it can count: ";
    message += Join(CountableEvents(units), "");
    return MakeError(ErrorCode::kInvalidArgument, std::move(message));
  }

  // Each unit's events: wanted[first[u], first[u + 1]).
  std::vector<std::size_t> first(units.size() + 1, wanted.size());
  for (std::size_t i = wanted.size(); i-- > 0;) first[wanted[i].first] = i;
  for (std::size_t u = units.size(); u-- > 0;) first[u] = std::min(first[u], first[u + 1]);
  std::size_t num_passes = 1;
  for (std::size_t u = 0; u < units.size(); ++u) {
    const std::size_t n = first[u + 1] - first[u];
    const std::size_t slots = EventSlots(units[u]);  // > 0 when anything is wanted of the unit
    if (n > 0) num_passes = std::max(num_passes, (n + slots - 1) / slots);
  }

  PassPlan plan;
  plan.passes.resize(num_passes);
  for (Pass& pass : plan.passes) {
    pass.events.reserve(1 + wanted.size());
    pass.events.emplace_back(kCyclesEvent);
  }
  for (std::size_t u = 0; u < units.size(); ++u) {
    const CounterUnit& unit = units[u];
    const std::size_t slots = EventSlots(unit);
    const std::size_t n = first[u + 1] - first[u];
    for (std::size_t k = 0; k * slots < n; ++k) {
      UnitSelection selection{unit.name, {}, !unit.has_cycle_counter};
      const std::size_t end = std::min(n, (k + 1) * slots);
      selection.events.reserve(end - k * slots);
      for (std::size_t i = k * slots; i < end; ++i) {
        selection.events.push_back(unit.events[wanted[first[u] + i].second]);
      }
      Pass& pass = plan.passes[k];
      pass.events.insert(pass.events.end(), selection.events.begin(), selection.events.end());
      pass.units.push_back(std::move(selection));
    }
  }
  return plan;
}

// ---- Agreement between passes ----------------------------------------------------------------

PassAgreement CheckPassAgreement(std::span<const std::vector<double>> cycles_by_pass,
                                 double tolerance, bool emulated) {
  PassAgreement out;
  out.emulated = emulated;
  out.tolerance = emulated || !(tolerance >= 0) ? 0 : tolerance;
  out.passes = static_cast<std::uint32_t>(cycles_by_pass.size());
  std::size_t cases = 0;
  for (const auto& row : cycles_by_pass) cases = std::max(cases, row.size());
  out.cases = static_cast<std::uint32_t>(cases);
  if (cycles_by_pass.size() < 2) return out;

  for (std::size_t c = 0; c < cases; ++c) {
    bool complete = true;
    std::size_t low = 0, high = 0;
    for (std::size_t p = 0; p < cycles_by_pass.size() && complete; ++p) {
      const auto& row = cycles_by_pass[p];
      if (c >= row.size() || !std::isfinite(row[c])) {
        complete = false;
        break;
      }
      if (row[c] < cycles_by_pass[low][c]) low = p;
      if (row[c] > cycles_by_pass[high][c]) high = p;
    }
    const auto index = static_cast<std::uint32_t>(c);
    if (!complete) {
      out.incomplete_cases.push_back(index);
      continue;
    }
    const double lo = cycles_by_pass[low][c];
    const double hi = cycles_by_pass[high][c];
    if (hi == lo) continue;
    const double spread =
        lo == 0 ? std::numeric_limits<double>::infinity() : (hi - lo) / std::abs(lo);
    if (emulated || spread > out.tolerance) {
      out.disagreements.push_back(CycleDisagreement{index, static_cast<std::uint32_t>(low),
                                                    static_cast<std::uint32_t>(high), lo, hi,
                                                    spread});
    }
  }
  return out;
}

std::string PassAgreement::Summary() const {
  std::string out;
  if (!disagreements.empty()) {
    out = "passes disagree on cycles ";
    out +=
        emulated ? "(emulated: they must be equal)" : "beyond " + Number(tolerance * 100, 3) + "%";
    out += " in " + std::to_string(disagreements.size()) + " of " + std::to_string(cases) +
           (cases == 1 ? " case: " : " cases: ");
    constexpr std::size_t kShown = 3;
    for (std::size_t i = 0; i < disagreements.size() && i < kShown; ++i) {
      const CycleDisagreement& d = disagreements[i];
      if (i > 0) out += "; ";
      out += "case " + std::to_string(d.case_index) + " (pass " + std::to_string(d.low_pass) +
             ": " + Number(d.low) + ", pass " + std::to_string(d.high_pass) + ": " +
             Number(d.high) + ", +" + Number(d.relative_spread * 100, 3) + "%)";
    }
    if (disagreements.size() > kShown) out += "; ...";
  }
  if (!incomplete_cases.empty()) {
    if (!out.empty()) out += "; ";
    out += incomplete_cases.size() == 1 ? "case " : "cases ";
    for (std::size_t i = 0; i < incomplete_cases.size(); ++i) {
      if (i > 0) out += ", ";
      out += std::to_string(incomplete_cases[i]);
    }
    out += incomplete_cases.size() == 1 ? " has" : " have";
    out += " no cycles in some pass";
  }
  return out;
}

}  // namespace mculab::server
