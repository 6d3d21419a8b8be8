/* The STM32F7 and STM32H7 registers the stm32f7/stm32h7 ports touch, by the reference manuals'
 * names (RM0410 for the STM32F76x/F74x, RM0433 for the STM32H743): RCC, FLASH, PWR, SYSCFG,
 * DBGMCU, GPIO, USART. Only the registers used are named; the reserved words keep the offsets,
 * and every offset used is checked with a static assertion. The drivers (stm32_clock.c,
 * stm32_usart.c) take these blocks by pointer, so host tests hand them simulated blocks. */
#ifndef MCULAB_STM32_REGS_H_
#define MCULAB_STM32_REGS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define MCULAB_STM32_STATIC_ASSERT static_assert
#else
#define MCULAB_STM32_STATIC_ASSERT _Static_assert
#endif

typedef volatile uint32_t reg32;

/* ---- STM32F7 (RM0410) ---- */

typedef struct {
  reg32 CR;      /* 0x00 RCC_CR: HSION, HSEON, HSERDY, HSEBYP, PLLON, PLLRDY */
  reg32 PLLCFGR; /* 0x04 RCC_PLLCFGR: PLLM, PLLN, PLLP, PLLSRC, PLLQ, PLLR */
  reg32 CFGR;    /* 0x08 RCC_CFGR: SW, SWS, HPRE, PPRE1, PPRE2 */
  reg32 CIR;     /* 0x0C */
  uint32_t RESERVED0[8];
  reg32 AHB1ENR; /* 0x30 RCC_AHB1ENR: GPIOxEN */
  uint32_t RESERVED1[3];
  reg32 APB1ENR; /* 0x40 RCC_APB1ENR: USART3EN, PWREN */
  reg32 APB2ENR; /* 0x44 RCC_APB2ENR: USART1EN */
} RCC_F7_Type;
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_F7_Type, PLLCFGR) == 0x04, "RCC_PLLCFGR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_F7_Type, CFGR) == 0x08, "RCC_CFGR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_F7_Type, AHB1ENR) == 0x30, "RCC_AHB1ENR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_F7_Type, APB1ENR) == 0x40, "RCC_APB1ENR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_F7_Type, APB2ENR) == 0x44, "RCC_APB2ENR offset");
#define STM32F7_RCC_BASE 0x40023800u
#define RCC_F7_CR_HSION (1u << 0)
#define RCC_F7_CR_HSEON (1u << 16)
#define RCC_F7_CR_HSERDY (1u << 17)
#define RCC_F7_CR_HSEBYP (1u << 18)
#define RCC_F7_CR_PLLON (1u << 24)
#define RCC_F7_CR_PLLRDY (1u << 25)
#define RCC_F7_PLLCFGR_PLLM_Pos 0u  /* [5:0] VCO input = HSE / PLLM */
#define RCC_F7_PLLCFGR_PLLN_Pos 6u  /* [14:6] VCO = input * PLLN */
#define RCC_F7_PLLCFGR_PLLP_Pos 16u /* [17:16] SYSCLK = VCO / (2 * (PLLP + 1)) */
#define RCC_F7_PLLCFGR_PLLSRC_HSE (1u << 22)
#define RCC_F7_PLLCFGR_PLLQ_Pos 24u /* [27:24] 48 MHz domain = VCO / PLLQ */
#define RCC_F7_PLLCFGR_PLLR_Pos 28u /* [30:28] (F76x; reserved at its reset value 2 on F74x) */
#define RCC_F7_CFGR_SW_Msk 0x3u
#define RCC_F7_CFGR_SW_PLL 0x2u
#define RCC_F7_CFGR_SWS_Msk (0x3u << 2)
#define RCC_F7_CFGR_SWS_PLL (0x2u << 2)
#define RCC_F7_CFGR_HPRE_Msk (0xFu << 4) /* 0xxx: /1 */
#define RCC_F7_CFGR_PPRE1_Pos 10u        /* [12:10] APB1 */
#define RCC_F7_CFGR_PPRE2_Pos 13u        /* [15:13] APB2 */
#define RCC_F7_CFGR_PPRE_DIV2 0x4u
#define RCC_F7_CFGR_PPRE_DIV4 0x5u
#define RCC_F7_AHB1ENR_GPIOAEN (1u << 0)
#define RCC_F7_AHB1ENR_GPIOBEN (1u << 1)
#define RCC_F7_AHB1ENR_GPIODEN (1u << 3)
#define RCC_F7_APB1ENR_USART3EN (1u << 18)
#define RCC_F7_APB1ENR_PWREN (1u << 28)
#define RCC_F7_APB2ENR_USART1EN (1u << 4)

