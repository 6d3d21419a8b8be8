// The Cortex-M ports' drivers against simulated register blocks (the way counters_test.cc tests
// the counter drivers): each peripheral is a zeroed struct of its architectural layout in RAM. A
// test shows what the hardware would (ready flags, ID registers) and checks what the driver wrote
// against the reference manuals' values: RM0410 (STM32F7), RM0433 (STM32H7), the Armv7-M ARM.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cortex_m.h"
#include "rtt.h"
#include "stm32_clock.h"
#include "stm32_usart.h"

namespace {

template <typename T>
class RegisterBlock {
 public:
  RegisterBlock() : words_(sizeof(T) / sizeof(std::uint32_t), 0) {}
  T* get() { return reinterpret_cast<T*>(words_.data()); }
  T* operator->() { return get(); }
  // Sets what a register shows (read-only ones included).
  static void Show(const volatile std::uint32_t& reg, std::uint32_t value) {
    const_cast<volatile std::uint32_t&>(reg) = value;
  }

 private:
  std::vector<std::uint32_t> words_;
};

// ---- STM32F7: 216 MHz ----

TEST(Stm32f7Clock, PllTablesGive216MHzAnd48MHzFromEitherHse) {
  for (std::uint32_t hse : {8000000u, 25000000u}) {
    mculab_stm32f7_pll p;
    ASSERT_EQ(mculab_stm32f7_pll_for(hse, &p), 0);
    const std::uint64_t vco_in = hse / p.m;
    EXPECT_GE(vco_in, 1000000u);  // RM0410: VCO input 1..2 MHz
    EXPECT_LE(vco_in, 2000000u);
    const std::uint64_t vco = vco_in * p.n;
    EXPECT_GE(vco, 100000000u);  // VCO output 100..432 MHz
    EXPECT_LE(vco, 432000000u);
    EXPECT_EQ(vco / p.p, 216000000u) << hse;
    EXPECT_EQ(vco / p.q, 48000000u) << hse;
  }
  mculab_stm32f7_pll p;
  EXPECT_EQ(mculab_stm32f7_pll_for(12000000u, &p), -1);
}

class F7Clock : public ::testing::Test {
 protected:
  void ShowEverythingReady() {
    rcc_.Show(rcc_->CR, RCC_F7_CR_HSERDY | RCC_F7_CR_PLLRDY);
    rcc_.Show(rcc_->CFGR, RCC_F7_CFGR_SWS_PLL);
    pwr_.Show(pwr_->CSR1, PWR_F7_CSR1_ODRDY | PWR_F7_CSR1_ODSWRDY);
  }
  mculab_stm32_clocks Run(mculab_stm32_hse hse) {
    const mculab_stm32f7_clock_regs r{rcc_.get(), flash_.get(), pwr_.get()};
    mculab_stm32_clocks c{};
    mculab_stm32f7_clock_216mhz(&r, hse, &c);
    return c;
  }
  RegisterBlock<RCC_F7_Type> rcc_;
  RegisterBlock<FLASH_F7_Type> flash_;
  RegisterBlock<PWR_F7_Type> pwr_;
};

TEST_F(F7Clock, NucleoF767From8MHzBypassTo216MHzWithOverDriveAnd7WaitStates) {
  ShowEverythingReady();
  const mculab_stm32_clocks c = Run({8000000u, 1});
  EXPECT_TRUE(c.ok) << c.what;
  EXPECT_EQ(c.sysclk_hz, 216000000u);
  EXPECT_EQ(c.pclk1_hz, 54000000u);
  EXPECT_EQ(c.pclk2_hz, 108000000u);
  EXPECT_STREQ(c.what, "pll 216MHz from hse 8MHz bypass");
  // PLLM 4, PLLN 216, PLLP /2 (00), PLLSRC HSE, PLLQ 9, PLLR at its reset value 2.
  EXPECT_EQ(rcc_->PLLCFGR, 0x29403604u);
  EXPECT_EQ(rcc_->CR & (RCC_F7_CR_HSEON | RCC_F7_CR_HSEBYP | RCC_F7_CR_PLLON),
            RCC_F7_CR_HSEON | RCC_F7_CR_HSEBYP | RCC_F7_CR_PLLON);
  EXPECT_EQ(pwr_->CR1, PWR_F7_CR1_VOS_SCALE1 | PWR_F7_CR1_ODEN | PWR_F7_CR1_ODSWEN);
  EXPECT_EQ(rcc_->APB1ENR & RCC_F7_APB1ENR_PWREN, RCC_F7_APB1ENR_PWREN);
  EXPECT_EQ(flash_->ACR, 7u | FLASH_F7_ACR_ARTEN | FLASH_F7_ACR_PRFTEN);
  // HPRE /1, PPRE1 /4 (101), PPRE2 /2 (100), SW PLL; SWS as shown.
  EXPECT_EQ(rcc_->CFGR, (5u << 10) | (4u << 13) | 2u | RCC_F7_CFGR_SWS_PLL);
}

TEST_F(F7Clock, DiscoF746From25MHzCrystal) {
  ShowEverythingReady();
  const mculab_stm32_clocks c = Run({25000000u, 0});
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.sysclk_hz, 216000000u);
  EXPECT_EQ(rcc_->CR & RCC_F7_CR_HSEBYP, 0u) << "a crystal is not bypassed";
  EXPECT_EQ(rcc_->PLLCFGR & 0x3Fu, 25u);
  EXPECT_EQ((rcc_->PLLCFGR >> 6) & 0x1FFu, 432u);
}

