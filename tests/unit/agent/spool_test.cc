#include "agent/link/spool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/io/temp_dir.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;

v1::SampleBatch Batch(std::uint64_t run, std::uint64_t seq, int samples = 3) {
  v1::SampleBatch b;
  b.set_run_id(run);
  b.set_sequence(seq);
  for (int i = 0; i < samples; ++i) {
    auto* s = b.add_samples();
    s->set_iteration(static_cast<std::uint32_t>(i));
    s->set_value(100 * static_cast<std::int64_t>(seq) + i);
  }
  return b;
}

// What a replay sends, as "kind:detail" strings.
std::vector<std::string> Replayed(const Spool& spool, std::uint64_t run) {
  std::vector<std::string> out;
  auto n = spool.Replay(run, [&](const v1::AgentMessage& m) {
    if (m.has_run_started()) out.push_back("started");
    if (m.has_case_done()) out.push_back("case:" + std::to_string(m.case_done().case_index()));
    if (m.has_batch()) out.push_back("batch:" + std::to_string(m.batch().sequence()));
    if (m.has_run_finished()) out.push_back("finished");
    return true;
  });
  EXPECT_TRUE(n.ok());
  return out;
}

class SpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::Create("mculab-spool-test-");
    ASSERT_TRUE(d.ok());
    dir_ = std::move(*d);
    auto s = Spool::Open(dir_->path());
    ASSERT_TRUE(s.ok());
    spool_ = std::move(*s);
  }
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Spool> spool_;
};

TEST_F(SpoolTest, AMessageOverTheSizeLimitIsRefusedAndNothingIsWritten) {
  // A case with as many operator profiles as a runner may send, each with a long name: over the
  // default limit, it would be refused by the server and replayed after every reconnect.
  v1::CaseDone cd;
  cd.set_run_id(7);
  cd.set_case_index(0);
  for (int i = 0; i < 64; ++i) {
    auto* op = cd.add_ops();
    op->set_op_index(static_cast<std::uint32_t>(i));
    op->set_name(std::string(80 << 10, 'x'));
  }
  ASSERT_TRUE(spool_->BeginRun(7).ok());
  Status s = spool_->PutCaseDone(cd);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kResourceExhausted);
  EXPECT_THAT(s.error().message, ::testing::HasSubstr("CaseDone"));
  EXPECT_THAT(s.error().message, ::testing::HasSubstr(std::to_string(kMaxAgentMessageBytes)));
  EXPECT_TRUE(Replayed(*spool_, 7).empty());

  // A spool opened with a smaller limit refuses a batch over it and keeps the sequence unused.
  auto small = Spool::Open(dir_->path(), false, 64);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ((*small)->PutBatch(Batch(7, 0, 20)).error().code, ErrorCode::kResourceExhausted);
  EXPECT_TRUE((*small)->PendingBatches(7).empty());
  EXPECT_EQ((*small)->NextSequence(7), 0u);
  EXPECT_TRUE((*small)->PutBatch(Batch(7, 0, 1)).ok());
  EXPECT_THAT(Replayed(**small, 7), ElementsAre("batch:0"));
}

TEST_F(SpoolTest, BatchesArePersistedUntilAcknowledged) {
  ASSERT_TRUE(spool_->BeginRun(7).ok());
  for (std::uint64_t seq = 0; seq < 3; ++seq) ASSERT_TRUE(spool_->PutBatch(Batch(7, seq)).ok());
  EXPECT_THAT(spool_->PendingBatches(7), ElementsAre(0, 1, 2));
  spool_->Ack(7, 1);
  EXPECT_THAT(spool_->PendingBatches(7), ElementsAre(0, 2));
  spool_->Ack(7, 0);
  spool_->Ack(7, 2);
  EXPECT_TRUE(spool_->PendingBatches(7).empty());
  EXPECT_EQ(spool_->NextSequence(7), 3u);
}

