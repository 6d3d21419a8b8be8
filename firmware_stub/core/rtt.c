/* The RTT link (rtt.h). */
#include "rtt.h"

/* Aligned to the Cortex-M7's 32-byte cache lines: the stop cleans and invalidates exactly these. */
static uint8_t up_ring[MCULAB_RTT_UP_BYTES] __attribute__((aligned(32)));
static uint8_t down_ring[MCULAB_RTT_DOWN_BYTES] __attribute__((aligned(32)));

mculab_rtt_control_block _SEGGER_RTT __attribute__((aligned(32)));
void (*volatile mculab_rtt_flush_hook)(void);
/* Stops made so far: the agent may read it to count them (they cost time outside regions). */
volatile uint32_t mculab_rtt_flushes;
volatile uint32_t mculab_rtt_waiting;

void mculab_rtt_init(void) {
  volatile char* id = _SEGGER_RTT.acID;
  for (unsigned i = 0; i < sizeof _SEGGER_RTT.acID; ++i) id[i] = 0;
  _SEGGER_RTT.MaxNumUpBuffers = 1;
  _SEGGER_RTT.MaxNumDownBuffers = 1;
  mculab_rtt_ring* up = &_SEGGER_RTT.aUp[0];
  up->sName = "mculab";
  up->pBuffer = up_ring;
  up->SizeOfBuffer = sizeof up_ring;
  up->WrOff = 0;
  up->RdOff = 0;
  up->Flags = 0;
  mculab_rtt_ring* down = &_SEGGER_RTT.aDown[0];
  down->sName = "mculab";
  down->pBuffer = down_ring;
  down->SizeOfBuffer = sizeof down_ring;
  down->WrOff = 0;
  down->RdOff = 0;
  down->Flags = 0;
  __asm__ volatile("" ::: "memory");
  /* The ID last, back to front: a scan of RAM never sees the whole ID before the block is made. */
  static const char kId[] = "SEGGER RTT";
  for (int i = (int)sizeof kId - 2; i >= 0; --i) id[i] = kId[i];
}

#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noinline, noipa, used))
#else
__attribute__((noinline, used))
#endif
void mculab_rtt_flush(void) {
  void (*hook)(void) = mculab_rtt_flush_hook;
  if (hook != 0) hook();
  __asm__ volatile("" ::: "memory");
}

/* The debugger reads and writes RAM, not the D-cache: with a write-back D-cache on (an STM32H7
 * whose .bss is in AXI SRAM), the rings must reach RAM before the stop and be re-read from RAM
 * after it (Armv7-M ARM B2.2.7: DCCIMVAC clean and invalidate, DCIMVAC invalidate, by address). */
#if defined(__ARM_ARCH_7EM__)
#define SCB_CCR (*(volatile uint32_t*)0xE000ED14u)
#define SCB_CCR_DC (1u << 16)
#define SCB_DCIMVAC (*(volatile uint32_t*)0xE000EF5Cu)
#define SCB_DCCIMVAC (*(volatile uint32_t*)0xE000EF70u)
static void cache_op(volatile uint32_t* op, const void* p, size_t n) {
  const uintptr_t end = (uintptr_t)p + n;
  for (uintptr_t a = (uintptr_t)p & ~(uintptr_t)31u; a < end; a += 32u) *op = (uint32_t)a;
}
static void rings_to_ram(int clean) {
  if (!(SCB_CCR & SCB_CCR_DC)) return;
  volatile uint32_t* op = clean ? &SCB_DCCIMVAC : &SCB_DCIMVAC;
  __asm__ volatile("dsb" ::: "memory");
  cache_op(op, &_SEGGER_RTT, sizeof _SEGGER_RTT);
  cache_op(op, up_ring, sizeof up_ring);
  cache_op(op, down_ring, sizeof down_ring);
  __asm__ volatile("dsb\n isb" ::: "memory");
}
#else
static void rings_to_ram(int clean) { (void)clean; }
#endif

void mculab_rtt_stop(void) {
  mculab_rtt_flushes = mculab_rtt_flushes + 1u;
  rings_to_ram(1); /* clean and invalidate: the agent sees every byte written */
  mculab_rtt_flush();
  rings_to_ram(0); /* invalidate: the runner sees what the agent wrote */
}

int mculab_rtt_write(const uint8_t* data, size_t len) {
  mculab_rtt_ring* up = &_SEGGER_RTT.aUp[0];
  const uint32_t size = up->SizeOfBuffer;
  size_t i = 0;
  while (i < len) {
    const uint32_t wr = up->WrOff;
    const uint32_t next = wr + 1u == size ? 0u : wr + 1u;
    if (next == up->RdOff) {
      mculab_rtt_stop(); /* full: the agent drains it */
      continue;
    }
    up->pBuffer[wr] = data[i++];
    __asm__ volatile("" ::: "memory");
    up->WrOff = next;
  }
  return 0;
}

int mculab_rtt_poll(void) {
  mculab_rtt_ring* down = &_SEGGER_RTT.aDown[0];
  const uint32_t rd = down->RdOff;
  if (rd == down->WrOff) return -1;
  const int b = down->pBuffer[rd];
  __asm__ volatile("" ::: "memory");
  down->RdOff = rd + 1u == down->SizeOfBuffer ? 0u : rd + 1u;
  return b;
}

int mculab_rtt_read(void) {
  for (;;) {
    const int b = mculab_rtt_poll();
    if (b >= 0) return b;
    mculab_rtt_waiting = 1;
    mculab_rtt_stop();
    mculab_rtt_waiting = 0;
  }
}
