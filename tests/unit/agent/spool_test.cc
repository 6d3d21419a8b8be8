#include "agent/run/spool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "agent/io/temp_dir.h"
#include "agent/run/spool_record.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;

SampleBatchRecord Batch(std::uint64_t run, std::uint64_t seq, int samples = 3) {
  SampleBatchRecord b;
  b.run_id = run;
  b.sequence = seq;
  for (int i = 0; i < samples; ++i) {
    b.rows.push_back(
        SampleRow{0, static_cast<std::uint32_t>(i), 0, 100 * static_cast<std::int64_t>(seq) + i});
  }
  return b;
}

// What a replayed message is, as "kind:detail".
std::string Describe(const RunMessage& m) {
  if (std::holds_alternative<RunStartedRecord>(m)) return "started";
  if (auto* c = std::get_if<CaseDoneRecord>(&m)) return "case:" + std::to_string(c->case_index);
  if (auto* b = std::get_if<SampleBatchRecord>(&m)) return "batch:" + std::to_string(b->sequence);
  if (std::holds_alternative<RunFinishedRecord>(m)) return "finished";
  return "state";
}

// What a replay sends, as "kind:detail" strings.
std::vector<std::string> Replayed(const Spool& spool, std::uint64_t run) {
  std::vector<std::string> out;
  const std::size_t n = spool.Replay(run, [&](RunMessage&& m) {
    out.push_back(Describe(m));
    return true;
  });
  EXPECT_EQ(n, out.size());
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
  CaseDoneRecord cd;
  cd.run_id = 7;
  cd.case_index = 0;
  for (int i = 0; i < 64; ++i) {
    OpProfileRecord& op = cd.ops.emplace_back();
    op.op_index = static_cast<std::uint32_t>(i);
    op.name = std::string(80 << 10, 'x');
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
  RunStartedRecord started;
  started.run_id = 7;
  ASSERT_TRUE(spool_->PutStarted(started).ok());
  for (std::uint64_t seq = 0; seq < 12; ++seq) ASSERT_TRUE(spool_->PutBatch(Batch(7, seq)).ok());
  for (std::uint32_t c : {1u, 0u}) {
    CaseDoneRecord cd;
    cd.run_id = 7;
    cd.case_index = c;
    ASSERT_TRUE(spool_->PutCaseDone(cd).ok());
  }
  spool_->Ack(7, 0);
  spool_->Ack(7, 10);
  RunFinishedRecord fin;
  fin.run_id = 7;
  fin.batches_sent = 12;
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
  (*again)->Replay(7, [](RunMessage&& m) {
    if (auto* b = std::get_if<SampleBatchRecord>(&m)) {
      EXPECT_EQ(*b, Batch(7, b->sequence));
    }
    if (auto* f = std::get_if<RunFinishedRecord>(&m)) {
      EXPECT_EQ(f->batches_sent, 12u);
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
  EXPECT_EQ(spool_->Replay(3, [&](RunMessage&&) { return ++calls < 2; }), 1u);
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

TEST_F(SpoolTest, ADamagedFileIsSetAsideAndTheRestOfTheRunIsStillReplayed) {
  ASSERT_TRUE(spool_->BeginRun(4).ok());
  for (std::uint64_t seq = 0; seq < 3; ++seq) ASSERT_TRUE(spool_->PutBatch(Batch(4, seq)).ok());
  const auto damaged = dir_->path() / "runs/4/batch-1.rec";
  auto bytes = ReadFile(damaged);
  ASSERT_TRUE(bytes.ok());
  (*bytes)[bytes->size() / 2] ^= 0x40;  // one flipped bit: the CRC no longer matches
  ASSERT_TRUE(WriteFile(damaged, *bytes).ok());

  EXPECT_THAT(Replayed(*spool_, 4), ElementsAre("batch:0", "batch:2"));
  EXPECT_FALSE(std::filesystem::exists(damaged));
  EXPECT_TRUE(std::filesystem::exists(dir_->path() / "runs/4/damaged-batch-1.rec"));
  // Set aside once: the next replay neither sends it nor trips over it again.
  EXPECT_THAT(Replayed(*spool_, 4), ElementsAre("batch:0", "batch:2"));
  EXPECT_THAT(spool_->PendingBatches(4), ElementsAre(0, 2));
  EXPECT_EQ(spool_->NextSequence(4), 3u);
}

TEST_F(SpoolTest, AFileThatIsNotARecordIsSetAsideNotSent) {
  ASSERT_TRUE(spool_->BeginRun(4).ok());
  ASSERT_TRUE(WriteFile(dir_->path() / "runs/4/started.rec", "\xff\xff\xff garbage").ok());
  ASSERT_TRUE(spool_->PutBatch(Batch(4, 0)).ok());
  EXPECT_THAT(Replayed(*spool_, 4), ElementsAre("batch:0"));
  EXPECT_TRUE(std::filesystem::exists(dir_->path() / "runs/4/damaged-started.rec"));
}

TEST_F(SpoolTest, FilesAreWholeRecordsUnderTheirNames) {
  ASSERT_TRUE(spool_->BeginRun(8).ok());
  ASSERT_TRUE(spool_->PutBatch(Batch(8, 5)).ok());
  RunFinishedRecord fin{8, RunOutcome::kTimedOut, "late", 6};
  ASSERT_TRUE(spool_->PutFinished(fin).ok());
  auto batch = ReadFile(dir_->path() / "runs/8/batch-5.rec");
  ASSERT_TRUE(batch.ok());
  auto decoded = DecodeSpoolRecord(*batch);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(std::get<SampleBatchRecord>(*decoded), Batch(8, 5));
  auto end = ReadFile(dir_->path() / "runs/8/finished.rec");
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(std::get<RunFinishedRecord>(*DecodeSpoolRecord(*end)), fin);
  // Nothing but the records, next_seq, and no temporary file left behind.
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir_->path() / "runs/8")) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("batch-5.rec", "finished.rec", "next_seq"));
}

// The inode number of `path` (0 when it does not exist).
ino_t InodeOf(const std::filesystem::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

std::size_t FilesIn(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST_F(SpoolTest, AnAcknowledgedBatchsFileIsWrittenAgainForTheNextBatchNotCreated) {
  ASSERT_TRUE(spool_->BeginRun(4).ok());
  ASSERT_TRUE(spool_->PutBatch(Batch(4, 0, 50)).ok());
  const ino_t first = InodeOf(dir_->path() / "runs/4/batch-0.rec");
  ASSERT_NE(first, 0u);
  spool_->Ack(4, 0);
  EXPECT_TRUE(spool_->PendingBatches(4).empty());
  EXPECT_EQ(FilesIn(dir_->path() / "free"), 1u);

  // Another run's batch, shorter than the file it is written into.
  ASSERT_TRUE(spool_->BeginRun(5).ok());
  ASSERT_TRUE(spool_->PutBatch(Batch(5, 3, 2)).ok());
  EXPECT_EQ(InodeOf(dir_->path() / "runs/5/batch-3.rec"), first);
  EXPECT_EQ(FilesIn(dir_->path() / "free"), 0u);
  auto bytes = ReadFile(dir_->path() / "runs/5/batch-3.rec");
  ASSERT_TRUE(bytes.ok());
  auto decoded = DecodeSpoolRecord(*bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(std::get<SampleBatchRecord>(*decoded), Batch(5, 3, 2));
  EXPECT_THAT(Replayed(*spool_, 5), ElementsAre("batch:3"));
  EXPECT_TRUE(Replayed(*spool_, 4).empty());
}

TEST_F(SpoolTest, AtMostKeptFreeFilesAreKeptAndAReopenedSpoolWritesIntoThem) {
  ASSERT_TRUE(spool_->BeginRun(4).ok());
  const std::uint64_t n = Spool::kKeptFreeFiles + 3;
  for (std::uint64_t seq = 0; seq < n; ++seq) ASSERT_TRUE(spool_->PutBatch(Batch(4, seq)).ok());
  for (std::uint64_t seq = 0; seq < n; ++seq) spool_->Ack(4, seq);
  EXPECT_EQ(FilesIn(dir_->path() / "free"), Spool::kKeptFreeFiles);
  EXPECT_EQ(FilesIn(dir_->path() / "runs/4"), 1u);  // next_seq

  spool_.reset();
  auto reopened = Spool::Open(dir_->path());
  ASSERT_TRUE(reopened.ok());
  ASSERT_TRUE((*reopened)->PutBatch(Batch(4, n)).ok());
  EXPECT_EQ(FilesIn(dir_->path() / "free"), Spool::kKeptFreeFiles - 1);
  EXPECT_THAT(Replayed(**reopened, 4), ElementsAre("batch:" + std::to_string(n)));
}

}  // namespace
}  // namespace mculab::agent
