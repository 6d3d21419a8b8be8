/* Port "stm32f7": NUCLEO-F767ZI or STM32F746G-DISCO (build option MCULAB_STM32F7_BOARD), silicon
 * behind an ST-LINK. 216 MHz from the PLL (HSE: the ST-LINK's 8 MHz clock in bypass on the
 * NUCLEO, the 25 MHz crystal on the DISCO; over-drive; 7 flash wait states), frames over the
 * USART wired to the ST-LINK's virtual COM port (NUCLEO: USART3 on PD8/PD9; DISCO: USART1 on
 * PA9/PB7) at MCULAB_STM32_BAUD, DWT CYCCNT as the timer, the "cortex-m7-dwt" profiling counters
 * (while no debugger holds halting debug), I- and D-cache on or off by the build option
 * MCULAB_CACHES. Code runs from flash over AXIM; data and stack in DTCM; arena in SRAM1. */
#include "port.h"

#include <stdint.h>

#include "cortex_m.h"
#include "rtt.h"
#include "stm32_clock.h"
#include "stm32_usart.h"

extern uint8_t __arena_start[], __arena_size[], __workload_start[], __workload_size[];
extern uint8_t __stack_bottom[], __stack_top[];

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
#if MCULAB_LINK_RTT
  mculab_rtt_init();
#endif
  mculab_stm32_usart_init(LINK_USART, mculab_stm32_usart_brr(usart_clock, MCULAB_STM32_BAUD));

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
  mculab_cm_append(detail, sizeof detail, ", arena in SRAM1");
  mculab_cm_append(detail, sizeof detail, MCULAB_LINK_RTT ? ", link RTT" : ", link USART");
  if (!dwt) mculab_cm_append(detail, sizeof detail, ", DWT CYCCNT does not count: SysTick");

  info->port = "stm32f7";
  info->cpu = "cortex-m7";
  info->flags = MCULAB_CACHES ? (MCULAB_HELLO_ICACHE | MCULAB_HELLO_DCACHE) : 0;
  info->arena_memory = MCULAB_MEMORY_SRAM;
  info->detail = detail;
  info->timer_unit = MCULAB_TIMER_CYCLES;
  info->clock_hz = clocks.sysclk_hz;
  info->workload = __workload_start;
  info->workload_max = (size_t)(uintptr_t)__workload_size;
  info->workload_addr = (uint32_t)(uintptr_t)__workload_start;
  info->workload_error = 0;
  info->arena = __arena_start;
  info->arena_bytes = (size_t)(uintptr_t)__arena_size;
  info->stack_low = __stack_bottom;
  info->stack_bytes = (size_t)(__stack_top - __stack_bottom);
}

int mculab_port_write(const uint8_t* data, size_t len) {
#if MCULAB_LINK_RTT
  return mculab_rtt_write(data, len);
#endif
  mculab_stm32_usart_write(LINK_USART, data, len);
  return 0;
}

int mculab_port_poll_byte(void) {
#if MCULAB_LINK_RTT
  return mculab_rtt_poll();
#else
  return mculab_stm32_usart_poll(LINK_USART);
#endif
}

int mculab_port_read_byte(void) {
#if MCULAB_LINK_RTT
  return mculab_rtt_read();
#endif
  for (;;) {
    const int b = mculab_stm32_usart_poll(LINK_USART);
    if (b >= 0) return b;
  }
}

void mculab_port_timer_align(void) { mculab_cm_timer_align(); }

uint64_t mculab_port_timer_now(void) { return mculab_cm_timer_now(); }

void mculab_port_exit(int status) {
  (void)status; /* the frames said it all; the agent resets the board for the next session */
#if MCULAB_LINK_RTT
  mculab_rtt_stop(); /* the last frames out before the core parks */
#endif
  mculab_cm_park();
}

int mculab_runner_main(int argc, char** argv, const mculab_workload_ops* ops) {
  (void)argc;
  (void)argv;
  mculab_port_exit(mculab_core_run(ops));
  return 0;
}