TEST_F(F7Clock, AnHseThatNeverStartsLeavesTheCoreOnHsiAndSaysSo) {
  const mculab_stm32_clocks c = Run({8000000u, 1});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.sysclk_hz, 16000000u);
  EXPECT_EQ(c.pclk1_hz, 16000000u);
  EXPECT_STREQ(c.what, "hsi 16MHz: hse did not start");
  EXPECT_EQ(rcc_->CR & (RCC_F7_CR_HSEON | RCC_F7_CR_HSEBYP), 0u);
  EXPECT_EQ(rcc_->PLLCFGR, 0u);
  EXPECT_EQ(flash_->ACR, 0u) << "no wait states added for a clock that did not rise";
}

TEST_F(F7Clock, OverDriveThatNeverGetsReadyStopsBeforeTheSwitch) {
  rcc_.Show(rcc_->CR, RCC_F7_CR_HSERDY | RCC_F7_CR_PLLRDY);
  const mculab_stm32_clocks c = Run({8000000u, 1});
  EXPECT_FALSE(c.ok);
  EXPECT_STREQ(c.what, "hsi 16MHz: over-drive not ready");
  EXPECT_EQ(rcc_->CFGR & RCC_F7_CFGR_SW_Msk, 0u);
}

// ---- STM32H7: 480 / 400 MHz ----

class H7Clock : public ::testing::Test {
 protected:
  void ShowEverythingReady() {
    rcc_.Show(rcc_->CR, RCC_H7_CR_HSERDY | RCC_H7_CR_PLL1RDY);
    rcc_.Show(rcc_->CFGR, RCC_H7_CFGR_SWS_PLL1);
    pwr_.Show(pwr_->CSR1, PWR_H7_CSR1_ACTVOSRDY);
    pwr_.Show(pwr_->D3CR, PWR_H7_D3CR_VOSRDY);
  }
  mculab_stm32_clocks Run(std::uint32_t rev) {
    const mculab_stm32h7_clock_regs r{rcc_.get(), flash_.get(), pwr_.get(), syscfg_.get()};
    mculab_stm32_clocks c{};
    mculab_stm32h7_clock(&r, {8000000u, 1}, rev, &c);
    return c;
  }
  RegisterBlock<RCC_H7_Type> rcc_;
  RegisterBlock<FLASH_H7_Type> flash_;
  RegisterBlock<PWR_H7_Type> pwr_;
  RegisterBlock<SYSCFG_H7_Type> syscfg_;
};

