#include "stm32_port.h"

#include "cortex_m.h"
#include "cortex_m_port.h"
#include "rtt.h"
#include "stm32_usart.h"

void mculab_stm32_port_init(USART_Type* link, uint32_t usart_clock_hz,
                            const mculab_stm32_clocks* clocks, const char* arena, char* detail,
                            size_t detail_len, mculab_port_info* info) {
#if MCULAB_LINK_RTT
  mculab_rtt_init();
#endif
  mculab_stm32_usart_init(link, mculab_stm32_usart_brr(usart_clock_hz, MCULAB_STM32_BAUD));
  mculab_stm32_usart_set_link(link);

  const mculab_cm_regs hw = mculab_cm_hw();
  mculab_cm7_caches_set(&hw, MCULAB_CACHES, MCULAB_CACHES);
  const int dwt = mculab_cm_timer_init(&hw);
  info->num_units = 0;
  if (dwt) {
    mculab_counter_unit* u = mculab_cm_dwt_unit_init(&hw);
    if (u != NULL) info->units[info->num_units++] = u;
  }

  detail[0] = 0;
  mculab_cm_append(detail, detail_len, clocks->what);
  mculab_cm_append(detail, detail_len, MCULAB_CACHES ? ", caches on" : ", caches off");
  mculab_cm_append(detail, detail_len, arena);
  mculab_cm_append(detail, detail_len, MCULAB_LINK_RTT ? ", link RTT" : ", link USART");
  if (!dwt) mculab_cm_append(detail, detail_len, ", DWT CYCCNT does not count: SysTick");

  info->cpu = "cortex-m7";
  info->flags = MCULAB_CACHES ? (MCULAB_HELLO_ICACHE | MCULAB_HELLO_DCACHE) : 0;
  info->detail = detail;
  info->timer_unit = MCULAB_TIMER_CYCLES;
  info->clock_hz = clocks->sysclk_hz;
}
