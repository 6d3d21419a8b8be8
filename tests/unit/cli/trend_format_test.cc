// `mculab trend`: the table and the JSON document (cli/trend_format.h).
#include "cli/trend_format.h"

#include <gtest/gtest.h>

#include "proto/json/documents.h"

namespace mculab::cli {
namespace {

v1::Series StepSeries() {
  v1::Series s;
  v1::GetSeriesRequest* r = s.mutable_request();
  r->set_kind("host");
  r->set_op("fully_connected_s8");
  r->set_has_params(true);
  for (int p : {1, 8, 4}) r->add_params(p);
  r->set_label("nightly");
  r->set_limit(200);
  r->set_window(3);
  r->set_min_step(0.01);
  for (const char* n : {"N", "in_features", "out_features"}) s.add_param_names(n);
  s.set_unit("ns");
  for (int i = 0; i < 6; ++i) {
    v1::SeriesJob* j = s.add_jobs();
    j->set_id(40 + static_cast<std::uint64_t>(i));
    j->set_board("host-0");
    j->set_port("host");
    j->set_measured("host");  // as the server decides it
    j->set_unit("ns");
    j->set_n(50);
    j->set_median(i < 3 ? 1000 : 1200);
    j->set_lo(i < 3 ? 995 : 1190);
    j->set_hi(i < 3 ? 1004.5 : 1210);
    j->set_runner_version(i < 3 ? "0.1.0" : "0.2.0");
    j->set_firmware_sha256(i < 3 ? "aaaaaaaaaaaaaaaa" : "bbbbbbbbbbbbbbbb");
    j->set_runner_changed(i == 3);
    j->set_label("nightly");
  }
  v1::SeriesChange* c = s.add_changes();
  c->set_index(3);
  c->set_before_job(42);
  c->set_after_job(43);
  c->set_before(1000);
  c->set_after(1200);
  c->set_ratio(1.2);
  return s;
}

TEST(RenderTrend, NamesTheCaseTheStepAndEachJobsInterval) {
  const std::string out = RenderTrend(StepSeries());
  EXPECT_NE(out.find("series: fully_connected_s8 N=1,in_features=8,out_features=4 on host"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("label ~ \"nightly\""), std::string::npos) << out;
  EXPECT_NE(out.find("6 jobs, medians in ns with 95% intervals"), std::string::npos) << out;
  EXPECT_NE(
      out.find("change points (a step where 3 jobs either side do not overlap, at least 1%): 1"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("job 42 -> job 43: 1000 -> 1200 ns (+20.0%, slower)  mculab compare 42 43"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("[995, 1004.5]"), std::string::npos) << out;
  EXPECT_NE(out.find("0.2.0 bbbbbbbb (changed)"), std::string::npos) << out;
  EXPECT_NE(out.find("step +20.0%"), std::string::npos) << out;
  EXPECT_EQ(out.find("0.1.0 aaaaaaaa (changed)"), std::string::npos) << out;
  EXPECT_NE(out.find("host"), std::string::npos);
}

TEST(RenderTrend, AModelSeriesNamesItsModelAndMarksAnotherFileUnderItsName) {
  v1::Series s = StepSeries();
  v1::GetSeriesRequest* r = s.mutable_request();
  r->set_op("model");
  r->set_has_params(false);
  r->clear_params();
  r->set_has_case_id(true);
  r->set_case_id(0);
  r->set_model("kws.tflite");
  s.clear_param_names();
  for (int i = 0; i < s.jobs_size(); ++i) {
    v1::SeriesJob* j = s.mutable_jobs(i);
    j->set_runner_version("0.1.0");
    j->set_firmware_sha256("aaaaaaaaaaaaaaaa");
    j->set_model_sha256(i < 3 ? "1111111111111111" : "2222222222222222");
    j->set_model_changed(i == 3);
  }
  const std::string out = RenderTrend(s);
  EXPECT_NE(out.find("series: model case 0 kws.tflite on host"), std::string::npos) << out;
  EXPECT_NE(out.find("model 22222222 (model file changed)"), std::string::npos) << out;
  EXPECT_EQ(out.find("model 11111111 (model file changed)"), std::string::npos) << out;
  const auto j = SeriesDocument(s);
  EXPECT_EQ(j["series"]["model"], "kws.tflite");
  EXPECT_EQ(j["jobs"][3]["model_changed"], true);
  EXPECT_EQ(j["jobs"][3]["model_sha256"], "2222222222222222");
}

TEST(RenderTrend, AnEmptySeriesSaysWhy) {
  v1::Series s = StepSeries();
  s.clear_jobs();
  s.clear_changes();
  const std::string out = RenderTrend(s);
  EXPECT_NE(out.find("0 jobs"), std::string::npos) << out;
  EXPECT_NE(out.find("only jobs whose run succeeded"), std::string::npos) << out;
}

TEST(SeriesDocument, IsTheApiDocument) {
  const auto j = SeriesDocument(StepSeries());
  EXPECT_EQ(j["series"]["kind"], "host");
  EXPECT_EQ(j["series"]["params"], nlohmann::json::parse("[1, 8, 4]"));
  EXPECT_TRUE(j["series"]["case"].is_null());
  EXPECT_EQ(j["series"]["label"], "nightly");
  EXPECT_EQ(j["series"]["tags"], nlohmann::json::object());
  EXPECT_EQ(j["detector"]["window"], 3);
  EXPECT_EQ(j["unit"], "ns");
  ASSERT_EQ(j["jobs"].size(), 6u);
  EXPECT_EQ(j["jobs"][3]["id"], 43);
  EXPECT_EQ(j["jobs"][3]["measured"], "host");
  EXPECT_EQ(j["jobs"][3]["runner_changed"], true);
  EXPECT_EQ(j["jobs"][0]["hi"], 1004.5);
  ASSERT_EQ(j["changes"].size(), 1u);
  EXPECT_EQ(j["changes"][0]["before_job"], 42);
  EXPECT_EQ(j["changes"][0]["ratio"], 1.2);
  // Field order as the API's (docs/http-api.md).
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"series", "unit", "detector", "jobs", "changes"}));
}

}  // namespace
}  // namespace mculab::cli
