/* mculab's QEMU TCG plugin: emulated events of the runner's measured regions.
 *
 *   qemu-system-arm -M mps3-an547 -kernel runner.elf -icount shift=5,sleep=off ... \
 *       -plugin /path/libmculab-qemu-counters.so,out=/tmp/counts.txt
 *
 * Counts, between the runner's region markers (mculab_marker_begin/end, core/markers.c), the
 * instructions executed, the memory accesses split into loads and stores (as QEMU performs them:
 * one per element of an MVE load/store, one per register of LDM/STM), the branches and the MVE
 * instructions (thumb_classify.h says which). Output: one line per region, docs/runner-protocol.md
 * "The QEMU counting plugin".
 *
 * How (QEMU 7.2, plugin API 1):
 *  - every instruction gets an inline "add 1" to the instruction counter, and, when the
 *    classifier says so, to the branch or MVE counter: translation-time work, no callback;
 *  - every instruction gets one inline read+write memory counter (all accesses, including those
 *    MVE helpers make per element). 7.2 miscounts inline counters registered for R or W alone, so
 *    the split comes from a memory callback on the instructions that may store, which counts the
 *    stores (qemu_plugin_mem_is_store); loads = accesses - stores;
 *  - mem=callback (checking mode) instead counts every access in a callback: slower, and
 *    independent of the classifier;
 *  - the marker functions, found by symbol (qemu_plugin_insn_symbol, from the -kernel ELF), are
 *    not counted; their store to the marker region (markers=, default 0x60FF0000: the an547's
 *    and the an500's)
 *    snapshots the counters. Begin marker to end marker is exactly the instructions the runner
 *    executes between the two calls, the same on every repeat: the counts are bit-identical run
 *    to run (with -icount, interrupts arrive at the same instructions every time).
 *
 * Arguments (-plugin lib.so,key=value,...):
 *   out=PATH        write the lines to PATH, flushed at each iteration's end (default: QEMU's log,
 *                   which needs -d plugin)
 *   mem=inline|callback   how loads and stores are split (default inline)
 *   markers=ADDR    the marker region, 64 KiB aligned (default 0x60FF0000)
 *   begin=SYM end=SYM     the marker functions' symbols (default mculab_marker_begin/_end)
 *   events=E1+E2+...      count only these events (at most MCULAB_QC_MAX_SELECTED, '+'
 *                   separated, names as in the output's header); the output then has their
 *                   columns only, in the header's order. Without it all five are counted. Each
 *                   event costs inline operations or a memory callback on every instruction it
 *                   concerns, so a run counts a bounded selection and the server plans passes
 *                   (docs/runner-protocol.md section 8).
 *
 * Single vCPU only (the counters are plain globals); a board with more is refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin_api.h"
#include "regions.h"
#include "thumb_classify.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = MCULAB_QEMU_PLUGIN_API_VERSION;

#define MARKER_REGION_BYTES 0x10000u
/* Events one run may select with events=: the emulated unit's "how many at once". */
#define MCULAB_QC_MAX_SELECTED 3u

enum { MARKER_BEGIN = 1, MARKER_END = 2 };

static struct {
  /* inline counters, bumped by generated code */
  uint64_t insns, branches, mve, accesses;
  /* callback counters */
  uint64_t stores, loads_cb;
  int mem_callback; /* mem=callback */
  uint64_t markers;
  const char* begin_sym;
  const char* end_sym;
  FILE* out;
  mculab_qc_tracker tracker;
} s = {.markers = 0x60FF0000u, .begin_sym = "mculab_marker_begin", .end_sym = "mculab_marker_end"};

static void emit(const char* line) {
  if (s.out != NULL) {
    fputs(line, s.out);
  } else {
    qemu_plugin_outs(line);
  }
}

