#include "common/reference.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "mculab/ops.h"

namespace mculab {

Result<std::uint32_t> ReferenceChecksum(std::uint16_t op, std::span<const std::int32_t> params,
                                        std::uint32_t seed) {
  const std::uint16_t count = mculab_op_param_count(op);
  if (count == 0) return MakeError(ErrorCode::kInvalidArgument, "unknown op " + std::to_string(op));
  if (params.size() != count) {
    return MakeError(ErrorCode::kInvalidArgument, "op " + std::to_string(op) + " takes " +
                                                      std::to_string(count) + " parameters, got " +
                                                      std::to_string(params.size()));
  }
  std::array<std::int32_t, MCULAB_MAX_PARAMS> p{};
  std::copy(params.begin(), params.end(), p.begin());
  const std::size_t need = mculab_case_arena_bytes(op, p.data());
  if (need == 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the kernel rejects these parameters: " +
                         std::string(mculab_case_status_name(MCULAB_CASE_BAD_PARAMS)));
  }
  constexpr std::size_t kMaxArena = std::size_t{1} << 30;
  if (need > kMaxArena) {
    return MakeError(ErrorCode::kResourceExhausted,
                     "the case needs " + std::to_string(need) + " bytes of tensors, over 1 GiB");
  }
  std::vector<std::uint8_t> arena(need);
  mculab_case c;
  const mculab_case_status st =
      mculab_case_prepare(op, p.data(), seed, arena.data(), arena.size(), &c);
  if (st != MCULAB_CASE_OK) {
    return MakeError(
        st == MCULAB_CASE_NO_MEMORY ? ErrorCode::kInternal : ErrorCode::kInvalidArgument,
        std::string("preparing the case: ") + mculab_case_status_name(st));
  }
  mculab_case_invoke(&c);
  return mculab_case_checksum(&c);
}

}  // namespace mculab
