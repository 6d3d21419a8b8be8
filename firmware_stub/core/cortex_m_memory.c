/* The memory a Cortex-M port's linker script lays out (mculab_cm_linker_memory, cortex_m_port.h):
 * its own file, so a port with its own timer and link (an547) shares it too. */
#include <stdint.h>

#include "cortex_m_port.h"

extern uint8_t __arena_start[], __arena_size[], __workload_start[], __workload_size[];
extern uint8_t __stack_bottom[], __stack_top[];

void mculab_cm_linker_memory(mculab_port_info* info) {
  info->workload = __workload_start;
  info->workload_max = (size_t)(uintptr_t)__workload_size;
  info->workload_addr = (uint32_t)(uintptr_t)__workload_start;
  info->workload_error = 0;
  info->arena = __arena_start;
  info->arena_bytes = (size_t)(uintptr_t)__arena_size;
  info->stack_low = __stack_bottom;
  info->stack_bytes = (size_t)(__stack_top - __stack_bottom);
}
