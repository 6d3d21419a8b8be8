// RunReporter alone: session events in, spooled and sequenced run messages out. No board, no
// runner: the test plays the session's listener calls.
#include "agent/run/run_reporter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/io/temp_dir.h"
#include "run_records.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Records what it is sent, and whether the spool already held each message when it came.
struct CheckingSink : testing::RecordingSink {
  explicit CheckingSink(const Spool& spool) : spool(spool) {}
  void Send(RunMessage m) override {
    if (auto* b = std::get_if<SampleBatchRecord>(&m)) {
      const auto seqs = spool.PendingBatches(b->run_id);
      spooled_first &= std::find(seqs.begin(), seqs.end(), b->sequence) != seqs.end();
    }
    if (auto* c = std::get_if<CaseDoneRecord>(&m)) {
      spooled_first &= std::filesystem::exists(spool.dir() / "runs" / std::to_string(c->run_id) /
                                               ("case-" + std::to_string(c->case_index) + ".rec"));
    }
    if (auto* s = std::get_if<RunStartedRecord>(&m)) {
      spooled_first &=
          std::filesystem::exists(spool.dir() / "runs" / std::to_string(s->run_id) / "started.rec");
    }
    RecordingSink::Send(std::move(m));
  }
  std::vector<std::size_t> BatchSizes() const {
    std::vector<std::size_t> out;
    for (const auto& b : All<SampleBatchRecord>()) out.push_back(b.rows.size());
    return out;
  }
  const Spool& spool;
  bool spooled_first = true;
};

class RunReporterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::Create("mculab-reporter-test-");
    ASSERT_TRUE(d.ok());
    dir_ = std::move(*d);
    OpenSpool(kMaxAgentMessageBytes);
    a_.run_id = 5;
    a_.cases = {RunCase{10, 100, {}}, RunCase{11, 101, {}}};
    plan_.counters = {"instructions", "loads"};
    plan_.passes = {AgentPass{0, {"loads"}, {}, {}}, AgentPass{1, {"instructions"}, {}, {}}};
    hello_.runner_major = 1;
    hello_.port = "host";
    hello_.cpu = "x86";
    hello_.timer_unit = "cycles";
    hello_.clock_hz = 1000;
  }
  void OpenSpool(std::size_t max_bytes) {
    auto s = Spool::Open(dir_->path(), false, max_bytes);
    ASSERT_TRUE(s.ok());
    spool_ = std::move(*s);
    ASSERT_TRUE(spool_->BeginRun(5).ok());
    sink_ = std::make_unique<CheckingSink>(*spool_);
  }
  std::unique_ptr<RunReporter> Reporter(BatchLimits limits) {
    return std::make_unique<RunReporter>(a_, plan_, "sha", 7, *spool_, *sink_, clock_, cancel_,
                                         limits, "test");
  }
  // Starts pass `pass` with the runner counting `counters`.
  void Start(RunReporter& r, std::size_t pass, const std::vector<std::string>& counters) {
    r.BeginPass(plan_.passes[pass], RunProvenance{});
    r.OnStarted(hello_, counters);
  }
  static SampleMsg Sample(std::uint16_t c, std::uint32_t i, std::vector<std::uint64_t> counters) {
    SampleMsg s;
    s.case_index = c;
    s.iteration = i;
    s.timer = 1000 + i;
    s.counters = std::move(counters);
    return s;
  }
  static CaseResult CaseEnd(std::uint16_t c) {
    CaseResult r;
    r.case_index = c;
    r.checksum_ok = true;
    return r;
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<CheckingSink> sink_;
  FakeClock clock_;
  CancelToken cancel_;
  RunAssignment a_;
  AgentPlan plan_;
  Hello hello_;
};

TEST_F(RunReporterTest, ABatchClosesAtItsRowLimitAndTheRestAtTheFlush) {
  auto r = Reporter({4, std::chrono::hours(1)});
  Start(*r, 0, {"loads"});
  for (std::uint32_t i = 0; i < 5; ++i) r->OnSample(Sample(0, i, {7}));  // two rows each
  EXPECT_THAT(sink_->BatchSizes(), ElementsAre(4, 4));
  r->Flush();
  EXPECT_THAT(sink_->BatchSizes(), ElementsAre(4, 4, 2));
  r->Flush();  // nothing open: nothing sent
  EXPECT_EQ(sink_->BatchSizes().size(), 3u);
  EXPECT_EQ(r->samples(), 5u);
}

TEST_F(RunReporterTest, ABatchClosesWhenItsFirstRowIsOldEnough) {
  auto r = Reporter({1000, std::chrono::milliseconds(200)});
  Start(*r, 0, {"loads"});
  r->OnSample(Sample(0, 0, {7}));
  clock_.Advance(std::chrono::milliseconds(150));
  r->OnSample(Sample(0, 1, {7}));
  EXPECT_TRUE(sink_->BatchSizes().empty());
  clock_.Advance(std::chrono::milliseconds(60));
  r->OnSample(Sample(0, 2, {7}));  // the first row is 210 ms old
  EXPECT_THAT(sink_->BatchSizes(), ElementsAre(6));

  // A slow case's end closes an old batch too, before the case's own result.
  r->OnSample(Sample(0, 3, {7}));
  clock_.Advance(std::chrono::milliseconds(300));
  r->OnCaseEnd(CaseEnd(0));
  ASSERT_EQ(sink_->sent.size(), 4u);  // started, batch, batch, case
  EXPECT_TRUE(std::holds_alternative<SampleBatchRecord>(sink_->sent[2]));
  EXPECT_TRUE(std::holds_alternative<CaseDoneRecord>(sink_->sent[3]));
}

