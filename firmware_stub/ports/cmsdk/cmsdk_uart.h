/* The CMSDK APB UART (Arm CoreLink CMSDK TRM, "APB UART"), polled: the link of the MPS2 AN500 and
 * MPS3 Corstone-300 ports (UART0 at 0x40004000 and 0x59303000). mculab_cmsdk_uart_init makes it
 * the port's link (mculab_cm_uart_write and _poll, core/cortex_m_port.h). */
#ifndef MCULAB_CMSDK_UART_H_
#define MCULAB_CMSDK_UART_H_

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
#define CMSDK_UART_STATE_TXBF_Msk (1u << 0)
#define CMSDK_UART_STATE_RXBF_Msk (1u << 1)
#define CMSDK_UART_CTRL_TXEN_Msk (1u << 0)
#define CMSDK_UART_CTRL_RXEN_Msk (1u << 1)

/* Enables `uart` for transmit and receive at `baud` from `clock_hz` and makes it the link. */
void mculab_cmsdk_uart_init(CMSDK_UART_Type* uart, uint32_t clock_hz, uint32_t baud);

#endif /* MCULAB_CMSDK_UART_H_ */
