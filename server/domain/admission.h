// Admission control's memory check: how much RAM a case of a built-in op needs for its
// tensors (input, weights, bias, output; int8, int32 bias), so that a submit whose largest case
// cannot fit any board of its kind is rejected with the numbers. An estimate from the op's
// parameters (the runner also needs its stack and code): a lower bound. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace mculab::server {

// 0 for an op it does not know (no check is made then). Parameters in the op's catalog order.
// The arithmetic is checked: a size that does not fit 64 bits is UINT64_MAX.
std::uint64_t WorkloadTensorBytes(std::string_view op, const std::vector<std::int32_t>& params);

}  // namespace mculab::server
