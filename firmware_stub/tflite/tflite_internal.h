/* Private to the TFLite interpreter: error messages shared by loading and preparing. */
#ifndef MCULAB_TFLITE_INTERNAL_H_
#define MCULAB_TFLITE_INTERNAL_H_

#include <stdint.h>

#include "mculab/tflite.h"

/* Writes "<what><index><detail>" (index < 0: none) to m->error and returns st. */
mculab_tfl_status mculab_tfl_fail(mculab_tfl_model* m, mculab_tfl_status st, const char* what,
                                  int64_t index, const char* detail);
/* Writes "<what><index><detail><value><tail>" to m->error and returns st. */
mculab_tfl_status mculab_tfl_fail2(mculab_tfl_model* m, mculab_tfl_status st, const char* what,
                                   int64_t index, const char* detail, int64_t value,
                                   const char* tail);

/* The greedy planner (planner.c): offsets for the planned tensors, m->plan.arena_bytes and
 * naive_bytes. */
void mculab_tfl_plan_arena(mculab_tfl_model* m);

#endif /* MCULAB_TFLITE_INTERNAL_H_ */
