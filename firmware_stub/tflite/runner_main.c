/* The TFLite runner: the runner library around the int8 interpreter (mculab/tflite.h). The
 * workload is a custom one whose blob is a .tflite model; each case loads and prepares it (not
 * measured), fills the input from the workload's seed, and each measured iteration is one
 * inference with every operator an op region (index, TFLite operator type, output tensor name).
 * CASE_END's checksum is the CRC-32 of the output tensor. MEMORY reports the plan: "arena"
 * (planned activations), "persistent", "scratch" and "model". */
#include <stddef.h>
#include <stdint.h>

#include "mculab/runner.h"
#include "mculab/runner_protocol.h"
#include "mculab/tflite.h"

typedef struct {
  mculab_tfl_model model;
  mculab_tfl_status last;
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
  mculab_tfl_status st = mculab_tfl_load(&r->model, info->blob, info->blob_len);
  if (st == MCULAB_TFL_OK) st = mculab_tfl_prepare(&r->model, info->arena, info->arena_bytes);
  if (st != MCULAB_TFL_OK) {
    set_error(info, "tflite: ", r->model.error);
    return st == MCULAB_TFL_NO_MEMORY ? MCULAB_ERR_NO_MEMORY : MCULAB_ERR_BAD_WORKLOAD;
  }
  mculab_tfl_seed_input(&r->model, info->seed);
  r->last = MCULAB_TFL_OK;
  const uint32_t reserved =
      (uint32_t)(info->arena_bytes > UINT32_MAX ? UINT32_MAX : info->arena_bytes);
  mculab_memory_report("arena", r->model.plan.arena_bytes, reserved);
  mculab_memory_report("persistent", r->model.plan.persistent_bytes, reserved);
  mculab_memory_report("scratch", r->model.plan.scratch_bytes, reserved);
  mculab_memory_report("model", (uint32_t)info->blob_len, (uint32_t)info->blob_len);
  return MCULAB_ERR_NONE;
}

static const mculab_tfl_hooks kOpRegions = {mculab_op_begin, mculab_op_end};

static void invoke(void* user) {
  tflite_runner* r = (tflite_runner*)user;
  const mculab_tfl_status st = mculab_tfl_invoke(&r->model, &kOpRegions);
  if (st != MCULAB_TFL_OK) r->last = st;
}

static uint32_t checksum(void* user) {
  tflite_runner* r = (tflite_runner*)user;
  uint32_t bytes = 0;
  const int8_t* out = mculab_tfl_output(&r->model, &bytes);
  /* A failed inference digests to 0, which no output is promised to have. */
  if (out == NULL || r->last != MCULAB_TFL_OK) return 0;
  return mculab_crc32(0, (const uint8_t*)out, bytes);
}

static const mculab_workload_ops kTflite = {"mculab-tflite", prepare, invoke, checksum,
                                            &the_runner};

int main(int argc, char** argv) { return mculab_runner_main(argc, argv, &kTflite); }