TEST_F(H7Clock, RevisionVRunsAt480MHzInVos0With4WaitStates) {
  ShowEverythingReady();
  const mculab_stm32_clocks c = Run(STM32H7_REV_V);
  EXPECT_TRUE(c.ok) << c.what;
  EXPECT_EQ(c.sysclk_hz, 480000000u);
  EXPECT_EQ(c.pclk1_hz, 120000000u);
  EXPECT_STREQ(c.what, "pll1 480MHz vos0 (rev V) from hse 8MHz bypass");
  EXPECT_EQ(pwr_->CR3 & (PWR_H7_CR3_LDOEN | PWR_H7_CR3_BYPASS), PWR_H7_CR3_LDOEN);
  EXPECT_EQ(pwr_->D3CR & PWR_H7_D3CR_VOS_Msk, PWR_H7_D3CR_VOS_SCALE1);
  EXPECT_EQ(syscfg_->PWRCR & SYSCFG_H7_PWRCR_ODEN, SYSCFG_H7_PWRCR_ODEN) << "VOS0";
  EXPECT_EQ(rcc_->PLLCKSELR, (4u << 4) | 2u);  // DIVM1 4, PLLSRC HSE: 2 MHz into PLL1
  // PLL1RGE 2..4 MHz, wide VCO, integer mode, P/Q/R outputs on.
  EXPECT_EQ(rcc_->PLLCFGR, (1u << 2) | (7u << 16));
  // DIVN1 480-1, DIVP1 2-1, DIVQ1 4-1, DIVR1 2-1: VCO 960 MHz, P 480 MHz.
  EXPECT_EQ(rcc_->PLL1DIVR, 479u | (1u << 9) | (3u << 16) | (1u << 24));
  EXPECT_EQ(flash_->ACR, 4u | (2u << 4));     // LATENCY 4, WRHIGHFREQ 2
  EXPECT_EQ(rcc_->D1CFGR, 0x8u | (4u << 4));  // HPRE /2, D1PPRE /2
  EXPECT_EQ(rcc_->D2CFGR, (4u << 4) | (4u << 8));
  EXPECT_EQ(rcc_->D3CFGR, 4u << 4);
  EXPECT_EQ(rcc_->CFGR & RCC_H7_CFGR_SW_Msk, RCC_H7_CFGR_SW_PLL1);
}

TEST_F(H7Clock, RevisionYRunsAt400MHzInVos1With2WaitStates) {
  ShowEverythingReady();
  const mculab_stm32_clocks c = Run(STM32H7_REV_Y);
  EXPECT_TRUE(c.ok) << c.what;
  EXPECT_EQ(c.sysclk_hz, 400000000u);
  EXPECT_EQ(c.pclk1_hz, 100000000u);
  EXPECT_STREQ(c.what, "pll1 400MHz vos1 (rev Y) from hse 8MHz bypass");
  EXPECT_EQ(syscfg_->PWRCR, 0u) << "no VOS0 before revision V";
  EXPECT_EQ(rcc_->PLL1DIVR & 0x1FFu, 399u);
  EXPECT_EQ(flash_->ACR, 2u | (2u << 4));
}

TEST_F(H7Clock, AnHseThatNeverStartsLeavesTheCoreOnHsi) {
  pwr_.Show(pwr_->CSR1, PWR_H7_CSR1_ACTVOSRDY);
  pwr_.Show(pwr_->D3CR, PWR_H7_D3CR_VOSRDY);
  const mculab_stm32_clocks c = Run(STM32H7_REV_V);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.sysclk_hz, 64000000u);
  EXPECT_STREQ(c.what, "hsi 64MHz: hse did not start");
  EXPECT_EQ(rcc_->PLL1DIVR, 0u);
}

// ---- USART and pins ----

