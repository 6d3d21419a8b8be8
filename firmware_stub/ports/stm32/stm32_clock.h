/* Clock trees of the stm32f7 and stm32h7 ports: HSE (the ST-LINK's 8 MHz clock in bypass, or
 * the board's crystal), PLL, voltage scaling / over-drive, flash wait states, bus prescalers;
 * the values are the reference manuals' (RM0410 section 5 and table 7; RM0433 section 8 and
 * table 17). The functions take the register blocks by pointer (host tests pass simulated
 * blocks) and wait for each ready flag a bounded number of polls: an HSE that never starts
 * leaves the core on its reset clock (HSI) and says so, instead of hanging. */
#ifndef MCULAB_STM32_CLOCK_H_
#define MCULAB_STM32_CLOCK_H_

#include <stdint.h>

#include "stm32_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a clock set-up reached. */
typedef struct {
  uint32_t sysclk_hz; /* the core clock */
  uint32_t pclk1_hz;  /* APB1 (USART3) */
  uint32_t pclk2_hz;  /* APB2 (USART1) */
  const char* what;   /* "pll 216MHz from hse 8MHz bypass", "hsi 16MHz: hse did not start" */
  int ok;             /* 1: the PLL runs the core as asked */
} mculab_stm32_clocks;

/* The HSE source: its frequency and whether an external clock drives OSC_IN (bypass: the
 * ST-LINK's MCO) or a crystal sits on OSC_IN/OSC_OUT. */
typedef struct {
  uint32_t hse_hz;
  int bypass;
} mculab_stm32_hse;

/* Polls of a ready flag before giving up. */
#define MCULAB_STM32_READY_POLLS 1000000u

/* ---- STM32F7: 216 MHz ---- */

typedef struct {
  RCC_F7_Type* rcc;
  FLASH_F7_Type* flash;
  PWR_F7_Type* pwr;
} mculab_stm32f7_clock_regs;

/* The PLL for 216 MHz from `hse_hz` (8 MHz: M 4, N 216, P 2, Q 9; 25 MHz: M 25, N 432, P 2,
 * Q 9): VCO input 2 MHz (1 MHz for 25 MHz), VCO 432 MHz. Returns 0, or -1 for an HSE frequency
 * this table does not know. */
typedef struct {
  uint32_t m, n, p, q;
} mculab_stm32f7_pll;
int mculab_stm32f7_pll_for(uint32_t hse_hz, mculab_stm32f7_pll* out);

/* HSE, PLL, over-drive (PWR_CR1.ODEN then ODSWEN), 7 flash wait states with ART and prefetch,
 * AHB /1, APB1 /4 (54 MHz), APB2 /2 (108 MHz), SYSCLK from the PLL. */
void mculab_stm32f7_clock_216mhz(const mculab_stm32f7_clock_regs* r, mculab_stm32_hse hse,
                                 mculab_stm32_clocks* out);

/* ---- STM32H7: 480 MHz on revision V, 400 MHz before ---- */

typedef struct {
  RCC_H7_Type* rcc;
  FLASH_H7_Type* flash;
  PWR_H7_Type* pwr;
  SYSCFG_H7_Type* syscfg;
} mculab_stm32h7_clock_regs;

/* LDO supply, VOS1 (and VOS0 through SYSCFG_PWRCR.ODEN on revision V), PLL1 from HSE 8 MHz
 * (DIVM1 4: 2 MHz input, PLL1RGE 2..4 MHz, wide VCO; DIVN1 480 or 400; DIVP1 2; DIVQ1 4),
 * flash 4 wait states (480 MHz, AXI 240 MHz) or 2 (400 MHz, AXI 200 MHz) with WRHIGHFREQ 2,
 * HPRE /2, every APB /2, SYSCLK from PLL1. `rev_id` is DBGMCU_IDCODE.REV_ID. */
void mculab_stm32h7_clock(const mculab_stm32h7_clock_regs* r, mculab_stm32_hse hse, uint32_t rev_id,
                          mculab_stm32_clocks* out);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_STM32_CLOCK_H_ */
