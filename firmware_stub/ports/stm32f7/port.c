/* Port "stm32f7": NUCLEO-F767ZI or STM32F746G-DISCO (build option MCULAB_STM32F7_BOARD), silicon
 * behind an ST-LINK. 216 MHz from the PLL (HSE: the ST-LINK's 8 MHz clock in bypass on the
 * NUCLEO, the 25 MHz crystal on the DISCO; over-drive; 7 flash wait states), frames over the
 * USART wired to the ST-LINK's virtual COM port (NUCLEO: USART3 on PD8/PD9; DISCO: USART1 on
 * PA9/PB7) at MCULAB_STM32_BAUD, DWT CYCCNT as the timer, the "cortex-m7-dwt" profiling counters
 * (while no debugger holds halting debug), I- and D-cache on or off by the build option
 * MCULAB_CACHES. Code runs from flash over AXIM; data and stack in DTCM; arena in SRAM1. */
#include "port.h"

#include <stdint.h>

#include "cortex_m_port.h"
#include "stm32_clock.h"
#include "stm32_port.h"
#include "stm32_usart.h"

#if MCULAB_STM32F7_DISCO
#define LINK_USART ((USART_Type*)STM32F7_USART1_BASE)
static const mculab_stm32_hse kHse = {25000000u, 0};
#else
#define LINK_USART ((USART_Type*)STM32_USART3_BASE)
static const mculab_stm32_hse kHse = {8000000u, 1};
#endif

static char detail[96];

void mculab_port_init(mculab_port_info* info) {
  RCC_F7_Type* rcc = (RCC_F7_Type*)STM32F7_RCC_BASE;
  const mculab_stm32f7_clock_regs cr = {rcc, (FLASH_F7_Type*)STM32F7_FLASH_BASE,
                                        (PWR_F7_Type*)STM32F7_PWR_BASE};
  mculab_stm32_clocks clocks;
  mculab_stm32f7_clock_216mhz(&cr, kHse, &clocks);

#if MCULAB_STM32F7_DISCO
  rcc->AHB1ENR |= RCC_F7_AHB1ENR_GPIOAEN | RCC_F7_AHB1ENR_GPIOBEN;
  rcc->APB2ENR |= RCC_F7_APB2ENR_USART1EN;
  (void)rcc->APB2ENR;
  mculab_stm32_gpio_af((GPIO_Type*)STM32F7_GPIOA_BASE, 9, GPIO_AF7_USART); /* TX */
  mculab_stm32_gpio_af((GPIO_Type*)STM32F7_GPIOB_BASE, 7, GPIO_AF7_USART); /* RX */
  const uint32_t usart_clock = clocks.pclk2_hz;
#else
  rcc->AHB1ENR |= RCC_F7_AHB1ENR_GPIODEN;
  rcc->APB1ENR |= RCC_F7_APB1ENR_USART3EN;
  (void)rcc->APB1ENR;
  mculab_stm32_gpio_af((GPIO_Type*)STM32F7_GPIOD_BASE, 8, GPIO_AF7_USART); /* TX */
  mculab_stm32_gpio_af((GPIO_Type*)STM32F7_GPIOD_BASE, 9, GPIO_AF7_USART); /* RX */
  const uint32_t usart_clock = clocks.pclk1_hz;
#endif
  mculab_stm32_port_init(LINK_USART, usart_clock, &clocks, ", arena in SRAM1", detail,
                         sizeof detail, info);
  info->port = "stm32f7";
  info->arena_memory = MCULAB_MEMORY_SRAM;
  mculab_cm_linker_memory(info);
}
