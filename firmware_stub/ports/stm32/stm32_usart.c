/* The ST-LINK virtual COM port USART (stm32_usart.h). */
#include "stm32_usart.h"

#include "cortex_m_port.h"

uint32_t mculab_stm32_usart_brr(uint32_t f_ck_hz, uint32_t baud) {
  return (f_ck_hz + baud / 2u) / baud;
}

void mculab_stm32_gpio_af(GPIO_Type* gpio, unsigned pin, unsigned af) {
  const unsigned two = pin * 2u;
  gpio->MODER = (gpio->MODER & ~(3u << two)) | (GPIO_MODER_AF << two);
  gpio->OSPEEDR = (gpio->OSPEEDR & ~(3u << two)) | (GPIO_OSPEEDR_HIGH << two);
  gpio->PUPDR = (gpio->PUPDR & ~(3u << two)) | (GPIO_PUPDR_PULLUP << two);
  const unsigned four = (pin % 8u) * 4u;
  gpio->AFR[pin / 8u] = (gpio->AFR[pin / 8u] & ~(0xFu << four)) | ((af & 0xFu) << four);
}

void mculab_stm32_usart_init(USART_Type* u, uint32_t brr) {
  u->CR1 = 0;
  u->CR2 = 0;
  u->CR3 = 0;
  u->BRR = brr;
  u->CR1 = USART_CR1_TE | USART_CR1_RE | USART_CR1_UE;
}

void mculab_stm32_usart_write(USART_Type* u, const uint8_t* data, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    while (!(u->ISR & USART_ISR_TXE)) {
    }
    u->TDR = data[i];
  }
}

int mculab_stm32_usart_poll(USART_Type* u) {
  const uint32_t isr = u->ISR;
  /* A lost byte costs the frame it was in (its CRC fails), not the stream: clear and go on. */
  if (isr & USART_ISR_ORE) u->ICR = USART_ICR_ORECF;
  if (!(isr & USART_ISR_RXNE)) return -1;
  return (int)(u->RDR & 0xFFu);
}

static USART_Type* link_usart;

void mculab_stm32_usart_set_link(USART_Type* u) { link_usart = u; }

void mculab_cm_uart_write(const uint8_t* data, size_t len) {
  mculab_stm32_usart_write(link_usart, data, len);
}

int mculab_cm_uart_poll(void) { return mculab_stm32_usart_poll(link_usart); }