typedef struct {
  reg32 ACR; /* 0x00 FLASH_ACR: LATENCY [3:0], PRFTEN, ARTEN */
} FLASH_F7_Type;
#define STM32F7_FLASH_BASE 0x40023C00u
#define FLASH_F7_ACR_LATENCY_Msk 0xFu
#define FLASH_F7_ACR_PRFTEN (1u << 8)
#define FLASH_F7_ACR_ARTEN (1u << 9)

typedef struct {
  reg32 CR1;  /* 0x00 PWR_CR1: VOS [15:14], ODEN, ODSWEN */
  reg32 CSR1; /* 0x04 PWR_CSR1: VOSRDY, ODRDY, ODSWRDY */
} PWR_F7_Type;
MCULAB_STM32_STATIC_ASSERT(offsetof(PWR_F7_Type, CSR1) == 0x04, "PWR_CSR1 offset");
#define STM32F7_PWR_BASE 0x40007000u
#define PWR_F7_CR1_VOS_Msk (0x3u << 14)
#define PWR_F7_CR1_VOS_SCALE1 (0x3u << 14)
#define PWR_F7_CR1_ODEN (1u << 16)
#define PWR_F7_CR1_ODSWEN (1u << 17)
#define PWR_F7_CSR1_ODRDY (1u << 16)
#define PWR_F7_CSR1_ODSWRDY (1u << 17)

/* ---- STM32H7 (RM0433) ---- */

