/* The Armv8.1-M Performance Monitoring Unit (Cortex-M55, Cortex-M85): registers by their
 * architectural names (Armv8.1-M ARM, chapter "Performance Monitoring Unit"; CMSIS core_cm55.h
 * PMU_Type and pmu_armv8.h), and a driver that makes it a counter unit (mculab/counters.h).
 *
 * The PMU has up to 31 event counters (Cortex-M55: 8) of 16 bits and a 32-bit cycle counter
 * PMU_CCNTR. 16 bits wrap every 65536 events, far too often to extend by reading, so the driver
 * chains counter pairs: the even counter counts the event, the odd one counts CHAIN (0x001E, "an
 * overflow of the preceding even-numbered counter"). A pair is a 32-bit counter; its odd
 * counter's overflow flag (PMU_OVSSET) extends it to 64 bits in software. Eight counters make
 * four pairs: the unit counts 4 events at once. A value is exact while fewer than 2^32 events
 * happen between two reads (the core reads at the end of every region and op).
 *
 * The PMU counts only with DEMCR.TRCENA set and non-invasive debug allowed in the current
 * security state (PMU_AUTHSTATUS); the driver checks both and reports no unit otherwise.
 *
 * The driver takes the register block by pointer, so host tests hand it a PMU_Type in RAM.
 * Thread-safety: one caller at a time. */
#ifndef MCULAB_COUNTERS_ARMV81M_PMU_H_
#define MCULAB_COUNTERS_ARMV81M_PMU_H_

#include <stddef.h>
#include <stdint.h>

#include "mculab/cmsis_io.h"
#include "mculab/counters.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ARMV81M_PMU_BASE 0xE0003000u
#define ARMV81M_PMU_NUM_EVENTCNT 8u /* Cortex-M55 */

typedef struct {
  __IOM uint32_t EVCNTR[ARMV81M_PMU_NUM_EVENTCNT]; /* 0x000 PMU_EVCNTR<n>, bits [15:0] */
  uint32_t RESERVED0[31u - ARMV81M_PMU_NUM_EVENTCNT];
  __IOM uint32_t CCNTR; /* 0x07C PMU_CCNTR cycle counter, 32 bits */
  uint32_t RESERVED1[224];
  __IOM uint32_t EVTYPER[ARMV81M_PMU_NUM_EVENTCNT]; /* 0x400 PMU_EVTYPER<n>, event [15:0] */
  uint32_t RESERVED2[31u - ARMV81M_PMU_NUM_EVENTCNT];
  __IOM uint32_t CCFILTR; /* 0x47C PMU_CCFILTR */
  uint32_t RESERVED3[480];
  __IOM uint32_t CNTENSET; /* 0xC00 PMU_CNTENSET: write 1 enables counter n, bit 31 PMU_CCNTR */
  uint32_t RESERVED4[7];
  __IOM uint32_t CNTENCLR; /* 0xC20 PMU_CNTENCLR: write 1 disables */
  uint32_t RESERVED5[7];
  __IOM uint32_t INTENSET; /* 0xC40 PMU_INTENSET */
  uint32_t RESERVED6[7];
  __IOM uint32_t INTENCLR; /* 0xC60 PMU_INTENCLR */
  uint32_t RESERVED7[7];
  __IOM uint32_t OVSCLR; /* 0xC80 PMU_OVSCLR: write 1 clears overflow flag n */
  uint32_t RESERVED8[7];
  __OM uint32_t SWINC; /* 0xCA0 PMU_SWINC */
  uint32_t RESERVED9[7];
  __IOM uint32_t OVSSET; /* 0xCC0 PMU_OVSSET: reads the overflow flags */
  uint32_t RESERVED10[79];
  __IM uint32_t TYPE;  /* 0xE00 PMU_TYPE */
  __IOM uint32_t CTRL; /* 0xE04 PMU_CTRL */
  uint32_t RESERVED11[108];
  __IM uint32_t AUTHSTATUS; /* 0xFB8 PMU_AUTHSTATUS */
  __IM uint32_t DEVARCH;    /* 0xFBC PMU_DEVARCH */
  uint32_t RESERVED12[3];
  __IM uint32_t DEVTYPE; /* 0xFCC PMU_DEVTYPE */
} PMU_Type;

