/* The AN500's own registers (the Cortex-M7's are in core/cortex_m.h): the CMSDK APB UART (Arm
 * CoreLink CMSDK TRM, "APB UART"), UART0 at 0x40004000 on the MPS2 AN500 (QEMU 7.2 mps2.c). */
#ifndef MCULAB_AN500_REGS_H_
#define MCULAB_AN500_REGS_H_

#include <stddef.h>
#include <stdint.h>

typedef struct {
  volatile uint32_t DATA;      /* 0x00 */
  volatile uint32_t STATE;     /* 0x04 bit 0 TX buffer full, bit 1 RX buffer full */
  volatile uint32_t CTRL;      /* 0x08 bit 0 TX enable, bit 1 RX enable */
  volatile uint32_t INTSTATUS; /* 0x0C */
  volatile uint32_t BAUDDIV;   /* 0x10 */
} CMSDK_UART_Type;
_Static_assert(offsetof(CMSDK_UART_Type, STATE) == 0x04, "UART STATE offset");
_Static_assert(offsetof(CMSDK_UART_Type, CTRL) == 0x08, "UART CTRL offset");
_Static_assert(offsetof(CMSDK_UART_Type, BAUDDIV) == 0x10, "UART BAUDDIV offset");
#define AN500_UART0 ((CMSDK_UART_Type*)0x40004000u)
#define CMSDK_UART_STATE_TXBF_Msk (1u << 0)
#define CMSDK_UART_STATE_RXBF_Msk (1u << 1)
#define CMSDK_UART_CTRL_TXEN_Msk (1u << 0)
#define CMSDK_UART_CTRL_RXEN_Msk (1u << 1)

/* The AN500 FPGA image (and QEMU's mps2-an500) clocks the core and SysTick's processor clock at
 * 25 MHz. */
#define AN500_CORE_CLOCK_HZ 25000000u

#endif /* MCULAB_AN500_REGS_H_ */
