/* The Arm Ethos-U55/U65 NPU's performance monitor: registers by the names of Arm's public
 * register description (ethos-u-core-driver ethosu55_interface.h / ethosu65_interface.h: NPU_REG_*
 * offsets, pmcr_r & co.), and a driver that makes it two counter units (mculab/counters.h):
 *   "ethos-u-pmu"   PMEVCNTR0..3: 4 configurable 32-bit event counters (PMCR.NUM_EVENT_CNT)
 *   "ethos-u-ccnt"  PMCCNTR: the NPU's 48-bit cycle counter ("npu_cycles")
 * Counters are extended to 64 bits through their overflow flags (PMOVSSET): exact while fewer than
 * 2^32 events (2^48 cycles) happen between two reads.
 *
 * The counters count only while PMCR.CNT_EN is set; a runtime's NPU driver that resets the NPU
 * between inferences must keep the PMU configuration (ethos-u-core-driver saves and restores it).
 * Corstone-300 (AN547) maps the NPU at 0x48102000 (Non-secure) / 0x58102000 (Secure); QEMU does
 * not model it, so a port probes NPU_ID only where the hardware is (silicon).
 *
 * The driver takes the register block by pointer, so host tests hand it an NPU_Type in RAM.
 * Thread-safety: one caller at a time. */
#ifndef MCULAB_COUNTERS_ETHOSU_PMU_H_
#define MCULAB_COUNTERS_ETHOSU_PMU_H_

#include <stddef.h>
#include <stdint.h>

#include "mculab/cmsis_io.h"
#include "mculab/counters.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ETHOSU_NPU_BASE_CORSTONE300_S 0x58102000u
#define ETHOSU_NPU_BASE_CORSTONE300_NS 0x48102000u
#define ETHOSU_PMU_NUM_EVENTCNT 4u

typedef struct {
  __IM uint32_t ID;     /* 0x000 NPU_REG_ID */
  __IM uint32_t STATUS; /* 0x004 NPU_REG_STATUS */
  __IOM uint32_t CMD;   /* 0x008 NPU_REG_CMD */
  __IOM uint32_t RESET; /* 0x00C NPU_REG_RESET */
  uint32_t RESERVED0[6];
  __IM uint32_t CONFIG; /* 0x028 NPU_REG_CONFIG */
  uint32_t RESERVED1[85];
  __IOM uint32_t PMCR;       /* 0x180 NPU_REG_PMCR */
  __IOM uint32_t PMCNTENSET; /* 0x184 NPU_REG_PMCNTENSET */
  __IOM uint32_t PMCNTENCLR; /* 0x188 NPU_REG_PMCNTENCLR */
  __IOM uint32_t PMOVSSET;   /* 0x18C NPU_REG_PMOVSSET */
  __IOM uint32_t PMOVSCLR;   /* 0x190 NPU_REG_PMOVSCLR */
  __IOM uint32_t PMINTSET;   /* 0x194 NPU_REG_PMINTSET */
  __IOM uint32_t PMINTCLR;   /* 0x198 NPU_REG_PMINTCLR */
  uint32_t RESERVED2[1];
  __IOM uint32_t PMCCNTR_LO;  /* 0x1A0 NPU_REG_PMCCNTR (bits 31..0) */
  __IOM uint32_t PMCCNTR_HI;  /* 0x1A4 NPU_REG_PMCCNTR_HI (bits 47..32) */
  __IOM uint32_t PMCCNTR_CFG; /* 0x1A8 NPU_REG_PMCCNTR_CFG */
  __IOM uint32_t PMCAXI_CHAN; /* 0x1AC NPU_REG_PMCAXI_CHAN */
  uint32_t RESERVED3[84];
  __IOM uint32_t PMEVCNTR[ETHOSU_PMU_NUM_EVENTCNT]; /* 0x300 NPU_REG_PMEVCNTR_BASE */
  uint32_t RESERVED4[28];
  __IOM uint32_t PMEVTYPER[ETHOSU_PMU_NUM_EVENTCNT]; /* 0x380 NPU_REG_PMEVTYPER_BASE */
} NPU_Type;

