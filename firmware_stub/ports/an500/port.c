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
#include "cortex_m_port.h"
#include "rtt.h"

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
  mculab_cmsdk_uart_init(AN500_UART0, AN500_CORE_CLOCK_HZ, 115200u);
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
  mculab_cm_linker_memory(info);
}