#ifdef __cplusplus
#define MCULAB_STATIC_ASSERT static_assert
#else
#define MCULAB_STATIC_ASSERT _Static_assert
#endif
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, EVCNTR) == 0x000, "PMU_EVCNTR offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, CCNTR) == 0x07C, "PMU_CCNTR offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, EVTYPER) == 0x400, "PMU_EVTYPER offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, CCFILTR) == 0x47C, "PMU_CCFILTR offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, CNTENSET) == 0xC00, "PMU_CNTENSET offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, CNTENCLR) == 0xC20, "PMU_CNTENCLR offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, INTENSET) == 0xC40, "PMU_INTENSET offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, INTENCLR) == 0xC60, "PMU_INTENCLR offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, OVSCLR) == 0xC80, "PMU_OVSCLR offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, SWINC) == 0xCA0, "PMU_SWINC offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, OVSSET) == 0xCC0, "PMU_OVSSET offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, TYPE) == 0xE00, "PMU_TYPE offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, CTRL) == 0xE04, "PMU_CTRL offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, AUTHSTATUS) == 0xFB8, "PMU_AUTHSTATUS offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, DEVARCH) == 0xFBC, "PMU_DEVARCH offset");
MCULAB_STATIC_ASSERT(offsetof(PMU_Type, DEVTYPE) == 0xFCC, "PMU_DEVTYPE offset");
MCULAB_STATIC_ASSERT(sizeof(PMU_Type) == 0xFD0, "PMU_Type size");

#define PMU_EVCNTR_CNT_Pos 0u
#define PMU_EVCNTR_CNT_Msk (0xFFFFu << PMU_EVCNTR_CNT_Pos)
#define PMU_EVTYPER_EVENTTOCNT_Pos 0u
#define PMU_EVTYPER_EVENTTOCNT_Msk (0xFFFFu << PMU_EVTYPER_EVENTTOCNT_Pos)
#define PMU_CNTENSET_CCNTR_ENABLE_Pos 31u
#define PMU_CNTENSET_CCNTR_ENABLE_Msk (1u << PMU_CNTENSET_CCNTR_ENABLE_Pos)
#define PMU_CNTENCLR_CCNTR_ENABLE_Pos 31u
#define PMU_CNTENCLR_CCNTR_ENABLE_Msk (1u << PMU_CNTENCLR_CCNTR_ENABLE_Pos)
#define PMU_OVSSET_CYCCNT_STATUS_Pos 31u
#define PMU_OVSSET_CYCCNT_STATUS_Msk (1u << PMU_OVSSET_CYCCNT_STATUS_Pos)
#define PMU_OVSCLR_CYCCNT_STATUS_Pos 31u
#define PMU_OVSCLR_CYCCNT_STATUS_Msk (1u << PMU_OVSCLR_CYCCNT_STATUS_Pos)
#define PMU_CTRL_ENABLE_Pos 0u
#define PMU_CTRL_ENABLE_Msk (1u << PMU_CTRL_ENABLE_Pos)
#define PMU_CTRL_EVENTCNT_RESET_Pos 1u
#define PMU_CTRL_EVENTCNT_RESET_Msk (1u << PMU_CTRL_EVENTCNT_RESET_Pos)
#define PMU_CTRL_CYCCNT_RESET_Pos 2u
#define PMU_CTRL_CYCCNT_RESET_Msk (1u << PMU_CTRL_CYCCNT_RESET_Pos)
#define PMU_CTRL_CYCCNT_DISABLE_Pos 5u
#define PMU_CTRL_CYCCNT_DISABLE_Msk (1u << PMU_CTRL_CYCCNT_DISABLE_Pos)
#define PMU_CTRL_FRZ_ON_OV_Pos 9u
#define PMU_CTRL_FRZ_ON_OV_Msk (1u << PMU_CTRL_FRZ_ON_OV_Pos)
#define PMU_TYPE_NUM_CNTS_Pos 0u
#define PMU_TYPE_NUM_CNTS_Msk (0xFFu << PMU_TYPE_NUM_CNTS_Pos)
#define PMU_TYPE_SIZE_CNTS_Pos 8u
#define PMU_TYPE_SIZE_CNTS_Msk (0x3Fu << PMU_TYPE_SIZE_CNTS_Pos)
#define PMU_TYPE_CYCCNT_PRESENT_Pos 14u
#define PMU_TYPE_CYCCNT_PRESENT_Msk (1u << PMU_TYPE_CYCCNT_PRESENT_Pos)
/* Non-secure / Secure non-invasive debug: 0b11 = implemented and allowed */
#define PMU_AUTHSTATUS_NSNID_Pos 2u
#define PMU_AUTHSTATUS_NSNID_Msk (3u << PMU_AUTHSTATUS_NSNID_Pos)
#define PMU_AUTHSTATUS_SNID_Pos 6u
#define PMU_AUTHSTATUS_SNID_Msk (3u << PMU_AUTHSTATUS_SNID_Pos)
/* DEMCR (Debug Exception and Monitor Control, 0xE000EDFC): the PMU and DWT need TRCENA. */
#define DCB_DEMCR_TRCENA_Pos 24u
#define DCB_DEMCR_TRCENA_Msk (1u << DCB_DEMCR_TRCENA_Pos)

