// The pass planner and the pass agreement check as pure functions, over the counter units the
// runner's ports declare (firmware_stub/counters/, firmware_stub/ports/an547/port.c).
#include "server/domain/pass_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace mculab::server {
namespace {

using Events = std::vector<std::string>;

// Cortex-M55 PMU: 8 16-bit event counters chained in pairs, so 4 events at once; PMU_CCNTR
// counts cycles.
CounterUnit M55Pmu() {
  return {"cortex-m55-pmu",
          4,
          {"instructions", "loads", "stores", "branches", "mve_instructions", "mem_access",
           "l1d_cache", "l1d_cache_refill", "l1i_cache_refill", "br_mis_pred", "stall", "exc_taken",
           "mve_ldst", "mve_int_mac", "pmu_cycles"},
          true};
}
// Ethos-U55/U65 PMU: 4 event counters; PMCCNTR is a unit of its own.
CounterUnit EthosUPmu() {
  return {"ethos-u-pmu",
          4,
          {"npu_active", "npu_idle", "mac_active", "mac_active_8bit", "mac_active_16bit",
           "mac_stalled_by_wd", "ao_active", "wd_active", "wd_stalled", "axi0_rd", "axi0_wr",
           "axi0_rd_stalled", "axi1_rd", "axi1_wr"},
          true};
}
CounterUnit EthosUCcnt() { return {"ethos-u-ccnt", 1, {"npu_cycles"}, true}; }
// Cortex-M7 DWT: five fixed profiling counters, all at once, beside DWT_CYCCNT.
CounterUnit M7Dwt() { return {"cortex-m7-dwt", 5, {"cpi", "exc", "sleep", "lsu", "fold"}, true}; }
// The QEMU plugin's emulated events: all at once.
CounterUnit QemuPlugin() {
  return {
      "qemu-plugin", 5, {"instructions", "loads", "stores", "branches", "mve_instructions"}, true};
}

std::vector<CounterUnit> Corstone300Silicon() { return {M55Pmu(), EthosUPmu(), EthosUCcnt()}; }

PassPlan Plan(const Events& requested, const std::vector<CounterUnit>& units) {
  Result<PassPlan> r = PlanPasses(requested, units);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : PassPlan{};
}

std::vector<Events> EventsOf(const PassPlan& plan) {
  std::vector<Events> out;
  for (const Pass& p : plan.passes) out.push_back(p.events);
  return out;
}

// ---- Planning --------------------------------------------------------------------------------

TEST(PassPlanner, SixEthosUEventsMakeTwoPassesOfAtMostFourPlusCycles) {
  const Events requested = {"npu_active", "axi0_rd",    "axi1_rd",
                            "axi0_wr",    "mac_active", "wd_active"};
  const PassPlan plan = Plan(requested, Corstone300Silicon());
  ASSERT_EQ(plan.passes.size(), 2u);
  // Catalogue order: npu_active, mac_active, wd_active, axi0_rd | axi0_wr, axi1_rd.
  EXPECT_EQ(EventsOf(plan),
            (std::vector<Events>{{"cycles", "npu_active", "mac_active", "wd_active", "axi0_rd"},
                                 {"cycles", "axi0_wr", "axi1_rd"}}));
  for (const Pass& pass : plan.passes) {
    ASSERT_EQ(pass.units.size(), 1u);
    EXPECT_EQ(pass.units[0].unit, "ethos-u-pmu");
    EXPECT_LE(pass.units[0].events.size(), 4u);
    EXPECT_FALSE(pass.units[0].counts_cycles);
  }
}

TEST(PassPlanner, MixedCpuAndNpuEventsSharePasses) {
  // 5 CPU events (2 passes of the M55 PMU), 3 NPU events and npu_cycles (1 pass each): 2 passes,
  // the NPU's events ride in the first.
  const Events requested = {"axi0_rd",  "instructions", "npu_cycles",       "loads",  "npu_active",
                            "branches", "stores",       "mve_instructions", "axi1_rd"};
  const PassPlan plan = Plan(requested, Corstone300Silicon());
  ASSERT_EQ(plan.passes.size(), 2u);
  EXPECT_EQ(plan.passes[0],
            (Pass{{"cycles", "instructions", "loads", "stores", "branches", "npu_active", "axi0_rd",
                   "axi1_rd", "npu_cycles"},
                  {{"cortex-m55-pmu", {"instructions", "loads", "stores", "branches"}, false},
                   {"ethos-u-pmu", {"npu_active", "axi0_rd", "axi1_rd"}, false},
                   {"ethos-u-ccnt", {"npu_cycles"}, false}}}));
  EXPECT_EQ(plan.passes[1], (Pass{{"cycles", "mve_instructions"},
                                  {{"cortex-m55-pmu", {"mve_instructions"}, false}}}));
}

TEST(PassPlanner, PassCountIsTheMostAnyUnitNeeds) {
  // M55: 9 events / 4 -> 3 passes; Ethos-U: 5 / 4 -> 2; so 3 passes, not 5.
  const Events cpu = {"instructions", "loads",       "stores",   "branches",        "stall",
                      "mem_access",   "br_mis_pred", "mve_ldst", "mve_instructions"};
  const Events npu = {"npu_active", "npu_idle", "mac_active", "ao_active", "wd_active"};
  Events requested = cpu;
  requested.insert(requested.end(), npu.begin(), npu.end());
  const PassPlan plan = Plan(requested, Corstone300Silicon());
  ASSERT_EQ(plan.passes.size(), 3u);
  std::size_t counted = 0;
  for (const Pass& pass : plan.passes) {
    for (const UnitSelection& u : pass.units) {
      EXPECT_LE(u.events.size(), 4u);
      counted += u.events.size();
    }
  }
  EXPECT_EQ(counted, requested.size());  // each event in exactly one pass
  EXPECT_EQ(plan.passes[2].units.size(), 1u);
  EXPECT_EQ(plan.passes[2].units[0].unit, "cortex-m55-pmu");
}

TEST(PassPlanner, EmptyRequestIsOnePassOfCycles) {
  for (const auto& units : {Corstone300Silicon(), std::vector<CounterUnit>{}}) {
    const PassPlan plan = Plan({}, units);
    EXPECT_EQ(plan.passes, (std::vector<Pass>{Pass{{"cycles"}, {}}}));
  }
}

TEST(PassPlanner, CyclesIsInEveryPassAndTakesNoSlot) {
  // Asking for cycles explicitly changes nothing, on any board: 4 M55 events still fit one pass.
  const Events requested = {"cycles", "instructions", "loads", "cycles", "stores", "branches"};
  const PassPlan plan = Plan(requested, {M55Pmu()});
  EXPECT_EQ(EventsOf(plan),
            (std::vector<Events>{{"cycles", "instructions", "loads", "stores", "branches"}}));
  EXPECT_EQ(Plan({"cycles"}, {}).passes, (std::vector<Pass>{Pass{{"cycles"}, {}}}));
}

TEST(PassPlanner, UnitWithoutItsOwnCycleCounterGivesASlotToCyclesInEachPassItCountsIn) {
  const CounterUnit plain{"plain-pmu", 2, {"a", "b", "c"}, false};
  const PassPlan plan = Plan({"a", "b", "c"}, {plain, M7Dwt()});
  // One slot per pass for events: 3 passes; the DWT counts beside it in the first.
  ASSERT_EQ(plan.passes.size(), 3u);
  EXPECT_EQ(plan.passes[0].units[0], (UnitSelection{"plain-pmu", {"a"}, true}));
  EXPECT_EQ(plan.passes[2].units, (std::vector<UnitSelection>{{"plain-pmu", {"c"}, true}}));
  // With only the DWT asked for, the plain unit counts nothing and needs no cycles slot.
  EXPECT_EQ(Plan({"lsu"}, {plain, M7Dwt()}).passes,
            (std::vector<Pass>{Pass{{"cycles", "lsu"}, {{"cortex-m7-dwt", {"lsu"}, false}}}}));
  // A unit whose only slot goes to cycles can count none of its events.
  const CounterUnit one_slot{"tiny", 1, {"x"}, false};
  EXPECT_FALSE(PlanPasses(Events{"x"}, std::vector<CounterUnit>{one_slot}).ok());
}

TEST(PassPlanner, AllFiveDwtCountersAndAllEmulatedEventsFitOnePass) {
  EXPECT_EQ(Plan({"fold", "lsu", "sleep", "exc", "cpi"}, {M7Dwt()}).passes.size(), 1u);
  const PassPlan qemu =
      Plan({"mve_instructions", "branches", "stores", "loads", "instructions"}, {QemuPlugin()});
  EXPECT_EQ(EventsOf(qemu), (std::vector<Events>{{"cycles", "instructions", "loads", "stores",
                                                  "branches", "mve_instructions"}}));
}

TEST(PassPlanner, DuplicatesAreCountedOnce) {
  const Events requested = {"npu_active", "npu_active", "axi0_rd", "npu_active", "axi0_rd"};
  EXPECT_EQ(EventsOf(Plan(requested, Corstone300Silicon())),
            (std::vector<Events>{{"cycles", "npu_active", "axi0_rd"}}));
}

TEST(PassPlanner, SameOrderWhateverTheOrderOfTheRequest) {
  Events requested = {"instructions", "loads",      "stores",     "branches",  "mve_instructions",
                      "stall",        "npu_active", "mac_active", "axi0_rd",   "axi0_wr",
                      "axi1_rd",      "wd_active",  "npu_cycles", "l1d_cache", "npu_active"};
  const PassPlan expected = Plan(requested, Corstone300Silicon());
  ASSERT_EQ(expected.passes.size(), 2u);
  std::mt19937 rng(5);
  for (int round = 0; round < 200; ++round) {
    std::shuffle(requested.begin(), requested.end(), rng);
    ASSERT_EQ(Plan(requested, Corstone300Silicon()), expected) << "round " << round;
  }
}

TEST(PassPlanner, UnsupportedEventIsRejectedWithTheEventsTheBoardCanCount) {
  const Result<PassPlan> r =
      PlanPasses(Events{"instructions", "npu_active"}, std::vector<CounterUnit>{QemuPlugin()});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message,
            "event 'npu_active' can not be counted on this board; it can count: cycles, "
            "instructions, loads, stores, branches, mve_instructions");
}

