// The counter drivers against simulated register blocks: each peripheral is a struct in RAM of its
// architectural layout, handed to the driver by pointer. A test sets what the hardware would show
// (counter values, overflow flags, ID registers) and checks what the driver wrote. Plain RAM keeps
// the last value written, so a write-1-to-clear register reads back what the driver wrote, and a
// test that needs the flag cleared clears it itself, as the hardware would.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "armv81m_pmu.h"
#include "cm7_dwt.h"
#include "ethosu_pmu.h"

namespace {

// A peripheral's register block in RAM: zeroed words of the struct's size (the register structs
// have read-only members, so they are not constructed as C++ objects).
template <typename T>
class RegisterBlock {
 public:
  RegisterBlock() : words_(sizeof(T) / sizeof(std::uint32_t), 0) {}
  T* get() { return reinterpret_cast<T*>(words_.data()); }
  T* operator->() { return get(); }
  // Sets what a read-only register shows.
  static void Show(const volatile std::uint32_t& reg, std::uint32_t value) {
    const_cast<volatile std::uint32_t&>(reg) = value;
  }
  void Clear() { std::fill(words_.begin(), words_.end(), 0u); }

 private:
  std::vector<std::uint32_t> words_;
};

std::uint16_t EventId(const mculab_counter_unit* u, const std::string& name) {
  for (unsigned i = 0; i < u->num_events; ++i) {
    if (name == u->events[i].name) return u->events[i].id;
  }
  ADD_FAILURE() << u->name << " has no event " << name;
  return 0xFFFF;
}

// ---- Armv8.1-M PMU (Cortex-M55) ----

class ArmPmu : public ::testing::Test {
 protected:
  void SetUp() override {
    // What a Cortex-M55 shows: 8 counters, TYPE.SIZE 31, a cycle counter; Secure and
    // Non-secure non-invasive debug allowed.
    regs_.Show(regs_->TYPE, 8u | (31u << PMU_TYPE_SIZE_CNTS_Pos) | PMU_TYPE_CYCCNT_PRESENT_Msk);
    regs_.Show(regs_->AUTHSTATUS, PMU_AUTHSTATUS_SNID_Msk | PMU_AUTHSTATUS_NSNID_Msk);
  }
  mculab_counter_unit* Init() { return mculab_armv81m_pmu_init(&pmu_, regs_.get(), &demcr_, 1); }