typedef struct {
  reg32 CR; /* 0x000 RCC_CR: HSION, HSEON, HSERDY, HSEBYP, PLL1ON, PLL1RDY */
  uint32_t RESERVED0[3];
  reg32 CFGR; /* 0x010 RCC_CFGR: SW [2:0], SWS [5:3] */
  uint32_t RESERVED1[1];
  reg32 D1CFGR; /* 0x018 RCC_D1CFGR: D1PPRE [6:4], HPRE [3:0], D1CPRE [11:8] */
  reg32 D2CFGR; /* 0x01C RCC_D2CFGR: D2PPRE1 [6:4], D2PPRE2 [10:8] */
  reg32 D3CFGR; /* 0x020 RCC_D3CFGR: D3PPRE [6:4] */
  uint32_t RESERVED2[1];
  reg32 PLLCKSELR; /* 0x028 RCC_PLLCKSELR: PLLSRC [1:0], DIVM1 [9:4] */
  reg32 PLLCFGR;   /* 0x02C RCC_PLLCFGR: PLL1VCOSEL, PLL1RGE, DIVP1EN, DIVQ1EN, DIVR1EN */
  reg32 PLL1DIVR;  /* 0x030 RCC_PLL1DIVR: DIVN1 [8:0], DIVP1 [15:9], DIVQ1 [22:16], DIVR1 */
  reg32 PLL1FRACR; /* 0x034 */
  uint32_t RESERVED3[41];
  reg32 AHB2ENR;  /* 0x0DC RCC_AHB2ENR: SRAM1EN, SRAM2EN, SRAM3EN */
  reg32 AHB4ENR;  /* 0x0E0 RCC_AHB4ENR: GPIOxEN */
  reg32 APB3ENR;  /* 0x0E4 */
  reg32 APB1LENR; /* 0x0E8 RCC_APB1LENR: USART3EN */
  reg32 APB1HENR; /* 0x0EC */
  reg32 APB2ENR;  /* 0x0F0 */
  reg32 APB4ENR;  /* 0x0F4 RCC_APB4ENR: SYSCFGEN */
} RCC_H7_Type;
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_H7_Type, CFGR) == 0x010, "RCC_CFGR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_H7_Type, D1CFGR) == 0x018, "RCC_D1CFGR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_H7_Type, D3CFGR) == 0x020, "RCC_D3CFGR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_H7_Type, PLLCKSELR) == 0x028, "RCC_PLLCKSELR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_H7_Type, PLL1DIVR) == 0x030, "RCC_PLL1DIVR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_H7_Type, AHB2ENR) == 0x0DC, "RCC_AHB2ENR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_H7_Type, AHB4ENR) == 0x0E0, "RCC_AHB4ENR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_H7_Type, APB1LENR) == 0x0E8, "RCC_APB1LENR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(RCC_H7_Type, APB4ENR) == 0x0F4, "RCC_APB4ENR offset");
#define STM32H7_RCC_BASE 0x58024400u
#define RCC_H7_CR_HSEON (1u << 16)
#define RCC_H7_CR_HSERDY (1u << 17)
#define RCC_H7_CR_HSEBYP (1u << 18)
#define RCC_H7_CR_PLL1ON (1u << 24)
#define RCC_H7_CR_PLL1RDY (1u << 25)
#define RCC_H7_CFGR_SW_Msk 0x7u
#define RCC_H7_CFGR_SW_PLL1 0x3u
#define RCC_H7_CFGR_SWS_Msk (0x7u << 3)
#define RCC_H7_CFGR_SWS_PLL1 (0x3u << 3)
#define RCC_H7_D1CFGR_HPRE_DIV2 0x8u          /* [3:0] 1000: /2 */
#define RCC_H7_D1CFGR_D1PPRE_DIV2 (0x4u << 4) /* [6:4] 100: /2 */
#define RCC_H7_D2CFGR_D2PPRE1_DIV2 (0x4u << 4)
#define RCC_H7_D2CFGR_D2PPRE2_DIV2 (0x4u << 8)
#define RCC_H7_D3CFGR_D3PPRE_DIV2 (0x4u << 4)
#define RCC_H7_PLLCKSELR_PLLSRC_HSE 0x2u
#define RCC_H7_PLLCKSELR_DIVM1_Pos 4u
#define RCC_H7_PLLCKSELR_DIVM1_Msk (0x3Fu << RCC_H7_PLLCKSELR_DIVM1_Pos)
#define RCC_H7_PLLCFGR_PLL1FRACEN (1u << 0)
#define RCC_H7_PLLCFGR_PLL1VCOSEL (1u << 1) /* 0: wide VCO range */
#define RCC_H7_PLLCFGR_PLL1RGE_Pos 2u       /* 01: 2..4 MHz input */
#define RCC_H7_PLLCFGR_PLL1RGE_Msk (0x3u << RCC_H7_PLLCFGR_PLL1RGE_Pos)
#define RCC_H7_PLLCFGR_DIVP1EN (1u << 16)
#define RCC_H7_PLLCFGR_DIVQ1EN (1u << 17)
#define RCC_H7_PLLCFGR_DIVR1EN (1u << 18)
#define RCC_H7_PLL1DIVR_DIVN1_Pos 0u  /* N - 1 */
#define RCC_H7_PLL1DIVR_DIVP1_Pos 9u  /* P - 1 */
#define RCC_H7_PLL1DIVR_DIVQ1_Pos 16u /* Q - 1 */
#define RCC_H7_PLL1DIVR_DIVR1_Pos 24u /* R - 1 */
#define RCC_H7_AHB2ENR_SRAM123EN (0x7u << 29)
#define RCC_H7_AHB4ENR_GPIODEN (1u << 3)
#define RCC_H7_APB1LENR_USART3EN (1u << 18)
#define RCC_H7_APB4ENR_SYSCFGEN (1u << 1)

typedef struct {
  reg32 ACR; /* 0x00 FLASH_ACR: LATENCY [3:0], WRHIGHFREQ [5:4] */
} FLASH_H7_Type;
#define STM32H7_FLASH_BASE 0x52002000u
#define FLASH_H7_ACR_LATENCY_Msk 0xFu
#define FLASH_H7_ACR_WRHIGHFREQ_Pos 4u
#define FLASH_H7_ACR_WRHIGHFREQ_Msk (0x3u << FLASH_H7_ACR_WRHIGHFREQ_Pos)