TEST_F(SpoolTest, ReplayAfterRestartSendsEverythingUnacknowledgedInOrder) {
  ASSERT_TRUE(spool_->BeginRun(7).ok());
  v1::RunStarted started;
  started.set_run_id(7);
  ASSERT_TRUE(spool_->PutStarted(started).ok());
  for (std::uint64_t seq = 0; seq < 12; ++seq) ASSERT_TRUE(spool_->PutBatch(Batch(7, seq)).ok());
  for (std::uint32_t c : {1u, 0u}) {
    v1::CaseDone cd;
    cd.set_run_id(7);
    cd.set_case_index(c);
    ASSERT_TRUE(spool_->PutCaseDone(cd).ok());
  }
  spool_->Ack(7, 0);
  spool_->Ack(7, 10);
  v1::RunFinished fin;
  fin.set_run_id(7);
  fin.set_batches_sent(12);
  ASSERT_TRUE(spool_->PutFinished(fin).ok());

  // A new Spool over the same folder: what a restarted agent sees.
  spool_.reset();
  auto again = Spool::Open(dir_->path());
  ASSERT_TRUE(again.ok());
  EXPECT_THAT((*again)->Runs(), ElementsAre(7));
  EXPECT_TRUE((*again)->HasFinished(7));
  EXPECT_THAT(
      Replayed(**again, 7),
      ElementsAre("started", "case:0", "case:1", "batch:1", "batch:2", "batch:3", "batch:4",
                  "batch:5", "batch:6", "batch:7", "batch:8", "batch:9", "batch:11", "finished"));
  // The payload survives byte for byte.
  (void)(*again)->Replay(7, [](const v1::AgentMessage& m) {
    if (m.has_batch()) {
      EXPECT_EQ(m.batch().samples_size(), 3);
      EXPECT_EQ(m.batch().samples(2).value(),
                100 * static_cast<std::int64_t>(m.batch().sequence()) + 2);
    }
    return true;
  });
}

TEST_F(SpoolTest, SequenceNumbersAreNeverReusedAcrossRestarts) {
  ASSERT_TRUE(spool_->BeginRun(9).ok());
  EXPECT_EQ(spool_->NextSequence(9), 0u);
  for (std::uint64_t seq = 0; seq < 4; ++seq) ASSERT_TRUE(spool_->PutBatch(Batch(9, seq)).ok());
  for (std::uint64_t seq = 0; seq < 4; ++seq) spool_->Ack(9, seq);  // all acknowledged
  spool_.reset();
  auto again = Spool::Open(dir_->path());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->NextSequence(9), 4u);
  EXPECT_EQ((*again)->NextSequence(10), 0u);
}

TEST_F(SpoolTest, TheNextSequenceAnEarlierAgentWroteIsKeptAndRewrittenWhole) {
  ASSERT_TRUE(spool_->BeginRun(11).ok());
  ASSERT_TRUE(WriteFileAtomically(dir_->path() / "runs" / "11" / "next_seq", "1000\n").ok());
  spool_.reset();
  auto again = Spool::Open(dir_->path());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->NextSequence(11), 1000u);
  ASSERT_TRUE((*again)->PutBatch(Batch(11, 1000)).ok());
  (*again)->Ack(11, 1000);
  again->reset();
  auto third = Spool::Open(dir_->path());
  ASSERT_TRUE(third.ok());
  EXPECT_EQ((*third)->NextSequence(11), 1001u);
}

TEST_F(SpoolTest, ReplayStopsWhenTheStreamBreaks) {
  ASSERT_TRUE(spool_->BeginRun(3).ok());
  for (std::uint64_t seq = 0; seq < 5; ++seq) ASSERT_TRUE(spool_->PutBatch(Batch(3, seq)).ok());
  int calls = 0;
  auto n = spool_->Replay(3, [&](const v1::AgentMessage&) { return ++calls < 2; });
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(spool_->PendingBatches(3).size(), 5u);  // nothing is dropped by a failed send
}

TEST_F(SpoolTest, CloseForgetsTheRun) {
  ASSERT_TRUE(spool_->BeginRun(5).ok());
  ASSERT_TRUE(spool_->PutBatch(Batch(5, 0)).ok());
  ASSERT_TRUE(spool_->BeginRun(6).ok());
  spool_->Close(5);
  EXPECT_THAT(spool_->Runs(), ElementsAre(6));
  EXPECT_FALSE(spool_->Contains(5));
  EXPECT_TRUE(Replayed(*spool_, 5).empty());
}

TEST_F(SpoolTest, CorruptFileIsReportedNotSent) {
  ASSERT_TRUE(spool_->BeginRun(4).ok());
  ASSERT_TRUE(WriteFile(dir_->path() / "runs/4/batch-0.pb", "\xff\xff\xff garbage").ok());
  auto n = spool_->Replay(4, [](const v1::AgentMessage&) { return true; });
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().code, ErrorCode::kDataLoss);
}

}  // namespace
}  // namespace mculab::agent
