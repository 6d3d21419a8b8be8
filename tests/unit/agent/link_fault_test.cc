// The link-fault suite: the real host runner behind mculab-link-fault-runner, which damages the
// frames it writes (garbage, truncated, duplicated, reordered frames; link_fault_runner.cc). Every
// fault must be counted and dropped or make the run fail with a clear message; the agent must
// never crash or hang, and a damaged frame must never turn into a wrong result.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "agent/boards/host_board.h"
#include "agent/io/temp_dir.h"
#include "real_runner_test_util.h"

namespace mculab::agent {
namespace {

constexpr std::uint32_t kIterations = 20;
constexpr std::uint32_t kSeeds = 4;

struct Outcome {
  SessionResult result;
  testing::CollectingListener listener;
};

class LinkFaultTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    auto d = TempDir::Create("mculab-link-fault-test-");
    ASSERT_TRUE(d.ok());
    dir_ = std::move(*d);
  }

  // The host runner behind the wrapper in `mode` with `seed`, run to its end.
  Outcome Run(const std::string& mode, std::uint32_t seed) {
    const auto script = dir_->path() / ("runner-" + mode + "-" + std::to_string(seed));
    {
      std::ofstream f(script);
      f << "#!/bin/sh\nexec '" << MCULAB_LINK_FAULT_RUNNER << "' " << mode << " " << seed << " '"
        << MCULAB_RUNNER_HOST << "' \"$@\"\n";
    }
    ::chmod(script.c_str(), 0755);
    // No sandbox: the wrapper runs the real runner by its path, which a sandbox would hide; the
    // suite is about the bytes on the link.
    auto sandbox = Sandbox::Create(MakeSandboxConfig("off"));
    EXPECT_TRUE(sandbox.ok());
    HostBoard board(testing::Info("host-0", "host"), script, false, *sandbox);
    auto workload = BuildWorkload(MCULAB_OP_CONV2D_S8, testing::ConvCases(), testing::kSeed);
    RunSpec spec;
    spec.workload = *workload;
    Outcome out;
    auto proc = board.Start(spec);
    if (!proc) {
      ADD_FAILURE() << proc.error().message;
      return out;
    }
    SessionConfig c;
    c.op = MCULAB_OP_CONV2D_S8;
    c.cases = testing::ConvCases();
    c.seed = testing::kSeed;
    c.iterations = kIterations;
    c.warmup = 1;
    c.workload_len = static_cast<std::uint32_t>(spec.workload.size());
    c.hello_timeout = std::chrono::seconds(5);
    c.run_timeout = std::chrono::seconds(60);
    c.log_prefix = "link-fault " + mode + " " + std::to_string(seed);
    CancelToken none;
    out.result = RunSession(**proc, RealClock(), c, out.listener, none);
    return out;
  }

  std::unique_ptr<TempDir> dir_;
};

// Whatever the damage: the run ends; a success has every sample once, in order, with verified
// checksums; a failure says why.
void ExpectCompleteOrClearFailure(const Outcome& o) {
  if (o.result.outcome != RunOutcome::kSucceeded) {
    EXPECT_FALSE(o.result.message.empty());
    EXPECT_NE(o.result.outcome, RunOutcome::kCancelled);
    return;
  }
  const auto cases = testing::ConvCases();
  ASSERT_EQ(o.listener.samples.size(), cases.size() * kIterations);
  std::size_t i = 0;
  for (std::uint16_t c = 0; c < cases.size(); ++c) {
    for (std::uint32_t it = 0; it < kIterations; ++it, ++i) {
      EXPECT_EQ(o.listener.samples[i].case_index, c);
      EXPECT_EQ(o.listener.samples[i].iteration, it);
    }
  }
  ASSERT_EQ(o.listener.cases.size(), cases.size());
  for (const auto& r : o.listener.cases) EXPECT_TRUE(r.checksum_ok) << r.case_index;
}

TEST_P(LinkFaultTest, EveryFaultIsDroppedOrFailsTheRunClearly) {
  const std::string mode = GetParam();
  std::uint32_t succeeded = 0;
  for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) {
    SCOPED_TRACE(mode + " seed " + std::to_string(seed));
    auto o = Run(mode, seed);
    ExpectCompleteOrClearFailure(o);
    if (o.result.outcome == RunOutcome::kSucceeded) ++succeeded;
    const auto& st = o.result.stats;
    if (mode == "garbage") {
      // Garbage ended by a delimiter costs only itself: the run succeeds, the bytes are counted.
      EXPECT_EQ(o.result.outcome, RunOutcome::kSucceeded) << o.result.message;
      EXPECT_GT(st.bad_frames + st.skipped_bytes, 1u);
    } else if (mode == "merge" || mode == "truncate") {
      // Each fault costs one frame, counted and dropped: as a bad frame, or as stray bytes when
      // the cut left too little to be read as a frame at all.
      EXPECT_GT(st.bad_frames + st.skipped_bytes, 0u);
    }
  }
  if (mode == "garbage") {
    EXPECT_EQ(succeeded, kSeeds);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, LinkFaultTest,
                         ::testing::Values("garbage", "merge", "truncate", "duplicate", "reorder",
                                           "mixed"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace mculab::agent
