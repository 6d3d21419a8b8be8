/* What the STM32 ports share once their link USART's pins and clock are on; each port.c keeps
 * only what differs (its clocks, its USART and pins, where its arena is). */
#ifndef MCULAB_STM32_PORT_H_
#define MCULAB_STM32_PORT_H_

#include <stddef.h>
#include <stdint.h>

#include "port.h"
#include "stm32_clock.h"
#include "stm32_regs.h"

/* The link (RTT as well when built with MCULAB_LINK=rtt; the USART at MCULAB_STM32_BAUD always),
 * the Cortex-M7 caches (MCULAB_CACHES), DWT CYCCNT as the timer and its counter unit, and the
 * HELLO fields every STM32 port gives: cpu, cache flags, cycles at the system clock, and the
 * detail (the clocks, the caches, `arena` such as ", arena in SRAM1", the link, and the SysTick
 * fallback when DWT does not count), written into `detail`. */
void mculab_stm32_port_init(USART_Type* link, uint32_t usart_clock_hz,
                            const mculab_stm32_clocks* clocks, const char* arena, char* detail,
                            size_t detail_len, mculab_port_info* info);

#endif /* MCULAB_STM32_PORT_H_ */
