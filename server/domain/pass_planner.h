// The pass planner (DESIGN.md §5): which of a job's events its run counts in which pass,
// and the check that a run's passes measured the same thing.
//
// A board has counter units (what the runner's HELLO lists: the Cortex-M55 PMU, the Cortex-M7 DWT
// profiling counters, the Ethos-U PMU, the QEMU plugin's emulated events, ...). A unit counts at
// most max_simultaneous of its events in one pass; units count side by side, so events of
// different units share a pass. PlanPasses splits the requested events into the fewest passes
// that fit every unit: max over units of ceil(events asked of the unit / its capacity), and at
// least one.
//
// Rules:
// - `cycles` is the runner's timer (metric 0 of every sample: DWT_CYCCNT, the host clock, the
//   emulator's count). It is in every pass, first, and costs no event slot: asking for it is
//   allowed on every board and changes nothing. The one exception is a unit that says it has no
//   cycle counter of its own (CounterUnit::has_cycle_counter = false): it must count cycles beside
//   its events, so in every pass in which it counts an event one of its slots holds cycles
//   (UnitSelection::counts_cycles), and it has max_simultaneous - 1 slots for events. The name
//   "cycles" in a unit's catalogue is ignored: it always means the timer. Units' own cycle events
//   under other names ("pmu_cycles", "npu_cycles") are ordinary events.
// - Catalogue order: the units in the board's order, each unit's events in its own order (the
//   order of the runner's counter indices). Passes, and the events in a pass, follow it whatever
//   the order of the request; a unit's events fill the passes in that order (the first pass takes
//   the first max_simultaneous, and so on). Duplicates in the request count once.
// - An event listed by several units is counted by the first unit in board order that can count
//   anything (max_simultaneous above its cycle slot).
// - An event no unit can count is an error (kInvalidArgument) that names every such event and
//   lists every event the board can count: never a zero made up later.
//
// Pure: standard library only. Thread-safety: pure functions over plain values.
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace mculab::server {

// The runner's timer: in every pass.
inline constexpr std::string_view kCyclesEvent = "cycles";

// One counter unit of a board, as its runner describes it.
struct CounterUnit {
  std::string name;                    // "cortex-m55-pmu", "ethos-u-pmu", "qemu-plugin", ...
  std::uint32_t max_simultaneous = 0;  // events counted at once, cycles slot included
  std::vector<std::string> events;     // the unit's catalogue, in the runner's order
  // False when the unit has no cycle counter apart from its event counters and must give one of
  // them to cycles in each pass it counts in (none of today's units: the M55 PMU has PMU_CCNTR,
  // the Ethos-U PMCCNTR, the M7 DWT_CYCCNT, and QEMU counts instructions for its timer).
  bool has_cycle_counter = true;
  auto operator<=>(const CounterUnit&) const = default;
};

// What one unit counts in one pass.
struct UnitSelection {
  std::string unit;
  std::vector<std::string> events;  // in the unit's catalogue order
  bool counts_cycles = false;       // one of the unit's slots holds cycles (no cycle counter)
  bool operator==(const UnitSelection&) const = default;
};

struct Pass {
  // "cycles", then the pass's events in catalogue order: the metrics of the pass's samples.
  std::vector<std::string> events;
  // The units that count an event in this pass, in board order.
  std::vector<UnitSelection> units;
  bool operator==(const Pass&) const = default;
};

struct PassPlan {
  std::vector<Pass> passes;  // never empty: a job that asks for nothing gets one pass of cycles
  bool operator==(const PassPlan&) const = default;
};

// Splits `requested` (event names, any order, duplicates allowed) into passes for a board with
// `units`. Errors: kInvalidArgument naming the events the board cannot count and listing those it
// can (CountableEvents).
Result<PassPlan> PlanPasses(std::span<const std::string> requested,
                            std::span<const CounterUnit> units);

// PlanPasses for the combinations already planned: a lab plans the same few (events, units) over
// and over (every board of a kind has the same units; most jobs ask for the same events, or
// none), so a pass that places hundreds of jobs plans each combination once. Keyed by the
// request as given (order and duplicates included) and the units' whole description, so a board
// whose units change gets a fresh plan. Holds at most kMaxEntries plans and forgets them all
// when full. Not thread-safe.
class PassPlanCache {
 public:
  static constexpr std::size_t kMaxEntries = 256;
  const Result<PassPlan>& Plan(std::span<const std::string> requested,
                               std::span<const CounterUnit> units);
  std::size_t size() const { return plans_.size(); }

 private:
  struct Key {
    std::vector<std::string> requested;
    std::vector<CounterUnit> units;
  };
  struct KeyView {
    std::span<const std::string> requested;
    std::span<const CounterUnit> units;
  };
  struct Less {
    using is_transparent = void;
    static KeyView View(const Key& k) { return {k.requested, k.units}; }
    static KeyView View(const KeyView& k) { return k; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      const KeyView x = View(a), y = View(b);
      const auto r = std::lexicographical_compare_three_way(x.requested.begin(), x.requested.end(),
                                                            y.requested.begin(), y.requested.end());
      if (r != 0) return r < 0;
      return std::lexicographical_compare_three_way(x.units.begin(), x.units.end(), y.units.begin(),
                                                    y.units.end()) < 0;
    }
  };
  std::map<Key, Result<PassPlan>, Less> plans_;
};

// Every event the board can count, in catalogue order, "cycles" first, each name once (for error
// messages, admission control and `mculab events --kind KIND`).
std::vector<std::string> CountableEvents(std::span<const CounterUnit> units);

// ---- Agreement between passes ----------------------------------------------------------------

// One case whose passes disagree on cycles.
struct CycleDisagreement {
  std::uint32_t case_index = 0;
  std::uint32_t low_pass = 0;   // the pass with the fewest cycles (the first such pass)
  std::uint32_t high_pass = 0;  // the pass with the most cycles (the first such pass)
  double low = 0;
  double high = 0;
  double relative_spread = 0;  // (high - low) / |low|; infinity when low is 0 and high is not
  bool operator==(const CycleDisagreement&) const = default;
};

struct PassAgreement {
  std::uint32_t passes = 0;  // passes compared
  std::uint32_t cases = 0;   // cases compared: the longest pass's
  double tolerance = 0;      // as applied: 0 on emulated boards
  bool emulated = false;
  std::vector<CycleDisagreement> disagreements;  // ascending case index
  // Cases that some pass has no value for (a shorter row, or NaN): they can not be compared.
  std::vector<std::uint32_t> incomplete_cases;  // ascending
  // Whether the job must be flagged.
  bool flagged() const { return !disagreements.empty() || !incomplete_cases.empty(); }
  // One line for the job's message and the UI, empty when nothing is flagged, e.g.
  // "passes disagree on cycles beyond 2% in 1 of 4 cases: case 3 (pass 0: 1000, pass 1: 1100,
  // +10%)".
  std::string Summary() const;
};

// Compares the cycles the passes measured, per case: cycles_by_pass[pass][case] is a pass's
// figure for a case (the caller's summary of its samples, e.g. the median). A case is flagged
// when (high - low) / |low| > tolerance over its passes, or, on an emulated board, when its
// passes differ at all (the emulator is deterministic, so any difference is a fault; tolerance is
// ignored). A negative or NaN tolerance counts as 0. Fewer than two passes: nothing to compare,
// nothing flagged.
PassAgreement CheckPassAgreement(std::span<const std::vector<double>> cycles_by_pass,
                                 double tolerance, bool emulated);

}  // namespace mculab::server
