/* Port "corstone300": the Corstone-300 (Cortex-M55 + Ethos-U55) of the MPS3 AN547 image, on
 * silicon (the FPGA board) behind a CMSIS-DAP or J-Link probe. The an547 memory map; frames over
 * UART0 (the MPS3's USB serial port); DWT CYCCNT as the timer. The units HELLO lists come from
 * the hardware's ID registers, never from a fixed list: the Armv8.1-M PMU when PMU_TYPE and
 * PMU_AUTHSTATUS say it counts ("cortex-m55-pmu", 4 events at once), and the Ethos-U55's PMU
 * when NPU_ID answers at its Secure base ("ethos-u-pmu", 4 events, and "ethos-u-ccnt").
 *
 * Started where CYCCNT does not count (QEMU), it falls back to SysTick, says EMULATED and probes
 * nothing further (QEMU models neither the PMU nor the NPU): the an547 port is the one for QEMU. */
#include "port.h"

#include <stdint.h>

#include "armv81m_pmu.h"
#include "cmsdk_uart.h"
#include "cortex_m.h"
#include "cortex_m_port.h"
#include "ethosu_pmu.h"
#include "rtt.h"

/* UART0 of the AN547 (a CMSDK APB UART, ports/cmsdk), Secure alias. */
#define UART0 ((CMSDK_UART_Type*)0x59303000u)
#define CORSTONE300_CLOCK_HZ 32000000u /* the AN547 image's core clock */

static mculab_armv81m_pmu pmu;
static mculab_ethosu_pmu npu;
static char detail[112];

void mculab_port_init(mculab_port_info* info) {
#if MCULAB_LINK_RTT
  mculab_rtt_init();
#else
  mculab_cmsdk_uart_init(UART0, CORSTONE300_CLOCK_HZ, 115200u);
#endif

  mculab_cm_regs hw = mculab_cm_hw();
  const int silicon = mculab_cm_timer_init(&hw);
  info->num_units = 0;
  int have_pmu = 0, have_npu = 0;
  if (silicon) {
    /* The firmware runs in the Secure state (the AN547 boots Secure). */
    mculab_counter_unit* u =
        mculab_armv81m_pmu_init(&pmu, (PMU_Type*)ARMV81M_PMU_BASE, &hw.scb->DEMCR, 1);
    if (u != NULL) {
      info->units[info->num_units++] = u;
      have_pmu = 1;
    }
    if (mculab_ethosu_pmu_init(&npu, (NPU_Type*)ETHOSU_NPU_BASE_CORSTONE300_S) == 0) {
      info->units[info->num_units++] = &npu.events_unit;
      info->units[info->num_units++] = &npu.cycles_unit;
      have_npu = 1;
    }
  }
  detail[0] = 0;
  mculab_cm_append(detail, sizeof detail, "corstone300: ");
  if (!silicon) {
    mculab_cm_append(detail, sizeof detail, "DWT CYCCNT does not count (not silicon): SysTick");
  } else {
    mculab_cm_append(detail, sizeof detail, "DWT CYCCNT at 32MHz");
    mculab_cm_append(detail, sizeof detail,
                     have_pmu ? ", Cortex-M55 PMU" : ", the PMU does not count here");
    mculab_cm_append(detail, sizeof detail,
                     have_npu ? ", Ethos-U PMU" : ", no Ethos-U at 0x58102000");
  }
  info->detail = detail;
  info->port = "corstone300";
  info->cpu = "cortex-m55";
  info->flags = silicon ? 0 : MCULAB_HELLO_EMULATED;
  info->arena_memory = MCULAB_MEMORY_SRAM;
  info->timer_unit = MCULAB_TIMER_CYCLES;
  info->clock_hz = CORSTONE300_CLOCK_HZ;
  mculab_cm_linker_memory(info);
}
