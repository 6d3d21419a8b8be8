/* The registers the an547 port touches, by their architectural names (Armv8-M ARM, Cortex-M55
 * TRM, CMSDK APB UART TRM), CMSIS style. Offsets are checked with static_assert. */
#ifndef MCULAB_AN547_REGS_H_
#define MCULAB_AN547_REGS_H_

#include <stddef.h>
#include <stdint.h>

#include "cmsdk_uart.h"
#include "mculab/cmsis_io.h"

/* SysTick (Armv8-M ARM B11.1), 0xE000E010 */
typedef struct {
  __IOM uint32_t CSR;  /* 0x00 SYST_CSR control and status */
  __IOM uint32_t RVR;  /* 0x04 SYST_RVR reload value (24 bits) */
  __IOM uint32_t CVR;  /* 0x08 SYST_CVR current value; any write clears it to 0 */
  __IM uint32_t CALIB; /* 0x0C SYST_CALIB */
} SysTick_Type;
_Static_assert(offsetof(SysTick_Type, CVR) == 0x08, "SYST_CVR offset");
#define SysTick ((SysTick_Type*)0xE000E010u)
#define SysTick_CSR_ENABLE_Msk (1u << 0)
#define SysTick_CSR_TICKINT_Msk (1u << 1)
#define SysTick_CSR_CLKSOURCE_Msk (1u << 2) /* 1: the processor clock */
#define SysTick_CSR_COUNTFLAG_Msk (1u << 16)
#define SysTick_RVR_RELOAD_Msk 0x00FFFFFFu

/* System Control Block (Armv8-M ARM B11.2), from 0xE000ED00 */
typedef struct {
  __IM uint32_t CPUID; /* 0x00 */
  __IOM uint32_t ICSR; /* 0x04 interrupt control and state */
  __IOM uint32_t VTOR; /* 0x08 vector table offset */
  uint32_t reserved0[31];
  __IOM uint32_t CPACR; /* 0x88 coprocessor access control */
  uint32_t reserved1[28];
  __IOM uint32_t DEMCR; /* 0xFC debug exception and monitor control (DCB) */
} SCB_Type;
_Static_assert(offsetof(SCB_Type, ICSR) == 0x04, "ICSR offset");
_Static_assert(offsetof(SCB_Type, CPACR) == 0x88, "CPACR offset");
_Static_assert(offsetof(SCB_Type, DEMCR) == 0xFC, "DEMCR offset");
#define SCB ((SCB_Type*)0xE000ED00u)
#define SCB_ICSR_PENDSTSET_Msk (1u << 26)
#define SCB_ICSR_PENDSTCLR_Msk (1u << 25)
#define SCB_CPACR_CP10_CP11_FULL (0xFu << 20)
#ifndef DCB_DEMCR_TRCENA_Msk
#define DCB_DEMCR_TRCENA_Pos 24u
#define DCB_DEMCR_TRCENA_Msk (1u << DCB_DEMCR_TRCENA_Pos)
#endif

/* Data Watchpoint and Trace (Armv8-M ARM B13), 0xE0001000 */
typedef struct {
  __IOM uint32_t CTRL;   /* 0x000 DWT_CTRL */
  __IOM uint32_t CYCCNT; /* 0x004 DWT_CYCCNT */
  uint32_t reserved0[1002];
  __OM uint32_t LAR; /* 0xFB0 DWT_LAR software lock access (where implemented) */
} DWT_Type;
_Static_assert(offsetof(DWT_Type, CYCCNT) == 0x004, "DWT_CYCCNT offset");
_Static_assert(offsetof(DWT_Type, LAR) == 0xFB0, "DWT_LAR offset");
#define DWT ((DWT_Type*)0xE0001000u)
#define DWT_CTRL_CYCCNTENA_Msk (1u << 0)
#define DWT_LAR_KEY 0xC5ACCE55u

/* UART0 of the AN547 (a CMSDK APB UART, ports/cmsdk), Secure alias. */
#define UART0 ((CMSDK_UART_Type*)0x59303000u)

/* The AN547 FPGA image clocks the core (and SysTick's processor clock) at 32 MHz. */
#define AN547_CORE_CLOCK_HZ 32000000u

#endif /* MCULAB_AN547_REGS_H_ */