  RegisterBlock<PMU_Type> regs_;
  volatile std::uint32_t demcr_ = 0;
  mculab_armv81m_pmu pmu_{};
};

TEST_F(ArmPmu, InitSetsTrcenaStopsAndClearsEveryCounterAndEnablesThePmu) {
  regs_->CTRL = 0;
  mculab_counter_unit* u = Init();
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(demcr_ & DCB_DEMCR_TRCENA_Msk, DCB_DEMCR_TRCENA_Msk);
  EXPECT_EQ(regs_->CNTENCLR, 0x800000FFu);  // the 8 event counters and PMU_CCNTR
  EXPECT_EQ(regs_->INTENCLR, 0x800000FFu);
  EXPECT_EQ(regs_->OVSCLR, 0x800000FFu);
  EXPECT_EQ(regs_->CTRL, PMU_CTRL_ENABLE_Msk);
  EXPECT_STREQ(u->name, "cortex-m55-pmu");
  EXPECT_EQ(u->max_simultaneous, 4);  // 8 counters chained in pairs
  EXPECT_EQ(u->flags, 0);
}

TEST_F(ArmPmu, AnEmulatorsPmuThatReadsZeroIsNoUnit) {
  regs_.Clear();  // QEMU: PMU_TYPE reads 0
  EXPECT_EQ(Init(), nullptr);
}

TEST_F(ArmPmu, NoUnitWhenNonInvasiveDebugIsNotAllowedInThisSecurityState) {
  regs_.Show(regs_->AUTHSTATUS, (2u << PMU_AUTHSTATUS_SNID_Pos) | PMU_AUTHSTATUS_NSNID_Msk);
  EXPECT_EQ(Init(), nullptr);
  EXPECT_NE(mculab_armv81m_pmu_init(&pmu_, regs_.get(), &demcr_, 0), nullptr);  // Non-secure ok
}

TEST_F(ArmPmu, CatalogueUsesArmsEventNumbers) {
  mculab_counter_unit* u = Init();
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(EventId(u, "instructions"), 0x0008);      // INST_RETIRED
  EXPECT_EQ(EventId(u, "loads"), 0x0006);             // LD_RETIRED
  EXPECT_EQ(EventId(u, "stores"), 0x0007);            // ST_RETIRED
  EXPECT_EQ(EventId(u, "branches"), 0x0021);          // BR_RETIRED
  EXPECT_EQ(EventId(u, "mve_instructions"), 0x0200);  // MVE_INST_RETIRED
  EXPECT_EQ(EventId(u, "mem_access"), 0x0013);        // MEM_ACCESS
  EXPECT_EQ(EventId(u, "pmu_cycles"), 0x0011);        // CPU_CYCLES
}

TEST_F(ArmPmu, SelectPutsEachEventOnAnEvenCounterChainedToTheNextOne) {
  ASSERT_NE(Init(), nullptr);
  const std::uint16_t events[] = {ARM_PMU_INST_RETIRED, ARM_PMU_MVE_INST_RETIRED};
  ASSERT_EQ(mculab_armv81m_pmu_select(&pmu_, events, 2), 0);
  EXPECT_EQ(regs_->EVTYPER[0], ARM_PMU_INST_RETIRED);
  EXPECT_EQ(regs_->EVTYPER[1], ARM_PMU_CHAIN);
  EXPECT_EQ(regs_->EVTYPER[2], ARM_PMU_MVE_INST_RETIRED);
  EXPECT_EQ(regs_->EVTYPER[3], ARM_PMU_CHAIN);
  EXPECT_EQ(regs_->CNTENCLR, 0xFFu);  // event counters stopped, the cycle counter left alone
}

TEST_F(ArmPmu, SelectRefusesMoreEventsThanPairsAndTheChainEventItself) {
  ASSERT_NE(Init(), nullptr);
  const std::uint16_t five[] = {1, 3, 4, 6, 7};
  EXPECT_EQ(mculab_armv81m_pmu_select(&pmu_, five, 5), -1);
  const std::uint16_t chain[] = {ARM_PMU_CHAIN};
  EXPECT_EQ(mculab_armv81m_pmu_select(&pmu_, chain, 1), -1);
}

TEST_F(ArmPmu, StartZeroesThePairsClearsTheirOverflowAndEnablesThemInOneWrite) {
  ASSERT_NE(Init(), nullptr);
  const std::uint16_t events[] = {ARM_PMU_LD_RETIRED, ARM_PMU_ST_RETIRED};
  ASSERT_EQ(mculab_armv81m_pmu_select(&pmu_, events, 2), 0);
  for (int i = 0; i < 8; ++i) regs_->EVCNTR[i] = 0x1111u * (i + 1);
  mculab_armv81m_pmu_start(&pmu_);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(regs_->EVCNTR[i], 0u) << "counter " << i;
  EXPECT_EQ(regs_->EVCNTR[4], 0x5555u);  // not selected: untouched
  EXPECT_EQ(regs_->OVSCLR, 0xFu);
  EXPECT_EQ(regs_->CNTENSET, 0xFu);
}

TEST_F(ArmPmu, ReadJoinsEachPairInto32Bits) {
  ASSERT_NE(Init(), nullptr);
  const std::uint16_t events[] = {ARM_PMU_INST_RETIRED, ARM_PMU_BR_RETIRED};
  ASSERT_EQ(mculab_armv81m_pmu_select(&pmu_, events, 2), 0);
  mculab_armv81m_pmu_start(&pmu_);
  regs_->EVCNTR[0] = 0x1234;  // low half of pair 0
  regs_->EVCNTR[1] = 0x0056;  // high half
  regs_->EVCNTR[2] = 0xFFFF;
  regs_->EVCNTR[3] = 0x0000;
  std::uint64_t v[2] = {};
  mculab_armv81m_pmu_read(&pmu_, v);
  EXPECT_EQ(v[0], 0x00561234u);
  EXPECT_EQ(v[1], 0x0000FFFFu);
}

TEST_F(ArmPmu, OverflowOfAPairCarriesIntoSixtyFourBits) {
  ASSERT_NE(Init(), nullptr);
  const std::uint16_t events[] = {ARM_PMU_INST_RETIRED, ARM_PMU_LD_RETIRED};
  ASSERT_EQ(mculab_armv81m_pmu_select(&pmu_, events, 2), 0);
  mculab_armv81m_pmu_start(&pmu_);
  regs_->OVSCLR = 0;
  // Pair 1 (counters 2, 3) wrapped past 2^32 and now reads 5.
  regs_->EVCNTR[2] = 5;
  regs_->OVSSET = 1u << 3;
  std::uint64_t v[2] = {};
  mculab_armv81m_pmu_read(&pmu_, v);
  EXPECT_EQ(v[1], (1ull << 32) + 5);
  EXPECT_EQ(regs_->OVSCLR, 1u << 3);  // the flag is cleared, once counted
  regs_->OVSSET = 0;                  // ... which the hardware does
  mculab_armv81m_pmu_read(&pmu_, v);
  EXPECT_EQ(v[1], (1ull << 32) + 5) << "an overflow is counted once";
  regs_->OVSSET = (1u << 3) | (1u << 2);  // a second wrap; the even counter's own flag is noise
  regs_->EVCNTR[2] = 7;
  mculab_armv81m_pmu_read(&pmu_, v);
  EXPECT_EQ(v[1], (2ull << 32) + 7);
  EXPECT_EQ(v[0], 0u);
  mculab_armv81m_pmu_start(&pmu_);  // a new region starts from 0
  regs_->OVSSET = 0;
  mculab_armv81m_pmu_read(&pmu_, v);
  EXPECT_EQ(v[1], 0u);
}

TEST_F(ArmPmu, StopDisablesOnlyTheSelectedPairs) {
  ASSERT_NE(Init(), nullptr);
  const std::uint16_t events[] = {ARM_PMU_INST_RETIRED};
  ASSERT_EQ(mculab_armv81m_pmu_select(&pmu_, events, 1), 0);
  mculab_armv81m_pmu_start(&pmu_);
  mculab_armv81m_pmu_stop(&pmu_);
  EXPECT_EQ(regs_->CNTENCLR, 0x3u);
}

TEST_F(ArmPmu, CycleCounterStartsAtZeroAndExtendsTo64Bits) {
  ASSERT_NE(Init(), nullptr);
  regs_->CCNTR = 99;
  mculab_armv81m_pmu_ccntr_start(&pmu_);
  EXPECT_EQ(regs_->CCNTR, 0u);
  EXPECT_EQ(regs_->OVSCLR, PMU_OVSCLR_CYCCNT_STATUS_Msk);
  EXPECT_EQ(regs_->CNTENSET, PMU_CNTENSET_CCNTR_ENABLE_Msk);
  regs_->CCNTR = 10;
  regs_->OVSSET = PMU_OVSSET_CYCCNT_STATUS_Msk;
  EXPECT_EQ(mculab_armv81m_pmu_ccntr_read(&pmu_), (1ull << 32) + 10);
  regs_->OVSSET = 0;
  regs_->CCNTR = 20;
  EXPECT_EQ(mculab_armv81m_pmu_ccntr_read(&pmu_), (1ull << 32) + 20);
}

TEST_F(ArmPmu, TheUnitsOperationsDriveTheSameRegisters) {
  mculab_counter_unit* u = Init();
  ASSERT_NE(u, nullptr);
  const std::uint16_t ids[] = {EventId(u, "stores")};
  ASSERT_EQ(u->select(u, ids, 1), 0);
  EXPECT_EQ(regs_->EVTYPER[0], ARM_PMU_ST_RETIRED);
  u->start(u);
  regs_->EVCNTR[0] = 42;
  u->stop(u);
  std::uint64_t v = 0;
  u->read(u, &v);
  EXPECT_EQ(v, 42u);
}

// ---- Cortex-M7 DWT profiling counters ----

class Cm7Dwt : public ::testing::Test {
 protected:
  void SetUp() override {
    regs_->CTRL = (4u << DWT_CTRL_NUMCOMP_Pos) | DWT_CTRL_CYCCNTENA_Msk;  // 4 comparators
  }
  mculab_counter_unit* Init() { return mculab_cm7_dwt_init(&dwt_, regs_.get(), &demcr_); }