static void snapshot(mculab_qc_counts* c) {
  c->v[MCULAB_QC_INSTRUCTIONS] = s.insns;
  c->v[MCULAB_QC_STORES] = s.stores;
  c->v[MCULAB_QC_LOADS] = s.mem_callback ? s.loads_cb : s.accesses - s.stores;
  c->v[MCULAB_QC_BRANCHES] = s.branches;
  c->v[MCULAB_QC_MVE] = s.mve;
}

static void on_store(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void* ud) {
  (void)vcpu;
  (void)vaddr;
  (void)ud;
  if (qemu_plugin_mem_is_store(info)) ++s.stores;
}

static void on_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void* ud) {
  (void)vcpu;
  (void)vaddr;
  (void)ud;
  if (qemu_plugin_mem_is_store(info)) {
    ++s.stores;
  } else {
    ++s.loads_cb;
  }
}

static void on_marker(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void* ud) {
  (void)vcpu;
  if (!qemu_plugin_mem_is_store(info) || vaddr < s.markers ||
      vaddr >= s.markers + MARKER_REGION_BYTES) {
    return; /* a store of the marker function that is not the marker (a spill at -O0) */
  }
  const uint32_t word = (uint32_t)((vaddr - s.markers) >> 2);
  mculab_qc_counts now;
  snapshot(&now);
  if ((uintptr_t)ud == MARKER_BEGIN) {
    mculab_qc_begin(&s.tracker, word, &now);
    return;
  }
  char line[MCULAB_QC_LINE_MAX];
  unsigned kind = 0;
  if (mculab_qc_end(&s.tracker, word, &now, line, sizeof line, &kind) == 0) return;
  emit(line);
  if (kind != MCULAB_QC_KIND_OP && s.out != NULL) fflush(s.out);
}

static int marker_kind(const char* sym) {
  if (sym == NULL) return 0;
  if (strcmp(sym, s.begin_sym) == 0) return MARKER_BEGIN;
  if (strcmp(sym, s.end_sym) == 0) return MARKER_END;
  return 0;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    const unsigned cls =
        mculab_thumb_classify(qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));
    const int marker = marker_kind(qemu_plugin_insn_symbol(insn));
    if (marker) {
      /* The marker functions themselves are not counted: only their store is watched. */
      if (cls & MCULAB_INSN_STORE) {
        qemu_plugin_register_vcpu_mem_cb(insn, on_marker, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W,
                                         (void*)(uintptr_t)marker);
      }
      continue;
    }
    const unsigned cols = s.tracker.columns;
    if (cols & (1u << MCULAB_QC_INSTRUCTIONS)) {
      qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &s.insns, 1);
    }
    if ((cls & MCULAB_INSN_BRANCH) && (cols & (1u << MCULAB_QC_BRANCHES))) {
      qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &s.branches, 1);
    }
    if ((cls & MCULAB_INSN_MVE) && (cols & (1u << MCULAB_QC_MVE))) {
      qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &s.mve, 1);
    }
    if (!(cols & ((1u << MCULAB_QC_LOADS) | (1u << MCULAB_QC_STORES)))) continue;
    if (s.mem_callback) {
      qemu_plugin_register_vcpu_mem_cb(insn, on_access, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
                                       NULL);
    } else {
      /* Callback first, then the inline counter: both RW, so 7.2's walk of the list never stops
       * early (it stops at the first entry whose R/W does not match the access). */
      if (cls & MCULAB_INSN_STORE) {
        qemu_plugin_register_vcpu_mem_cb(insn, on_store, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
                                         NULL);
      }
      qemu_plugin_register_vcpu_mem_inline(insn, QEMU_PLUGIN_MEM_RW, QEMU_PLUGIN_INLINE_ADD_U64,
                                           &s.accesses, 1);
    }
  }
}

