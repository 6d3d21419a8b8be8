/* The mculab runner library: the C API for a runner built around your own runtime (TFLite Micro,
 * ExecuTorch, a hand-written model). Guide: docs/writing-a-runner.md; wire format:
 * docs/runner-protocol.md.
 *
 * The library speaks the runner protocol with the agent (HELLO, CONFIGURE, RUN, ...), measures
 * each iteration with the port's timer and counters, and calls your workload:
 *
 *   static uint16_t prepare(void* user, const mculab_case_info* c);  // per case, not measured
 *   static void invoke(void* user);                                  // one measured iteration
 *   static uint32_t checksum(void* user);                            // after the last iteration
 *   static const mculab_workload_ops ops = {"tflite-micro", prepare, invoke, checksum, NULL};
 *   int main(int argc, char** argv) { return mculab_runner_main(argc, argv, &ops); }
 *
 * Inside invoke(), mculab_op_begin()/mculab_op_end() around each operator give per-operator
 * profiles (OP_SAMPLE frames), and mculab_memory_report() gives memory use by category (MEMORY
 * frames); both cost nothing unless the agent asks for them in CONFIGURE.
 *
 * Thread-safety: everything here runs on the runner's one thread; no heap is used. */
#ifndef MCULAB_RUNNER_H_
#define MCULAB_RUNNER_H_

#include <stddef.h>
#include <stdint.h>

#include "mculab/runner_protocol.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MCULAB_RUNNER_VERSION_MAJOR 0
#define MCULAB_RUNNER_VERSION_MINOR 2
#define MCULAB_RUNNER_VERSION_PATCH 0

/* The most distinct operators one case may report (OP_SAMPLE frames): the protocol's bound, what
 * an agent accepts. As many as the TFLite interpreter runs (MCULAB_TFL_MAX_OPS). */
#define MCULAB_PROTOCOL_MAX_OPS 256u
/* Per-case profiles hold at most this many distinct operators, at most MCULAB_PROTOCOL_MAX_OPS;
 * further ones are counted in a LOG warning and not reported. Each costs about 270 bytes of RAM:
 * a port short of RAM builds with fewer (-DMCULAB_MAX_OPS=64). */
#ifndef MCULAB_MAX_OPS
#define MCULAB_MAX_OPS 256u
#endif
#if MCULAB_MAX_OPS > MCULAB_PROTOCOL_MAX_OPS
#error "MCULAB_MAX_OPS is over MCULAB_PROTOCOL_MAX_OPS"
#endif
/* Operators nest at most this deep (an op's figures include the ops inside it). */
#define MCULAB_MAX_OP_DEPTH 4u
/* Memory categories per session (mculab_memory_report), "stack" included. */
#define MCULAB_MAX_MEMORY_CATEGORIES MCULAB_MAX_MEMORY_ENTRIES

/* What prepare() gets for one case. */
typedef struct {
  uint16_t case_index; /* 0-based position in the workload */
  int64_t case_id;     /* the workload's id of the case */
  uint32_t seed;       /* the workload's seed */
  /* Built-in operator workloads (the generic runner): the op and its parameters. */
  uint16_t op;
  const int32_t* params;
  uint16_t num_params;
  /* MCULAB_OP_CUSTOM workloads: your blob (a model, inputs), 16-byte aligned, read-only. */
  const uint8_t* blob;
  size_t blob_len;
  /* The port's scratch memory, yours for the case (its size is in HELLO's arena_bytes). */
  uint8_t* arena;
  size_t arena_bytes;
  /* prepare() may write why it failed here (NUL-terminated); it goes into the ERROR frame. */
  char* error_text;
  size_t error_text_len;
} mculab_case_info;