TEST(Stm32Usart, BrrFor115200FromEachBoardsUsartClock) {
  EXPECT_EQ(mculab_stm32_usart_brr(54000000u, 115200u), 469u);    // F7 USART3 on PCLK1
  EXPECT_EQ(mculab_stm32_usart_brr(108000000u, 115200u), 938u);   // F7 USART1 on PCLK2
  EXPECT_EQ(mculab_stm32_usart_brr(120000000u, 115200u), 1042u);  // H7 rev V USART3
  EXPECT_EQ(mculab_stm32_usart_brr(100000000u, 115200u), 868u);   // H7 rev Y USART3
  EXPECT_EQ(mculab_stm32_usart_brr(16000000u, 115200u), 139u);    // F7 on HSI
  for (std::uint32_t f : {54000000u, 108000000u, 120000000u, 100000000u, 16000000u}) {
    const double baud = static_cast<double>(f) / mculab_stm32_usart_brr(f, 115200u);
    EXPECT_NEAR(baud, 115200.0, 115200.0 * 0.01) << f;  // within the receiver's tolerance
  }
}

TEST(Stm32Usart, InitSetsBrrThenEnablesTransmitterReceiverAndUsart) {
  RegisterBlock<USART_Type> u;
  u->CR1 = 0xFFFFFFFFu;
  mculab_stm32_usart_init(u.get(), 469u);
  EXPECT_EQ(u->BRR, 469u);
  EXPECT_EQ(u->CR1, USART_CR1_TE | USART_CR1_RE | USART_CR1_UE);
  EXPECT_EQ(u->CR2, 0u);
  EXPECT_EQ(u->CR3, 0u);
}

TEST(Stm32Usart, Usart3PinsPD8PD9InAlternateFunction7LeaveOtherPinsAlone) {
  RegisterBlock<GPIO_Type> gpio;
  gpio->MODER = 0x00000003u;   // PD0 analog
  gpio->AFR[1] = 0xF0000000u;  // PD15 AF15
  mculab_stm32_gpio_af(gpio.get(), 8, GPIO_AF7_USART);
  mculab_stm32_gpio_af(gpio.get(), 9, GPIO_AF7_USART);
  EXPECT_EQ(gpio->MODER, 0x00000003u | (2u << 16) | (2u << 18));
  EXPECT_EQ(gpio->AFR[1], 0xF0000077u);
  EXPECT_EQ(gpio->AFR[0], 0u);
  EXPECT_EQ(gpio->PUPDR, (1u << 16) | (1u << 18));
  EXPECT_EQ(gpio->OSPEEDR, (2u << 16) | (2u << 18));
}

TEST(Stm32Usart, Usart1PinsPA9AndPB7UseAfrhAndAfrl) {
  RegisterBlock<GPIO_Type> a, b;
  mculab_stm32_gpio_af(a.get(), 9, GPIO_AF7_USART);
  mculab_stm32_gpio_af(b.get(), 7, GPIO_AF7_USART);
  EXPECT_EQ(a->AFR[1], 0x70u);
  EXPECT_EQ(b->AFR[0], 0x70000000u);
}

TEST(Stm32Usart, PollReadsRdrWhenRxneAndClearsAnOverrun) {
  RegisterBlock<USART_Type> u;
  EXPECT_EQ(mculab_stm32_usart_poll(u.get()), -1);
  u->RDR = 0x1A5u;
  u->ISR = USART_ISR_RXNE;
  EXPECT_EQ(mculab_stm32_usart_poll(u.get()), 0xA5);
  u->ISR = USART_ISR_RXNE | USART_ISR_ORE;
  EXPECT_EQ(mculab_stm32_usart_poll(u.get()), 0xA5);
  EXPECT_EQ(u->ICR, USART_ICR_ORECF);
}

TEST(Stm32Usart, WriteWaitsForTxeAndStoresEachByte) {
  RegisterBlock<USART_Type> u;
  u->ISR = USART_ISR_TXE;
  const std::uint8_t bytes[] = {0x00, 0x42};
  mculab_stm32_usart_write(u.get(), bytes, sizeof bytes);
  EXPECT_EQ(u->TDR, 0x42u);
}

