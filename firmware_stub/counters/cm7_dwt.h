/* The Cortex-M7 (Armv7-M) Data Watchpoint and Trace unit's counters: registers by their
 * architectural names (Armv7-M ARM C1.8 "The Data Watchpoint and Trace unit"; CMSIS core_cm7.h
 * DWT_Type), and a driver that makes its profiling counters a counter unit (mculab/counters.h).
 *
 * DWT_CYCCNT counts cycles in 32 bits. The five profiling counters are 8 bits wide and each
 * counts one fixed event, enabled by its own DWT_CTRL bit:
 *   DWT_CPICNT    "cpi"    additional cycles of multi-cycle instructions (beyond the first)
 *   DWT_EXCCNT    "exc"    cycles of exception entry and return overhead
 *   DWT_SLEEPCNT  "sleep"  cycles asleep
 *   DWT_LSUCNT    "lsu"    additional cycles of load/store instructions
 *   DWT_FOLDCNT   "fold"   folded instructions (executed in no cycle)
 * so all five count at once (max_simultaneous 5).
 *
 * 8 bits wrap every 256 events. Each counter advances by at most one per cycle, so a reading taken
 * fewer than 256 cycles after the previous one sees at most one wrap, and the wrapped difference
 * (now - last) mod 256 is exact: mculab_cm7_dwt_sample() accumulates those differences into 64-bit
 * totals. Regions longer than 255 cycles need a periodic sample: mculab_cm7_dwt_arm_sampler() sets
 * comparator 0 to match DWT_CYCCNT every `period` (<= 255) cycles, which raises the DebugMonitor
 * exception (DEMCR.MON_EN); its handler calls mculab_cm7_dwt_on_sample(). The sampler's own
 * instructions and exception overhead are part of what the counters see (as on any sampling
 * profiler): the empty-region overhead in CASE_END measures them for the same region length only,
 * so long regions carry ~period-proportional overhead; docs/runner-protocol.md says so.
 *
 * The driver takes the register block by pointer, so host tests hand it a DWT_Type in RAM.
 * Thread-safety: one caller at a time. With the sampler armed, its DebugMonitor handler samples
 * too: call read() and sample() with that exception masked (BASEPRI or PRIMASK). */
#ifndef MCULAB_COUNTERS_CM7_DWT_H_
#define MCULAB_COUNTERS_CM7_DWT_H_

#include <stddef.h>
#include <stdint.h>

#include "mculab/cmsis_io.h"
#include "mculab/counters.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CM7_DWT_BASE 0xE0001000u

typedef struct {
  __IOM uint32_t CTRL;      /* 0x000 DWT_CTRL */
  __IOM uint32_t CYCCNT;    /* 0x004 DWT_CYCCNT */
  __IOM uint32_t CPICNT;    /* 0x008 DWT_CPICNT, bits [7:0] */
  __IOM uint32_t EXCCNT;    /* 0x00C DWT_EXCCNT, bits [7:0] */
  __IOM uint32_t SLEEPCNT;  /* 0x010 DWT_SLEEPCNT, bits [7:0] */
  __IOM uint32_t LSUCNT;    /* 0x014 DWT_LSUCNT, bits [7:0] */
  __IOM uint32_t FOLDCNT;   /* 0x018 DWT_FOLDCNT, bits [7:0] */
  __IM uint32_t PCSR;       /* 0x01C DWT_PCSR */
  __IOM uint32_t COMP0;     /* 0x020 DWT_COMP0 */
  __IOM uint32_t MASK0;     /* 0x024 DWT_MASK0 */
  __IOM uint32_t FUNCTION0; /* 0x028 DWT_FUNCTION0 */
  uint32_t RESERVED0[1];
  __IOM uint32_t COMP1; /* 0x030 DWT_COMP1 */
  __IOM uint32_t MASK1;
  __IOM uint32_t FUNCTION1;
  uint32_t RESERVED1[1];
  __IOM uint32_t COMP2; /* 0x040 DWT_COMP2 */
  __IOM uint32_t MASK2;
  __IOM uint32_t FUNCTION2;
  uint32_t RESERVED2[1];
  __IOM uint32_t COMP3; /* 0x050 DWT_COMP3 */
  __IOM uint32_t MASK3;
  __IOM uint32_t FUNCTION3;
  uint32_t RESERVED3[981];
  __OM uint32_t LAR; /* 0xFB0 DWT_LAR (Cortex-M7: software lock) */
  __IM uint32_t LSR; /* 0xFB4 DWT_LSR */
} DWT_Type;