typedef struct {
  /* The runtime's name in HELLO ("tflite-micro", "executorch"): at most 15 characters. */
  const char* name;
  /* Sets the case up (allocate tensors, load the model): not measured. Returns 0, or an
   * mculab_error_code (MCULAB_ERR_NO_MEMORY, MCULAB_ERR_BAD_PARAMS, MCULAB_ERR_BAD_WORKLOAD, ...)
   * that stops the run with ERROR(code, case) and DONE. */
  uint16_t (*prepare)(void* user, const mculab_case_info* info);
  /* One inference / kernel call: the measured region. */
  void (*invoke)(void* user);
  /* A 32-bit digest of the case's output after its last iteration (CASE_END's checksum), so the
   * agent can tell a wrong result from a slow one; NULL reports 0. */
  uint32_t (*checksum)(void* user);
  void* user;
  /* Before each warm-up and each measured inference, outside the measured region; NULL: none.
   * Restores what an inference may overwrite, such as inputs whose memory the runtime's plan
   * reuses once they are read (TFLite Micro's planner does). */
  void (*reload)(void* user);
} mculab_workload_ops;

/* Runs one session of the runner protocol and ends the process / the emulation with the exit
 * status (docs/runner-protocol.md section 4). `ops` NULL runs the built-in operator benchmarks
 * (the generic runner); otherwise the workload must be an MCULAB_OP_CUSTOM blob workload. Host
 * port: argv[1] names the workload file. Implemented by the port; returns only on the host port
 * if exit is intercepted. */
int mculab_runner_main(int argc, char** argv, const mculab_workload_ops* ops);

/* For a runtime that runs mculab's int8 kernels (mculab/kernels_s8.h), as the TFLite runner
 * does: HELLO's runtime is then ops->name plus "-" and the selected fast set ("tflite-helium",
 * "tflite-dsp"), or ops->name alone on the reference kernels (workload flag
 * MCULAB_WORKLOAD_REFERENCE_KERNELS), as the generic runner's "builtin-helium" / "builtin", so a
 * run's provenance says which kernels ran. Call before mculab_runner_main(); the name plus the
 * suffix must fit in 15 characters. */
void mculab_runner_names_kernel_set(void);

/* Per-operator profiles. Call begin/end around each operator inside invoke(): `index` is the
 * runtime's operator index (the same op in every iteration), `type` the operator type
 * ("CONV_2D", cut to 15 characters), `name` its name (cut to 31). Both strings are copied at the
 * first call of each index. Aggregated over the case's measured iterations: count, sum, min and
 * max of the timer and of each selected counter, sent as OP_SAMPLE before CASE_END. Ops nest (at
 * most MCULAB_MAX_OP_DEPTH deep; an op's figures include its inner ops). No-ops unless CONFIGURE
 * set MCULAB_CONFIGURE_OP_PROFILE and an iteration is being measured. */
void mculab_op_begin(uint16_t index, const char* type, const char* name);
void mculab_op_end(void);

/* Reports `used` of `reserved` bytes of a memory category ("arena", "persistent", "scratch", cut
 * to 15 characters). The latest report of each category is sent in every case's MEMORY frame
 * (with MCULAB_CONFIGURE_MEMORY); call it from prepare() or invoke(). The runner adds "stack"
 * itself where the port paints its stack. */
void mculab_memory_report(const char* category, uint32_t used, uint32_t reserved);

/* High-water marks by painting, for an arena whose runtime does not say how much it used: paint
 * it before the runtime allocates, then ask for the extent written since (bytes from the first
 * to the last word that no longer holds the paint). */
void mculab_watermark_paint(void* region, size_t len);
size_t mculab_watermark_used(const void* region, size_t len);

/* A LOG frame (level 0 debug .. 3 error) from the runtime, e.g. its version at prepare(). */
void mculab_log(uint8_t level, const char* text);

/* The region markers the QEMU counting plugin (qemu_plugin/) attaches to by symbol: a store to
 * MCULAB_MARKER_ADDR(kind, index) inside each. The core calls them around every measured
 * iteration, empty region and op; a runtime has no need to call them. */
#define MCULAB_MARKER_ITERATION 0u
#define MCULAB_MARKER_EMPTY 1u
#define MCULAB_MARKER_OP 2u
#define MCULAB_MARKER_INDEX_MASK 0xFFFu
void mculab_marker_begin(uint32_t kind, uint32_t index);
void mculab_marker_end(uint32_t kind, uint32_t index);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_RUNNER_H_ */
