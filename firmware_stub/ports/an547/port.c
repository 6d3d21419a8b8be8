/* Port "an547": Corstone-300 (Cortex-M55) on the MPS3 AN547, silicon or qemu-system-arm
 * -M mps3-an547. Link on UART0 (polled), workload in DDR at 0x60000000, case arena in ISRAM.
 *
 * Timer: DWT CYCCNT when it counts (silicon). QEMU 7.2 implements neither CYCCNT nor the PMU
 * (both read 0), so the port falls back to SysTick on the processor clock and says so with
 * MCULAB_HELLO_EMULATED: under -icount shift=N,sleep=off SysTick counts deterministic virtual
 * time (32 MHz, so shift=5 gives about one tick per instruction). SysTick is 24 bits: its
 * interrupt counts wraps, and a read with interrupts masked that checks for a pending wrap
 * gives a consistent 64-bit count.
 *
 * Counters: on silicon (CYCCNT counts), the Cortex-M55 PMU ("cortex-m55-pmu", 4 events at once)
 * and, when NPU_ID answers, the Ethos-U55 PMU ("ethos-u-pmu", 4 events, and "ethos-u-ccnt"). On
 * QEMU neither exists (the PMU reads 0, the NPU is not modelled), so the port lists only the
 * external unit "qemu-plugin": the events mculab's QEMU plugin counts between the region markers.
 *
 * Ending: no semihosting. After DONE the core parks (mculab_port_exit) and the agent stops QEMU;
 * a fault reports ERROR(fault) + DONE on the link first (startup.c).
 *
 * Library use: mculab_runner_main() is here; the generic runner's main() is main.c, a custom
 * runner brings its own (mculab/runner.h). */
#include "port.h"

#include <stdint.h>

#include "an547_regs.h"
#include "armv81m_pmu.h"
#include "cortex_m_port.h"
#include "ethosu_pmu.h"

void SysTick_Handler(void);

#define SYSTICK_PERIOD (SysTick_RVR_RELOAD_Msk + 1u) /* 2^24 ticks per wrap */

static volatile uint32_t systick_wraps; /* wraps since the last align, counted by the handler */
static uint64_t timer_base;             /* ticks before the last align */
static int use_dwt;
static uint32_t dwt_last, dwt_high;
static mculab_armv81m_pmu pmu;
static mculab_ethosu_pmu npu;

/* What mculab's QEMU plugin (qemu_plugin/) counts on this board; ids are unused (external). */
static const mculab_event kQemuEvents[] = {
    {"instructions", 0}, {"loads", 1}, {"stores", 2}, {"branches", 3}, {"mve_instructions", 4},
};
static mculab_counter_unit qemu_unit = {
    .name = "qemu-plugin",
    .max_simultaneous = 3, /* the plugin's events= limit (qemu_plugin/mculab_counters.c) */
    .flags = MCULAB_UNIT_EXTERNAL,
    .num_events = 5,
    .events = kQemuEvents,
};

void SysTick_Handler(void) { systick_wraps = systick_wraps + 1u; }

static uint32_t irq_save(void) {
  uint32_t primask;
  __asm__ volatile("mrs %0, primask\n cpsid i" : "=r"(primask)::"memory");
  return primask;
}

static void irq_restore(uint32_t primask) {
  __asm__ volatile("msr primask, %0" ::"r"(primask) : "memory");
}

/* Ticks since the last align; interrupts must be masked. */
static uint64_t systick_elapsed(void) {
  uint32_t wraps = systick_wraps;
  uint32_t v = SysTick->CVR;
  if (SCB->ICSR & SCB_ICSR_PENDSTSET_Msk) {
    /* The count reached 0 and the handler has not counted it yet: once the counter has
     * reloaded, the new period has begun. */
    const uint32_t again = SysTick->CVR;
    if (again != 0) {
      ++wraps;
      v = again;
    } else {
      v = 0;
    }
  } else if (v == 0 && wraps > 0) {
    /* The handler counted this wrap but the counter has not reloaded yet. */
    return timer_base + (uint64_t)(wraps - 1u) * SYSTICK_PERIOD + SysTick_RVR_RELOAD_Msk;
  }
  return timer_base + (uint64_t)wraps * SYSTICK_PERIOD + (SysTick_RVR_RELOAD_Msk - v);
}

