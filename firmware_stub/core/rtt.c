/* RTT link (rtt.h). */
#include "rtt.h"

#if defined(__GNUC__) && !defined(__clang__)
#define MCULAB_RTT_FN __attribute__((noinline, noipa, used))
#else
#define MCULAB_RTT_FN __attribute__((noinline, used))
#endif

#define UP_SIZE 4096u
#define DOWN_SIZE 512u

static uint8_t up_buf[UP_SIZE];
static uint8_t down_buf[DOWN_SIZE];

mculab_rtt_control_block _SEGGER_RTT = {
    .id = "SEGGER RTT",
    .max_up = 1,
    .max_down = 1,
    .up = {.name = "mculab", .buf = up_buf, .size = UP_SIZE},
    .down = {.name = "mculab", .buf = down_buf, .size = DOWN_SIZE},
};

volatile uint32_t mculab_rtt_enabled;

MCULAB_RTT_FN void mculab_rtt_flush(uint32_t reason) {
  /* The agent reads and writes the control block while the core is stopped here. */
  __asm__ volatile("" : : "r"(reason) : "memory");
}

void mculab_rtt_start(void) { mculab_rtt_flush(MCULAB_RTT_START); }

int mculab_rtt_write(const uint8_t* data, size_t len) {
  mculab_rtt_buffer* b = &_SEGGER_RTT.up;
  size_t i = 0;
  while (i < len) {
    const uint32_t wr = b->wr;
    const uint32_t next = wr + 1u == b->size ? 0u : wr + 1u;
    if (next == b->rd) { /* full: let the agent take it */
      mculab_rtt_flush(MCULAB_RTT_FLUSH);
      continue;
    }
    b->buf[wr] = data[i++];
    __asm__ volatile("" ::: "memory");
    b->wr = next;
  }
  return 0;
}

int mculab_rtt_poll_byte(void) {
  mculab_rtt_buffer* b = &_SEGGER_RTT.down;
  const uint32_t rd = b->rd;
  if (rd == b->wr) return -1;
  const int c = b->buf[rd];
  __asm__ volatile("" ::: "memory");
  b->rd = rd + 1u == b->size ? 0u : rd + 1u;
  return c;
}

int mculab_rtt_read_byte(void) {
  for (;;) {
    const int c = mculab_rtt_poll_byte();
    if (c >= 0) return c;
    /* Waiting for input: hand over what was written so far, and wait for the agent. */
    mculab_rtt_flush(MCULAB_RTT_WAITING);
  }
}