TEST(PassPlanner, EveryUnsupportedEventIsNamedOnce) {
  const Result<PassPlan> r = PlanPasses(Events{"lsu", "bogus", "cpi", "bogus", "npu_active"},
                                        std::vector<CounterUnit>{M7Dwt()});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "events 'bogus', 'npu_active' can not be counted on this board; it can count: "
            "cycles, cpi, exc, sleep, lsu, fold");
}

TEST(PassPlanner, BoardWithoutCounterUnitsCountsOnlyCycles) {
  const Result<PassPlan> r = PlanPasses(Events{"instructions"}, std::vector<CounterUnit>{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "event 'instructions' can not be counted on this board; it can count: cycles");
}

TEST(PassPlanner, EventOfTwoUnitsIsCountedByTheFirstThatCanCountIt) {
  const CounterUnit broken{"broken", 0, {"instructions"}, true};
  const PassPlan plan = Plan({"instructions"}, {broken, QemuPlugin(), M55Pmu()});
  EXPECT_EQ(plan.passes[0].units,
            (std::vector<UnitSelection>{{"qemu-plugin", {"instructions"}, false}}));
  EXPECT_EQ(CountableEvents(std::vector<CounterUnit>{broken, QemuPlugin(), M55Pmu()}).size(),
            1u + 5u + 10u);  // cycles, the plugin's 5, the PMU's 15 less the 5 the plugin has
}

// ---- The cache of plans --------------------------------------------------------------------

TEST(PassPlanCache, GivesPlanPassesAnswerAndPlansEachCombinationOnce) {
  PassPlanCache cache;
  const std::vector<CounterUnit> silicon = Corstone300Silicon();
  const Events asked{"npu_active", "instructions", "axi0_rd"};
  const Result<PassPlan>& first = cache.Plan(asked, silicon);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, Plan(asked, silicon));
  const std::vector<CounterUnit> same_units = Corstone300Silicon();  // another board of the kind
  EXPECT_EQ(&cache.Plan(asked, same_units), &first);
  EXPECT_EQ(cache.size(), 1u);
  // The request as given is the key: another order is planned (to the same plan) anew.
  EXPECT_EQ(*cache.Plan(Events{"instructions", "npu_active", "axi0_rd"}, silicon), *first);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(PassPlanCache, UnitsThatChangedGetAFreshPlanAndErrorsAreKeptToo) {
  PassPlanCache cache;
  std::vector<CounterUnit> units{QemuPlugin()};
  EXPECT_EQ(cache.Plan(Events{"loads"}, units)->passes.size(), 1u);
  units[0].max_simultaneous = 1;  // the board's agent registered other units
  units[0].events.push_back("cycles_idle");
  EXPECT_EQ(*cache.Plan(Events{"loads"}, units), Plan({"loads"}, units));
  EXPECT_EQ(cache.size(), 2u);
  const Result<PassPlan>& refused = cache.Plan(Events{"npu_active"}, units);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, PlanPasses(Events{"npu_active"}, units).error().message);
}

