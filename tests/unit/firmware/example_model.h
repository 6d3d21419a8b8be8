// The example runner's model (examples/custom_runner/main.c) from the test's side: its blob, the
// custom workload that carries it, and the checksum its output must have (the same kernels on the
// host: conv2d, then fully connected over the conv output).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "common/runner_messages.h"
#include "mculab/ops.h"
#include "mculab/workload.h"

namespace mculab::test_support {

struct ExampleModel {
  std::vector<std::int32_t> conv;  // the 11 conv2d parameters
  std::int32_t fc_out = 10;
};

inline Bytes ExampleBlob(const ExampleModel& m) {
  Bytes b(56);
  mculab_put_u32(&b[0], 0x4D58434Du);  // "MCXM"
  mculab_put_u32(&b[4], 1);
  for (std::size_t i = 0; i < 11; ++i)
    mculab_put_u32(&b[8 + 4 * i], static_cast<std::uint32_t>(m.conv[i]));
  mculab_put_u32(&b[52], static_cast<std::uint32_t>(m.fc_out));
  return b;
}

inline Bytes ExampleWorkload(const std::vector<std::int64_t>& case_ids, const Bytes& blob,
                             std::uint32_t seed) {
  Bytes out(4096 + blob.size());
  const std::size_t n = mculab_workload_write_custom(out.data(), out.size(), seed, case_ids.data(),
                                                     static_cast<std::uint16_t>(case_ids.size()),
                                                     blob.data(), blob.size());
  EXPECT_GT(n, 0u);
  out.resize(n);
  return out;
}

struct ExampleReference {
  std::uint32_t checksum = 0;
  std::size_t arena_used = 0;  // both layers' tensors
};

inline ExampleReference ComputeExample(const ExampleModel& m, std::uint32_t seed) {
  std::vector<std::uint8_t> arena(8 << 20);
  mculab_case conv, fc;
  EXPECT_EQ(mculab_case_prepare(MCULAB_OP_CONV2D_S8, m.conv.data(), seed, arena.data(),
                                arena.size(), &conv),
            MCULAB_CASE_OK);
  const std::int32_t batches = m.conv[MCULAB_CONV_N];
  const std::int32_t fc_params[3] = {
      batches, static_cast<std::int32_t>(conv.output_len / static_cast<std::uint32_t>(batches)),
      m.fc_out};
  EXPECT_EQ(
      mculab_case_prepare(MCULAB_OP_FULLY_CONNECTED_S8, fc_params, seed,
                          arena.data() + conv.arena_used, arena.size() - conv.arena_used, &fc),
      MCULAB_CASE_OK);
  fc.input = conv.output;
  mculab_case_invoke(&conv);
  mculab_case_invoke(&fc);
  return {mculab_case_checksum(&fc), conv.arena_used + fc.arena_used};
}

}  // namespace mculab::test_support
