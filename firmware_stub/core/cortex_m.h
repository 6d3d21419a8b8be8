/* What every Cortex-M port (an500, stm32f7, stm32h7, corstone300) shares: the architectural
 * registers of the System Control Space the ports touch, by their names in the Armv7-M and
 * Armv8-M Architecture Reference Manuals (CMSIS core_cm7.h / core_cm55.h names), the timer (DWT
 * CYCCNT where it counts, SysTick otherwise), the Cortex-M7 caches, the DWT profiling counters as
 * a sampled counter unit, and the end of a session (park).
 *
 * Every function takes its register blocks by pointer (mculab_cm_regs), so host tests hand them
 * simulated blocks in RAM; a port passes mculab_cm_hw(), the real addresses. The only interrupt
 * is SysTick's (emulated boards) and DebugMonitor's (the DWT sampler), both handled here.
 * Thread-safety: the runner's one thread, plus those two handlers. */
#ifndef MCULAB_CORE_CORTEX_M_H_
#define MCULAB_CORE_CORTEX_M_H_

#include <stddef.h>
#include <stdint.h>

#include "cm7_dwt.h" /* DWT_Type: CTRL, CYCCNT and LAR sit at the same offsets on v7-M and v8-M */
#include "mculab/counters.h"

#ifdef __cplusplus
extern "C" {
#define MCULAB_CM_STATIC_ASSERT static_assert
#else
#define MCULAB_CM_STATIC_ASSERT _Static_assert
#endif

/* SysTick (Armv7-M ARM B3.3, Armv8-M ARM B11.1), 0xE000E010. */
typedef struct {
  __IOM uint32_t CSR;  /* 0x00 SYST_CSR control and status */
  __IOM uint32_t RVR;  /* 0x04 SYST_RVR reload value (24 bits) */
  __IOM uint32_t CVR;  /* 0x08 SYST_CVR current value; any write clears it to 0 */
  __IM uint32_t CALIB; /* 0x0C SYST_CALIB */
} SysTick_Type;
MCULAB_CM_STATIC_ASSERT(offsetof(SysTick_Type, RVR) == 0x04, "SYST_RVR offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SysTick_Type, CVR) == 0x08, "SYST_CVR offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SysTick_Type, CALIB) == 0x0C, "SYST_CALIB offset");
#define SysTick_CSR_ENABLE_Msk (1u << 0)
#define SysTick_CSR_TICKINT_Msk (1u << 1)
#define SysTick_CSR_CLKSOURCE_Msk (1u << 2) /* 1: the processor clock */
#define SysTick_CSR_COUNTFLAG_Msk (1u << 16)
#define SysTick_RVR_RELOAD_Msk 0x00FFFFFFu

/* System Control Block (Armv7-M ARM B3.2.2; the cache maintenance operations B2.2.7), from
 * 0xE000ED00, and the Debug Control Block's DEMCR at 0xE000EDFC. */
typedef struct {
  __IM uint32_t CPUID;  /* 0x000 */
  __IOM uint32_t ICSR;  /* 0x004 interrupt control and state */
  __IOM uint32_t VTOR;  /* 0x008 vector table offset */
  __IOM uint32_t AIRCR; /* 0x00C */
  __IOM uint32_t SCR;   /* 0x010 */
  __IOM uint32_t CCR;   /* 0x014 configuration and control: IC, DC */
  uint32_t RESERVED0[24];
  __IM uint32_t CLIDR;   /* 0x078 cache level ID */
  __IM uint32_t CTR;     /* 0x07C cache type */
  __IM uint32_t CCSIDR;  /* 0x080 cache size ID (of the cache CSSELR selects) */
  __IOM uint32_t CSSELR; /* 0x084 cache size selection */
  __IOM uint32_t CPACR;  /* 0x088 coprocessor access control */
  uint32_t RESERVED1[25];
  __IOM uint32_t DHCSR; /* 0x0F0 DCB: debug halting control and status */
  __OM uint32_t DCRSR;  /* 0x0F4 */
  __IOM uint32_t DCRDR; /* 0x0F8 */
  __IOM uint32_t DEMCR; /* 0x0FC DCB: debug exception and monitor control */
  uint32_t RESERVED2[84];
  __OM uint32_t ICIALLU; /* 0x250 I-cache invalidate all to PoU */
  uint32_t RESERVED3[3];
  __OM uint32_t DCISW; /* 0x260 D-cache invalidate by set/way */
  uint32_t RESERVED4[2];
  __OM uint32_t DCCSW; /* 0x26C D-cache clean by set/way */
  uint32_t RESERVED5[1];
  __OM uint32_t DCCISW; /* 0x274 D-cache clean and invalidate by set/way */
} SCB_Type;
MCULAB_CM_STATIC_ASSERT(offsetof(SCB_Type, ICSR) == 0x004, "ICSR offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SCB_Type, VTOR) == 0x008, "VTOR offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SCB_Type, CCR) == 0x014, "CCR offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SCB_Type, CLIDR) == 0x078, "CLIDR offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SCB_Type, CCSIDR) == 0x080, "CCSIDR offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SCB_Type, CSSELR) == 0x084, "CSSELR offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SCB_Type, CPACR) == 0x088, "CPACR offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SCB_Type, DHCSR) == 0x0F0, "DHCSR offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SCB_Type, DEMCR) == 0x0FC, "DEMCR offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SCB_Type, ICIALLU) == 0x250, "ICIALLU offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SCB_Type, DCISW) == 0x260, "DCISW offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SCB_Type, DCCSW) == 0x26C, "DCCSW offset");
MCULAB_CM_STATIC_ASSERT(offsetof(SCB_Type, DCCISW) == 0x274, "DCCISW offset");
#define SCB_ICSR_PENDSTSET_Msk (1u << 26)
#define SCB_ICSR_PENDSTCLR_Msk (1u << 25)
#define DCB_DHCSR_C_DEBUGEN_Msk (1u << 0) /* a debugger has enabled halting debug */
#define SCB_CCR_DC_Msk (1u << 16)
#define SCB_CCR_IC_Msk (1u << 17)
#define SCB_CPACR_CP10_CP11_FULL (0xFu << 20)
#define SCB_CCSIDR_LINESIZE_Msk 0x7u
#define SCB_CCSIDR_ASSOCIATIVITY_Pos 3u
#define SCB_CCSIDR_ASSOCIATIVITY_Msk (0x3FFu << SCB_CCSIDR_ASSOCIATIVITY_Pos)
#define SCB_CCSIDR_NUMSETS_Pos 13u
#define SCB_CCSIDR_NUMSETS_Msk (0x7FFFu << SCB_CCSIDR_NUMSETS_Pos)
/* DCISW/DCCSW operands on the Cortex-M7 (32-byte lines, 4 ways): set in [13:5], way in [31:30]. */
#define SCB_DCISW_SET_Pos 5u
#define SCB_DCISW_WAY_Pos 30u

