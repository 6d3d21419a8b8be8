#include "cli/format.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace mculab::cli {
namespace {

// How the server says the result was measured (server/service/results.h decides; the CLI only
// shows it).
void SetMeasured(v1::Results& r, const std::string& kind) {
  r.set_measured(kind);
  r.mutable_provenance()->set_measured(kind);
}

v1::Results TwoCaseResults(const std::string& unit) {
  v1::Results r;
  r.mutable_job()->set_id(42);
  r.mutable_job()->set_state("succeeded");
  r.mutable_provenance()->set_timer_unit(unit);
  r.mutable_provenance()->set_emulated(unit == "cycles");
  SetMeasured(r, unit == "cycles" ? "emulated" : unit == "ns" ? "host" : "silicon");
  auto* a = r.add_cases();
  a->set_case_id(0);
  a->set_n(5);
  a->set_median(12345);
  a->set_unit(unit);
  auto* b = r.add_cases();
  b->set_case_id(7);
  b->set_n(5);
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

TEST(ExportCsv, AnEmulatedBoardsInstructionsAreNotCalledCycles) {
  EXPECT_EQ(ExportCsv(TwoCaseResults("instructions")), "id,instructions\n0,12345\n7,2500.5\n");
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
  SetMeasured(r, "silicon");
  EXPECT_EQ(RenderResults(r).find("EMULATED"), std::string::npos);
}

// A case whose cv is above the default limit of its kind (host 10%) is marked unstable, and the
// table says what that means; an emulated count never is.
TEST(RenderResults, MarksAnUnstableCaseByItsKindsLimit) {
  v1::Results r = TwoCaseResults("ns");
  r.mutable_provenance()->set_runner_version("0.1.0");
  r.mutable_provenance()->set_port("host");
  r.mutable_cases(0)->set_cv(0.63);
  r.mutable_cases(1)->set_cv(0.05);
  std::string text = RenderResults(r);
  EXPECT_NE(text.find("63% unstable"), std::string::npos) << text;
  EXPECT_EQ(text.find("5% unstable"), std::string::npos) << text;
  EXPECT_NE(text.find("1 case unstable: the timings vary more than 10% (cv, the default for host"),
            std::string::npos)
      << text;
  r.mutable_provenance()->set_port("stm32h7");
  r.mutable_provenance()->set_timer_unit("cycles");
  SetMeasured(r, "silicon");
  EXPECT_NE(RenderResults(r).find("2 cases unstable"), std::string::npos) << "silicon: 2%";
  r.mutable_provenance()->set_emulated(true);
  SetMeasured(r, "emulated");
  EXPECT_EQ(RenderResults(r).find("unstable"), std::string::npos) << "emulated counts are exact";
}

// A job's own --max-cv is the limit `show` judges by, as the export and the reruns do.
TEST(RenderResults, MarksAnUnstableCaseByTheJobsOwnLimit) {
  v1::Results r = TwoCaseResults("ns");
  r.mutable_provenance()->set_runner_version("0.1.0");
  r.mutable_provenance()->set_port("host");
  r.mutable_cases(0)->set_cv(0.05);
  r.mutable_cases(1)->set_cv(0.01);
  r.mutable_job()->set_max_cv_pct(2);
  const std::string text = RenderResults(r);
  EXPECT_NE(text.find("5% unstable"), std::string::npos) << text;
  EXPECT_NE(text.find("1 case unstable: the timings vary more than 2% (cv, the job's --max-cv)"),
            std::string::npos)
      << text;
}

TEST(RenderResults, FlagsAChecksumMismatch) {
  v1::Results r = TwoCaseResults("cycles");
  r.mutable_cases(0)->set_checksum_ok(true);
  r.mutable_cases(1)->set_checksum_ok(false);
  const std::string text = RenderResults(r);
  EXPECT_NE(text.find("MISMATCH"), std::string::npos);
}

TEST(RenderResults, LabelsTheHostRunnerHostNotSilicon) {
  v1::Results r = TwoCaseResults("ns");
  r.mutable_provenance()->set_runner_version("0.1.0");
  r.mutable_provenance()->set_port("host");
  const std::string text = RenderResults(r);
  EXPECT_NE(text.find("measured: HOST (native), unit ns"), std::string::npos) << text;
  EXPECT_NE(text.find("(ns, host;"), std::string::npos) << text;
  EXPECT_EQ(text.find("silicon"), std::string::npos) << text;
  EXPECT_EQ(nlohmann::json::parse(ResultsJson(r))["provenance"]["measured"], "host");
  r.mutable_provenance()->set_port("stm32h7");
  r.mutable_provenance()->set_timer_unit("cycles");
  SetMeasured(r, "silicon");
  EXPECT_NE(RenderResults(r).find("measured: silicon"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(ResultsJson(r))["provenance"]["measured"], "silicon");
}

TEST(ResultsJson, CountersAreOneCommaListWhetherSentAsItemsOrAsTheOldOneString) {
  v1::Results r = TwoCaseResults("cycles");
  r.mutable_provenance()->add_counters("instructions");
  r.mutable_provenance()->add_counters("loads");
  EXPECT_EQ(nlohmann::json::parse(ResultsJson(r))["provenance"]["counters"], "instructions,loads");
  // A server from before the field was repeated sent one comma-separated string: the same bytes
  // on the wire as one item.
  r.mutable_provenance()->clear_counters();
  r.mutable_provenance()->add_counters("instructions,loads");
  EXPECT_EQ(nlohmann::json::parse(ResultsJson(r))["provenance"]["counters"], "instructions,loads");
}

TEST(RenderBoards, TheTimingColumnSaysHostForTheHostBoard) {
  v1::ListBoardsReply boards;
  auto* host = boards.add_boards();
  host->set_name("host-0");
  (*host->mutable_tags())["timing"] = "host";
  host->set_measured("host");
  auto* qemu = boards.add_boards();
  qemu->set_name("an547-0");
  qemu->set_emulated(true);
  qemu->set_measured("emulated");
  auto* h743 = boards.add_boards();
  h743->set_name("h743-0");
  h743->set_measured("silicon");
  const std::string text = RenderBoards(boards);
  EXPECT_NE(text.find("  host  "), std::string::npos) << text;
  EXPECT_NE(text.find("  emulated  "), std::string::npos) << text;
  EXPECT_NE(text.find("  silicon  "), std::string::npos) << text;
}

TEST(RenderBoards, AReservationShowsItsHolderItsEndAndItsNote) {
  v1::ListBoardsReply boards;
  auto* b = boards.add_boards();
  b->set_name("an547-0");
  b->set_holder("alice");
  b->set_lease_until_ms(1'764'000'000'000);
  b->set_reservation_note("profiling conv2d");
  const std::string text = RenderBoards(boards);
  EXPECT_NE(text.find("alice"), std::string::npos) << text;
  EXPECT_NE(text.find("2025-11-24 16:00:00 UTC"), std::string::npos) << text;
  EXPECT_NE(text.find("profiling conv2d"), std::string::npos) << text;
}

TEST(RenderResults, CasesThatNeverRanShowAsNotRunNotZerosAndMismatch) {
  v1::Results r = TwoCaseResults("cycles");
  r.mutable_job()->set_state("cancelled");
  r.mutable_cases(0)->set_checksum_ok(true);
  r.mutable_cases(0)->set_checksum_reported(true);
  r.mutable_cases(1)->set_n(0);  // never ran
  r.mutable_cases(1)->set_median(0);
  const std::string text = RenderResults(r);
  EXPECT_EQ(text.find("MISMATCH"), std::string::npos) << text;
  EXPECT_NE(text.find("not run"), std::string::npos) << text;
  EXPECT_NE(text.find("1 not run"), std::string::npos) << text;
  auto j = nlohmann::json::parse(ResultsJson(r));
  EXPECT_EQ(j["cases"][0]["checksum_ok"], true);
  EXPECT_TRUE(j["cases"][1]["checksum_ok"].is_null()) << j["cases"][1];
}

TEST(RenderResults, ARefusedJobPrintsNoEmptyUnit) {
  v1::Results r = TwoCaseResults("");
  r.mutable_job()->set_state("failed");
  r.mutable_job()->set_firmware_artifact("abc");
  for (auto& c : *r.mutable_cases()) c.set_n(0);
  const std::string text = RenderResults(r);
  EXPECT_EQ(text.find("(;"), std::string::npos) << text;
  EXPECT_NE(text.find("no case ran"), std::string::npos) << text;
  auto j = nlohmann::json::parse(ResultsJson(r));
  EXPECT_TRUE(j["cases"][0]["checksum_ok"].is_null());
}

TEST(ResultsJson, OpsCarryTheirShareAndTheTimerOnce) {
  v1::Results r = TwoCaseResults("cycles");
  auto op = [&](std::uint32_t pass, std::uint32_t index, const char* metric, bool timer,
                double sum) {
    auto* o = r.add_ops();
    o->set_case_index(0);
    o->set_op_index(index);
    o->set_name(index == 0 ? "conv" : "fc");
    o->set_metric(metric);
    o->set_timer(timer);
    o->set_pass(pass);
    o->set_count(10);
    o->set_sum(sum);
  };
  op(0, 0, "cycles", true, 300);
  op(0, 1, "cycles", true, 100);
  op(1, 0, "cycles", true, 999);  // the timer as pass 1 measured it: not shown twice
  op(1, 0, "instructions", false, 5000);
  const auto j = nlohmann::json::parse(ResultsJson(r));
  ASSERT_EQ(j["ops"].size(), 3u);
  EXPECT_EQ(j["ops"][0]["metric"], "cycles");
  EXPECT_DOUBLE_EQ(j["ops"][0]["share"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(j["ops"][1]["share"].get<double>(), 0.25);
  EXPECT_EQ(j["ops"][2]["metric"], "instructions");
  EXPECT_DOUBLE_EQ(j["ops"][2]["mean"].get<double>(), 500);
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

namespace mculab::cli {
namespace {

TEST(ExportFullCsv, HasEveryStatisticWithItsUnitInTheColumnNameAndNotRunCasesEmpty) {
  v1::Results r = TwoCaseResults("ns");
  r.add_param_names("N");
  r.add_param_names("C");
  auto* a = r.mutable_cases(0);
  a->add_params(1);
  a->add_params(16);
  a->set_min(12000);
  a->set_mean(12500);
  a->set_p90(13000);
  a->set_p99(14000);
  a->set_stddev(500);
  a->set_cv(0.04);
  a->set_overhead(38);
  a->set_checksum_ok(true);
  a->set_index(0);
  auto* b = r.mutable_cases(1);
  b->add_params(2);
  b->add_params(32);
  b->set_index(1);
  b->set_n(0);  // never ran
  auto* ev = r.add_counters();
  ev->set_index(0);
  ev->set_metric("instructions");
  ev->set_n(5);
  ev->set_median(777);
  EXPECT_EQ(ExportFullCsv(r),
            "id,N,C,n,min_us,median_us,mean_us,p90_us,p99_us,stddev_us,cv_percent,stability,"
            "overhead_us,instructions_median_count,checksum\n"
            "0,1,16,5,12,12.345,12.5,13,14,0.5,4,steady,0.038,777,ok\n"
            "7,2,32,,,,,,,,,,,,not run\n");
  // A host case above the default 10% is unstable; the job's own --max-cv decides when given.
  a->set_cv(0.2);
  EXPECT_NE(ExportFullCsv(r).find(",20,unstable,"), std::string::npos) << ExportFullCsv(r);
  r.mutable_job()->set_max_cv_pct(25);
  EXPECT_NE(ExportFullCsv(r).find(",20,steady,"), std::string::npos) << ExportFullCsv(r);
  r.mutable_provenance()->set_emulated(true);
  SetMeasured(r, "emulated");
  EXPECT_NE(ExportFullCsv(r).find(",20,exact,"), std::string::npos) << ExportFullCsv(r);
}

TEST(RenderOpDescription, ListsParametersSynonymsDefaultsAndLimits) {
  const std::string text = RenderOpDescription(*FindOp("conv2d_s8"));
  EXPECT_NE(text.find("conv2d_s8: int8 2-D convolution"), std::string::npos) << text;
  EXPECT_NE(text.find("limits: kernel_h * kernel_w * C <= 65536"), std::string::npos) << text;
  EXPECT_NE(text.find("kernel_shape_0"), std::string::npos) << "synonyms are listed";
  EXPECT_NE(text.find("stride_h   no              1  1..65535"), std::string::npos) << text;
  EXPECT_NE(text.find("pad_h      no              0  0..65535"), std::string::npos) << text;
}

}  // namespace
}  // namespace mculab::cli

namespace mculab::cli {
namespace {

TEST(ResultsJson, MemoryIsTheApisObjectNotAList) {
  v1::Results r = TwoCaseResults("cycles");
  EXPECT_TRUE(nlohmann::json::parse(ResultsJson(r))["memory"].is_null());
  auto add = [&](int c, const char* source, const char* category, int used, int reserved) {
    auto* m = r.add_memory();
    m->set_case_index(c);
    m->set_source(source);
    m->set_category(category);
    m->set_used(used);
    m->set_reserved(reserved);
  };
  add(-1, "elf", "flash.text", 4096, 0);
  add(-1, "elf", "ram.bss", 512, 0);
  add(0, "runner", "arena", 100, 1000);
  add(1, "runner", "arena", 300, 1000);
  const auto j = nlohmann::json::parse(ResultsJson(r))["memory"];
  EXPECT_EQ(j, nlohmann::json::parse(R"({"flash": {"text_bytes": 4096}, "ram": {"bss_bytes": 512},
      "runner": {"arena_used_bytes": 300, "arena_reserved_bytes": 1000}})"))
      << j.dump();
}

TEST(JobBoard, AJobSubmittedWithBoardShowsThatBoardBeforeItIsAssigned) {
  v1::Job j;
  EXPECT_EQ(JobBoard(j), "-");
  j.set_board("an547-0");
  EXPECT_EQ(JobBoard(j), "an547-0");
  j.set_assigned_board("an547-1");
  EXPECT_EQ(JobBoard(j), "an547-1");
  v1::ListJobsReply list;
  auto* q = list.add_jobs();
  q->set_id(9);
  q->set_state("queued");
  q->set_board("an547-0");
  const std::string table = RenderJobs(list);
  EXPECT_NE(table.find("an547-0"), std::string::npos) << table;
  v1::Results r;
  r.mutable_job()->set_state("queued");
  r.mutable_job()->set_board("an547-0");
  r.mutable_job()->set_kind("corstone300-qemu");
  EXPECT_NE(RenderResults(r, 0).find(" on an547-0 (corstone300-qemu)"), std::string::npos)
      << RenderResults(r, 0);
  EXPECT_EQ(nlohmann::json::parse(ResultsJson(r))["board"], "an547-0");
  // The progress column of a queued job says what it waits for.
  q->mutable_wait()->set_position(2);
  EXPECT_EQ(ProgressCell(*q), "#2 in queue");
  q->mutable_wait()->set_position(1);
  q->mutable_wait()->set_board("an547-0");
  q->mutable_wait()->set_holder("alice");
  q->mutable_wait()->set_lease_until_ms(1'764'612'000'000);  // 18:00 UTC
  EXPECT_EQ(ProgressCell(*q), "waits for alice (until 2025-12-01 18:00:00 UTC)");
}

TEST(WaitText, AJobWaitingOnAReservationNamesTheHolderTheLeaseEndAndEstimatesFromIt) {
  v1::QueueWait w;
  w.set_position(1);
  w.set_board("an547-0");
  w.set_holder("alice");
  w.set_lease_until_ms(1'764'612'000'000);  // 2025-12-01 18:00:00 UTC
  w.set_note("calibration");
  w.set_estimated_start_ms(1'764'612'000'000);
  const std::string text = WaitText(w, 1'764'612'000'000 - 5 * 60 * 1000);
  EXPECT_EQ(text,
            "next in the queue; waiting for board an547-0, reserved by alice until 2025-12-01 "
            "18:00:00 UTC (calibration); estimated start in about 5m");
  v1::QueueWait plain;
  plain.set_position(3);
  EXPECT_EQ(WaitText(plain, 0),
            "queue position 3; no estimate yet (no recent run of this kind and op)");
  v1::Results r;
  r.mutable_job()->set_state("queued");
  r.mutable_job()->set_priority("high");
  *r.mutable_job()->mutable_wait() = w;
  const std::string shown = RenderResults(r, 1'764'612'000'000 - 5 * 60 * 1000);
  EXPECT_NE(shown.find("waiting: next in the queue; waiting for board an547-0, reserved by alice"),
            std::string::npos)
      << shown;
  EXPECT_NE(shown.find("priority high"), std::string::npos) << shown;
  const auto json = nlohmann::json::parse(ResultsJson(r));
  EXPECT_EQ(json["wait"]["holder"], "alice");
  EXPECT_EQ(json["priority"], "high");
}

TEST(Progress, ShowAndJobsSayHowFarARunningJobIs) {
  v1::Job j;
  j.set_state("running");
  j.set_num_cases(3);
  j.set_iterations(20);
  j.set_progress_total(60);
  EXPECT_EQ(ProgressCell(j), "-");
  j.set_progress_done(31);
  EXPECT_EQ(ProgressCell(j), "51% (31/60)");
  EXPECT_EQ(ProgressLine(j).rfind("progress: 1 of 3 cases done; iterations [", 0), 0u)
      << ProgressLine(j);
  EXPECT_NE(ProgressLine(j).find("] 31/60\n"), std::string::npos) << ProgressLine(j);
  v1::ListJobsReply list;
  *list.add_jobs() = j;
  const std::string table = RenderJobs(list);
  EXPECT_NE(table.find("progress"), std::string::npos) << table;
  EXPECT_NE(table.find("51% (31/60)"), std::string::npos) << table;
  j.set_progress_done(60);
  EXPECT_EQ(ProgressCell(j), "100%");
  j.set_state("succeeded");
  EXPECT_EQ(ProgressLine(j), "");
  v1::Results r;
  j.set_state("running");
  j.set_progress_done(20);
  *r.mutable_job() = j;
  EXPECT_NE(RenderResults(r, 0).find("progress: 1 of 3 cases done; iterations ["),
            std::string::npos)
      << RenderResults(r, 0);
  // Its cases that have not finished are still to come, not "not run".
  auto* c = r.add_cases();
  c->set_case_id(5);
  const std::string running = RenderResults(r, 0);
  EXPECT_NE(running.find("pending"), std::string::npos) << running;
  EXPECT_EQ(running.find("not run"), std::string::npos) << running;
  EXPECT_NE(running.find("(no case has finished yet: the job is running)"), std::string::npos)
      << running;
}

}  // namespace
}  // namespace mculab::cli

namespace mculab::cli {
namespace {

// show says the kernel set the runner reported, beside what was asked; until a run started, what
// was asked. A custom runner's kernels are its own: no line, and "-" in the jobs table.
TEST(RenderResults, NamesTheKernelSetTheRunnerRanAndTheOneAskedFor) {
  v1::Results r;
  r.mutable_job()->set_state("queued");
  r.mutable_job()->set_kernels("reference");
  EXPECT_NE(RenderResults(r, 0).find("kernels: reference (asked for)\n"), std::string::npos)
      << RenderResults(r, 0);
  r.mutable_job()->set_kernels("fast");
  r.mutable_provenance()->set_runner_version("0.3.0 (builtin-helium)");
  r.mutable_provenance()->set_kernel_set("helium");
  EXPECT_NE(RenderResults(r, 0).find("kernels: helium (the runner's report; asked for fast)\n"),
            std::string::npos)
      << RenderResults(r, 0);
  r.mutable_job()->set_firmware_artifact(std::string(64, 'a'));
  r.mutable_provenance()->set_kernel_set("");
  EXPECT_EQ(RenderResults(r, 0).find("kernels:"), std::string::npos) << RenderResults(r, 0);
}

TEST(RenderJobs, TheKernelsColumnIsWhatRanElseWhatWasAsked) {
  v1::ListJobsReply list;
  v1::Job* ran = list.add_jobs();
  ran->set_id(1);
  ran->set_kernels("fast");
  ran->set_kernel_set("dsp");
  v1::Job* queued = list.add_jobs();
  queued->set_id(2);
  queued->set_kernels("reference");
  v1::Job* custom = list.add_jobs();
  custom->set_id(3);
  custom->set_kernels("fast");
  custom->set_firmware_artifact(std::string(64, 'b'));
  EXPECT_EQ(KernelsText(*ran, ran->kernel_set()), "dsp");
  EXPECT_EQ(KernelsText(*queued, queued->kernel_set()), "reference (asked)");
  EXPECT_EQ(KernelsText(*custom, custom->kernel_set()), "-");
  const std::string table = RenderJobs(list);
  EXPECT_NE(table.find("kernels"), std::string::npos) << table;
  EXPECT_NE(table.find("reference (asked)"), std::string::npos) << table;
}

}  // namespace
}  // namespace mculab::cli