#ifdef __cplusplus
#define MCULAB_DWT_STATIC_ASSERT static_assert
#else
#define MCULAB_DWT_STATIC_ASSERT _Static_assert
#endif
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, CTRL) == 0x000, "DWT_CTRL offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, CYCCNT) == 0x004, "DWT_CYCCNT offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, CPICNT) == 0x008, "DWT_CPICNT offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, EXCCNT) == 0x00C, "DWT_EXCCNT offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, SLEEPCNT) == 0x010, "DWT_SLEEPCNT offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, LSUCNT) == 0x014, "DWT_LSUCNT offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, FOLDCNT) == 0x018, "DWT_FOLDCNT offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, PCSR) == 0x01C, "DWT_PCSR offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, COMP0) == 0x020, "DWT_COMP0 offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, MASK0) == 0x024, "DWT_MASK0 offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, FUNCTION0) == 0x028, "DWT_FUNCTION0 offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, COMP1) == 0x030, "DWT_COMP1 offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, MASK1) == 0x034, "DWT_MASK1 offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, FUNCTION1) == 0x038, "DWT_FUNCTION1 offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, COMP2) == 0x040, "DWT_COMP2 offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, MASK2) == 0x044, "DWT_MASK2 offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, FUNCTION2) == 0x048, "DWT_FUNCTION2 offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, COMP3) == 0x050, "DWT_COMP3 offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, MASK3) == 0x054, "DWT_MASK3 offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, FUNCTION3) == 0x058, "DWT_FUNCTION3 offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, LAR) == 0xFB0, "DWT_LAR offset");
MCULAB_DWT_STATIC_ASSERT(offsetof(DWT_Type, LSR) == 0xFB4, "DWT_LSR offset");

#define DWT_CTRL_CYCCNTENA_Pos 0u
#define DWT_CTRL_CYCCNTENA_Msk (1u << DWT_CTRL_CYCCNTENA_Pos)
#define DWT_CTRL_CPIEVTENA_Pos 17u
#define DWT_CTRL_CPIEVTENA_Msk (1u << DWT_CTRL_CPIEVTENA_Pos)
#define DWT_CTRL_EXCEVTENA_Pos 18u
#define DWT_CTRL_EXCEVTENA_Msk (1u << DWT_CTRL_EXCEVTENA_Pos)
#define DWT_CTRL_SLEEPEVTENA_Pos 19u
#define DWT_CTRL_SLEEPEVTENA_Msk (1u << DWT_CTRL_SLEEPEVTENA_Pos)
#define DWT_CTRL_LSUEVTENA_Pos 20u
#define DWT_CTRL_LSUEVTENA_Msk (1u << DWT_CTRL_LSUEVTENA_Pos)
#define DWT_CTRL_FOLDEVTENA_Pos 21u
#define DWT_CTRL_FOLDEVTENA_Msk (1u << DWT_CTRL_FOLDEVTENA_Pos)
#define DWT_CTRL_NOPRFCNT_Pos 24u /* 1: no profiling counters */
#define DWT_CTRL_NOPRFCNT_Msk (1u << DWT_CTRL_NOPRFCNT_Pos)
#define DWT_CTRL_NOCYCCNT_Pos 25u /* 1: no cycle counter */
#define DWT_CTRL_NOCYCCNT_Msk (1u << DWT_CTRL_NOCYCCNT_Pos)
#define DWT_CTRL_NUMCOMP_Pos 28u
#define DWT_CTRL_NUMCOMP_Msk (0xFu << DWT_CTRL_NUMCOMP_Pos)
#define DWT_CPICNT_CPICNT_Msk 0xFFu
#define DWT_FUNCTION_FUNCTION_Pos 0u
#define DWT_FUNCTION_FUNCTION_Msk (0xFu << DWT_FUNCTION_FUNCTION_Pos)
#define DWT_FUNCTION_CYCMATCH_Pos 7u /* comparator 0 compares with DWT_CYCCNT */
#define DWT_FUNCTION_CYCMATCH_Msk (1u << DWT_FUNCTION_CYCMATCH_Pos)
#define DWT_FUNCTION_MATCHED_Pos 24u
#define DWT_FUNCTION_MATCHED_Msk (1u << DWT_FUNCTION_MATCHED_Pos)
/* FUNCTION = 0b0100 with CYCMATCH: a watchpoint debug event on a DWT_CYCCNT match (DebugMonitor
 * exception when DEMCR.MON_EN is set). */
