/* Port "stm32h7": NUCLEO-H743ZI, silicon behind an ST-LINK. 480 MHz on silicon revision V (VOS0
 * through SYSCFG_PWRCR.ODEN), 400 MHz on earlier revisions (VOS1), read from DBGMCU_IDCODE;
 * PLL1 from the ST-LINK's 8 MHz clock (HSE bypass). Frames over USART3 on PD8/PD9 (the
 * ST-LINK's virtual COM port) at MCULAB_STM32_BAUD, DWT CYCCNT as the timer, the
 * "cortex-m7-dwt" profiling counters (while no debugger holds halting debug), caches on or off
 * by MCULAB_CACHES, and the case arena in AXI SRAM or DTCM by MCULAB_STM32H7_ARENA (HELLO's
 * arena_memory says which: the place changes the numbers). */
#include "port.h"

#include <stdint.h>

#include "cortex_m_port.h"
#include "stm32_clock.h"
#include "stm32_port.h"
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
  mculab_stm32_port_init(LINK_USART, clocks.pclk1_hz, &clocks,
                         MCULAB_STM32H7_ARENA_DTCM ? ", arena in DTCM" : ", arena in AXI SRAM",
                         detail, sizeof detail, info);
  info->port = "stm32h7";
  info->arena_memory = MCULAB_STM32H7_ARENA_DTCM ? MCULAB_MEMORY_TCM : MCULAB_MEMORY_AXI_SRAM;
  mculab_cm_linker_memory(info);
}
