/* Cortex-M55 startup for the an547 port: vector table, .data copy, .bss zeroing, FPU/MVE access,
 * then main(). A fault is reported on the runner link (ERROR "fault" + DONE) and parks the core;
 * nothing uses semihosting. */
#include <stdint.h>

#include "an547_regs.h"
#include "port.h"

extern uint32_t __stack_top, __data_load, __data_start, __data_end, __bss_start, __bss_end;
extern int main(int argc, char** argv);
void Reset_Handler(void);
void SysTick_Handler(void);

#define EXIT_FAULT 3

static const char* const kExceptionNames[16] = {
    "thread mode",  "reset",        "NMI",         "HardFault",   "MemManage",    "BusFault",
    "UsageFault",   "SecureFault",  "exception 8", "exception 9", "exception 10", "SVCall",
    "DebugMonitor", "exception 13", "PendSV",      "SysTick",
};

static void Fault_Handler(void) {
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  ipsr &= 0x1FFu;
  mculab_core_fault(ipsr < 16 ? kExceptionNames[ipsr] : "external interrupt");
  mculab_port_exit(EXIT_FAULT);
}

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
    Fault_Handler, /* SecureFault */
    0,
    0,
    0,
    Fault_Handler, /* SVCall */
    Fault_Handler, /* DebugMonitor */
    0,
    Fault_Handler, /* PendSV */
    SysTick_Handler,
};

void Reset_Handler(void) {
  /* FPU and MVE share CP10/CP11: allow full access before any code may use them (the compiler
   * vectorises loops with MVE at -O2). */
  SCB->CPACR |= SCB_CPACR_CP10_CP11_FULL;
  __asm__ volatile("dsb\n isb" ::: "memory");
  SCB->VTOR = (uint32_t)(uintptr_t)vectors;

  volatile uint32_t* src = &__data_load;
  for (volatile uint32_t* dst = &__data_start; dst < &__data_end;) *dst++ = *src++;
  for (volatile uint32_t* dst = &__bss_start; dst < &__bss_end;) *dst++ = 0;

  main(0, 0);
  mculab_port_exit(EXIT_FAULT); /* main() never returns */
}
