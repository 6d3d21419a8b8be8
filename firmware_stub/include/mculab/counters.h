/* Counter units: what a port gives the runner core to count events beyond its timer.
 *
 * A counter unit is a set of hardware counters of which each can be given any event of the unit's
 * catalogue: the Cortex-M55 PMU (counters/armv81m_pmu.h), the Ethos-U55/U65 NPU PMU
 * (counters/ethosu_pmu.h), the Cortex-M7 DWT profiling counters (counters/cm7_dwt.h). A unit
 * counts at most `max_simultaneous` events in one pass; the agent plans passes from what HELLO
 * lists (docs/runner-protocol.md, "Counters").
 *
 * A unit flagged MCULAB_UNIT_EXTERNAL is counted outside the runner by the board backend (the QEMU
 * plugin, qemu_plugin/): it has no operations here, the runner only calls the region markers
 * (mculab/runner.h) and HELLO lists it so that the agent knows the board can count it.
 *
 * The core calls a unit's operations from one thread, in this order: select (at CONFIGURE), then
 * per measured region start, (read)*, stop, read. Values are 64-bit: every driver extends its
 * hardware counters, so a value never wraps. An event a unit cannot count is an error at
 * CONFIGURE, never a zero. */
#ifndef MCULAB_COUNTERS_H_
#define MCULAB_COUNTERS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One catalogue entry: the name the lab uses and the unit's own event number. */
typedef struct {
  const char* name; /* "instructions", "npu_active", ...: lower case, at most 31 characters */
  uint16_t id;      /* PMU event number (Arm's), NPU PMU event, DWT counter, ... */
} mculab_event;

typedef struct mculab_counter_unit mculab_counter_unit;
struct mculab_counter_unit {
  const char* name;         /* at most 15 characters: "cortex-m55-pmu" */
  uint8_t max_simultaneous; /* events countable in one pass */
  uint8_t flags;            /* MCULAB_UNIT_* (runner_protocol.h) */
  uint8_t num_events;
  const mculab_event* events;
  /* Assigns events (ids from `events`, n <= max_simultaneous) to the counters; the counters
   * stop. Returns 0, or -1 when the unit cannot count that selection. */
  int (*select)(mculab_counter_unit* self, const uint16_t* ids, unsigned n);
  /* Zeroes the selected counters and starts them. */
  void (*start)(mculab_counter_unit* self);
  /* Stops the selected counters (their values stay readable). */
  void (*stop)(mculab_counter_unit* self);
  /* The selected events since start, in selection order; callable while counting. */
  void (*read)(mculab_counter_unit* self, uint64_t* values);
  void* driver; /* the driver's state */
};

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_COUNTERS_H_ */
