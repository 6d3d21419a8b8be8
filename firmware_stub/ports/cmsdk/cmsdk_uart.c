/* The CMSDK APB UART as the port's link (cmsdk_uart.h). */
#include "cmsdk_uart.h"

#include "cortex_m_port.h"

static CMSDK_UART_Type* link_uart;

void mculab_cmsdk_uart_init(CMSDK_UART_Type* uart, uint32_t clock_hz, uint32_t baud) {
  link_uart = uart;
  uart->CTRL = 0;
  uart->BAUDDIV = clock_hz / baud;
  uart->CTRL = CMSDK_UART_CTRL_TXEN_Msk | CMSDK_UART_CTRL_RXEN_Msk;
}

void mculab_cm_uart_write(const uint8_t* data, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    while (link_uart->STATE & CMSDK_UART_STATE_TXBF_Msk) {
    }
    link_uart->DATA = data[i];
  }
}

int mculab_cm_uart_poll(void) {
  if (!(link_uart->STATE & CMSDK_UART_STATE_RXBF_Msk)) return -1;
  return (int)(link_uart->DATA & 0xFFu);
}