// ---- Cortex-M: caches, DWT unit, timer ----

class CortexM : public ::testing::Test {
 protected:
  mculab_cm_regs Regs() { return {systick_.get(), scb_.get(), dwt_.get()}; }
  RegisterBlock<SysTick_Type> systick_;
  RegisterBlock<SCB_Type> scb_;
  RegisterBlock<DWT_Type> dwt_;
};

TEST_F(CortexM, CachesOnInvalidateEverySetAndWayThenEnable) {
  // Cortex-M7 16 KiB D-cache: 128 sets (NumSets 127), 4 ways (Associativity 3), 32-byte lines.
  scb_.Show(scb_->CCSIDR, (127u << 13) | (3u << 3) | 1u);
  scb_->ICIALLU = 0xDEADu;
  const mculab_cm_regs r = Regs();
  mculab_cm7_caches_set(&r, 1, 1);
  EXPECT_EQ(scb_->CCR & (SCB_CCR_IC_Msk | SCB_CCR_DC_Msk), SCB_CCR_IC_Msk | SCB_CCR_DC_Msk);
  EXPECT_EQ(scb_->ICIALLU, 0u);
  EXPECT_EQ(scb_->CSSELR, 0u);
  // The loop ends on the last set of the last way.
  EXPECT_EQ(scb_->DCISW, (127u << 5) | (3u << 30));
}

TEST_F(CortexM, CachesOffCleanTheDCacheBeforeDisablingIt) {
  scb_.Show(scb_->CCSIDR, (127u << 13) | (3u << 3) | 1u);
  scb_->CCR = SCB_CCR_IC_Msk | SCB_CCR_DC_Msk | 0x200u;
  const mculab_cm_regs r = Regs();
  mculab_cm7_caches_set(&r, 0, 0);
  EXPECT_EQ(scb_->CCR, 0x200u);
  EXPECT_EQ(scb_->DCCISW, (127u << 5) | (3u << 30));
}

TEST_F(CortexM, DwtUnitIsOfferedOnlyWithComparatorsAndNoHaltingDebugger) {
  const mculab_cm_regs r = Regs();
  EXPECT_EQ(mculab_cm_dwt_unit_init(&r), nullptr) << "NUMCOMP 0";
  dwt_->CTRL = 4u << DWT_CTRL_NUMCOMP_Pos;
  scb_->DHCSR = DCB_DHCSR_C_DEBUGEN_Msk;
  EXPECT_EQ(mculab_cm_dwt_unit_init(&r), nullptr) << "a debugger would halt on every sample";
  scb_->DHCSR = 0;
  mculab_counter_unit* u = mculab_cm_dwt_unit_init(&r);
  ASSERT_NE(u, nullptr);
  EXPECT_STREQ(u->name, "cortex-m7-dwt");
  EXPECT_EQ(u->max_simultaneous, 5);
}

TEST_F(CortexM, DwtUnitArmsTheSamplerWhileCountingOnly) {
  dwt_->CTRL = 4u << DWT_CTRL_NUMCOMP_Pos;
  const mculab_cm_regs r = Regs();
  mculab_counter_unit* u = mculab_cm_dwt_unit_init(&r);
  ASSERT_NE(u, nullptr);
  const std::uint16_t ids[] = {MCULAB_DWT_CPI, MCULAB_DWT_LSU};
  ASSERT_EQ(u->select(u, ids, 2), 0);
  dwt_->CYCCNT = 1000;
  u->start(u);
  EXPECT_EQ(dwt_->COMP0, 1000u + MCULAB_CM_DWT_SAMPLE_PERIOD);
  EXPECT_NE(dwt_->FUNCTION0 & DWT_FUNCTION_CYCMATCH_Msk, 0u);
  EXPECT_NE(scb_->DEMCR & DCB_DEMCR_MON_EN_Msk, 0u);
  // A DebugMonitor sample folds the counters' progress and sets the next match.
  dwt_->CPICNT = 200;
  mculab_cm_dwt_on_debug_monitor();
  EXPECT_EQ(dwt_->COMP0, 1000u + 2 * MCULAB_CM_DWT_SAMPLE_PERIOD);
  dwt_->CPICNT = 10;  // wrapped past 255
  u->stop(u);
  EXPECT_EQ(scb_->DEMCR & DCB_DEMCR_MON_EN_Msk, 0u);
  EXPECT_EQ(dwt_->FUNCTION0, 0u);
  std::uint64_t v[2];
  u->read(u, v);
  EXPECT_EQ(v[0], 266u);  // 200, then 66 more through the wrap
  EXPECT_EQ(v[1], 0u);
  const std::uint64_t comp = dwt_->COMP0;
  mculab_cm_dwt_on_debug_monitor();
  EXPECT_EQ(dwt_->COMP0, comp) << "no sampling once stopped";
}