TEST_F(RunReporterTest, SequenceNumbersCountUpFromWhatTheSpoolHasUsed) {
  for (std::uint64_t s = 0; s < 3; ++s) {
    SampleBatchRecord b;
    b.run_id = 5;
    b.sequence = s;
    ASSERT_TRUE(spool_->PutBatch(b).ok());
  }
  auto r = Reporter({2, std::chrono::hours(1)});
  Start(*r, 0, {"loads"});
  for (std::uint32_t i = 0; i < 3; ++i) r->OnSample(Sample(0, i, {7}));
  std::vector<std::uint64_t> seqs;
  for (const auto& b : sink_->All<SampleBatchRecord>()) seqs.push_back(b.sequence);
  EXPECT_THAT(seqs, ElementsAre(3, 4, 5));
  EXPECT_EQ(r->batches(), 6u);
  EXPECT_EQ(spool_->NextSequence(5), 6u);
}

TEST_F(RunReporterTest, EverythingIsSpooledBeforeItIsSent) {
  auto r = Reporter({2, std::chrono::hours(1)});
  Start(*r, 0, {"loads"});
  for (std::uint32_t i = 0; i < 3; ++i) r->OnSample(Sample(0, i, {7}));
  r->OnCaseEnd(CaseEnd(0));
  r->Flush();
  EXPECT_EQ(sink_->All<RunStartedRecord>().size(), 1u);
  EXPECT_EQ(sink_->All<SampleBatchRecord>().size(), 3u);
  EXPECT_EQ(sink_->All<CaseDoneRecord>().size(), 1u);
  EXPECT_TRUE(sink_->spooled_first);
}

TEST_F(RunReporterTest, RowsCarryTheRunWideMetricOfEachPassesCounterAndTheJobsCaseIndex) {
  auto r = Reporter({1000, std::chrono::hours(1)});
  Start(*r, 0, {"loads"});  // "loads" is the run's second counter: metric 2
  r->OnSample(Sample(1, 0, {7}));
  r->OnCaseEnd(CaseEnd(1));
  Start(*r, 1, {"instructions"});  // the next pass closes the last one's batch
  r->OnSample(Sample(0, 0, {9}));
  r->Flush();
  const auto batches = sink_->All<SampleBatchRecord>();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].pass, 0u);
  EXPECT_THAT(batches[0].rows, ElementsAre(SampleRow{11, 0, 0, 1000}, SampleRow{11, 0, 2, 7}));
  EXPECT_EQ(batches[1].pass, 1u);
  EXPECT_THAT(batches[1].rows, ElementsAre(SampleRow{10, 0, 0, 1000}, SampleRow{10, 0, 1, 9}));
  // The run starts once, with every pass's counters.
  const auto started = sink_->All<RunStartedRecord>();
  ASSERT_EQ(started.size(), 1u);
  EXPECT_THAT(started[0].counters, ElementsAre("instructions", "loads"));
  EXPECT_EQ(started[0].seed, 7u);
  EXPECT_EQ(started[0].workload_sha256, "sha");
  const auto cases = sink_->All<CaseDoneRecord>();
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].case_index, 11u);
}

TEST_F(RunReporterTest, TheServersFormTravelsWithEachBatch) {
  a_.sample_columns = true;
  auto r = Reporter({1000, std::chrono::hours(1)});
  Start(*r, 0, {});
  r->OnSample(Sample(0, 0, {}));
  r->Flush();
  ASSERT_EQ(sink_->All<SampleBatchRecord>().size(), 1u);
  EXPECT_TRUE(sink_->All<SampleBatchRecord>()[0].as_columns);
}

TEST_F(RunReporterTest, AMessageOverTheLimitStopsTheRunAndIsNeitherSpooledNorSent) {
  OpenSpool(300);  // the run's start fits, a batch of 20 rows (400 bytes) does not
  auto r = Reporter({20, std::chrono::hours(1)});
  Start(*r, 0, {"loads"});
  for (std::uint32_t i = 0; i < 10; ++i) r->OnSample(Sample(0, i, {7}));
  EXPECT_THAT(r->oversized(), HasSubstr("a sample batch is"));
  EXPECT_THAT(r->oversized(), HasSubstr("300 bytes"));
  EXPECT_TRUE(r->spool_error().empty());
  EXPECT_EQ(cancel_.reason(), CancelReason::kAgentFault);
  EXPECT_TRUE(sink_->All<SampleBatchRecord>().empty());
  EXPECT_TRUE(spool_->PendingBatches(5).empty());
  EXPECT_EQ(r->batches(), 0u);  // the sequence number was not used
  r->OnCaseEnd(CaseEnd(0));     // nothing after the refused message
  EXPECT_TRUE(sink_->All<CaseDoneRecord>().empty());
}

TEST_F(RunReporterTest, ASpoolThatCannotWriteStopsTheRunButStillSends) {
  auto r = Reporter({1000, std::chrono::hours(1)});
  Start(*r, 0, {});
  std::filesystem::remove_all(dir_->path() / "runs" / "5");  // the run's folder is gone
  r->OnSample(Sample(0, 0, {}));
  r->Flush();
  EXPECT_FALSE(r->spool_error().empty());
  EXPECT_EQ(cancel_.reason(), CancelReason::kAgentFault);
  EXPECT_EQ(sink_->All<SampleBatchRecord>().size(), 1u);
}

}  // namespace
}  // namespace mculab::agent
