#include "common/workload_builder.h"

#include <string>

#include "mculab/ops.h"
#include "mculab/runner_protocol.h"
#include "mculab/workload.h"

namespace mculab {

Result<std::vector<std::uint8_t>> BuildWorkload(std::uint16_t op,
                                                const std::vector<WorkloadCase>& cases,
                                                std::uint32_t seed) {
  if (cases.size() > MCULAB_MAX_CASES) {
    return MakeError(ErrorCode::kResourceExhausted,
                     "a workload holds at most " + std::to_string(MCULAB_MAX_CASES) +
                         " cases, got " + std::to_string(cases.size()));
  }
  const std::size_t num_params = cases.empty() ? mculab_op_param_count(op) : cases[0].params.size();
  if (num_params > MCULAB_MAX_PARAMS) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "a case has at most " + std::to_string(MCULAB_MAX_PARAMS) +
                         " parameters, got " + std::to_string(num_params));
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].params.size() != num_params) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "case " + std::to_string(cases[i].id) + " has " +
                           std::to_string(cases[i].params.size()) + " parameters, case " +
                           std::to_string(cases[0].id) + " has " + std::to_string(num_params));
    }
  }
  const std::size_t record = 8 + 4 * num_params;
  const std::size_t body_len = MCULAB_WORKLOAD_BODY_FIXED_LEN + record * cases.size();
  std::vector<std::uint8_t> out(MCULAB_WORKLOAD_HEADER_LEN + body_len, 0);
  std::uint8_t* body = out.data() + MCULAB_WORKLOAD_HEADER_LEN;
  mculab_put_u16(body, op);
  mculab_put_u16(body + 2, static_cast<std::uint16_t>(num_params));
  mculab_put_u16(body + 4, static_cast<std::uint16_t>(cases.size()));
  std::uint8_t* rec = body + MCULAB_WORKLOAD_BODY_FIXED_LEN;
  for (const auto& c : cases) {
    mculab_put_u64(rec, static_cast<std::uint64_t>(c.id));
    for (std::size_t k = 0; k < num_params; ++k) {
      mculab_put_u32(rec + 8 + 4 * k, static_cast<std::uint32_t>(c.params[k]));
    }
    rec += record;
  }
  std::uint8_t* h = out.data();
  mculab_put_u32(h, MCULAB_WORKLOAD_MAGIC);
  mculab_put_u16(h + 4, MCULAB_WORKLOAD_VERSION);
  mculab_put_u16(h + 6, MCULAB_WORKLOAD_HEADER_LEN);
  mculab_put_u32(h + 8, static_cast<std::uint32_t>(out.size()));
  mculab_put_u32(h + 12, mculab_crc32(0, body, body_len));
  mculab_put_u32(h + 16, seed);
  return out;
}

void SetWorkloadFlags(std::vector<std::uint8_t>& workload, std::uint32_t flags) {
  if (workload.size() < MCULAB_WORKLOAD_HEADER_LEN) return;
  mculab_put_u32(workload.data() + 20, flags);
}

}  // namespace mculab
