/* What every Cortex-M port built on core/cortex_m.c shares (core/cortex_m_port.c): the memory its
 * linker script lays out (workload, arena, stack: core/cortex_m_sections.ld), the link over RTT or
 * the port's UART, the timer, the end. A port is then its mculab_port_init (clocks, UART, counter
 * units, HELLO's words) and a UART driver defining the two functions below (ports/cmsdk,
 * ports/stm32), as TFLite Micro's platform folders hold only what differs. */
#ifndef MCULAB_CORTEX_M_PORT_H_
#define MCULAB_CORTEX_M_PORT_H_

#include <stddef.h>
#include <stdint.h>

#include "port.h"

/* Fills info's workload, arena and stack from the linker script's symbols (cortex_m_memory.c). */
void mculab_cm_linker_memory(mculab_port_info* info);

/* The port's UART, when the link is not RTT: blocking write, and the next byte or -1. */
void mculab_cm_uart_write(const uint8_t* data, size_t len);
int mculab_cm_uart_poll(void);

#endif /* MCULAB_CORTEX_M_PORT_H_ */
