// mculab's QEMU counting plugin in qemu-system-arm with the an547 runner: the emulated events of
// calibration loops of known length and mix (ops.h, MCULAB_OP_CALIBRATE) match an independent
// count exactly, repeat bit for bit, agree between the inline and the callback modes, and agree
// with the -icount-driven SysTick. Label "integration": it starts QEMU. Skips when QEMU, the
// firmware or the plugin is missing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/runner_messages.h"
#include "common/workload_builder.h"
#include "mculab/ops.h"
#include "runner_link.h"

namespace mculab {
namespace {

using test_support::RunnerLink;

// instructions, loads, stores, branches, mve
using Counts = std::array<std::int64_t, 5>;

struct Region {
  std::string kind;
  unsigned case_index = 0, index = 0;
  Counts counts{};
};

struct PluginRun {
  Hello hello;
  std::vector<SampleMsg> samples;
  std::vector<CaseEnd> case_ends;
  std::vector<Region> regions;
  std::string text;  // the plugin's whole output
  bool parked = false;
};

bool Available(std::string* why) {
  for (const auto& [what, path] : {std::pair{"qemu-system-arm", std::string(MCULAB_QEMU)},
                                   std::pair{"the an547 ELF", std::string(MCULAB_AN547_ELF)},
                                   std::pair{"the plugin", std::string(MCULAB_QEMU_PLUGIN)}}) {
    if (path.empty() || access(path.c_str(), R_OK) != 0) {
      *why = std::string(what) + " is not there (" + path + ")";
      return false;
    }
  }
  return true;
}

#define SKIP_WITHOUT_QEMU()                    \
  do {                                         \
    std::string why;                           \
    if (!Available(&why)) GTEST_SKIP() << why; \
  } while (0)

std::vector<Region> ParseRegions(const std::string& text) {
  std::vector<Region> out;
  std::istringstream in(text);
  std::string line;
  bool all_columns = true;  // events= selects fewer: those runs are read by their own test
  while (std::getline(in, line)) {
    if (line.rfind("# kind case index", 0) == 0) {
      all_columns = line == "# kind case index instructions loads stores branches mve_instructions";
    }
    if (line.empty() || line[0] == '#' || !all_columns) continue;
    std::istringstream l(line);
    Region r;
    l >> r.kind >> r.case_index >> r.index;
    for (auto& c : r.counts) l >> c;
    EXPECT_FALSE(l.fail()) << "bad line: " << line;
    out.push_back(r);
  }
  return out;
}

PluginRun RunUnderPlugin(std::uint16_t op, const std::vector<WorkloadCase>& cases,
                         std::uint32_t iterations, const std::string& plugin_args,
                         const std::string& name, int shift = 5) {
  PluginRun r;
  auto wl = BuildWorkload(op, cases, 11);
  EXPECT_TRUE(wl.ok());
  const std::string out = test_support::ScratchPath(name + ".counts");
  std::remove(out.c_str());
  auto link = RunnerLink::SpawnQemu(
      MCULAB_QEMU, MCULAB_AN547_ELF, test_support::WriteFile(name + ".bin", *wl), shift,
      {"-plugin", std::string(MCULAB_QEMU_PLUGIN) + ",out=" + out + plugin_args});
  auto hello = DecodeHello(link->Expect(MCULAB_MSG_HELLO));
  EXPECT_TRUE(hello.ok());
  if (hello.ok()) r.hello = *hello;
  link->Send(ToWire(Configure{iterations, 1, static_cast<std::uint32_t>(wl->size()), 0, 0}));
  link->Send(ToWire(RunMsg{}));
  for (;;) {
    auto ev = link->Next();
    if (!ev) break;
    EXPECT_TRUE(ev->ok()) << ev->Describe();
    if (ev->type == MCULAB_MSG_SAMPLE) r.samples.push_back(*DecodeSample(ev->payload));
    if (ev->type == MCULAB_MSG_CASE_END) r.case_ends.push_back(*DecodeCaseEnd(ev->payload));
    if (ev->type == MCULAB_MSG_ERROR) ADD_FAILURE() << DecodeError(ev->payload)->text;
    if (ev->type == MCULAB_MSG_DONE) break;
  }
  r.parked = link->StopParked();
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  r.text = ss.str();
  r.regions = ParseRegions(r.text);
  return r;
}

// The counts of a case's first measured iteration.
Counts Iteration(const PluginRun& r, unsigned case_index) {
  for (const auto& reg : r.regions) {
    if (reg.kind == "iter" && reg.case_index == case_index && reg.index == 0) return reg.counts;
  }
  ADD_FAILURE() << "no iteration of case " << case_index << " in:\n" << r.text;
  return {};
}

// Per pass of each calibration loop (ops.h): instructions, loads, stores, branches, MVE.
const std::map<int, Counts> kPerLoop{
    {MCULAB_CAL_ALU, {2, 0, 0, 1, 0}},  {MCULAB_CAL_LDST, {4, 1, 1, 1, 0}},
    {MCULAB_CAL_MVE, {6, 12, 4, 1, 4}}, {MCULAB_CAL_MVE_TP, {5, 3, 0, 1, 3}},
    {MCULAB_CAL_LDM, {4, 2, 2, 1, 0}},
};
const char* const kEvents[] = {"instructions", "loads", "stores", "branches", "mve"};

TEST(QemuPlugin, CountsOfALoopOfKnownLengthMatchItsMixExactly) {
  SKIP_WITHOUT_QEMU();
  std::vector<WorkloadCase> cases;
  for (const auto& [kind, mix] : kPerLoop) {
    cases.push_back({kind * 10, {kind, 1000}});
    cases.push_back({kind * 10 + 1, {kind, 3000}});
  }
  const PluginRun r = RunUnderPlugin(MCULAB_OP_CALIBRATE, cases, 2, "", "calibrate");
  ASSERT_TRUE(r.parked) << r.text;
  unsigned c = 0;
  for (const auto& [kind, mix] : kPerLoop) {
    const Counts small = Iteration(r, c), large = Iteration(r, c + 1);
    for (int e = 0; e < 5; ++e) {
      // 2000 more passes of the loop, and nothing else differs between the two cases.
      EXPECT_EQ(large[e] - small[e], 2000 * mix[e]) << "kind " << kind << ", " << kEvents[e];
      // What is not the loop (the call, the timer reads) is small and the same for both.
      const std::int64_t fixed = small[e] - 1000 * mix[e];
      EXPECT_GE(fixed, 0) << "kind " << kind << ", " << kEvents[e];
      EXPECT_LT(fixed, 200) << "kind " << kind << ", " << kEvents[e];
    }
    c += 2;
  }
  // Every region is written (and flushed) as it ends, before the runner's CASE_END and DONE: the
  // agent stops QEMU after DONE, so QEMU's exit (the "# end" summary) is not waited for.
  EXPECT_EQ(r.regions.size(), cases.size() * (2 + 8))
      << "two iterations and eight empty regions per case:\n"
      << r.text;
}

TEST(QemuPlugin, TwoRunsCountTheSameBitForBit) {
  SKIP_WITHOUT_QEMU();
  const std::vector<WorkloadCase> cases{{0, {MCULAB_CAL_MVE, 500}},
                                        {1, {1, 8, 12, 12, 8, 3, 3, 1, 1, 1, 1}}};
  // conv2d cases and calibration cases cannot share a workload: two ops, two workloads.
  const PluginRun a = RunUnderPlugin(MCULAB_OP_CONV2D_S8, {cases[1]}, 3, "", "repeat-a");
  const PluginRun b = RunUnderPlugin(MCULAB_OP_CONV2D_S8, {cases[1]}, 3, "", "repeat-b");
  ASSERT_FALSE(a.regions.empty());
  EXPECT_EQ(a.text, b.text);
  // ... and the iterations within a run agree with each other.
  std::vector<Counts> iters;
  for (const auto& reg : a.regions) {
    if (reg.kind == "iter") iters.push_back(reg.counts);
  }
  ASSERT_EQ(iters.size(), 3u);
  EXPECT_EQ(iters[0], iters[1]);
  EXPECT_EQ(iters[1], iters[2]);
}

TEST(QemuPlugin, InlineCountingAgreesWithCountingEveryAccessInACallback) {
  SKIP_WITHOUT_QEMU();
  // The callback mode counts each access it sees, whatever the classifier says: agreement means
  // every instruction that stores was flagged as one.
  const std::vector<WorkloadCase> conv{{0, {1, 8, 12, 12, 8, 3, 3, 1, 1, 1, 1}},
                                       {1, {1, 3, 9, 9, 4, 3, 3, 0, 0, 2, 2}}};
  const PluginRun inl = RunUnderPlugin(MCULAB_OP_CONV2D_S8, conv, 2, ",mem=inline", "inline");
  const PluginRun cb = RunUnderPlugin(MCULAB_OP_CONV2D_S8, conv, 2, ",mem=callback", "callback");
  ASSERT_EQ(inl.regions.size(), cb.regions.size());
  for (std::size_t i = 0; i < inl.regions.size(); ++i) {
    EXPECT_EQ(inl.regions[i].counts, cb.regions[i].counts) << "region " << i;
  }
  std::vector<WorkloadCase> cal;
  for (const auto& [kind, mix] : kPerLoop) cal.push_back({kind, {kind, 100}});
  const PluginRun cal_inl = RunUnderPlugin(MCULAB_OP_CALIBRATE, cal, 1, "", "cal-inline");
  const PluginRun cal_cb =
      RunUnderPlugin(MCULAB_OP_CALIBRATE, cal, 1, ",mem=callback", "cal-callback");
  EXPECT_EQ(cal_inl.regions.size(), cal_cb.regions.size());
  for (std::size_t i = 0; i < cal_inl.regions.size() && i < cal_cb.regions.size(); ++i) {
    EXPECT_EQ(cal_inl.regions[i].counts, cal_cb.regions[i].counts) << "region " << i;
  }
}

TEST(QemuPlugin, InstructionsAgreeWithTheIcountClock) {
  SKIP_WITHOUT_QEMU();
  // -icount shift=5: 32 ns of virtual time per instruction, SysTick at 32 MHz: 1.024 ticks per
  // instruction. Kernel-only figures: the iteration minus the empty region, on both sides.
  const PluginRun r = RunUnderPlugin(MCULAB_OP_CONV2D_S8,
                                     {{0, {1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1}}}, 1, "", "icount");
  ASSERT_EQ(r.samples.size(), 1u);
  ASSERT_EQ(r.case_ends.size(), 1u);
  Counts empty{};
  for (const auto& reg : r.regions) {
    if (reg.kind == "empty") empty = reg.counts;
  }
  const double instructions = static_cast<double>(Iteration(r, 0)[0] - empty[0]);
  const double ticks = static_cast<double>(r.samples[0].timer - r.case_ends[0].overhead);
  EXPECT_GT(instructions, 1e5);  // the runner's fast (Helium) conv: about 140,000
  EXPECT_NEAR(ticks, 1.024 * instructions, 16.0)
      << "plugin " << instructions << " instructions, SysTick " << ticks << " ticks";
}

TEST(QemuPlugin, HelloListsThePluginsEventsAsAnExternalUnit) {
  SKIP_WITHOUT_QEMU();
  const PluginRun r = RunUnderPlugin(MCULAB_OP_CALIBRATE, {{0, {0, 10}}}, 1, "", "hello");
  EXPECT_TRUE(r.hello.emulated);
  ASSERT_EQ(r.hello.units.size(), 1u);
  EXPECT_EQ(r.hello.units[0].name, "qemu-plugin");
  EXPECT_TRUE(r.hello.units[0].external);
  EXPECT_EQ(r.hello.units[0].max_simultaneous, 3);  // the plugin's events= limit
  EXPECT_EQ(r.hello.units[0].events, (std::vector<std::string>{"instructions", "loads", "stores",
                                                               "branches", "mve_instructions"}));
  EXPECT_TRUE(r.hello.counters.empty()) << "no counter the runner itself reads on QEMU";
  EXPECT_NE(r.text.find("# mculab-qemu-counters 1 mem=inline markers=0x60ff0000"),
            std::string::npos);
}

namespace selected {

// The "iter" lines of a run with events=...: (case, index) -> the selected columns.
std::map<std::pair<unsigned, unsigned>, std::vector<std::int64_t>> IterColumns(
    const std::string& text, std::string* header) {
  std::map<std::pair<unsigned, unsigned>, std::vector<std::int64_t>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# kind case index", 0) == 0) *header = line;
    if (line.rfind("iter ", 0) != 0) continue;
    std::istringstream l(line);
    std::string kind;
    unsigned c = 0, i = 0;
    l >> kind >> c >> i;
    std::int64_t v = 0;
    while (l >> v) out[{c, i}].push_back(v);
  }
  return out;
}

}  // namespace selected

TEST(QemuPlugin, SelectedEventsCountExactlyWhatTheFullRunCounts) {
  SKIP_WITHOUT_QEMU();
  const std::vector<WorkloadCase> cases{{0, {MCULAB_CAL_MVE, 500}}, {1, {MCULAB_CAL_LDST, 700}}};
  const PluginRun all = RunUnderPlugin(MCULAB_OP_CALIBRATE, cases, 2, "", "sel-all");
  // Column order is the header's (instructions, loads, stores, branches, mve), whatever the order
  // asked for.
  const PluginRun some =
      RunUnderPlugin(MCULAB_OP_CALIBRATE, cases, 2, ",events=mve_instructions+loads", "sel-some");
  ASSERT_TRUE(some.parked) << some.text;
  std::string header;
  const auto cols = selected::IterColumns(some.text, &header);
  EXPECT_EQ(header, "# kind case index loads mve_instructions");
  ASSERT_EQ(cols.size(), 4u);
  for (const auto& [key, values] : cols) {
    const Counts full = [&] {
      for (const auto& reg : all.regions) {
        if (reg.kind == "iter" && reg.case_index == key.first && reg.index == key.second)
          return reg.counts;
      }
      return Counts{};
    }();
    ASSERT_EQ(values.size(), 2u);
    EXPECT_EQ(values[0], full[1]) << "loads, case " << key.first;
    EXPECT_EQ(values[1], full[4]) << "mve, case " << key.first;
  }
}

}  // namespace
}  // namespace mculab
