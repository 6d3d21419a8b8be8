/* The RTT link (rtt.h). */
#include "rtt.h"

static uint8_t up_ring[MCULAB_RTT_UP_BYTES];
static uint8_t down_ring[MCULAB_RTT_DOWN_BYTES];

mculab_rtt_control_block _SEGGER_RTT;
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
  mculab_rtt_flushes = mculab_rtt_flushes + 1u;
  void (*hook)(void) = mculab_rtt_flush_hook;
  if (hook != 0) hook();
  __asm__ volatile("" ::: "memory");
}

int mculab_rtt_write(const uint8_t* data, size_t len) {
  mculab_rtt_ring* up = &_SEGGER_RTT.aUp[0];
  const uint32_t size = up->SizeOfBuffer;
  size_t i = 0;
  while (i < len) {
    const uint32_t wr = up->WrOff;
    const uint32_t next = wr + 1u == size ? 0u : wr + 1u;
    if (next == up->RdOff) {
      mculab_rtt_flush(); /* full: the agent drains it */
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
    mculab_rtt_flush();
    mculab_rtt_waiting = 0;
  }
}
