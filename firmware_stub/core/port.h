/* The porting seam: the few things the runner core needs from a platform. Each port
 * (ports/<name>/port.c) implements these functions and mculab_runner_main() (mculab/runner.h),
 * which sets the platform up and calls mculab_core_run().
 * Like tflite-micro's platform folders: only what differs per platform lives in a port.
 *
 * Single-threaded: the core calls these from one thread; the an547 SysTick handler is the only
 * interrupt and is private to its port. */
#ifndef MCULAB_PORT_H_
#define MCULAB_PORT_H_

#include <stddef.h>
#include <stdint.h>

#include "mculab/counters.h"
#include "mculab/runner.h"
#include "mculab/runner_protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the port tells the core (and the agent, through HELLO). Filled by mculab_port_init(). */
typedef struct {
  const char* port;     /* "an547", "host": at most 15 characters */
  const char* cpu;      /* "cortex-m55", uname machine on host: at most 15 characters */
  uint8_t flags;        /* MCULAB_HELLO_*: EMULATED, ICACHE, DCACHE */
  uint8_t arena_memory; /* mculab_memory_kind: where `arena` lives */
  /* NULL, or one line sent as LOG right after HELLO: clock source, silicon revision, options. */
  const char* detail;
  mculab_timer_unit timer_unit;
  uint32_t clock_hz;          /* core clock, 0 if unknown */
  const uint8_t* workload;    /* the workload region (NULL if there is none) */
  size_t workload_max;        /* bytes readable at `workload` */
  uint32_t workload_addr;     /* address the agent writes the workload to (0 on host) */
  const char* workload_error; /* non-NULL: why there is no usable workload (sent in ERROR) */
  uint8_t* arena;             /* scratch memory for one case's tensors */
  size_t arena_bytes;
  /* What the port can count besides its timer, one entry per counter unit (mculab/counters.h),
   * in the order HELLO lists them: only counters that really count on this board, never a unit
   * that would read 0 (an emulator's PMU). */
  mculab_counter_unit* units[MCULAB_MAX_UNITS];
  uint8_t num_units;
  /* The stack the runner runs on, painted with MCULAB_STACK_PAINT by the port before the core
   * starts (it grows down from stack_low + stack_bytes); NULL when the port cannot paint it. */
  uint8_t* stack_low;
  size_t stack_bytes;
} mculab_port_info;

/* The words painted into unused stack; the lowest word that differs is the high-water mark. */
#define MCULAB_STACK_PAINT 0xC0FFEE11u

/* The region markers' target (mculab_marker_begin/end store to it): MCULAB_MARKER_WORDS words,
 * 64 KiB aligned, defined by the port (an547, an500: the linker script puts it in DDR at 0x60FF0000, RAM
 * that nothing else uses; host: a static array). The QEMU plugin decodes the low 16 bits of the
 * store address: word = kind << 12 | index (mculab/runner.h). */
#define MCULAB_MARKER_WORDS 16384u
extern volatile uint32_t mculab_marker_region[];

/* Brings up the link, the timer and memory; fills info. Called once, first. */
void mculab_port_init(mculab_port_info* info);

/* Writes bytes to the link; returns once they are handed to the transport (a frame at a time,
 * so the host port flushes per call). Returns 0, or -1 when the link is gone. */
int mculab_port_write(const uint8_t* data, size_t len);

/* Next byte from the link: -1 when none is ready (poll) / when the link is closed (read). */
int mculab_port_poll_byte(void);
int mculab_port_read_byte(void);

/* Aligns the timer before a measured region so the region's reading does not depend on what ran
 * before it (an547: restarts the SysTick period, so its wrap interrupts fall at the same points
 * of every iteration). May be a no-op. Not part of the measured region. */
void mculab_port_timer_align(void);

/* Free-running timer in mculab_port_info.timer_unit; monotonic between two aligns. */
uint64_t mculab_port_timer_now(void);

/* Ends the session with `status` (0: the session completed): the host runner exits; an embedded
 * port masks interrupts and parks the core (the agent stops the board after DONE). No port may use
 * semihosting: it would hand the runner the agent's machine. */
void mculab_port_exit(int status);

/* For a port's fault handlers: reports ERROR(MCULAB_ERR_FAULT, `what`) and DONE on the link when a
 * session is open (nothing before HELLO), so the agent fails the job as a workload failure. The
 * caller then parks the core (mculab_port_exit). */
void mculab_core_fault(const char* what);

/* The core's entry point: runs one session (HELLO ... DONE) with the workload `ops` (NULL: the
 * built-in operator benchmarks) and returns the exit status. The port's mculab_runner_main()
 * (mculab/runner.h) calls it once, on the painted stack. */
int mculab_core_run(const mculab_workload_ops* ops);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_PORT_H_ */