#ifdef __cplusplus
#define MCULAB_NPU_STATIC_ASSERT static_assert
#else
#define MCULAB_NPU_STATIC_ASSERT _Static_assert
#endif
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, ID) == 0x000, "NPU_REG_ID offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, STATUS) == 0x004, "NPU_REG_STATUS offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, CMD) == 0x008, "NPU_REG_CMD offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, RESET) == 0x00C, "NPU_REG_RESET offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, CONFIG) == 0x028, "NPU_REG_CONFIG offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, PMCR) == 0x180, "NPU_REG_PMCR offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, PMCNTENSET) == 0x184, "NPU_REG_PMCNTENSET offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, PMCNTENCLR) == 0x188, "NPU_REG_PMCNTENCLR offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, PMOVSSET) == 0x18C, "NPU_REG_PMOVSSET offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, PMOVSCLR) == 0x190, "NPU_REG_PMOVSCLR offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, PMINTSET) == 0x194, "NPU_REG_PMINTSET offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, PMINTCLR) == 0x198, "NPU_REG_PMINTCLR offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, PMCCNTR_LO) == 0x1A0, "NPU_REG_PMCCNTR offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, PMCCNTR_HI) == 0x1A4, "NPU_REG_PMCCNTR_HI offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, PMCCNTR_CFG) == 0x1A8, "NPU_REG_PMCCNTR_CFG offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, PMCAXI_CHAN) == 0x1AC, "NPU_REG_PMCAXI_CHAN offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, PMEVCNTR) == 0x300, "NPU_REG_PMEVCNTR_BASE offset");
MCULAB_NPU_STATIC_ASSERT(offsetof(NPU_Type, PMEVTYPER) == 0x380, "NPU_REG_PMEVTYPER_BASE offset");

/* NPU_REG_ID: arch_major_rev [31:28] is 1 on Ethos-U55 and U65 */
#define NPU_ID_ARCH_MAJOR_REV_Pos 28u
#define NPU_ID_ARCH_MAJOR_REV_Msk (0xFu << NPU_ID_ARCH_MAJOR_REV_Pos)
/* NPU_REG_CONFIG: product [31:28]: 0 Ethos-U55, 1 Ethos-U65 */
#define NPU_CONFIG_PRODUCT_Pos 28u
#define NPU_CONFIG_PRODUCT_Msk (0xFu << NPU_CONFIG_PRODUCT_Pos)
#define NPU_PMCR_CNT_EN_Pos 0u
#define NPU_PMCR_CNT_EN_Msk (1u << NPU_PMCR_CNT_EN_Pos)
#define NPU_PMCR_EVENT_CNT_RST_Pos 1u
#define NPU_PMCR_EVENT_CNT_RST_Msk (1u << NPU_PMCR_EVENT_CNT_RST_Pos)
#define NPU_PMCR_CYCLE_CNT_RST_Pos 2u
#define NPU_PMCR_CYCLE_CNT_RST_Msk (1u << NPU_PMCR_CYCLE_CNT_RST_Pos)
#define NPU_PMCR_MASK_EN_Pos 3u
#define NPU_PMCR_MASK_EN_Msk (1u << NPU_PMCR_MASK_EN_Pos)
#define NPU_PMCR_NUM_EVENT_CNT_Pos 11u
#define NPU_PMCR_NUM_EVENT_CNT_Msk (0x1Fu << NPU_PMCR_NUM_EVENT_CNT_Pos)
/* PMCNTENSET/CLR, PMOVSSET/CLR, PMINTSET/CLR: bit n event counter n, bit 31 the cycle counter */
#define NPU_PMU_EVENT_CNT_Msk(n) (1u << (n))
#define NPU_PMU_CYCLE_CNT_Pos 31u
#define NPU_PMU_CYCLE_CNT_Msk (1u << NPU_PMU_CYCLE_CNT_Pos)
#define NPU_PMCCNTR_HI_Msk 0xFFFFu
#define NPU_PMEVTYPER_EV_TYPE_Msk 0x3FFu

