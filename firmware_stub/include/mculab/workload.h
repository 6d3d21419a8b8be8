/* Operator-benchmark workload: the bytes a board backend places at the runner's workload address
 * (QEMU loader device, pyOCD memory write, a file for the host runner).
 *
 * Layout (little-endian):
 *   header (24 bytes)
 *     0  u32 magic        MCULAB_WORKLOAD_MAGIC ("MCLW")
 *     4  u16 version      MCULAB_WORKLOAD_VERSION
 *     6  u16 header_len   24
 *     8  u32 total_len    header + body
 *     12 u32 body_crc32   mculab_crc32() of the body
 *     16 u32 seed         seeds the deterministic tensor generator
 *     20 u32 flags        MCULAB_WORKLOAD_*: 0 runs the runner's defaults
 *   body
 *     0  u16 op           mculab_op_id
 *     2  u16 num_params   the op's parameter count (mculab_op_param_count)
 *     4  u16 num_cases
 *     6  u16 reserved
 *     8  per case: i64 case_id, then num_params x i32 parameters in the op's order
 *   A custom workload (op MCULAB_OP_CUSTOM, for a runner with its own runtime) has num_params 0,
 *   so its case records are the case ids alone; the blob (a model, inputs: the runtime's business)
 *   follows at the next multiple of 16 bytes from the workload's start
 *   (mculab_workload_custom_blob_offset()), zero padded, up to total_len. The body CRC covers all.
 *
 * Thread-safety: pure functions over caller-owned buffers. */
#ifndef MCULAB_WORKLOAD_H_
#define MCULAB_WORKLOAD_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCULAB_WORKLOAD_MAGIC 0x574C434Du /* "MCLW" */
#define MCULAB_WORKLOAD_VERSION 1u
#define MCULAB_WORKLOAD_HEADER_LEN 24u
#define MCULAB_WORKLOAD_BODY_FIXED_LEN 8u
#define MCULAB_MAX_CASES 1024u
#define MCULAB_WORKLOAD_BLOB_ALIGN 16u
/* Header flags. REFERENCE_KERNELS: run the portable reference kernels instead of the build's
 * fastest set (mculab/kernels_s8.h), to compare the two (`--kernels reference`). */
#define MCULAB_WORKLOAD_REFERENCE_KERNELS 0x01u

typedef enum {
  MCULAB_WORKLOAD_OK = 0,
  MCULAB_WORKLOAD_TOO_SHORT = 1,
  MCULAB_WORKLOAD_BAD_MAGIC = 2,
  MCULAB_WORKLOAD_BAD_VERSION = 3,
  MCULAB_WORKLOAD_BAD_LENGTH = 4, /* total_len larger than the region, or inconsistent */
  MCULAB_WORKLOAD_BAD_CRC = 5,
  MCULAB_WORKLOAD_UNKNOWN_OP = 6,
  MCULAB_WORKLOAD_BAD_PARAMS = 7, /* num_params differs from the op's */
} mculab_workload_status;

typedef struct {
  uint16_t op;
  uint16_t num_params;
  uint16_t num_cases;
  uint32_t seed;
  uint32_t flags;       /* MCULAB_WORKLOAD_* */
  const uint8_t* cases; /* num_cases records of 8 + 4 * num_params bytes */
  const uint8_t* blob; /* MCULAB_OP_CUSTOM: the blob (16-byte aligned in the workload), else NULL */
  size_t blob_len;
} mculab_workload;

/* Validates the workload at `data` (at most `region_len` bytes readable) and fills `out`. */
mculab_workload_status mculab_workload_parse(const uint8_t* data, size_t region_len,
                                             mculab_workload* out);

/* Reads case `i` (< num_cases): its id and its parameters (num_params of them). */
void mculab_workload_case(const mculab_workload* w, uint16_t i, int64_t* case_id, int32_t* params);

const char* mculab_workload_status_name(mculab_workload_status s);

/* Where a custom workload's blob starts, from the workload's first byte. */
size_t mculab_workload_custom_blob_offset(uint16_t num_cases);

/* Writes a custom workload (op MCULAB_OP_CUSTOM: case ids + blob) into out; returns its length,
 * or 0 when more than MCULAB_MAX_CASES cases or out_cap is too small. */
size_t mculab_workload_write_custom(uint8_t* out, size_t out_cap, uint32_t seed,
                                    const int64_t* case_ids, uint16_t num_cases,
                                    const uint8_t* blob, size_t blob_len);

#ifdef __cplusplus
}
#endif
#endif /* MCULAB_WORKLOAD_H_ */
