/* Region bookkeeping of the counting plugin (regions.h). */
#include "regions.h"

#include <stdio.h>

static const char* const kKindNames[] = {"iter", "empty", "op", "kind3"};

const char* const mculab_qc_event_names[MCULAB_QC_NUM_EVENTS] = {"instructions", "loads", "stores",
                                                                 "branches", "mve_instructions"};

void mculab_qc_init(mculab_qc_tracker* t) {
  t->depth = 0;
  for (int k = 0; k < 2; ++k) {
    t->last_word[k] = 0;
    t->ordinal[k] = 0;
    t->have_last[k] = 0;
  }
  t->regions = 0;
  t->unclosed = 0;
  t->unmatched = 0;
  t->columns = MCULAB_QC_ALL_EVENTS;
}

void mculab_qc_begin(mculab_qc_tracker* t, uint32_t word, const mculab_qc_counts* now) {
  if (t->depth == MCULAB_QC_MAX_DEPTH) {
    ++t->unclosed;
    return;
  }
  t->open[t->depth].word = word;
  t->open[t->depth].start = *now;
  ++t->depth;
}

size_t mculab_qc_end(mculab_qc_tracker* t, uint32_t word, const mculab_qc_counts* now, char* line,
                     size_t cap, unsigned* kind_out) {
  unsigned d = t->depth;
  while (d > 0 && t->open[d - 1].word != word) --d;
  if (d == 0) {
    ++t->unmatched;
    return 0;
  }
  t->unclosed += t->depth - d; /* inner regions that never ended */
  t->depth = d - 1;
  const mculab_qc_counts* start = &t->open[d - 1].start;
  const unsigned kind = (word >> 12) & 3u;
  const uint32_t index = word & 0xFFFu;
  uint32_t case_index = index, n = index;
  if (kind < 2) {
    if (t->have_last[kind] && t->last_word[kind] == word) {
      ++t->ordinal[kind];
    } else {
      t->ordinal[kind] = 0;
    }
    t->have_last[kind] = 1;
    t->last_word[kind] = word;
    n = t->ordinal[kind];
  } else {
    case_index = 0xFFFu;
    for (unsigned k = t->depth; k > 0; --k) {
      if (((t->open[k - 1].word >> 12) & 3u) < 2) {
        case_index = t->open[k - 1].word & 0xFFFu;
        break;
      }
    }
  }
  ++t->regions;
  *kind_out = kind;
  int len = snprintf(line, cap, "%s %u %u", kKindNames[kind], (unsigned)case_index, (unsigned)n);
  for (int e = 0; e < MCULAB_QC_NUM_EVENTS && len >= 0 && (size_t)len < cap; ++e) {
    if (!(t->columns & (1u << e))) continue;
    const int more = snprintf(line + len, cap - (size_t)len, " %llu",
                              (unsigned long long)(now->v[e] - start->v[e]));
    len = more < 0 ? more : len + more;
  }
  if (len >= 0 && (size_t)len + 1 < cap) {
    line[len++] = '\n';
    line[len] = 0;
  }
  if (len < 0) return 0;
  return (size_t)len < cap ? (size_t)len : cap - 1;
}