  RegisterBlock<DWT_Type> regs_;
  volatile std::uint32_t demcr_ = 0;
  mculab_cm7_dwt dwt_{};
};

TEST_F(Cm7Dwt, InitUnlocksSetsTrcenaAndLeavesTheCycleCounterAlone) {
  mculab_counter_unit* u = Init();
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(demcr_ & DCB_DEMCR_TRCENA_Msk, DCB_DEMCR_TRCENA_Msk);
  EXPECT_EQ(regs_->LAR, DWT_LAR_KEY);
  EXPECT_EQ(regs_->CTRL, (4u << DWT_CTRL_NUMCOMP_Pos) | DWT_CTRL_CYCCNTENA_Msk);
  EXPECT_STREQ(u->name, "cortex-m7-dwt");
  EXPECT_EQ(u->max_simultaneous, 5);  // five counters, one event each
  EXPECT_EQ(EventId(u, "cpi"), MCULAB_DWT_CPI);
  EXPECT_EQ(EventId(u, "fold"), MCULAB_DWT_FOLD);
}

TEST_F(Cm7Dwt, ACoreWithoutProfilingCountersIsNoUnit) {
  regs_->CTRL = regs_->CTRL | DWT_CTRL_NOPRFCNT_Msk;
  EXPECT_EQ(Init(), nullptr);
}

TEST_F(Cm7Dwt, StartZeroesTheSelectedCountersAndSetsOnlyTheirEnableBits) {
  ASSERT_NE(Init(), nullptr);
  const std::uint16_t ids[] = {MCULAB_DWT_LSU, MCULAB_DWT_CPI};
  ASSERT_EQ(mculab_cm7_dwt_select(&dwt_, ids, 2), 0);
  regs_->LSUCNT = 17;
  regs_->CPICNT = 3;
  regs_->FOLDCNT = 9;
  mculab_cm7_dwt_start(&dwt_);
  EXPECT_EQ(regs_->LSUCNT, 0u);
  EXPECT_EQ(regs_->CPICNT, 0u);
  EXPECT_EQ(regs_->FOLDCNT, 9u);
  EXPECT_EQ(regs_->CTRL, (4u << DWT_CTRL_NUMCOMP_Pos) | DWT_CTRL_CYCCNTENA_Msk |
                             DWT_CTRL_LSUEVTENA_Msk | DWT_CTRL_CPIEVTENA_Msk);
  mculab_cm7_dwt_stop(&dwt_);
  EXPECT_EQ(regs_->CTRL, (4u << DWT_CTRL_NUMCOMP_Pos) | DWT_CTRL_CYCCNTENA_Msk);
}

TEST_F(Cm7Dwt, EightBitWrapsAreCountedWhenSampledOftenEnough) {
  ASSERT_NE(Init(), nullptr);
  const std::uint16_t ids[] = {MCULAB_DWT_CPI, MCULAB_DWT_EXC};
  ASSERT_EQ(mculab_cm7_dwt_select(&dwt_, ids, 2), 0);
  mculab_cm7_dwt_start(&dwt_);
  std::uint64_t v[2] = {};
  // Samples less than 256 events apart: each sees at most one wrap.
  const std::uint8_t cpi[] = {200, 10, 250, 4, 4};  // +200, +66, +240, +10, +0
  std::uint64_t expect = 0;
  std::uint8_t last = 0;
  for (std::uint8_t c : cpi) {
    regs_->CPICNT = c;
    regs_->EXCCNT = 1;
    mculab_cm7_dwt_sample(&dwt_);
    expect += static_cast<std::uint8_t>(c - last);
    last = c;
  }
  mculab_cm7_dwt_read(&dwt_, v);
  EXPECT_EQ(v[0], 516u);
  EXPECT_EQ(v[0], expect);
  EXPECT_EQ(v[1], 1u);
}

TEST_F(Cm7Dwt, SelectRefusesUnknownOrRepeatedCounters) {
  ASSERT_NE(Init(), nullptr);
  const std::uint16_t twice[] = {MCULAB_DWT_LSU, MCULAB_DWT_LSU};
  EXPECT_EQ(mculab_cm7_dwt_select(&dwt_, twice, 2), -1);
  const std::uint16_t unknown[] = {7};
  EXPECT_EQ(mculab_cm7_dwt_select(&dwt_, unknown, 1), -1);
}

TEST_F(Cm7Dwt, SamplerMatchesTheCycleCounterEveryPeriodThroughComparatorZero) {
  ASSERT_NE(Init(), nullptr);
  const std::uint16_t ids[] = {MCULAB_DWT_FOLD};
  ASSERT_EQ(mculab_cm7_dwt_select(&dwt_, ids, 1), 0);
  mculab_cm7_dwt_start(&dwt_);
  regs_->CYCCNT = 1000;
  ASSERT_EQ(mculab_cm7_dwt_arm_sampler(&dwt_, 200), 0);
  EXPECT_EQ(regs_->COMP0, 1200u);
  EXPECT_EQ(regs_->MASK0, 0u);
  EXPECT_EQ(regs_->FUNCTION0, DWT_FUNCTION_CYCMATCH_Msk | DWT_FUNCTION_WATCHPOINT_PC_OR_CYCCNT);
  EXPECT_EQ(demcr_ & DCB_DEMCR_MON_EN_Msk, DCB_DEMCR_MON_EN_Msk);
  regs_->FOLDCNT = 150;
  mculab_cm7_dwt_on_sample(&dwt_);  // the DebugMonitor handler
  EXPECT_EQ(regs_->COMP0, 1400u);
  regs_->FOLDCNT = 90;  // wrapped: +196
  mculab_cm7_dwt_on_sample(&dwt_);
  std::uint64_t v = 0;
  mculab_cm7_dwt_read(&dwt_, &v);
  EXPECT_EQ(v, 346u);
  mculab_cm7_dwt_disarm_sampler(&dwt_);
  EXPECT_EQ(regs_->FUNCTION0, 0u);
  EXPECT_EQ(demcr_ & DCB_DEMCR_MON_EN_Msk, 0u);
}

TEST_F(Cm7Dwt, SamplerRefusesPeriodsTheCountersCannotFollow) {
  ASSERT_NE(Init(), nullptr);
  EXPECT_EQ(mculab_cm7_dwt_arm_sampler(&dwt_, 256), -1);
  EXPECT_EQ(mculab_cm7_dwt_arm_sampler(&dwt_, 0), -1);
  regs_->CTRL = regs_->CTRL & ~DWT_CTRL_NUMCOMP_Msk;
  EXPECT_EQ(mculab_cm7_dwt_arm_sampler(&dwt_, 100), -1);
}

// ---- Ethos-U55/U65 PMU ----

class EthosUPmu : public ::testing::Test {
 protected:
  void SetUp() override {
    regs_.Show(regs_->ID, 0x10000000u | (0x4u << 12));  // architecture 1.0
    regs_->PMCR = 4u << NPU_PMCR_NUM_EVENT_CNT_Pos;
  }
  int Init() { return mculab_ethosu_pmu_init(&npu_, regs_.get()); }