static void on_qemu_exit(qemu_plugin_id_t id, void* ud) {
  (void)id;
  (void)ud;
  char line[MCULAB_QC_LINE_MAX];
  snprintf(line, sizeof line, "# end regions=%llu unclosed=%llu unmatched=%llu\n",
           (unsigned long long)s.tracker.regions,
           (unsigned long long)(s.tracker.unclosed + s.tracker.depth),
           (unsigned long long)s.tracker.unmatched);
  emit(line);
  if (s.out != NULL) {
    fclose(s.out);
    s.out = NULL;
  }
}

static int fail(const char* what, const char* arg) {
  char line[256];
  snprintf(line, sizeof line, "mculab-qemu-counters: %s%s\n", what, arg);
  fputs(line, stderr);
  return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info, int argc,
                                           char** argv) {
  const char* out_path = NULL;
  unsigned columns = MCULAB_QC_ALL_EVENTS;
  for (int i = 0; i < argc; ++i) {
    const char* a = argv[i];
    if (strncmp(a, "out=", 4) == 0) {
      out_path = a + 4;
    } else if (strcmp(a, "mem=inline") == 0) {
      s.mem_callback = 0;
    } else if (strcmp(a, "mem=callback") == 0) {
      s.mem_callback = 1;
    } else if (strncmp(a, "markers=", 8) == 0) {
      char* end = NULL;
      errno = 0;
      s.markers = strtoull(a + 8, &end, 0);
      if (errno != 0 || *end != 0 || (s.markers & (MARKER_REGION_BYTES - 1)) != 0) {
        return fail("markers= needs a 64 KiB aligned address, got ", a + 8);
      }
    } else if (strncmp(a, "begin=", 6) == 0) {
      s.begin_sym = a + 6;
    } else if (strncmp(a, "end=", 4) == 0) {
      s.end_sym = a + 4;
    } else if (strncmp(a, "events=", 7) == 0) {
      columns = 0;
      unsigned n = 0;
      const char* p = a + 7;
      while (*p) {
        const char* end = strchr(p, '+');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        int found = -1;
        for (int e = 0; e < MCULAB_QC_NUM_EVENTS; ++e) {
          if (strlen(mculab_qc_event_names[e]) == len &&
              strncmp(p, mculab_qc_event_names[e], len) == 0) {
            found = e;
          }
        }
        if (found < 0) {
          return fail(
              "events=: unknown event (instructions, loads, stores, branches, "
              "mve_instructions) in ",
              a + 7);
        }
        if (!(columns & (1u << found))) ++n;
        columns |= 1u << found;
        p += len;
        if (*p == '+') ++p;
      }
      if (n == 0) return fail("events= names no event", "");
      if (n > MCULAB_QC_MAX_SELECTED) {
        return fail("events=: at most 3 events at once (plan passes), got ", a + 7);
      }
    } else {
      return fail("unknown argument (out=, mem=inline|callback, markers=, begin=, end=, events=): ",
                  a);
    }
  }
  if (strcmp(info->target_name, "arm") != 0) {
    return fail("counts Arm (Thumb-2) guests only, not ", info->target_name);
  }
  if (info->system_emulation && info->system.max_vcpus > 1) {
    return fail("counts a single vCPU only", "");
  }
  if (out_path != NULL) {
    s.out = fopen(out_path, "w");
    if (s.out == NULL) return fail("cannot open out=", out_path);
  }
  mculab_qc_init(&s.tracker);
  s.tracker.columns = columns;
  char head[256];
  int len = snprintf(head, sizeof head,
                     "# mculab-qemu-counters 1 mem=%s markers=0x%llx\n# kind case index",
                     s.mem_callback ? "callback" : "inline", (unsigned long long)s.markers);
  for (int e = 0; e < MCULAB_QC_NUM_EVENTS; ++e) {
    if (columns & (1u << e)) {
      len += snprintf(head + len, sizeof head - (size_t)len, " %s", mculab_qc_event_names[e]);
    }
  }
  snprintf(head + len, sizeof head - (size_t)len, "\n");
  emit(head);
  if (s.out != NULL) fflush(s.out);
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_qemu_exit, NULL);
  return 0;
}
