/* Port "an500": the Cortex-M7 of the MPS2 AN500 FPGA image, silicon or qemu-system-arm
 * -M mps2-an500. Link on UART0 (CMSDK APB UART, polled), workload at 0x60000000, arena in the
 * SSRAM after the stack.
 *
 * Timer and counters (core/cortex_m.h): DWT CYCCNT and the "cortex-m7-dwt" profiling counters
 * where they count (an FPGA board). QEMU 7.2 models no DWT, so there the timer is SysTick on the
 * 25 MHz processor clock, HELLO says EMULATED, and the only unit is the external "qemu-plugin"
 * (the M7 has no MVE, so no mve_instructions). */
#include "port.h"

#include <stdint.h>

#include "an500_regs.h"
#include "cortex_m.h"
#include "rtt.h"

extern uint8_t __arena_start[], __arena_size[], __workload_start[], __workload_size[];
extern uint8_t __stack_bottom[], __stack_top[];

static const mculab_event kQemuEvents[] = {
    {"instructions", 0},
    {"loads", 1},
    {"stores", 2},
    {"branches", 3},
};
static mculab_counter_unit qemu_unit = {
    .name = "qemu-plugin",
    .max_simultaneous = 3, /* the plugin's events= limit (qemu_plugin/mculab_counters.c) */
    .flags = MCULAB_UNIT_EXTERNAL,
    .num_events = 4,
    .events = kQemuEvents,
};

void mculab_port_init(mculab_port_info* info) {
#if MCULAB_LINK_RTT
  mculab_rtt_init();
#else
  AN500_UART0->CTRL = 0;
  AN500_UART0->BAUDDIV = AN500_CORE_CLOCK_HZ / 115200u;
  AN500_UART0->CTRL = CMSDK_UART_CTRL_TXEN_Msk | CMSDK_UART_CTRL_RXEN_Msk;
#endif

  const mculab_cm_regs hw = mculab_cm_hw();
  const int silicon = mculab_cm_timer_init(&hw);
  info->port = "an500";
  info->cpu = "cortex-m7";
  info->num_units = 0;
  if (silicon) {
    mculab_counter_unit* u = mculab_cm_dwt_unit_init(&hw);
    if (u != NULL) info->units[info->num_units++] = u;
  } else {
    info->units[info->num_units++] = &qemu_unit;
  }
  info->flags = silicon ? 0 : MCULAB_HELLO_EMULATED; /* caches off, as at reset */
  info->arena_memory = MCULAB_MEMORY_SRAM;
  info->detail = silicon ? "an500: DWT CYCCNT at 25MHz, caches off, arena in SSRAM"
                         : "an500: emulated (QEMU), SysTick at 25MHz, caches off, arena in SSRAM";
  info->timer_unit = MCULAB_TIMER_CYCLES;
  info->clock_hz = AN500_CORE_CLOCK_HZ;
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
  for (size_t i = 0; i < len; ++i) {
    while (AN500_UART0->STATE & CMSDK_UART_STATE_TXBF_Msk) {
    }
    AN500_UART0->DATA = data[i];
  }
  return 0;
}

int mculab_port_poll_byte(void) {
#if MCULAB_LINK_RTT
  return mculab_rtt_poll();
#endif
  if (!(AN500_UART0->STATE & CMSDK_UART_STATE_RXBF_Msk)) return -1;
  return (int)(AN500_UART0->DATA & 0xFFu);
}

int mculab_port_read_byte(void) {
#if MCULAB_LINK_RTT
  return mculab_rtt_read();
#endif
  while (!(AN500_UART0->STATE & CMSDK_UART_STATE_RXBF_Msk)) {
  }
  return (int)(AN500_UART0->DATA & 0xFFu);
}

void mculab_port_timer_align(void) { mculab_cm_timer_align(); }

uint64_t mculab_port_timer_now(void) { return mculab_cm_timer_now(); }

void mculab_port_exit(int status) {
  (void)status; /* the frames said it all; the agent ends the emulation */
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
