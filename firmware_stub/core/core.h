/* Private to the runner core: what runner.c, profile.c and memory.c share. */
#ifndef MCULAB_CORE_CORE_H_
#define MCULAB_CORE_CORE_H_

#include <stddef.h>
#include <stdint.h>

#include "mculab/runner_protocol.h"

/* runner.c: the selected counters' values since their start (callable while they count), in
 * counter index order; how many are selected. */
void mculab_core_read_counters(uint64_t* values);
unsigned mculab_core_num_counters(void);
void mculab_core_log(uint8_t level, const char* text);

/* profile.c: per-operator aggregation over a case's measured iterations. */
void mculab_profile_configure(int enabled);
void mculab_profile_case_begin(unsigned num_counters);
void mculab_profile_iteration_begin(void);
void mculab_profile_iteration_end(void);
void mculab_profile_warmup(int on);
unsigned mculab_profile_num_ops(void);
/* OP_SAMPLE payload of op i (< num_ops) into out (MCULAB_MAX_PAYLOAD bytes); its length. */
size_t mculab_profile_op_payload(unsigned i, uint16_t case_index, uint8_t* out);
/* Calls beyond MCULAB_MAX_OPS distinct ops or MCULAB_MAX_OP_DEPTH, and ends without a begin. */
unsigned mculab_profile_dropped(void);
unsigned mculab_profile_unmatched_ends(void);

/* memory.c: the reported categories and the stack's high-water mark. */
void mculab_memory_session_begin(void);
/* Paints [low, current stack pointer - margin) with MCULAB_STACK_PAINT. */
void mculab_memory_stack_paint(uint8_t* low, size_t bytes);
/* Bytes from the top of the stack down to the lowest word that lost its paint. */
uint32_t mculab_memory_stack_used(const uint8_t* low, size_t bytes);
/* MEMORY payload: every category reported so far; its length. */
size_t mculab_memory_payload(uint16_t case_index, uint8_t* out);
unsigned mculab_memory_dropped(void);

/* Bounded text without printf. */
typedef struct {
  char buf[160];
  size_t n;
} mculab_text;
void mculab_text_str(mculab_text* t, const char* s);
void mculab_text_u64(mculab_text* t, uint64_t v);

#endif /* MCULAB_CORE_CORE_H_ */
