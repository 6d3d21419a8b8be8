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
#include "cortex_m.h"
#include "ethosu_pmu.h"
#include "rtt.h"

extern uint8_t __arena_start[], __arena_size[], __workload_start[], __workload_size[];
extern uint8_t __stack_bottom[], __stack_top[];

/* CMSDK APB UART0 of the AN547, Secure alias (Arm CoreLink CMSDK TRM, "APB UART"). */
typedef struct {
  volatile uint32_t DATA;      /* 0x00 */
  volatile uint32_t STATE;     /* 0x04 bit 0 TX buffer full, bit 1 RX buffer full */
  volatile uint32_t CTRL;      /* 0x08 bit 0 TX enable, bit 1 RX enable */
  volatile uint32_t INTSTATUS; /* 0x0C */
  volatile uint32_t BAUDDIV;   /* 0x10 */
} CMSDK_UART_Type;
_Static_assert(offsetof(CMSDK_UART_Type, STATE) == 0x04, "UART STATE offset");
_Static_assert(offsetof(CMSDK_UART_Type, BAUDDIV) == 0x10, "UART BAUDDIV offset");
#define UART0 ((CMSDK_UART_Type*)0x59303000u)
#define CMSDK_UART_STATE_TXBF_Msk (1u << 0)
#define CMSDK_UART_STATE_RXBF_Msk (1u << 1)
#define CMSDK_UART_CTRL_TXEN_Msk (1u << 0)
#define CMSDK_UART_CTRL_RXEN_Msk (1u << 1)
#define CORSTONE300_CLOCK_HZ 32000000u /* the AN547 image's core clock */

static mculab_armv81m_pmu pmu;
static mculab_ethosu_pmu npu;
static char detail[112];

void mculab_port_init(mculab_port_info* info) {
#if MCULAB_LINK_RTT
  mculab_rtt_init();
#else
  UART0->CTRL = 0;
  UART0->BAUDDIV = CORSTONE300_CLOCK_HZ / 115200u;
  UART0->CTRL = CMSDK_UART_CTRL_TXEN_Msk | CMSDK_UART_CTRL_RXEN_Msk;
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
    while (UART0->STATE & CMSDK_UART_STATE_TXBF_Msk) {
    }
    UART0->DATA = data[i];
  }
  return 0;
}

int mculab_port_poll_byte(void) {
#if MCULAB_LINK_RTT
  return mculab_rtt_poll();
#endif
  if (!(UART0->STATE & CMSDK_UART_STATE_RXBF_Msk)) return -1;
  return (int)(UART0->DATA & 0xFFu);
}

int mculab_port_read_byte(void) {
#if MCULAB_LINK_RTT
  return mculab_rtt_read();
#endif
  while (!(UART0->STATE & CMSDK_UART_STATE_RXBF_Msk)) {
  }
  return (int)(UART0->DATA & 0xFFu);
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