TEST(PassPlanCache, ForgetsEverythingWhenFull) {
  PassPlanCache cache;
  const std::vector<CounterUnit> units{M7Dwt()};
  for (std::size_t i = 0; i < PassPlanCache::kMaxEntries; ++i) {
    (void)cache.Plan(Events(i % 5 + 1, "cpi"),
                     std::vector<CounterUnit>{{"u" + std::to_string(i), 5, {"cpi"}, true}});
  }
  EXPECT_EQ(cache.size(), PassPlanCache::kMaxEntries);
  EXPECT_TRUE(cache.Plan(Events{"lsu"}, units).ok());
  EXPECT_EQ(cache.size(), 1u);
}

TEST(PassPlanner, CountableEventsListsCyclesThenTheCatalogueInBoardOrder) {
  EXPECT_EQ(CountableEvents(std::vector<CounterUnit>{M7Dwt(), EthosUCcnt()}),
            (Events{"cycles", "cpi", "exc", "sleep", "lsu", "fold", "npu_cycles"}));
  EXPECT_EQ(CountableEvents(std::vector<CounterUnit>{}), (Events{"cycles"}));
}

// ---- Agreement between passes ----------------------------------------------------------------

TEST(PassAgreement, PassesWithinTheToleranceAgree) {
  const std::vector<std::vector<double>> cycles = {{1000, 5000}, {1010, 4950}, {995, 5020}};
  const PassAgreement a = CheckPassAgreement(cycles, 0.02, false);
  EXPECT_FALSE(a.flagged());
  EXPECT_EQ(a.Summary(), "");
  EXPECT_EQ(a.passes, 3u);
  EXPECT_EQ(a.cases, 2u);
}

