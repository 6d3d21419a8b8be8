/* An example runner built around "your own runtime": here a two-operator model, conv2d followed
 * by a fully connected layer over its output, computed with mculab's built-in int8 kernels. A
 * TFLite Micro or ExecuTorch runner has the same shape: prepare() loads the model from the blob
 * and allocates tensors, invoke() runs one inference with mculab_op_begin/end around each
 * operator, checksum() digests the output (docs/writing-a-runner.md).
 *
 * The blob (the "model", little-endian):
 *   0  u32 magic   EXAMPLE_MODEL_MAGIC ("MCXM")
 *   4  u32 version 1
 *   8  i32 conv2d parameters x 11 (N, C, H, W, K, kh, kw, pad_h, pad_w, stride_h, stride_w)
 *   52 i32 fully connected output features
 * The tensors' contents come from the workload's seed, as for the built-in benchmarks. */
#include <stddef.h>
#include <stdint.h>

#include "mculab/ops.h"
#include "mculab/runner.h"

#define EXAMPLE_MODEL_MAGIC 0x4D58434Du
#define EXAMPLE_MODEL_LEN 56u

typedef struct {
  mculab_case conv;
  mculab_case fc;
} model;

static model the_model;

static uint32_t get_u32(const uint8_t* p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void set_error(const mculab_case_info* info, const char* s) {
  size_t i = 0;
  for (; s[i] != 0 && i + 1 < info->error_text_len; ++i) info->error_text[i] = s[i];
  info->error_text[i] = 0;
}

static uint16_t prepare(void* user, const mculab_case_info* info) {
  model* m = (model*)user;
  if (info->blob_len < EXAMPLE_MODEL_LEN || get_u32(info->blob) != EXAMPLE_MODEL_MAGIC ||
      get_u32(info->blob + 4) != 1u) {
    set_error(info, "the blob is not an example model (magic MCXM, version 1, 56 bytes)");
    return MCULAB_ERR_BAD_WORKLOAD;
  }
  int32_t conv_params[MCULAB_CONV_NUM_PARAMS];
  for (unsigned i = 0; i < MCULAB_CONV_NUM_PARAMS; ++i) {
    conv_params[i] = (int32_t)get_u32(info->blob + 8 + 4 * i);
  }
  mculab_case_status st = mculab_case_prepare(MCULAB_OP_CONV2D_S8, conv_params, info->seed,
                                              info->arena, info->arena_bytes, &m->conv);
  if (st != MCULAB_CASE_OK) {
    set_error(info, st == MCULAB_CASE_NO_MEMORY ? "conv2d: tensors do not fit the arena"
                                                : "conv2d: bad parameters");
    return st == MCULAB_CASE_NO_MEMORY ? MCULAB_ERR_NO_MEMORY : MCULAB_ERR_BAD_PARAMS;
  }
  /* The fully connected layer reads the conv output, flattened per batch. */
  const int32_t batches = conv_params[MCULAB_CONV_N];
  const int32_t fc_params[MCULAB_FC_NUM_PARAMS] = {
      batches, (int32_t)(m->conv.output_len / (uint32_t)batches),
      (int32_t)get_u32(info->blob + 52)};
  st = mculab_case_prepare(MCULAB_OP_FULLY_CONNECTED_S8, fc_params, info->seed,
                           info->arena + m->conv.arena_used, info->arena_bytes - m->conv.arena_used,
                           &m->fc);
  if (st != MCULAB_CASE_OK) {
    set_error(info, st == MCULAB_CASE_NO_MEMORY ? "fully_connected: tensors do not fit the arena"
                                                : "fully_connected: bad parameters");
    return st == MCULAB_CASE_NO_MEMORY ? MCULAB_ERR_NO_MEMORY : MCULAB_ERR_BAD_PARAMS;
  }
  m->fc.input = m->conv.output;
  mculab_memory_report("arena", (uint32_t)(m->conv.arena_used + m->fc.arena_used),
                       (uint32_t)info->arena_bytes);
  mculab_memory_report("model", (uint32_t)EXAMPLE_MODEL_LEN, (uint32_t)info->blob_len);
  return MCULAB_ERR_NONE;
}

static void invoke(void* user) {
  model* m = (model*)user;
  mculab_op_begin(0, "CONV_2D", "conv1");
  mculab_case_invoke(&m->conv);
  mculab_op_end();
  mculab_op_begin(1, "FULLY_CONNECTED", "fc1");
  mculab_case_invoke(&m->fc);
  mculab_op_end();
}

static uint32_t checksum(void* user) { return mculab_case_checksum(&((model*)user)->fc); }

static const mculab_workload_ops kExample = {.name = "example",
                                             .prepare = prepare,
                                             .invoke = invoke,
                                             .checksum = checksum,
                                             .user = &the_model};

int main(int argc, char** argv) { return mculab_runner_main(argc, argv, &kExample); }
