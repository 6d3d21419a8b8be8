/* Memory reports (mculab_memory_report, MEMORY frames) and high-water marks by painting. */
#include <stdint.h>

#include "core.h"
#include "mculab/runner.h"
#include "port.h"

#if defined(__SANITIZE_ADDRESS__)
/* Painting and scanning read and write stack words below the live frames on purpose. */
#define MCULAB_NO_ASAN __attribute__((no_sanitize_address, noinline))
#else
#define MCULAB_NO_ASAN __attribute__((noinline))
#endif

/* Paint stops this far below the painting function's own local variable: its frame, and the
 * few words the loop itself may spill, stay untouched. */
#define STACK_PAINT_MARGIN 256u

typedef struct {
  char name[MCULAB_NAME_LEN];
  uint32_t used, reserved;
} category;

static struct {
  category entries[MCULAB_MAX_MEMORY_CATEGORIES];
  unsigned n;
  unsigned dropped;
} m;

static int same_name(const char* a, const char* b) {
  size_t i = 0;
  for (; i + 1 < MCULAB_NAME_LEN && a[i] != 0 && b[i] != 0; ++i) {
    if (a[i] != b[i]) return 0;
  }
  return i + 1 == MCULAB_NAME_LEN || a[i] == b[i];
}

void mculab_memory_session_begin(void) {
  m.n = 0;
  m.dropped = 0;
}

unsigned mculab_memory_dropped(void) { return m.dropped; }

void mculab_memory_report(const char* name, uint32_t used, uint32_t reserved) {
  if (name == NULL || name[0] == 0) return;
  category* c = NULL;
  for (unsigned i = 0; i < m.n && c == NULL; ++i) {
    if (same_name(m.entries[i].name, name)) c = &m.entries[i];
  }
  if (c == NULL) {
    if (m.n == MCULAB_MAX_MEMORY_CATEGORIES) {
      ++m.dropped;
      return;
    }
    c = &m.entries[m.n++];
    size_t i = 0;
    for (; name[i] != 0 && i + 1 < MCULAB_NAME_LEN; ++i) c->name[i] = name[i];
    for (; i < MCULAB_NAME_LEN; ++i) c->name[i] = 0;
  }
  c->used = used;
  c->reserved = reserved;
}

size_t mculab_memory_payload(uint16_t case_index, uint8_t* out) {
  mculab_put_u16(out, case_index);
  out[2] = (uint8_t)m.n;
  out[3] = 0;
  size_t len = MCULAB_MEMORY_FIXED_LEN;
  for (unsigned i = 0; i < m.n; ++i) {
    for (unsigned k = 0; k < MCULAB_NAME_LEN; ++k) out[len + k] = (uint8_t)m.entries[i].name[k];
    mculab_put_u32(out + len + 16, m.entries[i].used);
    mculab_put_u32(out + len + 20, m.entries[i].reserved);
    len += MCULAB_MEMORY_ENTRY_LEN;
  }
  return len;
}

MCULAB_NO_ASAN void mculab_memory_stack_paint(uint8_t* low, size_t bytes) {
  volatile uint32_t here = 0;
  const uintptr_t sp = (uintptr_t)&here;
  const uintptr_t lo = ((uintptr_t)low + 3u) & ~(uintptr_t)3u;
  if (low == NULL || sp < lo + STACK_PAINT_MARGIN || sp > (uintptr_t)low + bytes) return;
  for (volatile uint32_t* w = (volatile uint32_t*)lo; (uintptr_t)w < sp - STACK_PAINT_MARGIN; ++w) {
    *w = MCULAB_STACK_PAINT;
  }
  (void)here;
}

MCULAB_NO_ASAN uint32_t mculab_memory_stack_used(const uint8_t* low, size_t bytes) {
  if (low == NULL) return 0;
  const uintptr_t lo = ((uintptr_t)low + 3u) & ~(uintptr_t)3u;
  const uintptr_t top = (uintptr_t)low + bytes;
  const volatile uint32_t* w = (const volatile uint32_t*)lo;
  while ((uintptr_t)w < top && *w == MCULAB_STACK_PAINT) ++w;
  return (uint32_t)(top - (uintptr_t)w);
}

MCULAB_NO_ASAN void mculab_watermark_paint(void* region, size_t len) {
  volatile uint32_t* w = (volatile uint32_t*)region;
  for (size_t i = 0; i < len / 4u; ++i) w[i] = MCULAB_STACK_PAINT;
}

MCULAB_NO_ASAN size_t mculab_watermark_used(const void* region, size_t len) {
  const volatile uint32_t* w = (const volatile uint32_t*)region;
  const size_t words = len / 4u;
  size_t first = 0;
  while (first < words && w[first] == MCULAB_STACK_PAINT) ++first;
  if (first == words) return 0;
  size_t last = words;
  while (last > first && w[last - 1] == MCULAB_STACK_PAINT) --last;
  return (last - first) * 4u;
}
