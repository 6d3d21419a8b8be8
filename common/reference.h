// The agent's check on a board's result: runs the same C kernel as the runner (mculab_kernels)
// on the host, over the same deterministic tensors, and returns the CRC-32 of the output that
// CASE_END must report. Allocates the case's arena on the heap.
//
// Thread-safety: pure function (safe to call from several threads).
#pragma once

#include <cstdint>
#include <span>

#include "common/result.h"

namespace mculab {

// The checksum the runner reports for one case (op id from ops.h, params in the op's order,
// the workload's seed). kInvalidArgument for an unknown op, a wrong parameter count or parameters
// the kernel rejects; kResourceExhausted when the tensors would need more than 1 GiB.
Result<std::uint32_t> ReferenceChecksum(std::uint16_t op, std::span<const std::int32_t> params,
                                        std::uint32_t seed);

}  // namespace mculab
