/* The region markers (mculab/runner.h). The QEMU counting plugin (qemu_plugin/) finds these two
 * functions by symbol and counts between the store in mculab_marker_begin and the store in
 * mculab_marker_end; it does not count their own instructions. They live in a file of their own
 * and are neither inlined nor cloned, so that each call is a real call to exactly these symbols
 * (with LTO too). On silicon each is a call and a store to RAM nothing else uses. */
#include <stdint.h>

#include "mculab/runner.h"
#include "port.h"

/* A port short of RAM (stm32f7) folds the stores onto fewer words of its region: the plugin never
 * runs there, the store only has to land in RAM. All ones (the default) keeps every word. */
#ifndef MCULAB_MARKER_WORD_MASK
#define MCULAB_MARKER_WORD_MASK 0xFFFFFFFFu
#endif

#if defined(__GNUC__) && !defined(__clang__)
#define MCULAB_MARKER_FN __attribute__((noinline, noipa, used))
#else
#define MCULAB_MARKER_FN __attribute__((noinline, used))
#endif

MCULAB_MARKER_FN void mculab_marker_begin(uint32_t kind, uint32_t index) {
  const uint32_t word = ((kind & 3u) << 12) | (index & MCULAB_MARKER_INDEX_MASK);
  mculab_marker_region[word & MCULAB_MARKER_WORD_MASK] = word;
}

MCULAB_MARKER_FN void mculab_marker_end(uint32_t kind, uint32_t index) {
  const uint32_t word = ((kind & 3u) << 12) | (index & MCULAB_MARKER_INDEX_MASK);
  mculab_marker_region[word & MCULAB_MARKER_WORD_MASK] = word;
}
