/* The Cortex-M ports' shared part (cortex_m_port.h): port.h's link, timer and end over RTT or the
 * port's UART, core/cortex_m.c's timer and park. */
#include "cortex_m_port.h"

#include "cortex_m.h"
#include "rtt.h"

int mculab_port_write(const uint8_t* data, size_t len) {
#if MCULAB_LINK_RTT
  return mculab_rtt_write(data, len);
#else
  mculab_cm_uart_write(data, len);
  return 0;
#endif
}

int mculab_port_poll_byte(void) {
#if MCULAB_LINK_RTT
  return mculab_rtt_poll();
#else
  return mculab_cm_uart_poll();
#endif
}

int mculab_port_read_byte(void) {
#if MCULAB_LINK_RTT
  return mculab_rtt_read();
#else
  for (;;) {
    const int b = mculab_cm_uart_poll();
    if (b >= 0) return b;
  }
#endif
}

void mculab_port_timer_align(void) { mculab_cm_timer_align(); }

uint64_t mculab_port_timer_now(void) { return mculab_cm_timer_now(); }

void mculab_port_exit(int status) {
  (void)status; /* the frames said it all; the agent resets the board or ends the emulation */
#if MCULAB_LINK_RTT
  mculab_rtt_stop(); /* the last frames out before the core parks */
#endif
  mculab_cm_park();
}

int mculab_runner_main(int argc, char** argv, const mculab_workload_ops* ops) {
  (void)argc;
  (void)argv;
  mculab_port_exit(mculab_core_run(ops));
  return 0;
}