#define DWT_FUNCTION_WATCHPOINT_PC_OR_CYCCNT 0x4u
#define DWT_LAR_KEY 0xC5ACCE55u
#ifndef DCB_DEMCR_TRCENA_Msk
#define DCB_DEMCR_TRCENA_Pos 24u
#define DCB_DEMCR_TRCENA_Msk (1u << DCB_DEMCR_TRCENA_Pos)
#endif
#define DCB_DEMCR_MON_EN_Pos 16u
#define DCB_DEMCR_MON_EN_Msk (1u << DCB_DEMCR_MON_EN_Pos)

/* Event ids of the unit "cortex-m7-dwt": the counter's index, in register order. */
enum {
  MCULAB_DWT_CPI = 0,
  MCULAB_DWT_EXC = 1,
  MCULAB_DWT_SLEEP = 2,
  MCULAB_DWT_LSU = 3,
  MCULAB_DWT_FOLD = 4,
  MCULAB_DWT_NUM_COUNTERS = 5
};

typedef struct {
  DWT_Type* regs;
  volatile uint32_t* demcr;
  uint8_t n;                               /* counters selected */
  uint8_t sel[MCULAB_DWT_NUM_COUNTERS];    /* their ids, selection order */
  uint32_t enable_bits;                    /* DWT_CTRL bits of the selected counters */
  uint8_t last[MCULAB_DWT_NUM_COUNTERS];   /* reading at the previous sample, by id */
  uint64_t total[MCULAB_DWT_NUM_COUNTERS]; /* events since start, by id */
  uint32_t period;                         /* sampler period in cycles, 0 = not armed */
  mculab_counter_unit unit;
} mculab_cm7_dwt;

extern const mculab_event mculab_cortex_m7_dwt_events[];
extern const uint8_t mculab_cortex_m7_dwt_num_events;

/* Sets DEMCR.TRCENA, unlocks DWT_LAR, checks DWT_CTRL.NOPRFCNT; returns the unit
 * "cortex-m7-dwt" or NULL when the core has no profiling counters. */
mculab_counter_unit* mculab_cm7_dwt_init(mculab_cm7_dwt* d, DWT_Type* regs,
                                         volatile uint32_t* demcr);
int mculab_cm7_dwt_select(mculab_cm7_dwt* d, const uint16_t* ids, unsigned n);
void mculab_cm7_dwt_start(mculab_cm7_dwt* d);
void mculab_cm7_dwt_stop(mculab_cm7_dwt* d);
void mculab_cm7_dwt_read(mculab_cm7_dwt* d, uint64_t* values);
/* Folds the counters' progress since the last sample into the totals (see the wrap rule above). */
void mculab_cm7_dwt_sample(mculab_cm7_dwt* d);
/* Arms comparator 0 to raise DebugMonitor every `period` cycles (1..255) and sets DEMCR.MON_EN;
 * returns -1 for a period the 8-bit counters cannot follow or a DWT without comparators. */
int mculab_cm7_dwt_arm_sampler(mculab_cm7_dwt* d, uint32_t period);
void mculab_cm7_dwt_disarm_sampler(mculab_cm7_dwt* d);
/* The DebugMonitor handler's work: sample, clear the match and set the next one. */
void mculab_cm7_dwt_on_sample(mculab_cm7_dwt* d);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_COUNTERS_CM7_DWT_H_ */