TEST(PassAgreement, PassesBeyondTheToleranceAreFlaggedPerCase) {
  const std::vector<std::vector<double>> cycles = {{1000, 5000, 700}, {1100, 5010, 700}};
  const PassAgreement a = CheckPassAgreement(cycles, 0.02, false);
  ASSERT_TRUE(a.flagged());
  ASSERT_EQ(a.disagreements.size(), 1u);
  const CycleDisagreement& d = a.disagreements[0];
  EXPECT_EQ(d.case_index, 0u);
  EXPECT_EQ(d.low_pass, 0u);
  EXPECT_EQ(d.high_pass, 1u);
  EXPECT_EQ(d.low, 1000);
  EXPECT_EQ(d.high, 1100);
  EXPECT_NEAR(d.relative_spread, 0.1, 1e-12);
  EXPECT_EQ(a.Summary(),
            "passes disagree on cycles beyond 2% in 1 of 3 cases: case 0 (pass 0: 1000, pass 1: "
            "1100, +10%)");
  // A looser tolerance accepts the same figures.
  EXPECT_FALSE(CheckPassAgreement(cycles, 0.15, false).flagged());
}

TEST(PassAgreement, WithoutToleranceAnyDifferenceIsFlagged) {
  const std::vector<std::vector<double>> cycles = {{1000, 5000}, {1000, 5001}};
  EXPECT_EQ(CheckPassAgreement(cycles, 0, false).disagreements.size(), 1u);
  EXPECT_EQ(CheckPassAgreement(cycles, -1, false).disagreements.size(), 1u);
  EXPECT_EQ(CheckPassAgreement(cycles, std::nan(""), false).disagreements.size(), 1u);
  const std::vector<std::vector<double>> equal = {{1000, 5000}, {1000, 5000}};
  EXPECT_FALSE(CheckPassAgreement(equal, 0, false).flagged());
}

