/* The TFLite runner: the runner library around the int8 interpreter (mculab/tflite.h). The
 * workload is a custom one whose blob is a .tflite model; each case loads and prepares it (not
 * measured), fills the input (given, else from the workload's seed) before every inference outside
 * the measured region, and each measured iteration is one
 * inference with every operator an op region (index, TFLite operator type, output tensor name).
 * CASE_END's checksum is the CRC-32 of the outputs concatenated in the graph's order
 * (mculab_tfl_output_crc32). MEMORY reports the plan: "arena"
 * (the planned activations and operators' scratch, TFLite Micro's "head"), "persistent" (the
 * interpreter's tables, the per-channel requantization parameters and the variable tensors) and
 * "model".
 *
 * The blob is the model alone or model + input (mculab_tfl_unpack); a given input replaces the
 * seeded one.
 *
 * The interpreter's tables (mculab_tfl_model, ~45 KiB) live at the start of the port's arena,
 * not in .bss: the small-RAM ports keep their tightly coupled memory for the stack and the
 * runner core. */
#include <stddef.h>
#include <stdint.h>

#include "mculab/runner.h"
#include "mculab/runner_protocol.h"
#include "mculab/tflite.h"

typedef struct {
  mculab_tfl_model* model; /* in the arena, from prepare() on */
  mculab_tfl_status last;
  /* The input: given in the blob, else seeded; filled again before every inference, as the plan
   * reuses the input's memory once its last reader ran (TFLite Micro's does too). */
  const uint8_t* input;
  uint32_t input_len;
  uint32_t seed;
} tflite_runner;

static tflite_runner the_runner;

static void set_error(const mculab_case_info* info, const char* a, const char* b) {
  size_t n = 0;
  for (const char* s = a; s != NULL && *s != 0 && n + 1 < info->error_text_len; ++s) {
    info->error_text[n++] = *s;
  }
  for (const char* s = b; s != NULL && *s != 0 && n + 1 < info->error_text_len; ++s) {
    info->error_text[n++] = *s;
  }
  if (info->error_text_len > 0) info->error_text[n] = 0;
}

static uint16_t prepare(void* user, const mculab_case_info* info) {
  tflite_runner* r = (tflite_runner*)user;
  r->model = NULL;
  const size_t align = _Alignof(mculab_tfl_model);
  const size_t pad = (align - (uintptr_t)info->arena % align) % align;
  const size_t tables = pad + sizeof(mculab_tfl_model);
  if (info->arena == NULL || info->arena_bytes < tables) {
    set_error(info, "tflite: the arena cannot hold the interpreter's tables", NULL);
    return MCULAB_ERR_NO_MEMORY;
  }
  r->model = (mculab_tfl_model*)(void*)(info->arena + pad);
  mculab_tfl_model* m = r->model;
  mculab_tfl_blob blob;
  if (mculab_tfl_unpack(info->blob, info->blob_len, &blob) != 0) {
    set_error(info, "tflite: the blob's model and input lengths do not match its size", NULL);
    return MCULAB_ERR_BAD_WORKLOAD;
  }
  mculab_tfl_status st = mculab_tfl_load(m, blob.model, blob.model_len);
  if (st == MCULAB_TFL_OK) {
    st = mculab_tfl_prepare(m, info->arena + tables, info->arena_bytes - tables);
  }
  if (st != MCULAB_TFL_OK) {
    set_error(info, "tflite: ", m->error);
    return st == MCULAB_TFL_NO_MEMORY ? MCULAB_ERR_NO_MEMORY : MCULAB_ERR_BAD_WORKLOAD;
  }
  r->input = blob.input;
  r->input_len = blob.input_len;
  r->seed = info->seed;
  if (blob.input != NULL) {
    st = mculab_tfl_set_input(m, blob.input, blob.input_len);
    if (st != MCULAB_TFL_OK) {
      set_error(info, "tflite: ", m->error);
      return MCULAB_ERR_BAD_WORKLOAD;
    }
  } else {
    mculab_tfl_seed_input(m, info->seed);
  }
  r->last = MCULAB_TFL_OK;
  const uint32_t reserved =
      (uint32_t)(info->arena_bytes > UINT32_MAX ? UINT32_MAX : info->arena_bytes);
  mculab_memory_report("arena", m->plan.arena_bytes, reserved);
  mculab_memory_report("persistent", (uint32_t)(tables + m->plan.persistent_bytes), reserved);
  mculab_memory_report("model", blob.model_len, blob.model_len);
  return MCULAB_ERR_NONE;
}

static void reload(void* user) {
  tflite_runner* r = (tflite_runner*)user;
  if (r->input != NULL) {
    (void)mculab_tfl_set_input(r->model, r->input, r->input_len); /* checked in prepare() */
  } else {
    mculab_tfl_seed_input(r->model, r->seed);
  }
}

static const mculab_tfl_hooks kOpRegions = {mculab_op_begin, mculab_op_end};

static void invoke(void* user) {
  tflite_runner* r = (tflite_runner*)user;
  const mculab_tfl_status st = mculab_tfl_invoke(r->model, &kOpRegions);
  if (st != MCULAB_TFL_OK) r->last = st;
}

static uint32_t checksum(void* user) {
  tflite_runner* r = (tflite_runner*)user;
  /* A failed inference digests to 0, which no output is promised to have. */
  if (r->model == NULL || r->last != MCULAB_TFL_OK) return 0;
  return mculab_tfl_output_crc32(r->model);
}

static const mculab_workload_ops kTflite = {.name = "tflite",
                                            .prepare = prepare,
                                            .invoke = invoke,
                                            .checksum = checksum,
                                            .user = &the_runner,
                                            .reload = reload};

/* HELLO's runtime names the kernel set that runs ("tflite-helium", "tflite-dsp", or "tflite" on
 * the reference kernels), as the generic runner's "builtin-helium" does. */
int main(int argc, char** argv) {
  mculab_runner_names_kernel_set();
  return mculab_runner_main(argc, argv, &kTflite);
}
