/* Port "stm32h7": NUCLEO-H743ZI, silicon behind an ST-LINK. 480 MHz on silicon revision V (VOS0
 * through SYSCFG_PWRCR.ODEN), 400 MHz on earlier revisions (VOS1), read from DBGMCU_IDCODE;
 * PLL1 from the ST-LINK's 8 MHz clock (HSE bypass). Frames over USART3 on PD8/PD9 (the
 * ST-LINK's virtual COM port) at MCULAB_STM32_BAUD, DWT CYCCNT as the timer, the
 * "cortex-m7-dwt" profiling counters (while no debugger holds halting debug), caches on or off
 * by MCULAB_CACHES, and the case arena in AXI SRAM or DTCM by MCULAB_STM32H7_ARENA (HELLO's
 * arena_memory says which: the place changes the numbers). */
#include "port.h"

#include <stdint.h>

#include "cortex_m.h"
#include "cortex_m_port.h"
#include "rtt.h"
#include "stm32_clock.h"
#include "stm32_usart.h"

#define LINK_USART ((USART_Type*)STM32_USART3_BASE)
static const mculab_stm32_hse kHse = {8000000u, 1};

static char detail[112];

void mculab_port_init(mculab_port_info* info) {
  RCC_H7_Type* rcc = (RCC_H7_Type*)STM32H7_RCC_BASE;
  /* The D2 SRAMs hold the marker words: clock them before anything stores there. */
  rcc->AHB2ENR |= RCC_H7_AHB2ENR_SRAM123EN;
  (void)rcc->AHB2ENR;

  const uint32_t rev = *(volatile uint32_t*)STM32H7_DBGMCU_IDCODE >> DBGMCU_IDCODE_REV_ID_Pos;
  const mculab_stm32h7_clock_regs cr = {rcc, (FLASH_H7_Type*)STM32H7_FLASH_BASE,
                                        (PWR_H7_Type*)STM32H7_PWR_BASE,
                                        (SYSCFG_H7_Type*)STM32H7_SYSCFG_BASE};
  mculab_stm32_clocks clocks;
  mculab_stm32h7_clock(&cr, kHse, rev, &clocks);

  rcc->AHB4ENR |= RCC_H7_AHB4ENR_GPIODEN;
  rcc->APB1LENR |= RCC_H7_APB1LENR_USART3EN;
  (void)rcc->APB1LENR;
  mculab_stm32_gpio_af((GPIO_Type*)STM32H7_GPIOD_BASE, 8, GPIO_AF7_USART); /* TX */
  mculab_stm32_gpio_af((GPIO_Type*)STM32H7_GPIOD_BASE, 9, GPIO_AF7_USART); /* RX */
#if MCULAB_LINK_RTT
  mculab_rtt_init();
#endif
  mculab_stm32_usart_init(LINK_USART, mculab_stm32_usart_brr(clocks.pclk1_hz, MCULAB_STM32_BAUD));
  mculab_stm32_usart_set_link(LINK_USART);

  const mculab_cm_regs hw = mculab_cm_hw();
  mculab_cm7_caches_set(&hw, MCULAB_CACHES, MCULAB_CACHES);
  const int dwt = mculab_cm_timer_init(&hw);
  info->num_units = 0;
  if (dwt) {
    mculab_counter_unit* u = mculab_cm_dwt_unit_init(&hw);
    if (u != NULL) info->units[info->num_units++] = u;
  }

  detail[0] = 0;
  mculab_cm_append(detail, sizeof detail, clocks.what);
  mculab_cm_append(detail, sizeof detail, MCULAB_CACHES ? ", caches on" : ", caches off");
  mculab_cm_append(detail, sizeof detail,
                   MCULAB_STM32H7_ARENA_DTCM ? ", arena in DTCM" : ", arena in AXI SRAM");
  mculab_cm_append(detail, sizeof detail, MCULAB_LINK_RTT ? ", link RTT" : ", link USART");
  if (!dwt) mculab_cm_append(detail, sizeof detail, ", DWT CYCCNT does not count: SysTick");

  info->port = "stm32h7";
  info->cpu = "cortex-m7";
  info->flags = MCULAB_CACHES ? (MCULAB_HELLO_ICACHE | MCULAB_HELLO_DCACHE) : 0;
  info->arena_memory = MCULAB_STM32H7_ARENA_DTCM ? MCULAB_MEMORY_TCM : MCULAB_MEMORY_AXI_SRAM;
  info->detail = detail;
  info->timer_unit = MCULAB_TIMER_CYCLES;
  info->clock_hz = clocks.sysclk_hz;
  mculab_cm_linker_memory(info);
}
