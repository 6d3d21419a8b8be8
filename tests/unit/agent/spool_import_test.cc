// A spool an earlier agent wrote in protobuf (.pb files, one AgentMessage each) becomes the spool's
// own records once, when the link starts: nothing is lost across the upgrade.
#include "agent/link/spool_import.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent.pb.h"
#include "agent/io/temp_dir.h"

namespace mculab::agent {
namespace {

using ::testing::ElementsAre;

class SpoolImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::Create("mculab-spool-import-test-");
    ASSERT_TRUE(d.ok());
    dir_ = std::move(*d);
    auto s = Spool::Open(dir_->path());
    ASSERT_TRUE(s.ok());
    spool_ = std::move(*s);
  }
  // Writes what an earlier agent's spool held under `name`.
  void WriteOld(std::uint64_t run, const std::string& name, const v1::AgentMessage& m) {
    const auto run_dir = dir_->path() / "runs" / std::to_string(run);
    std::filesystem::create_directories(run_dir);
    ASSERT_TRUE(WriteFile(run_dir / name, m.SerializeAsString()).ok());
  }
  std::vector<std::string> Files(std::uint64_t run) const {
    std::vector<std::string> names;
    for (const auto& e :
         std::filesystem::directory_iterator(dir_->path() / "runs" / std::to_string(run))) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Spool> spool_;
};

TEST_F(SpoolImportTest, AnOldSpoolIsReplayedInFullAfterTheImport) {
  v1::AgentMessage started;
  started.mutable_run_started()->set_run_id(3);
  started.mutable_run_started()->set_port("an547");
  WriteOld(3, "started.pb", started);
  v1::AgentMessage cd;
  cd.mutable_case_done()->set_run_id(3);
  cd.mutable_case_done()->set_case_index(1);
  WriteOld(3, "case-1.pb", cd);
  for (std::uint64_t seq : {4u, 6u}) {  // 0..3 and 5 were acknowledged
    v1::AgentMessage b;
    b.mutable_batch()->set_run_id(3);
    b.mutable_batch()->set_sequence(seq);
    auto* s = b.mutable_batch()->add_samples();
    s->set_iteration(static_cast<std::uint32_t>(seq));
    s->set_value(42);
    WriteOld(3, "batch-" + std::to_string(seq) + ".pb", b);
  }
  v1::AgentMessage fin;
  fin.mutable_run_finished()->set_run_id(3);
  fin.mutable_run_finished()->set_outcome(v1::RunFinished::TIMED_OUT);
  fin.mutable_run_finished()->set_batches_sent(7);
  WriteOld(3, "finished.pb", fin);

  const SpoolImport result = ImportProtobufSpool(*spool_);
  EXPECT_EQ(result.imported, 5u);
  EXPECT_EQ(result.damaged, 0u);
  EXPECT_THAT(Files(3), ElementsAre("batch-4.rec", "batch-6.rec", "case-1.rec", "finished.rec",
                                    "next_seq", "started.rec"));
  std::vector<std::string> replayed;
  spool_->Replay(3, [&](RunMessage&& m) {
    if (auto* s = std::get_if<RunStartedRecord>(&m)) replayed.push_back("started:" + s->port);
    if (auto* c = std::get_if<CaseDoneRecord>(&m)) {
      replayed.push_back("case:" + std::to_string(c->case_index));
    }
    if (auto* b = std::get_if<SampleBatchRecord>(&m)) {
      EXPECT_THAT(b->rows,
                  ElementsAre(SampleRow{0, static_cast<std::uint32_t>(b->sequence), 0, 42}));
      replayed.push_back("batch:" + std::to_string(b->sequence));
    }
    if (auto* f = std::get_if<RunFinishedRecord>(&m)) {
      EXPECT_EQ(f->outcome, RunOutcome::kTimedOut);
      replayed.push_back("finished:" + std::to_string(f->batches_sent));
    }
    return true;
  });
  EXPECT_THAT(replayed, ElementsAre("started:an547", "case:1", "batch:4", "batch:6", "finished:7"));
  EXPECT_TRUE(spool_->HasFinished(3));
  EXPECT_EQ(spool_->NextSequence(3), 7u);

  // Once: a second import finds nothing to do.
  EXPECT_EQ(ImportProtobufSpool(*spool_).imported, 0u);
}

TEST_F(SpoolImportTest, AnOldFileThatDoesNotParseIsSetAsideAndTheRestIsImported) {
  const auto run_dir = dir_->path() / "runs" / "8";
  std::filesystem::create_directories(run_dir);
  ASSERT_TRUE(WriteFile(run_dir / "batch-0.pb", "\xff\xff\xff not protobuf").ok());
  v1::AgentMessage b;
  b.mutable_batch()->set_run_id(8);
  b.mutable_batch()->set_sequence(1);
  WriteOld(8, "batch-1.pb", b);
  const SpoolImport result = ImportProtobufSpool(*spool_);
  EXPECT_EQ(result.imported, 1u);
  EXPECT_EQ(result.damaged, 1u);
  EXPECT_THAT(Files(8), ElementsAre("batch-1.rec", "damaged-batch-0.pb", "next_seq"));
  EXPECT_THAT(spool_->PendingBatches(8), ElementsAre(1));
}

}  // namespace
}  // namespace mculab::agent
