/* The USART wired to the ST-LINK's virtual COM port, polled, 8N1, 16x oversampling; its pins in
 * alternate function 7. Register blocks by pointer (stm32_regs.h), so host tests can check the
 * BRR and pin set-up against simulated blocks. */
#ifndef MCULAB_STM32_USART_H_
#define MCULAB_STM32_USART_H_

#include <stddef.h>
#include <stdint.h>

#include "stm32_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MCULAB_STM32_BAUD
#define MCULAB_STM32_BAUD 115200u
#endif

/* USART_BRR for 16x oversampling: USARTDIV = f_ck / baud, rounded to the nearest. */
uint32_t mculab_stm32_usart_brr(uint32_t f_ck_hz, uint32_t baud);

/* Puts `pin` of `gpio` in alternate function `af`, high speed, with a pull-up (an idle line
 * reads 1 when the probe's side is not driven yet). */
void mculab_stm32_gpio_af(GPIO_Type* gpio, unsigned pin, unsigned af);

/* Disables, sets BRR, enables TE, RE and UE. */
void mculab_stm32_usart_init(USART_Type* u, uint32_t brr);
void mculab_stm32_usart_write(USART_Type* u, const uint8_t* data, size_t len);
/* The next received byte or -1 when none is waiting; an overrun flag is cleared. */
int mculab_stm32_usart_poll(USART_Type* u);

/* Makes `u` the port's link: mculab_cm_uart_write and _poll (core/cortex_m_port.h) use it. */
void mculab_stm32_usart_set_link(USART_Type* u);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_STM32_USART_H_ */
