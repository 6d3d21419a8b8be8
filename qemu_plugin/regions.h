/* The counting plugin's region bookkeeping, apart from QEMU so it can be tested on its own: the
 * runner's marker stores open and close regions (mculab/runner.h: word = kind << 12 | index), and
 * each closed region becomes one line of the output (docs/runner-protocol.md, "The QEMU counting
 * plugin"):
 *
 *   <kind> <case> <index> <instructions> <loads> <stores> <branches> <mve_instructions>
 *
 *   kind  "iter"  a measured iteration: case = case index, index = iteration (0-based, the
 *                 plugin's count of this case's iterations, the same as SAMPLE's)
 *         "empty" an empty region (CASE_END's overhead): case = case index, index = 0..7
 *         "op"    an operator (mculab_op_begin/end): case = the enclosing region's case index,
 *                 index = the op index
 *
 * Thread-safety: none; the plugin calls it from the one vCPU thread. */
#ifndef MCULAB_QEMU_PLUGIN_REGIONS_H_
#define MCULAB_QEMU_PLUGIN_REGIONS_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  MCULAB_QC_INSTRUCTIONS,
  MCULAB_QC_LOADS,
  MCULAB_QC_STORES,
  MCULAB_QC_BRANCHES,
  MCULAB_QC_MVE,
  MCULAB_QC_NUM_EVENTS
};

#define MCULAB_QC_KIND_ITERATION 0u
#define MCULAB_QC_KIND_EMPTY 1u
#define MCULAB_QC_KIND_OP 2u
#define MCULAB_QC_MAX_DEPTH 8u
#define MCULAB_QC_LINE_MAX 160u

typedef struct {
  uint64_t v[MCULAB_QC_NUM_EVENTS];
} mculab_qc_counts;

typedef struct {
  struct {
    uint32_t word;
    mculab_qc_counts start;
  } open[MCULAB_QC_MAX_DEPTH];
  unsigned depth;
  uint32_t last_word[2]; /* per kind iter/empty: the word of the last region closed */
  uint32_t ordinal[2];   /* and its ordinal within a run of the same word */
  int have_last[2];
  uint64_t regions;   /* closed */
  uint64_t unclosed;  /* begins dropped: an end of an outer region came first, or too deep */
  uint64_t unmatched; /* ends with no begin */
  unsigned columns;   /* bit e: event e is counted and printed (default: all) */
} mculab_qc_tracker;

#define MCULAB_QC_ALL_EVENTS ((1u << MCULAB_QC_NUM_EVENTS) - 1u)

/* The events' names in column order: "instructions", "loads", "stores", "branches",
 * "mve_instructions". */
extern const char* const mculab_qc_event_names[MCULAB_QC_NUM_EVENTS];

void mculab_qc_init(mculab_qc_tracker* t);
void mculab_qc_begin(mculab_qc_tracker* t, uint32_t word, const mculab_qc_counts* now);
/* Closes the region `word`; writes its line (the selected columns only, t->columns)
 * (NUL-terminated, with '\n') into `line` and returns its length, or returns 0 for an end without a
 * begin. *kind_out = the region's kind. */
size_t mculab_qc_end(mculab_qc_tracker* t, uint32_t word, const mculab_qc_counts* now, char* line,
                     size_t cap, unsigned* kind_out);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_QEMU_PLUGIN_REGIONS_H_ */