typedef struct {
  reg32 CR1;   /* 0x00 */
  reg32 CSR1;  /* 0x04 PWR_CSR1: ACTVOSRDY */
  reg32 CR2;   /* 0x08 */
  reg32 CR3;   /* 0x0C PWR_CR3: BYPASS, LDOEN, SCUEN */
  reg32 CPUCR; /* 0x10 */
  uint32_t RESERVED0[1];
  reg32 D3CR; /* 0x18 PWR_D3CR: VOS [15:14], VOSRDY */
} PWR_H7_Type;
MCULAB_STM32_STATIC_ASSERT(offsetof(PWR_H7_Type, CR3) == 0x0C, "PWR_CR3 offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(PWR_H7_Type, D3CR) == 0x18, "PWR_D3CR offset");
#define STM32H7_PWR_BASE 0x58024800u
#define PWR_H7_CSR1_ACTVOSRDY (1u << 13)
#define PWR_H7_CR3_BYPASS (1u << 0)
#define PWR_H7_CR3_LDOEN (1u << 1)
#define PWR_H7_CR3_SCUEN (1u << 2)
#define PWR_H7_D3CR_VOS_Msk (0x3u << 14)
#define PWR_H7_D3CR_VOS_SCALE1 (0x3u << 14)
#define PWR_H7_D3CR_VOSRDY (1u << 13)

typedef struct {
  uint32_t RESERVED0[11];
  reg32 PWRCR; /* 0x2C SYSCFG_PWRCR: ODEN (VOS0 when VOS is scale 1) */
} SYSCFG_H7_Type;
MCULAB_STM32_STATIC_ASSERT(offsetof(SYSCFG_H7_Type, PWRCR) == 0x2C, "SYSCFG_PWRCR offset");
#define STM32H7_SYSCFG_BASE 0x58000400u
#define SYSCFG_H7_PWRCR_ODEN (1u << 0)

/* DBGMCU_IDCODE: REV_ID [31:16] (0x1003 rev Y, 0x2003 rev V), DEV_ID [11:0] (0x450). */
#define STM32H7_DBGMCU_IDCODE 0x5C001000u
#define DBGMCU_IDCODE_REV_ID_Pos 16u
#define STM32H7_REV_Y 0x1003u
#define STM32H7_REV_V 0x2003u

/* ---- GPIO and USART (the same layout on F7 and H7) ---- */

typedef struct {
  reg32 MODER;   /* 0x00 2 bits per pin: 10 alternate function */
  reg32 OTYPER;  /* 0x04 */
  reg32 OSPEEDR; /* 0x08 */
  reg32 PUPDR;   /* 0x0C 01 pull-up */
  reg32 IDR;     /* 0x10 */
  reg32 ODR;     /* 0x14 */
  reg32 BSRR;    /* 0x18 */
  reg32 LCKR;    /* 0x1C */
  reg32 AFR[2];  /* 0x20 AFRL (pins 0..7), 0x24 AFRH (pins 8..15): 4 bits per pin */
} GPIO_Type;
MCULAB_STM32_STATIC_ASSERT(offsetof(GPIO_Type, PUPDR) == 0x0C, "GPIOx_PUPDR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(GPIO_Type, AFR) == 0x20, "GPIOx_AFRL offset");
#define STM32F7_GPIOA_BASE 0x40020000u
#define STM32F7_GPIOB_BASE 0x40020400u
#define STM32F7_GPIOD_BASE 0x40020C00u
#define STM32H7_GPIOD_BASE 0x58020C00u
#define GPIO_MODER_AF 0x2u
#define GPIO_OSPEEDR_HIGH 0x2u
#define GPIO_PUPDR_PULLUP 0x1u
#define GPIO_AF7_USART 7u

typedef struct {
  reg32 CR1;  /* 0x00 USART_CR1: UE, RE, TE */
  reg32 CR2;  /* 0x04 */
  reg32 CR3;  /* 0x08 */
  reg32 BRR;  /* 0x0C USART_BRR: USARTDIV with 16x oversampling */
  reg32 GTPR; /* 0x10 */
  reg32 RTOR; /* 0x14 */
  reg32 RQR;  /* 0x18 */
  reg32 ISR;  /* 0x1C USART_ISR: ORE, RXNE, TXE */
  reg32 ICR;  /* 0x20 USART_ICR: ORECF */
  reg32 RDR;  /* 0x24 */
  reg32 TDR;  /* 0x28 */
} USART_Type;
MCULAB_STM32_STATIC_ASSERT(offsetof(USART_Type, BRR) == 0x0C, "USART_BRR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(USART_Type, ISR) == 0x1C, "USART_ISR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(USART_Type, RDR) == 0x24, "USART_RDR offset");
MCULAB_STM32_STATIC_ASSERT(offsetof(USART_Type, TDR) == 0x28, "USART_TDR offset");
#define STM32F7_USART1_BASE 0x40011000u
#define STM32_USART3_BASE 0x40004800u /* F7 and H7 */
#define USART_CR1_UE (1u << 0)
#define USART_CR1_RE (1u << 2)
#define USART_CR1_TE (1u << 3)
#define USART_ISR_ORE (1u << 3)
#define USART_ISR_RXNE (1u << 5)
#define USART_ISR_TXE (1u << 7)
#define USART_ICR_ORECF (1u << 3)

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_STM32_REGS_H_ */
