/* The runner's link over RTT: SEGGER's RTT control block layout ("SEGGER RTT", one up and one down
 * ring), so J-Link, OpenOCD and pyOCD RTT readers find it as well as mculab's agent, which reads it
 * over the GDB connection and needs no UART wiring.
 *
 * A GDB server cannot read memory while the core runs (all-stop), so the runner makes the stops
 * itself, always outside measured regions: mculab_rtt_flush() is an ordinary function the agent
 * sets a breakpoint on (its address from the runner ELF's symbol table). When the core stops
 * there the agent reads up[0] from RdOff to WrOff and advances RdOff, writes what it has for the
 * runner into down[0] and advances WrOff, then continues. The runner calls it when a frame does
 * not fit the up ring, when it waits for input with the down ring empty, and before it parks. An
 * up ring never overflows: a writer that finds it full flushes and waits.
 *
 * Rings: the writer owns WrOff, the reader RdOff; empty when they are equal, full when WrOff + 1
 * == RdOff (mod size), as SEGGER's. Single-threaded on the target; the agent touches the block
 * only while the core is halted. */
#ifndef MCULAB_CORE_RTT_H_
#define MCULAB_CORE_RTT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MCULAB_RTT_UP_BYTES
#define MCULAB_RTT_UP_BYTES 4096u
#endif
#ifndef MCULAB_RTT_DOWN_BYTES
#define MCULAB_RTT_DOWN_BYTES 512u
#endif

typedef struct {
  const char* sName;       /* "mculab" */
  uint8_t* pBuffer;        /* the ring */
  uint32_t SizeOfBuffer;   /* bytes in the ring */
  volatile uint32_t WrOff; /* next byte the writer writes */
  volatile uint32_t RdOff; /* next byte the reader reads */
  uint32_t Flags;          /* 0: the target never drops or trims (it flushes instead) */
} mculab_rtt_ring;

typedef struct {
  char acID[16];             /* "SEGGER RTT", NUL padded */
  int32_t MaxNumUpBuffers;   /* 1 */
  int32_t MaxNumDownBuffers; /* 1 */
  mculab_rtt_ring aUp[1];    /* runner -> agent */
  mculab_rtt_ring aDown[1];  /* agent -> runner */
} mculab_rtt_control_block;

#if defined(__arm__)
_Static_assert(sizeof(mculab_rtt_ring) == 24, "SEGGER RTT ring: 24 bytes on a 32-bit target");
_Static_assert(offsetof(mculab_rtt_control_block, aUp) == 24, "SEGGER RTT: aUp at 24");
_Static_assert(offsetof(mculab_rtt_control_block, aDown) == 48, "SEGGER RTT: aDown at 48");
#endif

/* The control block, by SEGGER's symbol name. */
extern mculab_rtt_control_block _SEGGER_RTT;

/* Sets the block up (rings empty, then the ID last, so a reader never finds a half-made block). */
void mculab_rtt_init(void);
/* Copies `len` bytes into the up ring, flushing whenever it is full. Returns 0. */
int mculab_rtt_write(const uint8_t* data, size_t len);
/* The next byte of the down ring, or -1 when it is empty (no stop). */
int mculab_rtt_poll(void);
/* The next byte of the down ring, flushing (stopping for the agent) while it is empty. */
int mculab_rtt_read(void);
/* Stops for the agent: makes the rings visible in RAM (D-cache), calls mculab_rtt_flush(), and
 * re-reads them afterwards. What the ports call before they park. */
void mculab_rtt_stop(void);
/* The agent's breakpoint: the agent drains up[0] and fills down[0] while the core stops here.
 * Never inlined; reached only through mculab_rtt_stop(), never inside a measured region. */
void mculab_rtt_flush(void);

/* 1 while mculab_rtt_read() waits for input (the agent may keep the core stopped at
 * mculab_rtt_flush() until it has bytes for the down ring), 0 otherwise. */
extern volatile uint32_t mculab_rtt_waiting;

/* Host tests only: called by mculab_rtt_flush() in place of the agent's stop (NULL on targets). */
extern void (*volatile mculab_rtt_flush_hook)(void);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_CORE_RTT_H_ */
