/* The AN500's own registers (the Cortex-M7's are in core/cortex_m.h): UART0, a CMSDK APB UART
 * (ports/cmsdk), at 0x40004000 on the MPS2 AN500 (QEMU 7.2 mps2.c). */
#ifndef MCULAB_AN500_REGS_H_
#define MCULAB_AN500_REGS_H_

#include "cmsdk_uart.h"

#define AN500_UART0 ((CMSDK_UART_Type*)0x40004000u)

/* The AN500 FPGA image (and QEMU's mps2-an500) clocks the core and SysTick's processor clock at
 * 25 MHz. */
#define AN500_CORE_CLOCK_HZ 25000000u

#endif /* MCULAB_AN500_REGS_H_ */
