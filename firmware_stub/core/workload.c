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
  out->op = op;
  out->num_params = num_params;
  out->num_cases = num_cases;
  out->seed = mculab_get_u32(data + 16);
  out->cases = body + MCULAB_WORKLOAD_BODY_FIXED_LEN;
  return MCULAB_WORKLOAD_OK;
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
