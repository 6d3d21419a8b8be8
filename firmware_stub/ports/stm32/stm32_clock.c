/* STM32F7 / STM32H7 clock set-up (stm32_clock.h). */
#include "stm32_clock.h"

static int wait_set(reg32* reg, uint32_t mask) {
  for (uint32_t i = 0; i < MCULAB_STM32_READY_POLLS; ++i) {
    if ((*reg & mask) == mask) return 0;
  }
  return -1;
}

static int wait_field(reg32* reg, uint32_t mask, uint32_t value) {
  for (uint32_t i = 0; i < MCULAB_STM32_READY_POLLS; ++i) {
    if ((*reg & mask) == value) return 0;
  }
  return -1;
}

/* ---- STM32F7 ---- */

int mculab_stm32f7_pll_for(uint32_t hse_hz, mculab_stm32f7_pll* out) {
  switch (hse_hz) {
    case 8000000u: /* NUCLEO-F767ZI: the ST-LINK's MCO */
      *out = (mculab_stm32f7_pll){4, 216, 2, 9};
      return 0;
    case 25000000u: /* STM32F746G-DISCO: crystal X2 */
      *out = (mculab_stm32f7_pll){25, 432, 2, 9};
      return 0;
    default:
      return -1;
  }
}

void mculab_stm32f7_clock_216mhz(const mculab_stm32f7_clock_regs* r, mculab_stm32_hse hse,
                                 mculab_stm32_clocks* out) {
  RCC_F7_Type* rcc = r->rcc;
  /* The reset clock: HSI 16 MHz, no prescaler. */
  out->sysclk_hz = 16000000u;
  out->pclk1_hz = 16000000u;
  out->pclk2_hz = 16000000u;
  out->ok = 0;
  mculab_stm32f7_pll pll;
  if (mculab_stm32f7_pll_for(hse.hse_hz, &pll) != 0) {
    out->what = "hsi 16MHz: no pll table for this hse";
    return;
  }

  rcc->APB1ENR |= RCC_F7_APB1ENR_PWREN;
  (void)rcc->APB1ENR; /* the clock enable takes effect before PWR is written */
  r->pwr->CR1 = (r->pwr->CR1 & ~PWR_F7_CR1_VOS_Msk) | PWR_F7_CR1_VOS_SCALE1;

  if (hse.bypass) rcc->CR |= RCC_F7_CR_HSEBYP;
  rcc->CR |= RCC_F7_CR_HSEON;
  if (wait_set(&rcc->CR, RCC_F7_CR_HSERDY) != 0) {
    rcc->CR &= ~(RCC_F7_CR_HSEON | RCC_F7_CR_HSEBYP);
    out->what = "hsi 16MHz: hse did not start";
    return;
  }

  rcc->CR &= ~RCC_F7_CR_PLLON;
  rcc->PLLCFGR = (pll.m << RCC_F7_PLLCFGR_PLLM_Pos) | (pll.n << RCC_F7_PLLCFGR_PLLN_Pos) |
                 ((pll.p / 2u - 1u) << RCC_F7_PLLCFGR_PLLP_Pos) | RCC_F7_PLLCFGR_PLLSRC_HSE |
                 (pll.q << RCC_F7_PLLCFGR_PLLQ_Pos) | (2u << RCC_F7_PLLCFGR_PLLR_Pos);
  rcc->CR |= RCC_F7_CR_PLLON;
  if (wait_set(&rcc->CR, RCC_F7_CR_PLLRDY) != 0) {
    out->what = "hsi 16MHz: pll did not lock";
    return;
  }

  /* 216 MHz needs over-drive (RM0410 4.1.4): ODEN, wait ODRDY, ODSWEN, wait ODSWRDY. */
  r->pwr->CR1 |= PWR_F7_CR1_ODEN;
  if (wait_set(&r->pwr->CSR1, PWR_F7_CSR1_ODRDY) != 0) {
    out->what = "hsi 16MHz: over-drive not ready";
    return;
  }
  r->pwr->CR1 |= PWR_F7_CR1_ODSWEN;
  if (wait_set(&r->pwr->CSR1, PWR_F7_CSR1_ODSWRDY) != 0) {
    out->what = "hsi 16MHz: over-drive switch not ready";
    return;
  }

  /* 7 wait states at 216 MHz and 2.7-3.6 V (RM0410 table 7), before the clock rises. */
  r->flash->ACR =
      (r->flash->ACR & ~FLASH_F7_ACR_LATENCY_Msk) | 7u | FLASH_F7_ACR_ARTEN | FLASH_F7_ACR_PRFTEN;
  if (wait_field(&r->flash->ACR, FLASH_F7_ACR_LATENCY_Msk, 7u) != 0) {
    out->what = "hsi 16MHz: flash latency not taken";
    return;
  }

  uint32_t cfgr = rcc->CFGR & ~(RCC_F7_CFGR_HPRE_Msk | (0x7u << RCC_F7_CFGR_PPRE1_Pos) |
                                (0x7u << RCC_F7_CFGR_PPRE2_Pos) | RCC_F7_CFGR_SW_Msk);
  cfgr |= (RCC_F7_CFGR_PPRE_DIV4 << RCC_F7_CFGR_PPRE1_Pos) |
          (RCC_F7_CFGR_PPRE_DIV2 << RCC_F7_CFGR_PPRE2_Pos) | RCC_F7_CFGR_SW_PLL;
  rcc->CFGR = cfgr;
  if (wait_field(&rcc->CFGR, RCC_F7_CFGR_SWS_Msk, RCC_F7_CFGR_SWS_PLL) != 0) {
    out->what = "hsi 16MHz: sysclk did not switch to the pll";
    return;
  }
  out->sysclk_hz = 216000000u;
  out->pclk1_hz = 54000000u;
  out->pclk2_hz = 108000000u;
  out->what =
      hse.hse_hz == 8000000u
          ? (hse.bypass ? "pll 216MHz from hse 8MHz bypass" : "pll 216MHz from hse 8MHz crystal")
          : (hse.bypass ? "pll 216MHz from hse 25MHz bypass" : "pll 216MHz from hse 25MHz crystal");
  out->ok = 1;
}