  RegisterBlock<NPU_Type> regs_;
  mculab_ethosu_pmu npu_{};
};

TEST_F(EthosUPmu, InitStopsAndClearsEveryCounterAndSetsCntEn) {
  ASSERT_EQ(Init(), 0);
  EXPECT_EQ(regs_->PMCNTENCLR, 0x8000000Fu);
  EXPECT_EQ(regs_->PMINTCLR, 0x8000000Fu);
  EXPECT_EQ(regs_->PMOVSCLR, 0x8000000Fu);
  EXPECT_EQ(regs_->PMCCNTR_CFG, 0u);
  EXPECT_EQ(regs_->PMCR, NPU_PMCR_CNT_EN_Msk);
  EXPECT_STREQ(npu_.events_unit.name, "ethos-u-pmu");
  EXPECT_EQ(npu_.events_unit.max_simultaneous, 4);
  EXPECT_STREQ(npu_.cycles_unit.name, "ethos-u-ccnt");
  EXPECT_EQ(npu_.cycles_unit.max_simultaneous, 1);
  EXPECT_STREQ(mculab_ethosu_product(&npu_), "ethos-u55");
}

TEST_F(EthosUPmu, NoNpuWhereIdReadsZeroAllOnesOrAnotherArchitecture) {
  regs_.Show(regs_->ID, 0);  // QEMU's unimplemented region
  EXPECT_EQ(Init(), -1);
  regs_.Show(regs_->ID, 0xFFFFFFFFu);
  EXPECT_EQ(Init(), -1);
  regs_.Show(regs_->ID, 0x20000000u);  // architecture 2 (Ethos-U85)
  EXPECT_EQ(Init(), -1);
}

TEST_F(EthosUPmu, CatalogueUsesTheRegisterDescriptionsEventNumbers) {
  ASSERT_EQ(Init(), 0);
  const mculab_counter_unit* u = &npu_.events_unit;
  EXPECT_EQ(EventId(u, "npu_active"), 35);
  EXPECT_EQ(EventId(u, "axi0_rd"), 130);  // AXI0_RD_DATA_BEAT_RECEIVED
  EXPECT_EQ(EventId(u, "axi0_wr"), 135);  // AXI0_WR_DATA_BEAT_WRITTEN
  EXPECT_EQ(EventId(u, "axi1_rd"), 386);  // AXI1_RD_DATA_BEAT_RECEIVED
  EXPECT_EQ(EventId(u, "mac_active"), 48);
  EXPECT_EQ(EventId(u, "wd_active"), 80);
}

TEST_F(EthosUPmu, SelectWritesTheEventTypesStartZeroesAndEnables) {
  ASSERT_EQ(Init(), 0);
  const std::uint16_t events[] = {ETHOSU_PMU_NPU_ACTIVE, ETHOSU_PMU_AXI0_RD_DATA_BEAT_RECEIVED,
                                  ETHOSU_PMU_AXI1_RD_DATA_BEAT_RECEIVED};
  ASSERT_EQ(mculab_ethosu_pmu_select(&npu_, events, 3), 0);
  EXPECT_EQ(regs_->PMEVTYPER[0], 35u);
  EXPECT_EQ(regs_->PMEVTYPER[1], 130u);
  EXPECT_EQ(regs_->PMEVTYPER[2], 386u);
  for (auto& c : regs_->PMEVCNTR) c = 77;
  mculab_ethosu_pmu_start(&npu_);
  EXPECT_EQ(regs_->PMEVCNTR[0], 0u);
  EXPECT_EQ(regs_->PMEVCNTR[2], 0u);
  EXPECT_EQ(regs_->PMEVCNTR[3], 77u);
  EXPECT_EQ(regs_->PMOVSCLR, 0x7u);
  EXPECT_EQ(regs_->PMCNTENSET, 0x7u);
  mculab_ethosu_pmu_stop(&npu_);
  EXPECT_EQ(regs_->PMCNTENCLR, 0x7u);
}

TEST_F(EthosUPmu, SelectRefusesFiveEventsAndUnknownNumbers) {
  ASSERT_EQ(Init(), 0);
  const std::uint16_t five[] = {35, 48, 80, 130, 135};
  EXPECT_EQ(mculab_ethosu_pmu_select(&npu_, five, 5), -1);
  const std::uint16_t big[] = {0x400};
  EXPECT_EQ(mculab_ethosu_pmu_select(&npu_, big, 1), -1);
}

TEST_F(EthosUPmu, EventCounterOverflowCarriesIntoSixtyFourBits) {
  ASSERT_EQ(Init(), 0);
  const std::uint16_t events[] = {ETHOSU_PMU_NPU_ACTIVE, ETHOSU_PMU_MAC_ACTIVE};
  ASSERT_EQ(mculab_ethosu_pmu_select(&npu_, events, 2), 0);
  mculab_ethosu_pmu_start(&npu_);
  regs_->PMEVCNTR[0] = 123;
  regs_->PMEVCNTR[1] = 9;
  regs_->PMOVSSET = 1u << 1;
  std::uint64_t v[2] = {};
  mculab_ethosu_pmu_read(&npu_, v);
  EXPECT_EQ(v[0], 123u);
  EXPECT_EQ(v[1], (1ull << 32) + 9);
  EXPECT_EQ(regs_->PMOVSCLR, 1u << 1);
  regs_->PMOVSSET = 0;
  mculab_ethosu_pmu_read(&npu_, v);
  EXPECT_EQ(v[1], (1ull << 32) + 9);
}

TEST_F(EthosUPmu, CycleCounterIsFortyEightBitsExtendedTo64) {
  ASSERT_EQ(Init(), 0);
  mculab_counter_unit* u = &npu_.cycles_unit;
  const std::uint16_t ids[] = {EventId(u, "npu_cycles")};
  ASSERT_EQ(u->select(u, ids, 1), 0);
  regs_->PMCCNTR_LO = 5;
  regs_->PMCCNTR_HI = 6;
  u->start(u);
  EXPECT_EQ(regs_->PMCCNTR_LO, 0u);
  EXPECT_EQ(regs_->PMCCNTR_HI, 0u);
  EXPECT_EQ(regs_->PMOVSCLR, NPU_PMU_CYCLE_CNT_Msk);
  EXPECT_EQ(regs_->PMCNTENSET, NPU_PMU_CYCLE_CNT_Msk);
  regs_->PMCCNTR_LO = 0x89ABCDEFu;
  regs_->PMCCNTR_HI = 0xFFFF0012u;  // bits above 47 are not the counter's
  std::uint64_t v = 0;
  u->read(u, &v);
  EXPECT_EQ(v, 0x0012'89AB'CDEFull);
  regs_->PMOVSSET = NPU_PMU_CYCLE_CNT_Msk;
  u->read(u, &v);
  EXPECT_EQ(v, (1ull << 48) + 0x0012'89AB'CDEFull);
  const std::uint16_t wrong[] = {35};
  EXPECT_EQ(u->select(u, wrong, 1), -1);
}

}  // namespace
