/* Region bookkeeping of the counting plugin (regions.h). */
#include "regions.h"

#include <stdio.h>

static const char* const kKindNames[] = {"iter", "empty", "op", "kind3"};

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
  uint64_t v[MCULAB_QC_NUM_EVENTS];
  for (int e = 0; e < MCULAB_QC_NUM_EVENTS; ++e) v[e] = now->v[e] - start->v[e];
  const int len = snprintf(line, cap, "%s %u %u %llu %llu %llu %llu %llu\n", kKindNames[kind],
                           (unsigned)case_index, (unsigned)n, (unsigned long long)v[0],
                           (unsigned long long)v[1], (unsigned long long)v[2],
                           (unsigned long long)v[3], (unsigned long long)v[4]);
  if (len < 0) return 0;
  return (size_t)len < cap ? (size_t)len : cap - 1;
}
