/* Workload parser: see workload.h for the layout. */
#include "mculab/workload.h"

#include "mculab/ops.h"
#include "mculab/runner_protocol.h"

mculab_workload_status mculab_workload_parse(const uint8_t* data, size_t region_len,
                                             mculab_workload* out) {
  if (data == NULL || region_len < MCULAB_WORKLOAD_HEADER_LEN) return MCULAB_WORKLOAD_TOO_SHORT;
  if (mculab_get_u32(data) != MCULAB_WORKLOAD_MAGIC) return MCULAB_WORKLOAD_BAD_MAGIC;
  if (mculab_get_u16(data + 4) != MCULAB_WORKLOAD_VERSION) return MCULAB_WORKLOAD_BAD_VERSION;
  if (mculab_get_u16(data + 6) != MCULAB_WORKLOAD_HEADER_LEN) return MCULAB_WORKLOAD_BAD_LENGTH;
  const uint32_t total_len = mculab_get_u32(data + 8);
  if (total_len > region_len) return MCULAB_WORKLOAD_BAD_LENGTH;
  if (total_len < MCULAB_WORKLOAD_HEADER_LEN + MCULAB_WORKLOAD_BODY_FIXED_LEN) {
    return MCULAB_WORKLOAD_BAD_LENGTH;
  }
  const uint8_t* body = data + MCULAB_WORKLOAD_HEADER_LEN;
  const size_t body_len = total_len - MCULAB_WORKLOAD_HEADER_LEN;
  if (mculab_crc32(0, body, body_len) != mculab_get_u32(data + 12)) return MCULAB_WORKLOAD_BAD_CRC;

  const uint16_t op = mculab_get_u16(body);
  const uint16_t num_params = mculab_get_u16(body + 2);
  const uint16_t num_cases = mculab_get_u16(body + 4);
  if (op == MCULAB_OP_CUSTOM) {
    /* case ids, then the blob at the next 16-byte boundary of the workload */
    if (num_params != 0) return MCULAB_WORKLOAD_BAD_PARAMS;
    if (num_cases > MCULAB_MAX_CASES) return MCULAB_WORKLOAD_BAD_LENGTH;
    const size_t blob_at = mculab_workload_custom_blob_offset(num_cases);
    if (total_len < blob_at) return MCULAB_WORKLOAD_BAD_LENGTH;
    out->blob = data + blob_at;
    out->blob_len = total_len - blob_at;
  } else {
    const uint16_t expected_params = mculab_op_param_count(op);
    if (expected_params == 0) return MCULAB_WORKLOAD_UNKNOWN_OP;
    if (num_params != expected_params || num_params > MCULAB_MAX_PARAMS) {
      return MCULAB_WORKLOAD_BAD_PARAMS;
    }
    if (num_cases > MCULAB_MAX_CASES) return MCULAB_WORKLOAD_BAD_LENGTH;
    const size_t record = 8u + 4u * (size_t)num_params;
    if (body_len != MCULAB_WORKLOAD_BODY_FIXED_LEN + record * num_cases) {
      return MCULAB_WORKLOAD_BAD_LENGTH;
    }
    out->blob = NULL;
    out->blob_len = 0;
  }
  out->op = op;
  out->num_params = num_params;
  out->num_cases = num_cases;
  out->seed = mculab_get_u32(data + 16);
  out->flags = mculab_get_u32(data + 20);
  out->cases = body + MCULAB_WORKLOAD_BODY_FIXED_LEN;
  return MCULAB_WORKLOAD_OK;
}

size_t mculab_workload_custom_blob_offset(uint16_t num_cases) {
  const size_t ids_end =
      MCULAB_WORKLOAD_HEADER_LEN + MCULAB_WORKLOAD_BODY_FIXED_LEN + 8u * (size_t)num_cases;
  return (ids_end + MCULAB_WORKLOAD_BLOB_ALIGN - 1u) & ~(size_t)(MCULAB_WORKLOAD_BLOB_ALIGN - 1u);
}

size_t mculab_workload_write_custom(uint8_t* out, size_t out_cap, uint32_t seed,
                                    const int64_t* case_ids, uint16_t num_cases,
                                    const uint8_t* blob, size_t blob_len) {
  if (num_cases > MCULAB_MAX_CASES) return 0;
  const size_t blob_at = mculab_workload_custom_blob_offset(num_cases);
  if (blob_len > UINT32_MAX - blob_at) return 0;
  const size_t total = blob_at + blob_len;
  if (out == NULL || total > out_cap) return 0;
  for (size_t i = 0; i < blob_at; ++i) out[i] = 0;
  uint8_t* body = out + MCULAB_WORKLOAD_HEADER_LEN;
  mculab_put_u16(body, MCULAB_OP_CUSTOM);
  mculab_put_u16(body + 2, 0);
  mculab_put_u16(body + 4, num_cases);
  for (uint16_t i = 0; i < num_cases; ++i) {
    mculab_put_u64(body + MCULAB_WORKLOAD_BODY_FIXED_LEN + 8u * i, (uint64_t)case_ids[i]);
  }
  for (size_t i = 0; i < blob_len; ++i) out[blob_at + i] = blob[i];
  mculab_put_u32(out, MCULAB_WORKLOAD_MAGIC);
  mculab_put_u16(out + 4, MCULAB_WORKLOAD_VERSION);
  mculab_put_u16(out + 6, MCULAB_WORKLOAD_HEADER_LEN);
  mculab_put_u32(out + 8, (uint32_t)total);
  mculab_put_u32(out + 12, mculab_crc32(0, body, total - MCULAB_WORKLOAD_HEADER_LEN));
  mculab_put_u32(out + 16, seed);
  return total;
}

void mculab_workload_case(const mculab_workload* w, uint16_t i, int64_t* case_id, int32_t* params) {
  const uint8_t* rec = w->cases + (size_t)i * (8u + 4u * (size_t)w->num_params);
  *case_id = (int64_t)mculab_get_u64(rec);
  for (uint16_t k = 0; k < w->num_params; ++k) params[k] = (int32_t)mculab_get_u32(rec + 8 + 4 * k);
}

const char* mculab_workload_status_name(mculab_workload_status s) {
  switch (s) {
    case MCULAB_WORKLOAD_OK:
      return "ok";
    case MCULAB_WORKLOAD_TOO_SHORT:
      return "workload shorter than its header";
    case MCULAB_WORKLOAD_BAD_MAGIC:
      return "bad workload magic";
    case MCULAB_WORKLOAD_BAD_VERSION:
      return "unsupported workload version";
    case MCULAB_WORKLOAD_BAD_LENGTH:
      return "bad workload length";
    case MCULAB_WORKLOAD_BAD_CRC:
      return "bad workload CRC";
    case MCULAB_WORKLOAD_UNKNOWN_OP:
      return "unknown op in workload";
    case MCULAB_WORKLOAD_BAD_PARAMS:
      return "workload parameter count does not match the op";
  }
  return "unknown workload status";
}