/* Event numbers (Armv8.1-M ARM, Cortex-M55 TRM "PMU events"; CMSIS pmu_armv8.h names). */
#define ARM_PMU_L1I_CACHE_REFILL 0x0001u
#define ARM_PMU_L1D_CACHE_REFILL 0x0003u
#define ARM_PMU_L1D_CACHE 0x0004u
#define ARM_PMU_LD_RETIRED 0x0006u
#define ARM_PMU_ST_RETIRED 0x0007u
#define ARM_PMU_INST_RETIRED 0x0008u
#define ARM_PMU_EXC_TAKEN 0x0009u
#define ARM_PMU_BR_MIS_PRED 0x0010u
#define ARM_PMU_CPU_CYCLES 0x0011u
#define ARM_PMU_MEM_ACCESS 0x0013u
#define ARM_PMU_CHAIN 0x001Eu
#define ARM_PMU_BR_RETIRED 0x0021u
#define ARM_PMU_STALL 0x003Cu
#define ARM_PMU_MVE_INST_RETIRED 0x0200u
#define ARM_PMU_MVE_INT_MAC_RETIRED 0x0228u
#define ARM_PMU_MVE_LDST_RETIRED 0x0238u

#define MCULAB_PMU_MAX_PAIRS (ARMV81M_PMU_NUM_EVENTCNT / 2u)

typedef struct {
  PMU_Type* regs;
  volatile uint32_t* demcr;
  uint8_t num_pairs;  /* chained pairs the PMU has (at most MCULAB_PMU_MAX_PAIRS) */
  uint8_t n;          /* pairs selected */
  uint32_t pair_mask; /* PMU_CNTENSET bits of the selected pairs' counters */
  uint32_t high[MCULAB_PMU_MAX_PAIRS]; /* bits 63..32 of each selected pair */
  uint32_t ccntr_high;                 /* bits 63..32 of the cycle counter */
  mculab_counter_unit unit;
} mculab_armv81m_pmu;

/* The catalogue of the Cortex-M55 unit "cortex-m55-pmu". */
extern const mculab_event mculab_cortex_m55_events[];
extern const uint8_t mculab_cortex_m55_num_events;

/* Sets DEMCR.TRCENA, checks PMU_TYPE (at least 2 event counters) and PMU_AUTHSTATUS (non-invasive
 * debug allowed in the Secure state when `secure`, else the Non-secure one), stops and clears
 * every counter and enables the PMU. Returns the counter unit "cortex-m55-pmu" (max_simultaneous
 * = counter pairs), or NULL when the PMU cannot count here (an emulator reads PMU_TYPE as 0). */
mculab_counter_unit* mculab_armv81m_pmu_init(mculab_armv81m_pmu* d, PMU_Type* regs,
                                             volatile uint32_t* demcr, int secure);

/* The unit's operations (mculab/counters.h), also callable directly. */
int mculab_armv81m_pmu_select(mculab_armv81m_pmu* d, const uint16_t* events, unsigned n);
void mculab_armv81m_pmu_start(mculab_armv81m_pmu* d);
void mculab_armv81m_pmu_stop(mculab_armv81m_pmu* d);
void mculab_armv81m_pmu_read(mculab_armv81m_pmu* d, uint64_t* values);

/* The cycle counter PMU_CCNTR, extended to 64 bits through its overflow flag (exact while reads
 * are less than 2^32 cycles apart). The runner's timer is DWT_CYCCNT; this is for ports that
 * prefer the PMU's. */
void mculab_armv81m_pmu_ccntr_start(mculab_armv81m_pmu* d);
uint64_t mculab_armv81m_pmu_ccntr_read(mculab_armv81m_pmu* d);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_COUNTERS_ARMV81M_PMU_H_ */