TEST(PassAgreement, EmulatedBoardsMustAgreeExactlyWhateverTheTolerance) {
  const std::vector<std::vector<double>> off_by_one = {{123456789, 42}, {123456790, 42}};
  EXPECT_FALSE(CheckPassAgreement(off_by_one, 0.05, false).flagged());
  const PassAgreement a = CheckPassAgreement(off_by_one, 0.05, true);
  ASSERT_EQ(a.disagreements.size(), 1u);
  EXPECT_EQ(a.disagreements[0].case_index, 0u);
  EXPECT_EQ(a.tolerance, 0);
  EXPECT_EQ(a.Summary(),
            "passes disagree on cycles (emulated: they must be equal) in 1 of 2 cases: case 0 "
            "(pass 0: 123456789, pass 1: 123456790, +8.1e-07%)");
  const std::vector<std::vector<double>> identical = {{123456789, 42}, {123456789, 42}};
  EXPECT_FALSE(CheckPassAgreement(identical, 0.05, true).flagged());
}

TEST(PassAgreement, LowAndHighPassesAreNamed) {
  const std::vector<std::vector<double>> cycles = {{1000}, {1200}, {900}, {1200}};
  const PassAgreement a = CheckPassAgreement(cycles, 0.1, false);
  ASSERT_EQ(a.disagreements.size(), 1u);
  EXPECT_EQ(a.disagreements[0].low_pass, 2u);
  EXPECT_EQ(a.disagreements[0].high_pass, 1u);  // the first pass with the most
}

TEST(PassAgreement, ZeroCyclesAgainstNonZeroIsFlagged) {
  const std::vector<std::vector<double>> cycles = {{0}, {10}};
  const PassAgreement a = CheckPassAgreement(cycles, 10.0, false);
  ASSERT_EQ(a.disagreements.size(), 1u);
  EXPECT_TRUE(std::isinf(a.disagreements[0].relative_spread));
  EXPECT_FALSE(CheckPassAgreement(std::vector<std::vector<double>>{{0}, {0}}, 0, false).flagged());
}

TEST(PassAgreement, CaseMissingFromAPassIsFlaggedAsIncomplete) {
  const std::vector<std::vector<double>> cycles = {
      {1000, 2000, 3000}, {1000, std::numeric_limits<double>::quiet_NaN()}};
  const PassAgreement a = CheckPassAgreement(cycles, 0.02, false);
  EXPECT_TRUE(a.disagreements.empty());
  EXPECT_EQ(a.incomplete_cases, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_TRUE(a.flagged());
  EXPECT_EQ(a.Summary(), "cases 1, 2 have no cycles in some pass");
}

TEST(PassAgreement, OnePassHasNothingToCompare) {
  const std::vector<std::vector<double>> one = {{1000, 2000}};
  EXPECT_FALSE(CheckPassAgreement(one, 0, true).flagged());
  EXPECT_FALSE(CheckPassAgreement({}, 0, true).flagged());
}

TEST(PassAgreement, SummaryShowsTheFirstThreeCases) {
  const std::vector<std::vector<double>> cycles = {{100, 100, 100, 100, 100},
                                                   {200, 200, 200, 200, 100}};
  const PassAgreement a = CheckPassAgreement(cycles, 0.5, false);
  EXPECT_EQ(a.disagreements.size(), 4u);
  EXPECT_EQ(a.Summary(),
            "passes disagree on cycles beyond 50% in 4 of 5 cases: case 0 (pass 0: 100, pass 1: "
            "200, +100%); case 1 (pass 0: 100, pass 1: 200, +100%); case 2 (pass 0: 100, pass 1: "
            "200, +100%); ...");
}

}  // namespace
}  // namespace mculab::server