static void systick_start(void) {
  SysTick->CSR = 0;
  SysTick->RVR = SysTick_RVR_RELOAD_Msk;
  SysTick->CVR = 0;
  systick_wraps = 0;
  timer_base = 0;
  SysTick->CSR = SysTick_CSR_CLKSOURCE_Msk | SysTick_CSR_TICKINT_Msk | SysTick_CSR_ENABLE_Msk;
  while (SysTick->CVR == 0) {
  }
}

/* 1 when DWT CYCCNT counts: enabled, it must advance over a short busy loop. */
static int dwt_counts(void) {
  SCB->DEMCR |= DCB_DEMCR_TRCENA_Msk;
  DWT->LAR = DWT_LAR_KEY;
  DWT->CYCCNT = 0;
  DWT->CTRL |= DWT_CTRL_CYCCNTENA_Msk;
  const uint32_t before = DWT->CYCCNT;
  for (volatile int i = 0; i < 100; ++i) {
  }
  return DWT->CYCCNT != before;
}

void mculab_port_init(mculab_port_info* info) {
  mculab_cmsdk_uart_init(UART0, AN547_CORE_CLOCK_HZ, 115200u);

  use_dwt = dwt_counts();
  if (!use_dwt) systick_start();

  info->port = "an547";
  info->cpu = "cortex-m55";
  info->num_units = 0;
  if (use_dwt) {
    /* The firmware runs in the Secure state (AN547 boots Secure). */
    mculab_counter_unit* u =
        mculab_armv81m_pmu_init(&pmu, (PMU_Type*)ARMV81M_PMU_BASE, &SCB->DEMCR, 1);
    if (u != NULL) info->units[info->num_units++] = u;
    if (mculab_ethosu_pmu_init(&npu, (NPU_Type*)ETHOSU_NPU_BASE_CORSTONE300_S) == 0) {
      info->units[info->num_units++] = &npu.events_unit;
      info->units[info->num_units++] = &npu.cycles_unit;
    }
  } else {
    info->units[info->num_units++] = &qemu_unit;
  }
  info->flags = use_dwt ? 0 : MCULAB_HELLO_EMULATED;
  info->timer_unit = MCULAB_TIMER_CYCLES;
  info->clock_hz = AN547_CORE_CLOCK_HZ;
  mculab_cm_linker_memory(info);
}

int mculab_port_write(const uint8_t* data, size_t len) {
  mculab_cm_uart_write(data, len);
  return 0;
}

int mculab_port_poll_byte(void) { return mculab_cm_uart_poll(); }

int mculab_port_read_byte(void) {
  for (;;) {
    const int b = mculab_cm_uart_poll();
    if (b >= 0) return b;
  }
}

void mculab_port_timer_align(void) {
  if (use_dwt) return;
  /* Restart the SysTick period so that its wrap interrupts (whose handler runs inside a measured
   * region) fall at the same points of every region, whatever ran before. */
  const uint32_t primask = irq_save();
  timer_base = systick_elapsed();
  SysTick->CVR = 0;
  SCB->ICSR = SCB_ICSR_PENDSTCLR_Msk; /* a wrap still pending is already in timer_base */
  systick_wraps = 0;
  while (SysTick->CVR == 0) {
  }
  irq_restore(primask);
}

uint64_t mculab_port_timer_now(void) {
  if (use_dwt) {
    /* Extends the 32-bit CYCCNT; exact while reads are less than 2^32 cycles apart. */
    const uint32_t c = DWT->CYCCNT;
    if (c < dwt_last) ++dwt_high;
    dwt_last = c;
    return ((uint64_t)dwt_high << 32) | c;
  }
  const uint32_t primask = irq_save();
  const uint64_t t = systick_elapsed();
  irq_restore(primask);
  return t;
}

void mculab_port_exit(int status) {
  /* No semihosting (it would let a runner run commands on the agent's machine): the session has
   * ended with DONE, so the core parks with interrupts masked and the agent stops the board. */
  (void)status;
  __asm__ volatile("cpsid i" ::: "memory");
  for (;;) __asm__ volatile("wfi");
}

int mculab_runner_main(int argc, char** argv, const mculab_workload_ops* ops) {
  (void)argc;
  (void)argv;
  mculab_port_exit(mculab_core_run(ops));
  return 0;
}
