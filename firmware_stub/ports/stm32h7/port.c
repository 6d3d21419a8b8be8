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
#include "rtt.h"
#include "stm32_clock.h"
#include "stm32_usart.h"

extern uint8_t __arena_start[], __arena_size[], __workload_start[], __workload_size[];
extern uint8_t __stack_bottom[], __stack_top[];

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
