// `mculab show --ops`, the events and memory sections of `mculab show`, and `mculab events`.
#include "cli/profile_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace mculab::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::Results EmulatedJob() {
  v1::Results r;
  r.mutable_job()->set_id(42);
  r.mutable_provenance()->set_emulated(true);
  r.mutable_provenance()->set_measured("emulated");  // as the server decides it
  r.set_measured("emulated");
  r.mutable_provenance()->set_timer_unit("cycles");
  r.add_cases()->set_case_id(0);
  auto op = [&](std::uint32_t index, const char* type, const char* name, const char* metric,
                double sum, std::uint32_t pass) {
    auto* o = r.add_ops();
    o->set_op_index(index);
    o->set_type(type);
    o->set_name(name);
    o->set_metric(metric);
    o->set_count(10);
    o->set_sum(sum);
    o->set_min(sum / 10);
    o->set_max(sum / 10);
    o->set_pass(pass);
  };
  op(0, "CONV_2D", "conv", "cycles", 1000, 0);
  op(1, "FULLY_CONNECTED", "fc", "cycles", 3000, 0);
  op(0, "CONV_2D", "conv", "cycles", 999999, 1);  // another pass's timer: not counted twice
  op(1, "FULLY_CONNECTED", "fc", "instructions", 2900, 1);
  return r;
}

TEST(RenderOps, SortsOpsByShareOfTheTotalLikeAProfiler) {
  const std::string out = RenderOps(EmulatedJob());
  EXPECT_THAT(out, HasSubstr("EMULATED"));
  const auto fc = out.find("FULLY_CONNECTED");
  const auto conv = out.find("CONV_2D");
  ASSERT_NE(fc, std::string::npos);
  ASSERT_NE(conv, std::string::npos);
  EXPECT_LT(fc, conv);  // 75% before 25%
  EXPECT_THAT(out, HasSubstr("75%"));
  EXPECT_THAT(out, HasSubstr("25%"));
  EXPECT_THAT(out, HasSubstr("instructions"));  // the event's column
  EXPECT_THAT(out, HasSubstr("2900"));
}

TEST(RenderOps, SaysSoWhenThereIsNoProfile) {
  v1::Results r;
  r.mutable_job()->set_id(3);
  EXPECT_THAT(RenderOps(r), HasSubstr("no per-op profile"));
}

TEST(RenderEventStats, ShowsEachEventWithItsPassAndTheEmulatedLabel) {
  v1::Results r = EmulatedJob();
  auto* p0 = r.add_passes();
  p0->set_index(0);
  p0->add_events("cycles");
  p0->add_events("instructions");
  auto* p1 = r.add_passes();
  p1->set_index(1);
  p1->add_events("cycles");
  p1->add_events("branches");
  auto* c = r.add_counters();
  c->set_case_id(0);
  c->set_metric("branches");
  c->set_n(5);
  c->set_median(254782);
  const std::string out = RenderEventStats(r);
  EXPECT_THAT(out, HasSubstr("EMULATED"));
  EXPECT_THAT(out, HasSubstr("2 passes"));
  EXPECT_THAT(out, HasSubstr("branches"));
  EXPECT_THAT(out, HasSubstr("254782"));
  EXPECT_EQ(RenderEventStats(v1::Results{}), "");
}

TEST(RenderMemory, ShowsElfSectionsAndTheLargestRunnerReport) {
  v1::Results r = EmulatedJob();
  auto add = [&](int c, const char* source, const char* category, std::uint64_t used,
                 std::uint64_t reserved) {
    auto* m = r.add_memory();
    m->set_case_index(c);
    m->set_source(source);
    m->set_category(category);
    m->set_used(used);
    m->set_reserved(reserved);
  };
  add(-1, "elf", "flash.text", 20480, 0);
  add(0, "runner", "arena", 1000, 4000);
  add(1, "runner", "arena", 3000, 4000);
  const std::string out = RenderMemory(r);
  EXPECT_THAT(out, HasSubstr("EMULATED"));
  EXPECT_THAT(out, HasSubstr("flash.text"));
  EXPECT_THAT(out, HasSubstr("20480 (20 KiB)"));
  EXPECT_THAT(out, HasSubstr("75%"));  // 3000 of 4000
  EXPECT_THAT(out, Not(HasSubstr("1000 ")));
  EXPECT_EQ(RenderMemory(v1::Results{}), "");
}

TEST(RenderEventUnits, ListsUnitsWithHowManyAtOnce) {
  v1::ListEventsReply rep;
  rep.add_boards("an547-0");
  rep.set_emulated(true);
  auto* u = rep.add_units();
  u->set_name("qemu-plugin");
  u->set_max_simultaneous(3);
  u->add_events("instructions");
  u->add_events("loads");
  u->set_emulated(true);
  const std::string out = RenderEventUnits(rep);
  EXPECT_THAT(out, HasSubstr("qemu-plugin"));
  EXPECT_THAT(out, HasSubstr("instructions,loads"));
  EXPECT_THAT(out, HasSubstr("EMULATED"));
  EXPECT_THAT(out, HasSubstr(" 3 "));
}

// A host board is neither silicon nor emulated: `mculab events --kind host` says so.
TEST(RenderEventUnits, AHostBoardIsLabelledHostNotSilicon) {
  v1::ListEventsReply rep;
  rep.add_boards("host-0");
  rep.set_measured("host");
  const std::string out = RenderEventUnits(rep);
  EXPECT_THAT(out, HasSubstr("host-0 (HOST"));
  EXPECT_THAT(out, Not(HasSubstr("silicon")));
  rep.set_measured("silicon");
  EXPECT_THAT(RenderEventUnits(rep), HasSubstr("(silicon)"));
}

}  // namespace
}  // namespace mculab::cli
