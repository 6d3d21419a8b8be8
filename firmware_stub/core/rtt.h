/* The runner's link over RTT read by the agent through GDB (no UART wiring needed).
 *
 * A SEGGER-RTT-layout control block (`_SEGGER_RTT`: id "SEGGER RTT", one up buffer runner ->
 * agent, one down buffer agent -> runner) in RAM. A GDB server cannot read memory while the core
 * runs (all-stop mode), so the runner calls mculab_rtt_flush() where a stop costs nothing measured:
 * when the up buffer is full, when it waits for input, at the end of the session, and once at
 * start. The agent has a breakpoint on mculab_rtt_flush: at each stop it sets mculab_rtt_enabled
 * (first stop), takes the new up bytes and advances the up read offset, puts pending input into
 * the down buffer, and continues. Without a debugger the breakpoint is absent, the call returns at
 * once, mculab_rtt_enabled stays 0 and the port keeps its UART.
 *
 * Never called inside a timed region (the core writes frames only between them).
 * Single-threaded, like the rest of the port seam. */
#ifndef MCULAB_RTT_H_
#define MCULAB_RTT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const char* name;
  uint8_t* buf;
  uint32_t size;
  volatile uint32_t wr; /* written by the producer */
  volatile uint32_t rd; /* written by the consumer */
  uint32_t flags;
} mculab_rtt_buffer;

typedef struct {
  char id[16]; /* "SEGGER RTT" */
  int32_t max_up;
  int32_t max_down;
  mculab_rtt_buffer up;   /* offset 24 */
  mculab_rtt_buffer down; /* offset 48 */
} mculab_rtt_control_block;

/* Why the runner stopped in mculab_rtt_flush (its argument, in r0). */
#define MCULAB_RTT_FLUSH 0u   /* up data to take (buffer full, session end) */
#define MCULAB_RTT_WAITING 1u /* the runner waits for input: continue once there is some */
#define MCULAB_RTT_START 2u   /* once at start: the agent sets mculab_rtt_enabled */

extern mculab_rtt_control_block _SEGGER_RTT;
extern volatile uint32_t mculab_rtt_enabled;

/* The agent's breakpoint. Neither inlined nor cloned. */
void mculab_rtt_flush(uint32_t reason);

/* Offers the agent the link (MCULAB_RTT_START); afterwards mculab_rtt_enabled says whether it took
 * it. */
void mculab_rtt_start(void);
int mculab_rtt_write(const uint8_t* data, size_t len);
int mculab_rtt_poll_byte(void);
int mculab_rtt_read_byte(void);

#ifdef __cplusplus
}
#endif

#endif /* MCULAB_RTT_H_ */
