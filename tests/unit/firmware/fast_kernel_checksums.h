// Shared by the an547 and an500 QEMU tests: the generic runner's default kernel set (Helium,
// DSP) against the host's reference kernels on conv 1x1 in place and through im2col, depthwise
// (3x3, a depth multiplier with dilation, 5x5) and fully connected; and the same workloads with
// the REFERENCE_KERNELS flag, which HELLO must name.
#ifndef MCULAB_TESTS_UNIT_FIRMWARE_FAST_KERNEL_CHECKSUMS_H_
#define MCULAB_TESTS_UNIT_FIRMWARE_FAST_KERNEL_CHECKSUMS_H_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/reference.h"
#include "common/runner_messages.h"
#include "common/workload_builder.h"
#include "mculab/ops.h"
#include "mculab/runner_protocol.h"
#include "mculab/workload.h"
#include "runner_link.h"

namespace mculab::test_support {

// start: boots the board on a workload and returns the link once HELLO is next (the caller's
// port may send a LOG after it: skip_log).
inline void ExpectFastKernelChecksums(
    const std::function<std::unique_ptr<RunnerLink>(const Bytes&)>& start,
    const std::string& fast_set, bool skip_log, std::uint32_t seed) {
  struct OpCases {
    std::uint16_t op;
    std::vector<WorkloadCase> cases;
  };
  const std::vector<OpCases> ops = {
      {MCULAB_OP_CONV2D_S8,
       {{0, {1, 64, 25, 5, 64, 1, 1, 0, 0, 1, 1}},
        {1, {2, 8, 12, 11, 16, 3, 3, 1, 1, 2, 2}},
        {2, {1, 1, 49, 10, 64, 10, 4, 5, 1, 2, 2}},
        {3, {1, 17, 6, 7, 9, 1, 1, 0, 0, 2, 1}}}},
      {MCULAB_OP_DEPTHWISE_CONV2D_S8,
       {{0, {1, 64, 25, 5, 1, 3, 3, 1, 1, 1, 1, 1, 1}},
        {1, {2, 7, 9, 8, 3, 3, 2, 1, 0, 2, 1, 2, 1}},
        {2, {1, 20, 10, 10, 1, 5, 5, 2, 2, 1, 1, 1, 1}}}},
      {MCULAB_OP_FULLY_CONNECTED_S8, {{0, {1, 256, 128}}, {1, {3, 37, 10}}}},
  };
  for (const bool reference : {false, true}) {
    for (const auto& o : ops) {
      auto wl = BuildWorkload(o.op, o.cases, seed);
      ASSERT_TRUE(wl.ok());
      if (reference) mculab_put_u32(wl->data() + 20, MCULAB_WORKLOAD_REFERENCE_KERNELS);
      auto link = start(*wl);
      auto hello = DecodeHello(link->Expect(MCULAB_MSG_HELLO));
      ASSERT_TRUE(hello.ok());
      EXPECT_EQ(hello->runtime, reference ? "builtin" : "builtin-" + fast_set);
      if (skip_log) link->Expect(MCULAB_MSG_LOG);
      link->Send(ToWire(Configure{1, 0, static_cast<std::uint32_t>(wl->size()), 0}));
      link->Send(ToWire(RunMsg{}));
      for (const auto& c : o.cases) {
        link->Expect(MCULAB_MSG_CASE_START);
        link->Expect(MCULAB_MSG_SAMPLE);
        auto end = DecodeCaseEnd(link->Expect(MCULAB_MSG_CASE_END));
        ASSERT_TRUE(end.ok());
        EXPECT_EQ(end->checksum, *ReferenceChecksum(o.op, c.params, seed))
            << "op " << o.op << " case " << c.id << (reference ? " (reference)" : "");
      }
      EXPECT_EQ(DecodeDone(link->Expect(MCULAB_MSG_DONE))->status, 0);
      EXPECT_TRUE(link->StopParked());
    }
  }
}

}  // namespace mculab::test_support
#endif  // MCULAB_TESTS_UNIT_FIRMWARE_FAST_KERNEL_CHECKSUMS_H_
