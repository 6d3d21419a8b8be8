#include "cli/format.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace mculab::cli {
namespace {

v1::Results TwoCaseResults(const std::string& unit) {
  v1::Results r;
  r.mutable_job()->set_id(42);
  r.mutable_job()->set_state("succeeded");
  r.mutable_provenance()->set_timer_unit(unit);
  r.mutable_provenance()->set_emulated(unit == "cycles");
  auto* a = r.add_cases();
  a->set_case_id(0);
  a->set_median(12345);
  a->set_unit(unit);
  auto* b = r.add_cases();
  b->set_case_id(7);
  b->set_median(2500.5);
  b->set_unit(unit);
  return r;
}

TEST(ParseTag, SplitsAtTheFirstEqualsAndRejectsMissingParts) {
  const ParsedTag ok = ParseTag("cpu=cortex-m55");
  EXPECT_EQ(ok.error, "");
  EXPECT_EQ(ok.key, "cpu");
  EXPECT_EQ(ok.value, "cortex-m55");
  EXPECT_EQ(ParseTag("opt=a=b").value, "a=b");
  for (const char* bad : {"cpu", "=cortex-m55", "cpu=", ""}) {
    const ParsedTag t = ParseTag(bad);
    EXPECT_NE(t.error.find("is not KEY=VALUE"), std::string::npos) << bad;
  }
}

TEST(RenderResults, ShowsTheJobsTags) {
  v1::Results r = TwoCaseResults("cycles");
  (*r.mutable_job()->mutable_tags())["npu"] = "ethos-u55-128";
  (*r.mutable_job()->mutable_tags())["cpu"] = "cortex-m55";
  EXPECT_NE(RenderResults(r).find("tags: cpu=cortex-m55,npu=ethos-u55-128\n"), std::string::npos)
      << RenderResults(r);
  EXPECT_EQ(nlohmann::json::parse(ResultsJson(r))["tags"]["cpu"], "cortex-m55");
}

TEST(ExportCsv, CyclesAreExportedAsStoredMedians) {
  EXPECT_EQ(ExportCsv(TwoCaseResults("cycles")), "id,cycles\n0,12345\n7,2500.5\n");
}

TEST(ExportCsv, NanosecondsAreExportedAsMicroseconds) {
  EXPECT_EQ(ExportCsv(TwoCaseResults("ns")), "id,us\n0,12.345\n7,2.5005\n");
}

TEST(FormatNumber, IntegersHaveNoFractionAndOthersAreShort) {
  EXPECT_EQ(FormatNumber(1234), "1234");
  EXPECT_EQ(FormatNumber(1234.56), "1234.6");
  EXPECT_EQ(FormatNumber(1.5), "1.5");
  EXPECT_EQ(FormatNumber(0.01234), "0.0123");
  EXPECT_EQ(FormatNumber(-3), "-3");
}

TEST(ProgressBar, FillsInProportionAndClampsOverflow) {
  EXPECT_EQ(ProgressBar(0, 10, 10), "[..........] 0/10");
  EXPECT_EQ(ProgressBar(5, 10, 10), "[#####.....] 5/10");
  EXPECT_EQ(ProgressBar(12, 10, 4), "[####] 12/10");
  EXPECT_EQ(ProgressBar(0, 0, 4), "[....] 0/0");
}

TEST(RenderTable, PadsColumnsAndRightAlignsNumbers) {
  EXPECT_EQ(RenderTable({"case", "median"}, {{"a", "5"}, {"bb", "1234"}}),
            "case  median\n"
            "a          5\n"
            "bb      1234\n");
}

TEST(RenderResults, SaysWhenFiguresAreEmulated) {
  v1::Results r = TwoCaseResults("cycles");
  r.mutable_provenance()->set_runner_version("0.1.0");
  r.mutable_provenance()->set_note("QEMU -icount");
  const std::string text = RenderResults(r);
  EXPECT_NE(text.find("EMULATED"), std::string::npos) << text;
  EXPECT_NE(text.find("cycles, emulated"), std::string::npos) << text;
  r.mutable_provenance()->set_emulated(false);
  EXPECT_EQ(RenderResults(r).find("EMULATED"), std::string::npos);
}

TEST(RenderResults, FlagsAChecksumMismatch) {
  v1::Results r = TwoCaseResults("cycles");
  r.mutable_cases(0)->set_checksum_ok(true);
  r.mutable_cases(1)->set_checksum_ok(false);
  const std::string text = RenderResults(r);
  EXPECT_NE(text.find("MISMATCH"), std::string::npos);
}

TEST(ResultsJson, HoldsRawSamplesPerCase) {
  v1::Results r = TwoCaseResults("cycles");
  r.mutable_cases(1)->set_index(1);
  auto* s = r.add_samples();
  s->set_case_index(1);
  s->set_metric("cycles");
  s->add_values(10);
  s->add_values(11);
  auto j = nlohmann::json::parse(ResultsJson(r));
  EXPECT_EQ(j["id"], 42);
  EXPECT_EQ(j["cases"][1]["samples"]["cycles"], nlohmann::json::array({10, 11}));
  EXPECT_FALSE(j["cases"][0].contains("samples"));
}

}  // namespace
}  // namespace mculab::cli