TEST_F(CortexM, TimerFallsBackToSysTickWhenCyccntDoesNotCount) {
  const mculab_cm_regs r = Regs();
  systick_.Show(systick_->CVR, 0);  // a simulated counter never reloads: the wait is bounded
  EXPECT_EQ(mculab_cm_timer_init(&r), 0);
  EXPECT_EQ(systick_->RVR, SysTick_RVR_RELOAD_Msk);
  EXPECT_EQ(systick_->CSR,
            SysTick_CSR_CLKSOURCE_Msk | SysTick_CSR_TICKINT_Msk | SysTick_CSR_ENABLE_Msk);
  EXPECT_NE(scb_->DEMCR & DCB_DEMCR_TRCENA_Msk, 0u);
  systick_.Show(systick_->CVR, SysTick_RVR_RELOAD_Msk - 100u);
  EXPECT_EQ(mculab_cm_timer_now(), 100u);
  // A wrap the handler has not counted yet (PENDSTSET) counts as a whole period.
  scb_->ICSR = SCB_ICSR_PENDSTSET_Msk;
  systick_.Show(systick_->CVR, SysTick_RVR_RELOAD_Msk - 5u);
  EXPECT_EQ(mculab_cm_timer_now(), (1u << 24) + 5u);
}

TEST_F(CortexM, TimerFallsBackWhenTheDwtHasNoCycleCounter) {
  dwt_->CTRL = DWT_CTRL_NOCYCCNT_Msk;
  const mculab_cm_regs r = Regs();
  EXPECT_EQ(mculab_cm_timer_init(&r), 0);
  EXPECT_EQ(dwt_->CTRL & DWT_CTRL_CYCCNTENA_Msk, 0u);
}

TEST(CortexMExtend, ThirtyTwoBitsBecomeSixtyFourAcrossAWrap) {
  mculab_cm_extend32 e{};
  EXPECT_EQ(mculab_cm_extend(&e, 0xFFFFFFF0u), 0xFFFFFFF0u);
  EXPECT_EQ(mculab_cm_extend(&e, 0x10u), 0x100000010ull);
  EXPECT_EQ(mculab_cm_extend(&e, 0x20u), 0x100000020ull);
}

// ---- the RTT link: the agent's stops simulated by the flush hook ----

extern "C" volatile std::uint32_t mculab_rtt_flushes;

class Rtt : public ::testing::Test {
 protected:
  void SetUp() override {
    mculab_rtt_init();
    agent_ = this;
    mculab_rtt_flush_hook = &Rtt::AgentStop;
  }
  void TearDown() override { mculab_rtt_flush_hook = nullptr; }

  // What the agent does while the core stops at mculab_rtt_flush(): drain up[0], fill down[0].
  static void AgentStop() {
    Rtt* a = agent_;
    ++a->stops_;
    a->waiting_seen_ |= mculab_rtt_waiting != 0;
    mculab_rtt_ring& up = _SEGGER_RTT.aUp[0];
    while (up.RdOff != up.WrOff) {
      a->received_.push_back(up.pBuffer[up.RdOff]);
      up.RdOff = (up.RdOff + 1) % up.SizeOfBuffer;
    }
    mculab_rtt_ring& down = _SEGGER_RTT.aDown[0];
    while (!a->to_send_.empty() && (down.WrOff + 1) % down.SizeOfBuffer != down.RdOff) {
      down.pBuffer[down.WrOff] = a->to_send_.front();
      a->to_send_.erase(a->to_send_.begin());
      down.WrOff = (down.WrOff + 1) % down.SizeOfBuffer;
    }
  }

