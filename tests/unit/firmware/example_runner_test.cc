// The example runner (examples/custom_runner: conv2d then fully connected, through the runner
// library's API for your own runtime) as the agent runs it: the host build through pipes here,
// the an547 build under QEMU in example_runner_qemu_test.cc. Per-op samples and memory reports
// arrive with values that add up.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/runner_messages.h"
#include "example_model.h"
#include "runner_link.h"

namespace mculab {
namespace {

using test_support::ExampleModel;
using test_support::RunnerLink;

constexpr std::uint32_t kSeed = 77;
const ExampleModel kModel{{1, 8, 12, 12, 8, 3, 3, 1, 1, 1, 1}, 10};

struct CaseFrames {
  std::vector<SampleMsg> samples;
  std::vector<OpSample> ops;
  std::vector<MemoryReport> memory;
  CaseEnd end;
};

struct Session {
  Hello hello;
  std::map<std::uint16_t, CaseFrames> cases;
  Done done;
  int exit_status = -1;
};

Session RunExample(std::unique_ptr<RunnerLink> link, std::uint32_t iterations,
                   std::uint32_t flags) {
  Session s;
  auto hello = DecodeHello(link->Expect(MCULAB_MSG_HELLO));
  EXPECT_TRUE(hello.ok());
  if (hello.ok()) s.hello = *hello;
  link->Send(ToWire(Configure{iterations, 1, 0, 0, flags}));
  link->Send(ToWire(RunMsg{}));
  for (;;) {
    auto ev = link->Next();
    if (!ev) break;
    EXPECT_TRUE(ev->ok()) << ev->Describe();
    switch (ev->type) {
      case MCULAB_MSG_SAMPLE: {
        auto m = *DecodeSample(ev->payload);
        s.cases[m.case_index].samples.push_back(m);
        break;
      }
      case MCULAB_MSG_OP_SAMPLE: {
        auto m = DecodeOpSample(ev->payload);
        EXPECT_TRUE(m.ok()) << m.error().message;
        if (m.ok()) s.cases[m->case_index].ops.push_back(*m);
        break;
      }
      case MCULAB_MSG_MEMORY: {
        auto m = DecodeMemory(ev->payload);
        EXPECT_TRUE(m.ok()) << m.error().message;
        if (m.ok()) s.cases[m->case_index].memory.push_back(*m);
        break;
      }
      case MCULAB_MSG_CASE_END: {
        auto m = *DecodeCaseEnd(ev->payload);
        s.cases[m.case_index].end = m;
        break;
      }
      case MCULAB_MSG_ERROR:
        ADD_FAILURE() << DecodeError(ev->payload)->text;
        break;
      case MCULAB_MSG_DONE:
        s.done = *DecodeDone(ev->payload);
        s.exit_status = link->Wait();
        return s;
    }
  }
  return s;
}

std::string WorkloadFile(const std::string& name, const std::vector<std::int64_t>& ids) {
  return test_support::WriteFile(
      name, test_support::ExampleWorkload(ids, test_support::ExampleBlob(kModel), kSeed));
}

TEST(ExampleRunnerHost, ReportsPerOpSamplesAndMemoryThatAddUp) {
  const auto ref = test_support::ComputeExample(kModel, kSeed);
  Session s = RunExample(
      RunnerLink::SpawnHost(MCULAB_EXAMPLE_RUNNER_HOST, WorkloadFile("example.bin", {5, 6})), 4,
      MCULAB_CONFIGURE_OP_PROFILE | MCULAB_CONFIGURE_MEMORY);
  EXPECT_EQ(s.exit_status, 0);
  EXPECT_EQ(s.done.cases_run, 2);
  EXPECT_EQ(s.done.status, 0);
  EXPECT_EQ(s.hello.runtime, "example");
  EXPECT_TRUE(s.hello.custom_workload);
  ASSERT_EQ(s.cases.size(), 2u);
  for (auto& [index, c] : s.cases) {
    EXPECT_EQ(c.end.checksum, ref.checksum) << "case " << index;
    ASSERT_EQ(c.samples.size(), 4u);
    ASSERT_EQ(c.ops.size(), 2u) << "case " << index;
    EXPECT_EQ(c.ops[0].op_index, 0);
    EXPECT_EQ(c.ops[0].type, "CONV_2D");
    EXPECT_EQ(c.ops[0].name, "conv1");
    EXPECT_EQ(c.ops[1].type, "FULLY_CONNECTED");
    EXPECT_EQ(c.ops[1].name, "fc1");
    std::uint64_t total = 0;
    for (const auto& smp : c.samples) total += smp.timer;
    std::uint64_t in_ops = 0;
    for (const auto& op : c.ops) {
      EXPECT_EQ(op.count, 4u);
      EXPECT_FALSE(op.unclosed);
      EXPECT_GT(op.timer.min, 0u);
      EXPECT_LE(op.timer.min, op.timer.max);
      EXPECT_LE(op.timer.max * 1, op.timer.sum);
      in_ops += op.timer.sum;
    }
    EXPECT_LE(in_ops, total) << "the ops are inside the measured iterations";
    ASSERT_EQ(c.memory.size(), 1u);
    std::map<std::string, MemoryEntry> mem;
    for (const auto& e : c.memory[0].entries) mem[e.category] = e;
    EXPECT_EQ(mem["arena"].used, ref.arena_used);
    EXPECT_EQ(mem["arena"].reserved, s.hello.arena_bytes);
    EXPECT_EQ(mem["model"].used, 56u);
    EXPECT_GT(mem["stack"].used, 256u);
    EXPECT_LT(mem["stack"].used, mem["stack"].reserved);
    EXPECT_EQ(mem["stack"].reserved, 1u << 20);
  }
}

TEST(ExampleRunnerHost, WithoutTheFlagsThereAreNoOpSamplesNorMemoryReports) {
  Session s = RunExample(
      RunnerLink::SpawnHost(MCULAB_EXAMPLE_RUNNER_HOST, WorkloadFile("plain.bin", {1})), 2, 0);
  EXPECT_EQ(s.done.status, 0);
  ASSERT_EQ(s.cases.size(), 1u);
  EXPECT_TRUE(s.cases[0].ops.empty());
  EXPECT_TRUE(s.cases[0].memory.empty());
  EXPECT_EQ(s.cases[0].samples.size(), 2u);
}

TEST(ExampleRunnerHost, ABlobThatIsNotItsModelIsABadWorkloadNamedByTheRuntime) {
  auto link = RunnerLink::SpawnHost(
      MCULAB_EXAMPLE_RUNNER_HOST,
      test_support::WriteFile("junk.bin", test_support::ExampleWorkload({3}, Bytes(56, 7), 1)));
  link->Expect(MCULAB_MSG_HELLO);
  link->Send(ToWire(Configure{1, 0, 0, 0, 0}));
  link->Send(ToWire(RunMsg{}));
  auto err = DecodeError(link->Expect(MCULAB_MSG_ERROR));
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->code, MCULAB_ERR_BAD_WORKLOAD);
  EXPECT_NE(err->text.find("case 3: the blob is not an example model"), std::string::npos)
      << err->text;
  EXPECT_EQ(DecodeDone(link->Expect(MCULAB_MSG_DONE))->status, MCULAB_ERR_BAD_WORKLOAD);
  EXPECT_EQ(link->Wait(), 0);
}

}  // namespace
}  // namespace mculab