#define MCULAB_CM_SCS_SYSTICK 0xE000E010u
#define MCULAB_CM_SCS_SCB 0xE000ED00u

/* The register blocks the shared code uses. */
typedef struct {
  SysTick_Type* systick;
  SCB_Type* scb;
  DWT_Type* dwt;
} mculab_cm_regs;

/* The real blocks (SysTick 0xE000E010, SCB 0xE000ED00, DWT 0xE0001000). */
mculab_cm_regs mculab_cm_hw(void);

/* ---- timer ---- */

/* Sets the timer up: DWT CYCCNT when it counts (enabled, it must advance over a short busy loop:
 * silicon), otherwise SysTick on the processor clock with its wrap interrupt (QEMU, which models
 * no DWT). Returns 1 for DWT, 0 for SysTick. */
int mculab_cm_timer_init(const mculab_cm_regs* r);
/* The port's mculab_port_timer_align()/timer_now(): restarts the SysTick period (no-op on DWT) /
 * a 64-bit count of processor cycles. */
void mculab_cm_timer_align(void);
uint64_t mculab_cm_timer_now(void);

/* Extends a 32-bit counter to 64 bits: exact while reads are less than 2^32 counts apart. */
typedef struct {
  uint32_t last;
  uint32_t high;
} mculab_cm_extend32;
uint64_t mculab_cm_extend(mculab_cm_extend32* e, uint32_t raw);

/* ---- Cortex-M7 caches (Armv7-M ARM B2.2.7; CMSIS SCB_EnableICache/SCB_EnableDCache) ---- */

/* Invalidates and enables the I-cache and/or the D-cache (D-cache invalidated set by set, way by
 * way from CCSIDR); disables the ones not asked for (a D-cache is cleaned first). */
void mculab_cm7_caches_set(const mculab_cm_regs* r, int icache, int dcache);

/* ---- the DWT profiling counters as a unit that samples itself ---- */

/* The "cortex-m7-dwt" unit (counters/cm7_dwt.h) whose start() also arms the DWT comparator 0
 * sampler (every MCULAB_CM_DWT_SAMPLE_PERIOD cycles, DebugMonitor) and whose stop() disarms it,
 * so regions longer than 255 cycles count exactly. NULL when the core has no profiling counters
 * or no comparator, and while a debugger has halting debug enabled (DHCSR.C_DEBUGEN): then a
 * comparator match halts the core instead of raising DebugMonitor (Armv7-M ARM C1.4), so the
 * unit is offered only on a board running free of its probe. The DebugMonitor handler
 * (cortex_m_startup.c) samples this unit. */
#define MCULAB_CM_DWT_SAMPLE_PERIOD 200u
mculab_counter_unit* mculab_cm_dwt_unit_init(const mculab_cm_regs* r);
void mculab_cm_dwt_on_debug_monitor(void);

/* Appends `s` to the NUL-terminated text in buf[size], cutting it to fit (HELLO's detail line). */
void mculab_cm_append(char* buf, size_t size, const char* s);

/* ---- the end of a session ---- */

/* Masks interrupts, stops SysTick and waits for interrupt forever: the session is over (after
 * DONE, ERROR or a fault) and the agent ends the emulation or resets the board. No semihosting:
 * a runner never asks its host for anything. */
__attribute__((noreturn)) void mculab_cm_park(void);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_CORE_CORTEX_M_H_ */