  static Rtt* agent_;
  int stops_ = 0;
  bool waiting_seen_ = false;
  std::vector<std::uint8_t> received_;
  std::vector<std::uint8_t> to_send_;
};
Rtt* Rtt::agent_ = nullptr;

TEST_F(Rtt, ControlBlockHasSeggersIdAndOneRingEachWay) {
  EXPECT_STREQ(_SEGGER_RTT.acID, "SEGGER RTT");
  EXPECT_EQ(_SEGGER_RTT.MaxNumUpBuffers, 1);
  EXPECT_EQ(_SEGGER_RTT.MaxNumDownBuffers, 1);
  EXPECT_EQ(_SEGGER_RTT.aUp[0].SizeOfBuffer, MCULAB_RTT_UP_BYTES);
  EXPECT_EQ(_SEGGER_RTT.aDown[0].SizeOfBuffer, MCULAB_RTT_DOWN_BYTES);
  EXPECT_EQ(_SEGGER_RTT.aUp[0].WrOff, 0u);
  EXPECT_EQ(_SEGGER_RTT.aUp[0].Flags, 0u);
}

TEST_F(Rtt, WritesLargerThanTheRingArriveWholeAndInOrderThroughStops) {
  std::vector<std::uint8_t> frame(3 * MCULAB_RTT_UP_BYTES + 17);
  for (std::size_t i = 0; i < frame.size(); ++i) frame[i] = static_cast<std::uint8_t>(i * 7);
  ASSERT_EQ(mculab_rtt_write(frame.data(), frame.size()), 0);
  EXPECT_GE(stops_, 3) << "a full ring stops for the agent instead of dropping bytes";
  mculab_rtt_stop();  // the runner's last stop before it parks
  EXPECT_EQ(received_, frame);
}

TEST_F(Rtt, ASmallWriteDoesNotStop) {
  const std::uint8_t hello[] = {0, 1, 2, 3};
  const std::uint32_t before = mculab_rtt_flushes;
  mculab_rtt_write(hello, sizeof hello);
  EXPECT_EQ(stops_, 0);
  EXPECT_EQ(mculab_rtt_flushes, before);
  EXPECT_EQ(_SEGGER_RTT.aUp[0].WrOff, 4u);
}

TEST_F(Rtt, PollNeverStopsAndReadStopsUntilTheAgentHasSentSomething) {
  EXPECT_EQ(mculab_rtt_poll(), -1);
  EXPECT_EQ(stops_, 0);
  to_send_ = {0x42, 0x43};
  EXPECT_EQ(mculab_rtt_read(), 0x42);
  EXPECT_EQ(stops_, 1);
  EXPECT_TRUE(waiting_seen_) << "the agent can tell a reader waiting for input";
  EXPECT_EQ(mculab_rtt_waiting, 0u);
  EXPECT_EQ(mculab_rtt_poll(), 0x43);
  EXPECT_EQ(mculab_rtt_poll(), -1);
}

TEST_F(Rtt, TheDownRingWrapsAround) {
  for (int round = 0; round < 3; ++round) {
    to_send_.assign(MCULAB_RTT_DOWN_BYTES - 1, 0);
    for (std::size_t i = 0; i < to_send_.size(); ++i)
      to_send_[i] = static_cast<std::uint8_t>(i + round);
    std::vector<std::uint8_t> want = to_send_;
    std::vector<std::uint8_t> got;
    for (std::size_t i = 0; i < want.size(); ++i) got.push_back(mculab_rtt_read());
    EXPECT_EQ(got, want) << "round " << round;
  }
}

}  // namespace