/* ---- STM32H7 ---- */

void mculab_stm32h7_clock(const mculab_stm32h7_clock_regs* r, mculab_stm32_hse hse, uint32_t rev_id,
                          mculab_stm32_clocks* out) {
  RCC_H7_Type* rcc = r->rcc;
  /* The reset clock: HSI 64 MHz, no prescaler. */
  out->sysclk_hz = 64000000u;
  out->pclk1_hz = 64000000u;
  out->pclk2_hz = 64000000u;
  out->ok = 0;
  if (hse.hse_hz != 8000000u) {
    out->what = "hsi 64MHz: no pll table for this hse";
    return;
  }
  const int vos0 = rev_id == STM32H7_REV_V;
  const uint32_t n = vos0 ? 480u : 400u;

  /* LDO supply (NUCLEO-H743ZI), then VOS1; CR3's supply bits are written once after reset. */
  r->pwr->CR3 = (r->pwr->CR3 & ~(PWR_H7_CR3_BYPASS | PWR_H7_CR3_SCUEN)) | PWR_H7_CR3_LDOEN;
  if (wait_set(&r->pwr->CSR1, PWR_H7_CSR1_ACTVOSRDY) != 0) {
    out->what = "hsi 64MHz: supply not ready";
    return;
  }
  r->pwr->D3CR = (r->pwr->D3CR & ~PWR_H7_D3CR_VOS_Msk) | PWR_H7_D3CR_VOS_SCALE1;
  if (wait_set(&r->pwr->D3CR, PWR_H7_D3CR_VOSRDY) != 0) {
    out->what = "hsi 64MHz: vos1 not ready";
    return;
  }
  if (vos0) {
    rcc->APB4ENR |= RCC_H7_APB4ENR_SYSCFGEN;
    (void)rcc->APB4ENR;
    r->syscfg->PWRCR |= SYSCFG_H7_PWRCR_ODEN;
    if (wait_set(&r->pwr->D3CR, PWR_H7_D3CR_VOSRDY) != 0) {
      out->what = "hsi 64MHz: vos0 not ready";
      return;
    }
  }

  if (hse.bypass) rcc->CR |= RCC_H7_CR_HSEBYP;
  rcc->CR |= RCC_H7_CR_HSEON;
  if (wait_set(&rcc->CR, RCC_H7_CR_HSERDY) != 0) {
    rcc->CR &= ~(RCC_H7_CR_HSEON | RCC_H7_CR_HSEBYP);
    out->what = "hsi 64MHz: hse did not start";
    return;
  }

  rcc->CR &= ~RCC_H7_CR_PLL1ON;
  rcc->PLLCKSELR = (rcc->PLLCKSELR & ~(RCC_H7_PLLCKSELR_DIVM1_Msk | 0x3u)) |
                   (4u << RCC_H7_PLLCKSELR_DIVM1_Pos) | RCC_H7_PLLCKSELR_PLLSRC_HSE;
  rcc->PLLCFGR = (rcc->PLLCFGR & ~(RCC_H7_PLLCFGR_PLL1FRACEN | RCC_H7_PLLCFGR_PLL1VCOSEL |
                                   RCC_H7_PLLCFGR_PLL1RGE_Msk)) |
                 (1u << RCC_H7_PLLCFGR_PLL1RGE_Pos) | RCC_H7_PLLCFGR_DIVP1EN |
                 RCC_H7_PLLCFGR_DIVQ1EN | RCC_H7_PLLCFGR_DIVR1EN;
  rcc->PLL1DIVR =
      ((n - 1u) << RCC_H7_PLL1DIVR_DIVN1_Pos) | ((2u - 1u) << RCC_H7_PLL1DIVR_DIVP1_Pos) |
      ((4u - 1u) << RCC_H7_PLL1DIVR_DIVQ1_Pos) | ((2u - 1u) << RCC_H7_PLL1DIVR_DIVR1_Pos);
  rcc->CR |= RCC_H7_CR_PLL1ON;
  if (wait_set(&rcc->CR, RCC_H7_CR_PLL1RDY) != 0) {
    out->what = "hsi 64MHz: pll1 did not lock";
    return;
  }

  /* RM0433 table 17: AXI 240 MHz at VOS0 takes 4 wait states, 200 MHz at VOS1 2; both with
   * WRHIGHFREQ 2. Raised before the clock is. */
  const uint32_t latency = vos0 ? 4u : 2u;
  r->flash->ACR = (r->flash->ACR & ~(FLASH_H7_ACR_LATENCY_Msk | FLASH_H7_ACR_WRHIGHFREQ_Msk)) |
                  latency | (2u << FLASH_H7_ACR_WRHIGHFREQ_Pos);
  if (wait_field(&r->flash->ACR, FLASH_H7_ACR_LATENCY_Msk, latency) != 0) {
    out->what = "hsi 64MHz: flash latency not taken";
    return;
  }

  rcc->D1CFGR = RCC_H7_D1CFGR_HPRE_DIV2 | RCC_H7_D1CFGR_D1PPRE_DIV2; /* D1CPRE /1 */
  rcc->D2CFGR = RCC_H7_D2CFGR_D2PPRE1_DIV2 | RCC_H7_D2CFGR_D2PPRE2_DIV2;
  rcc->D3CFGR = RCC_H7_D3CFGR_D3PPRE_DIV2;
  rcc->CFGR = (rcc->CFGR & ~RCC_H7_CFGR_SW_Msk) | RCC_H7_CFGR_SW_PLL1;
  if (wait_field(&rcc->CFGR, RCC_H7_CFGR_SWS_Msk, RCC_H7_CFGR_SWS_PLL1) != 0) {
    out->what = "hsi 64MHz: sysclk did not switch to pll1";
    return;
  }
  out->sysclk_hz = n * 1000000u;
  out->pclk1_hz = out->sysclk_hz / 4u;
  out->pclk2_hz = out->sysclk_hz / 4u;
  out->what = vos0 ? "pll1 480MHz vos0 (rev V) from hse 8MHz bypass"
                   : "pll1 400MHz vos1 (rev Y) from hse 8MHz bypass";
  out->ok = 1;
}