/* Event numbers (enum pmu_event of the Ethos-U55 register description). */
#define ETHOSU_PMU_NPU_IDLE 32u
#define ETHOSU_PMU_NPU_ACTIVE 35u
#define ETHOSU_PMU_MAC_ACTIVE 48u
#define ETHOSU_PMU_MAC_ACTIVE_8BIT 49u
#define ETHOSU_PMU_MAC_ACTIVE_16BIT 50u
#define ETHOSU_PMU_MAC_STALLED_BY_WD 53u
#define ETHOSU_PMU_AO_ACTIVE 64u
#define ETHOSU_PMU_WD_ACTIVE 80u
#define ETHOSU_PMU_WD_STALLED 81u
#define ETHOSU_PMU_AXI0_RD_DATA_BEAT_RECEIVED 130u
#define ETHOSU_PMU_AXI0_WR_DATA_BEAT_WRITTEN 135u
#define ETHOSU_PMU_AXI0_RD_TRAN_REQ_STALLED 131u
#define ETHOSU_PMU_AXI1_RD_DATA_BEAT_RECEIVED 386u
#define ETHOSU_PMU_AXI1_WR_DATA_BEAT_WRITTEN 391u
#define ETHOSU_PMU_NPU_CYCLES 0xFFFFu /* our id for PMCCNTR in the unit "ethos-u-ccnt" */

typedef struct {
  NPU_Type* regs;
  uint8_t num_counters; /* PMCR.NUM_EVENT_CNT, at most ETHOSU_PMU_NUM_EVENTCNT */
  uint8_t n;            /* event counters selected */
  uint8_t cycles;       /* 1: the cycle counter is selected */
  uint32_t high[ETHOSU_PMU_NUM_EVENTCNT];
  uint32_t ccnt_high;              /* bits 63..48 of the cycle count */
  mculab_counter_unit events_unit; /* "ethos-u-pmu" */
  mculab_counter_unit cycles_unit; /* "ethos-u-ccnt" */
} mculab_ethosu_pmu;

extern const mculab_event mculab_ethosu_events[];
extern const uint8_t mculab_ethosu_num_events;
extern const mculab_event mculab_ethosu_cycle_events[];

/* Checks NPU_REG_ID (architecture 1.x) and PMCR.NUM_EVENT_CNT, stops and clears every counter,
 * sets PMCR.CNT_EN. Returns 0, or -1 when no Ethos-U answers at `regs`. */
int mculab_ethosu_pmu_init(mculab_ethosu_pmu* d, NPU_Type* regs);
/* "ethos-u-u55"/"ethos-u-u65" from NPU_REG_CONFIG, for logs. */
const char* mculab_ethosu_product(const mculab_ethosu_pmu* d);

int mculab_ethosu_pmu_select(mculab_ethosu_pmu* d, const uint16_t* events, unsigned n);
void mculab_ethosu_pmu_start(mculab_ethosu_pmu* d);
void mculab_ethosu_pmu_stop(mculab_ethosu_pmu* d);
void mculab_ethosu_pmu_read(mculab_ethosu_pmu* d, uint64_t* values);
int mculab_ethosu_ccnt_select(mculab_ethosu_pmu* d, const uint16_t* events, unsigned n);
void mculab_ethosu_ccnt_start(mculab_ethosu_pmu* d);
void mculab_ethosu_ccnt_stop(mculab_ethosu_pmu* d);
uint64_t mculab_ethosu_ccnt_read(mculab_ethosu_pmu* d);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_COUNTERS_ETHOSU_PMU_H_ */
