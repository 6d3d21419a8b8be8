// Serializes an operator-benchmark workload (firmware_stub/include/mculab/workload.h): the bytes a
// board backend places at the runner's workload address (QEMU loader, pyOCD write, host file).
//
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"

namespace mculab {

struct WorkloadCase {
  std::int64_t id = 0;               // the CSV's case id, echoed in CASE_START
  std::vector<std::int32_t> params;  // in the op's order (common/op_catalog.h)
};

// A pure serializer: it checks the layout's limits (every case has the same number of parameters,
// at most MCULAB_MAX_PARAMS of them, at most MCULAB_MAX_CASES cases) but not the op or the
// parameter values, which the caller validates with op_catalog (so tests can build workloads the
// runner must reject). num_params is the cases' count (0 with no cases: then the op's count).
Result<std::vector<std::uint8_t>> BuildWorkload(std::uint16_t op,
                                                const std::vector<WorkloadCase>& cases,
                                                std::uint32_t seed);

// Sets the header's flags (MCULAB_WORKLOAD_REFERENCE_KERNELS, ...) of a workload BuildWorkload or
// mculab_workload_write_custom wrote; outside the body's CRC. A workload shorter than its header
// is left alone (the runner reports it TOO_SHORT either way).
void SetWorkloadFlags(std::vector<std::uint8_t>& workload, std::uint32_t flags);

}  // namespace mculab
