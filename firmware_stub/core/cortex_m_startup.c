/* Startup for the Cortex-M ports that share core/cortex_m_sections.ld (an500, stm32f7, stm32h7,
 * corstone300): the vector table, .data copy, .bss zeroing, FPU (and MVE) access, then main().
 * A fault reports ERROR(fault) + DONE on the link when the runner core offers
 * mculab_core_fault(), then the port ends (mculab_port_exit: the last RTT stop, park). No
 * semihosting. */
#include <stdint.h>

#include "cortex_m.h"
#include "port.h"

/* Weak: a runner library without the fault report links too (the fault then only parks). */
extern void mculab_core_fault(const char* what) __attribute__((weak));

extern uint32_t __stack_top, __data_load, __data_start, __data_end, __bss_start, __bss_end;
extern int main(int argc, char** argv);
void Reset_Handler(void);
void Fault_Handler(void);
void SysTick_Handler(void);
void DebugMon_Handler(void);

static const char* const kExceptionNames[16] = {
    "thread mode",  "reset",        "NMI",         "HardFault",   "MemManage",    "BusFault",
    "UsageFault",   "SecureFault",  "exception 8", "exception 9", "exception 10", "SVCall",
    "DebugMonitor", "exception 13", "PendSV",      "SysTick",
};

void Fault_Handler(void) {
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  ipsr &= 0x1FFu;
  if (mculab_core_fault) mculab_core_fault(ipsr < 16 ? kExceptionNames[ipsr] : "interrupt");
  mculab_port_exit(3);
  mculab_cm_park();
}

void DebugMon_Handler(void) { mculab_cm_dwt_on_debug_monitor(); }

typedef void (*vector)(void);

/* Architectural exceptions only: the runner enables no external interrupt. */
__attribute__((section(".vectors"), used)) static const vector vectors[16] = {
    (vector)(uintptr_t)&__stack_top,
    Reset_Handler,
    Fault_Handler, /* NMI */
    Fault_Handler, /* HardFault */
    Fault_Handler, /* MemManage */
    Fault_Handler, /* BusFault */
    Fault_Handler, /* UsageFault */
    Fault_Handler, /* SecureFault (Armv8-M), reserved on Armv7-M */
    0,
    0,
    0,
    Fault_Handler, /* SVCall */
    DebugMon_Handler,
    0,
    Fault_Handler, /* PendSV */
    SysTick_Handler,
};

void Reset_Handler(void) {
  SCB_Type* scb = (SCB_Type*)MCULAB_CM_SCS_SCB;
  /* FP (and MVE) share CP10/CP11: allow full access before any code may use them. */
  scb->CPACR |= SCB_CPACR_CP10_CP11_FULL;
  __asm__ volatile("dsb\n isb" ::: "memory");
  scb->VTOR = (uint32_t)(uintptr_t)vectors;

  volatile uint32_t* src = &__data_load;
  for (volatile uint32_t* dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
  for (volatile uint32_t* dst = &__bss_start; dst < &__bss_end;) *dst++ = 0;

  main(0, 0);
  mculab_port_exit(3); /* mculab_runner_main() never returns */
  mculab_cm_park();
}
