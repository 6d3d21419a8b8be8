// The store, one suite over both backends: SqliteStore on a real SQLite file in a temporary
// directory, PgStore on a real PostgreSQL server the tests start (pg_cluster.h), a fresh database
// per test. Tests of what only SQLite has (WAL, file modes, bulk loads, the trigram index's
// migration) run on SQLite alone (SqliteStoreTest); opening errors and secrets in PgOpenTest.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <future>
#include <random>
#include <tuple>

#include "db/lab_store.h"
#include "db/pg_store.h"
#include "db/sqlite_store.h"
#include "tests/unit/db/pg_cluster.h"
#include "tests/unit/db/temp_dir.h"

namespace mculab::db {
namespace {

using server::BoardHealth;
using server::BoardState;
using server::JobState;
using server::RunState;

using testing::TempDir;

// `migrations`, with `rows` (SQL inserting rows as an older server wrote them, naming only the
// columns it knew) run just before the first migration whose name contains `before`.
std::vector<Migration> MigrationsWithOldRows(const std::vector<Migration>& migrations,
                                             const std::string& before, const std::string& rows) {
  std::vector<Migration> out;
  int shift = 0;
  for (const Migration& m : migrations) {
    if (shift == 0 && m.name.find(before) != std::string::npos) {
      out.push_back({m.version, "old_rows.sql", rows});
      shift = 1;
    }
    out.push_back({m.version + shift, m.name, m.sql});
  }
  return out;
}

// `migrations` and one more that fails if it runs twice (the table already exists).
std::vector<Migration> WithProbe(std::vector<Migration> migrations) {
  migrations.push_back({migrations.back().version + 1, "probe.sql", "CREATE TABLE probe(x INT);"});
  return migrations;
}

enum class Backend { kSqlite, kPostgres };

std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "PostgreSQL";
}

class StoreTestBase : public ::testing::Test {
 protected:
  explicit StoreTestBase(Backend backend) : backend_(backend) {}

  void SetUp() override {
    if (backend_ != Backend::kPostgres) return;
    auto cluster = testing::PgCluster::Shared();
    ASSERT_TRUE(cluster.ok()) << cluster.error().message;
    auto url = (*cluster)->NewDatabase();
    ASSERT_TRUE(url.ok()) << url.error().message;
    url_ = *url;
  }

  std::filesystem::path db_path() const { return dir_.path() / "mculab.db"; }

  // The backend's own migrations.
  const std::vector<Migration>& Migrations() const {
    return backend_ == Backend::kSqlite ? EmbeddedMigrations() : EmbeddedPostgresMigrations();
  }

  // The test's database opened with `migrations` (default: the backend's own), or an error.
  Result<std::unique_ptr<LabStore>> TryOpen(std::optional<std::vector<Migration>> migrations = {}) {
    if (backend_ == Backend::kSqlite) {
      SqliteOptions options;
      if (migrations) options.migrations = std::move(*migrations);
      auto store = SqliteStore::Open(db_path(), std::move(options));
      if (!store.ok()) return store.error();
      return std::unique_ptr<LabStore>(std::move(*store));
    }
    PgOptions options;
    if (migrations) options.migrations = std::move(*migrations);
    auto store = PgStore::Open(url_, std::move(options));
    if (!store.ok()) return store.error();
    return std::unique_ptr<LabStore>(std::move(*store));
  }

  std::unique_ptr<LabStore> Open(std::optional<std::vector<Migration>> migrations = {}) {
    auto store = TryOpen(std::move(migrations));
    EXPECT_TRUE(store.ok()) << (store.ok() ? "" : store.error().message);
    return store.ok() ? std::move(*store) : nullptr;
  }

  static Job NewJob(std::string kind = "host", std::string user = "ana") {
    Job j;
    j.user = std::move(user);
    j.kind = std::move(kind);
    j.op = "fully_connected_s8";
    j.iterations = 10;
    j.warmup = 1;
    j.num_cases = 2;
    j.timeout_s = 600;
    j.created_ms = 1000;
    return j;
  }

  // Inserts a job with the next id and its creation audit row.
  static JobId Insert(Store& store, Job job) {
    auto max = store.MaxJobId();
    EXPECT_TRUE(max.ok());
    job.id = *max + 1;
    WriteSet ws;
    ws.new_jobs.push_back({job, {{7, {1, 8, 4}}, {9, {1, 16, 4}}}});
    ws.transitions.push_back(
        server::CreationTransition(job, job.user, job.created_ms * 1000 + 123));
    EXPECT_TRUE(store.WriteAndWait(std::move(ws)).ok());
    return job.id;
  }

  static db::Run NewRun(RunId id, JobId job) {
    db::Run r;
    r.id = id;
    r.job_id = job;
    r.attempt = 1;
    r.board = "host-0";
    r.agent = "lab-1";
    r.created_ms = 2000;
    return r;
  }

  static SampleBatch Batch(RunId run, std::uint64_t seq, std::uint32_t iterations) {
    SampleBatch b;
    b.run_id = run;
    b.sequence = seq;
    for (std::uint32_t i = 0; i < iterations; ++i) {
      b.samples.push_back(Sample{0, 0, i, 0, 100 + i});
      b.samples.push_back(Sample{0, 0, i, 1, 5});
    }
    b.iterations = iterations;
    return b;
  }

  Backend backend_;
  TempDir dir_;
  std::string url_;  // PostgreSQL: the test's own database
};

// Every test of both backends.
class StoreTest : public StoreTestBase, public ::testing::WithParamInterface<Backend> {
 protected:
  StoreTest() : StoreTestBase(GetParam()) {}
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres), BackendName);

// What only SQLite has.
class SqliteStoreTest : public StoreTestBase {
 protected:
  SqliteStoreTest() : StoreTestBase(Backend::kSqlite) {}
  std::unique_ptr<SqliteStore> OpenSqlite(SqliteOptions options = {}) {
    auto store = SqliteStore::Open(db_path(), std::move(options));
    EXPECT_TRUE(store.ok()) << (store.ok() ? "" : store.error().message);
    return store.ok() ? std::move(*store) : nullptr;
  }
};

TEST_P(StoreTest, MigrationsAreAppliedAtOpenAndRecordedInUserVersion) {
  auto store = Open();
  ASSERT_TRUE(store);
  auto version = store->SchemaVersion();
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, EmbeddedMigrations().back().version);
}

TEST_F(SqliteStoreTest, JournalModeIsWal) {
  auto store = OpenSqlite();
  ASSERT_TRUE(store);
  auto mode = store->JournalMode();
  ASSERT_TRUE(mode.ok());
  EXPECT_EQ(*mode, "wal");
}

TEST_P(StoreTest, ReopeningAppliesEachMigrationOnlyOnce) {
  const std::vector<Migration> migrations = WithProbe(Migrations());
  { ASSERT_TRUE(Open(migrations)); }
  auto again = TryOpen(migrations);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*(*again)->SchemaVersion(), migrations.back().version);
}

TEST_P(StoreTest, MigrationAddedLaterIsAppliedOnNextOpen) {
  { ASSERT_TRUE(Open()); }
  const std::vector<Migration> migrations = WithProbe(Migrations());
  auto store = Open(migrations);
  ASSERT_TRUE(store);
  EXPECT_EQ(*store->SchemaVersion(), migrations.back().version);
}

TEST_P(StoreTest, DatabaseNewerThanTheServerIsRefused) {
  { ASSERT_TRUE(Open(WithProbe(Migrations()))); }
  auto store = TryOpen();
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kFailedPrecondition);
  // What is wrong (the schema version, newer than this server's) and what to do.
  EXPECT_NE(store.error().message.find("schema version " +
                                       std::to_string(Migrations().back().version + 1)),
            std::string::npos)
      << store.error().message;
  EXPECT_NE(store.error().message.find("use a newer mculab-server"), std::string::npos);
}

TEST_P(StoreTest, InsertedJobIsReadBackWithCasesAndCreationAuditRow) {
  auto store = Open();
  ASSERT_TRUE(store);
  Job job = NewJob();
  job.label = "baseline";
  const JobId id = Insert(*store, job);
  EXPECT_EQ(id, 1);
  auto got = store->GetJob(id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->user, "ana");
  EXPECT_EQ(got->label, "baseline");
  EXPECT_EQ(got->state, JobState::kQueued);
  EXPECT_EQ(got->num_cases, 2u);
  auto cases = store->GetJobCases(id);
  ASSERT_TRUE(cases.ok());
  EXPECT_EQ(*cases, (std::vector<CaseSpec>{{7, {1, 8, 4}}, {9, {1, 16, 4}}}));
  auto audit = store->GetTransitions(id);
  ASSERT_TRUE(audit.ok());
  ASSERT_EQ(audit->size(), 1u);
  EXPECT_EQ((*audit)[0].from, "");
  EXPECT_EQ((*audit)[0].to, "queued");
  EXPECT_EQ((*audit)[0].actor, "ana");
  EXPECT_EQ((*audit)[0].time_ms, 1000);
  EXPECT_EQ((*audit)[0].time_us, 1'000'123) << "transitions keep their microseconds";
}

TEST_P(StoreTest, InsertingAnExistingJobIdFailsThatWriteSetOnly) {
  auto store = Open();
  ASSERT_TRUE(store);
  Job job = NewJob();
  job.id = Insert(*store, job);
  WriteSet dup;
  dup.new_jobs.push_back({job, {}});
  WriteSet other;
  other.artifacts.push_back({"cd34", 1, "x.csv", "ana", 1});
  // Both are queued behind a write that holds the writer, so they share one transaction.
  std::promise<void> release, holding;
  std::shared_future<void> released = release.get_future().share();
  store->Write(WriteSet{}, [&](const WriteOutcome&) {
    holding.set_value();
    released.wait();
  });
  holding.get_future().wait();
  std::promise<Status> dup_done, other_done;
  store->Write(std::move(dup), [&](const WriteOutcome& o) { dup_done.set_value(o.status); });
  store->Write(std::move(other), [&](const WriteOutcome& o) { other_done.set_value(o.status); });
  release.set_value();
  EXPECT_FALSE(dup_done.get_future().get().ok());
  EXPECT_TRUE(other_done.get_future().get().ok());
  EXPECT_TRUE(store->GetArtifact("cd34")->has_value());
}

TEST_P(StoreTest, MissingJobIsNotFound) {
  auto store = Open();
  ASSERT_TRUE(store);
  auto got = store->GetJob(42);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kNotFound);
}

TEST_P(StoreTest, TransitionsAreWrittenToTheAuditTableInOrder) {
  auto store = Open();
  ASSERT_TRUE(store);
  Job job = NewJob();
  job.id = Insert(*store, job);
  WriteSet ws;
  auto t1 = server::ApplyTransition(job, JobState::kAssigned, "scheduled", "server", 5'001);
  auto t2 = server::ApplyTransition(job, JobState::kCancelled, "by user", "ana", 6'999);
  ASSERT_TRUE(t1.ok() && t2.ok());
  ws.jobs.push_back(job);
  ws.transitions = {*t1, *t2};
  ASSERT_TRUE(store->WriteAndWait(std::move(ws)).ok());
  auto audit = store->GetTransitions(job.id);
  ASSERT_TRUE(audit.ok());
  ASSERT_EQ(audit->size(), 3u);
  EXPECT_EQ((*audit)[1].from, "queued");
  EXPECT_EQ((*audit)[1].to, "assigned");
  EXPECT_EQ((*audit)[2].to, "cancelled");
  EXPECT_EQ((*audit)[2].reason, "by user");
  EXPECT_EQ((*audit)[1].time_us, 5'001);
  EXPECT_EQ((*audit)[2].time_ms, 6);
  EXPECT_EQ((*audit)[2].time_us, 6'999);
  EXPECT_EQ(store->GetJob(job.id)->state, JobState::kCancelled);
  EXPECT_EQ(store->GetJob(job.id)->attempts, 1u);
}

TEST_P(StoreTest, ReadSeesAWriteItsThreadQueuedBeforeIt) {
  auto store = Open();
  ASSERT_TRUE(store);
  Job job = NewJob();
  job.id = Insert(*store, job);
  job.message = "queued behind 3 jobs";
  WriteSet ws;
  ws.jobs.push_back(job);
  store->Write(std::move(ws));  // not waited for
  EXPECT_EQ(store->GetJob(job.id)->message, "queued behind 3 jobs");
}

TEST_P(StoreTest, ReadDoesNotWaitForAnotherThreadsQueuedSamples) {
  auto store = Open();
  ASSERT_TRUE(store);
  const JobId id = Insert(*store, NewJob());
  // The writer is held inside a commit callback, so nothing queued after it can commit.
  std::promise<void> held, release;
  store->Write(WriteSet{}, [&](const WriteOutcome&) {
    held.set_value();
    release.get_future().wait();
  });
  held.get_future().wait();
  WriteSet ws;
  ws.batch = Batch(1, 0, 10);
  store->Write(std::move(ws));  // samples queued by this thread, not committed
  // Another thread's reads neither wait for them nor see them.
  auto other = std::async(std::launch::async, [&] {
    return std::make_pair(store->CountSamples(1), store->GetJob(id));
  });
  const bool waited = other.wait_for(std::chrono::seconds(10)) != std::future_status::ready;
  release.set_value();
  ASSERT_FALSE(waited) << "a read waited for another thread's queued samples";
  auto [count, job] = other.get();
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 0u);
  EXPECT_TRUE(job.ok());
  // This thread's read waits for the samples it queued.
  EXPECT_EQ(*store->CountSamples(1), 20u);
}

TEST_P(StoreTest, ReadOnAnyThreadWaitsForQueuedStateAndSeesIt) {
  auto store = Open();
  ASSERT_TRUE(store);
  Job job = NewJob();
  job.id = Insert(*store, job);
  std::promise<void> held, release;
  store->Write(WriteSet{}, [&](const WriteOutcome&) {
    held.set_value();
    release.get_future().wait();
  });
  held.get_future().wait();
  job.message = "decided, not yet committed";
  WriteSet ws;
  ws.jobs.push_back(job);
  store->Write(std::move(ws));
  auto other = std::async(std::launch::async, [&] { return store->GetJob(job.id); });
  // It cannot finish while the state write it must see is held.
  const bool early = other.wait_for(std::chrono::milliseconds(200)) == std::future_status::ready;
  release.set_value();
  EXPECT_FALSE(early) << "a read did not wait for a queued state write";
  auto seen = other.get();
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(seen->message, "decided, not yet committed");
}

TEST_P(StoreTest, ReadAfterADoneCallbackSeesThatWriteOnAnyThread) {
  auto store = Open();
  ASSERT_TRUE(store);
  Job job = NewJob();
  job.id = Insert(*store, job);
  job.message = "committed";
  std::promise<void> done;
  WriteSet ws;
  ws.jobs.push_back(job);
  store->Write(std::move(ws), [&](const WriteOutcome&) { done.set_value(); });
  done.get_future().wait();
  auto other = std::async(std::launch::async, [&] { return store->GetJob(job.id); }).get();
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->message, "committed");
}

TEST_P(StoreTest, ReadsGoOnWhileALongReadHoldsItsConnection) {
  auto store = Open();
  ASSERT_TRUE(store);
  const JobId id = Insert(*store, NewJob());
  WriteSet ws;
  ws.batch = Batch(1, 0, 10);
  ASSERT_TRUE(store->WriteAndWait(std::move(ws)).ok());
  bool read_inside = false;
  Status scan = store->ScanSamples(1, [&](std::span<const Sample>) {
    // The scan holds a connection; another thread's read takes another one.
    auto job = std::async(std::launch::async, [&] { return store->GetJob(id); });
    if (job.wait_for(std::chrono::seconds(10)) == std::future_status::ready) {
      read_inside = job.get().ok();
    }
  });
  ASSERT_TRUE(scan.ok());
  EXPECT_TRUE(read_inside);
}

// Run 4's samples out of every order (two passes, two cases, two metrics), and run 5's one.
void StoreMixedSamples(Store& store) {
  WriteSet ws;
  ws.batch = SampleBatch{4,
                         0,
                         {{1, 1, 0, 0, 10},
                          {0, 1, 0, 1, 11},
                          {0, 0, 1, 0, 12},
                          {0, 1, 0, 0, 13},
                          {1, 0, 0, 0, 14},
                          {0, 0, 0, 0, 15}},
                         0};
  ASSERT_TRUE(store.WriteAndWait(std::move(ws)).ok());
  WriteSet other;
  other.batch = SampleBatch{5, 0, {{0, 0, 0, 0, 99}}, 0};
  ASSERT_TRUE(store.WriteAndWait(std::move(other)).ok());
}

TEST_P(StoreTest, ScanSamplesGivesARunsSamplesInCaseMetricPassOrder) {
  auto store = Open();
  ASSERT_TRUE(store);
  StoreMixedSamples(*store);
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>> keys;
  std::vector<std::int64_t> values;
  ASSERT_TRUE(store
                  ->ScanSamples(4,
                                [&](std::span<const Sample> chunk) {
                                  for (const Sample& s : chunk) {
                                    keys.emplace_back(s.case_index, s.metric, s.pass);
                                    values.push_back(s.value);
                                  }
                                })
                  .ok());
  ASSERT_EQ(keys.size(), 6u);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  std::sort(values.begin(), values.end());
  EXPECT_EQ(values, (std::vector<std::int64_t>{10, 11, 12, 13, 14, 15}));
}

// One metric's values of a run, every pass, by case (each case's values in any order); one case's
// only when asked; other runs and metrics left out.
TEST_P(StoreTest, GetMetricValuesGivesOneMetricOfARunByCaseOverItsPasses) {
  auto store = Open();
  ASSERT_TRUE(store);
  StoreMixedSamples(*store);
  WriteSet case2;
  case2.batch = SampleBatch{4, 1, {{0, 2, 0, 1, 16}}, 0};
  ASSERT_TRUE(store->WriteAndWait(std::move(case2)).ok());
  auto sorted = [](std::map<std::uint32_t, std::vector<double>> m) {
    for (auto& [k, v] : m) std::sort(v.begin(), v.end());
    return m;
  };
  using ByCase = std::map<std::uint32_t, std::vector<double>>;
  auto timer = store->GetMetricValues(4, 0, std::nullopt);
  ASSERT_TRUE(timer.ok());
  EXPECT_EQ(sorted(*timer), (ByCase{{0, {12, 14, 15}}, {1, {10, 13}}}));
  auto counter = store->GetMetricValues(4, 1, std::nullopt);
  ASSERT_TRUE(counter.ok());
  EXPECT_EQ(sorted(*counter), (ByCase{{1, {11}}, {2, {16}}}));
  auto one_case = store->GetMetricValues(4, 0, 1);
  ASSERT_TRUE(one_case.ok());
  EXPECT_EQ(sorted(*one_case), (ByCase{{1, {10, 13}}}));
  auto none = store->GetMetricValues(6, 0, std::nullopt);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// Rows stored in case order (one pass, cases ascending across batches, metrics interleaved per
// iteration, as an agent sends them) come back grouped by metric within each case, each group in
// stored order; a batch that goes back to an earlier case is still read in case order.
TEST_P(StoreTest, ScanSamplesGroupsRowsStoredInCaseOrderByMetricAndOutOfOrderOnesToo) {
  auto store = Open();
  ASSERT_TRUE(store);
  auto scan = [&](RunId run) {
    std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::int64_t>> rows;
    Status s = store->ScanSamples(run, [&](std::span<const Sample> chunk) {
      for (const Sample& x : chunk) rows.emplace_back(x.case_index, x.metric, x.pass, x.value);
    });
    EXPECT_TRUE(s.ok());
    return rows;
  };
  // Run 6: case 0 iterations 0-1, then case 0 iteration 2 and case 1, each with metrics 0 and 1.
  WriteSet a;
  a.batch = SampleBatch{
      6, 0, {{0, 0, 0, 0, 100}, {0, 0, 0, 1, 200}, {0, 0, 1, 0, 101}, {0, 0, 1, 1, 201}}, 0};
  ASSERT_TRUE(store->WriteAndWait(std::move(a)).ok());
  WriteSet b;
  b.batch = SampleBatch{
      6, 1, {{0, 0, 2, 0, 102}, {0, 0, 2, 1, 202}, {0, 1, 0, 0, 110}, {0, 1, 0, 1, 210}}, 0};
  ASSERT_TRUE(store->WriteAndWait(std::move(b)).ok());
  using R = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::int64_t>;
  EXPECT_EQ(scan(6), (std::vector<R>{{0, 0, 0, 100},
                                     {0, 0, 0, 101},
                                     {0, 0, 0, 102},
                                     {0, 1, 0, 200},
                                     {0, 1, 0, 201},
                                     {0, 1, 0, 202},
                                     {1, 0, 0, 110},
                                     {1, 1, 0, 210}}));
  // Run 7: case 1 stored before case 0.
  WriteSet c;
  c.batch = SampleBatch{7, 0, {{0, 1, 0, 0, 11}, {0, 1, 0, 1, 12}}, 0};
  ASSERT_TRUE(store->WriteAndWait(std::move(c)).ok());
  WriteSet d;
  d.batch = SampleBatch{7, 1, {{0, 0, 0, 1, 2}, {0, 0, 0, 0, 1}}, 0};
  ASSERT_TRUE(store->WriteAndWait(std::move(d)).ok());
  EXPECT_EQ(scan(7), (std::vector<R>{{0, 0, 0, 1}, {0, 1, 0, 2}, {1, 0, 0, 11}, {1, 1, 0, 12}}));
}

TEST_P(StoreTest, RepeatedBatchIsStoredOnceAndAcknowledgedAsDuplicate) {
  auto store = Open();
  ASSERT_TRUE(store);
  Job job = NewJob();
  job.id = Insert(*store, job);
  WriteSet run;
  run.runs.push_back(NewRun(1, job.id));
  ASSERT_TRUE(store->WriteAndWait(std::move(run)).ok());

  std::vector<WriteOutcome> outcomes;
  for (int i = 0; i < 2; ++i) {
    std::promise<WriteOutcome> p;
    WriteSet ws;
    ws.batch = Batch(1, 0, 5);
    store->Write(std::move(ws), [&p](const WriteOutcome& o) { p.set_value(o); });
    outcomes.push_back(p.get_future().get());
  }
  EXPECT_TRUE(outcomes[0].status.ok());
  EXPECT_FALSE(outcomes[0].duplicate_batch);
  EXPECT_TRUE(outcomes[1].status.ok());
  EXPECT_TRUE(outcomes[1].duplicate_batch);
  EXPECT_EQ(*store->CountSamples(1), 10u);
  EXPECT_EQ(store->GetRun(1)->progress_done, 5u);
  // The outcome reports the run's progress after an appended batch, and none for a duplicate.
  EXPECT_EQ(outcomes[0].run_progress, std::optional<std::uint64_t>(5));
  EXPECT_EQ(outcomes[1].run_progress, std::nullopt);
  std::promise<WriteOutcome> next;
  WriteSet ws;
  ws.batch = Batch(1, 1, 3);
  store->Write(std::move(ws), [&next](const WriteOutcome& o) { next.set_value(o); });
  EXPECT_EQ(next.get_future().get().run_progress, std::optional<std::uint64_t>(8));
}

TEST_P(StoreTest, SameSequenceOfAnotherRunIsNotADuplicate) {
  auto store = Open();
  ASSERT_TRUE(store);
  WriteSet a, b;
  a.batch = Batch(1, 0, 3);
  b.batch = Batch(2, 0, 3);
  ASSERT_TRUE(store->WriteAndWait(std::move(a)).ok());
  ASSERT_TRUE(store->WriteAndWait(std::move(b)).ok());
  EXPECT_EQ(*store->CountSamples(1), 6u);
  EXPECT_EQ(*store->CountSamples(2), 6u);
}

TEST_P(StoreTest, ListBatchSequencesGivesTheRunsCommittedBatchesInOrder) {
  auto store = Open();
  ASSERT_TRUE(store);
  for (auto [run, seq] : {std::pair{1, 2}, {1, 0}, {2, 1}, {1, 0}}) {
    WriteSet ws;
    ws.batch = Batch(run, static_cast<std::uint64_t>(seq), 2);
    ASSERT_TRUE(store->WriteAndWait(std::move(ws)).ok());
  }
  EXPECT_EQ(*store->ListBatchSequences(1), (std::vector<std::uint64_t>{0, 2}));
  EXPECT_EQ(*store->ListBatchSequences(2), (std::vector<std::uint64_t>{1}));
  EXPECT_TRUE(store->ListBatchSequences(3)->empty());
}

TEST_P(StoreTest, BatchCallbackRunsOnlyAfterTheSamplesAreCommitted) {
  auto store = Open();
  ASSERT_TRUE(store);
  std::promise<std::uint64_t> seen;
  WriteSet ws;
  ws.batch = Batch(3, 0, 300);
  store->Write(std::move(ws), [&](const WriteOutcome& o) {
    ASSERT_TRUE(o.status.ok());
    // The read connection sees only committed data.
    seen.set_value(*store->CountSamples(3));
  });
  EXPECT_EQ(seen.get_future().get(), 600u);
}

TEST_P(StoreTest, WritesQueuedTogetherShareOneTransaction) {
  auto store = Open();
  ASSERT_TRUE(store);
  // Hold the writer inside the first write's callback while 20 batches of 100 rows queue up.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> holding;
  WriteSet first;
  first.batch = Batch(1, 0, 1);
  store->Write(std::move(first), [&](const WriteOutcome&) {
    holding.set_value();
    released.wait();
  });
  holding.get_future().wait();
  const std::uint64_t before = store->TransactionsCommitted();
  for (std::uint64_t seq = 1; seq <= 20; ++seq) {
    WriteSet ws;
    ws.batch = Batch(1, seq, 50);
    store->Write(std::move(ws));
  }
  release.set_value();
  store->Flush();
  EXPECT_EQ(store->TransactionsCommitted() - before, 1u);
  EXPECT_EQ(*store->CountSamples(1), 2u + 20u * 100u);
}

TEST_P(StoreTest, SamplesAreReadInPassCaseMetricIterationOrder) {
  auto store = Open();
  ASSERT_TRUE(store);
  WriteSet ws;
  ws.batch = SampleBatch{};
  ws.batch->run_id = 4;
  ws.batch->samples = {{0, 1, 1, 0, 11}, {0, 0, 1, 0, 1}, {0, 1, 0, 0, 10}, {0, 0, 0, 0, 0}};
  ASSERT_TRUE(store->WriteAndWait(std::move(ws)).ok());
  auto samples = store->GetSamples(4);
  ASSERT_TRUE(samples.ok());
  std::vector<std::int64_t> values;
  for (const auto& s : *samples) values.push_back(s.value);
  EXPECT_EQ(values, (std::vector<std::int64_t>{0, 1, 10, 11}));
}

TEST_P(StoreTest, RunProvenanceIsStoredAndProgressIsKeptAcrossUpdates) {
  auto store = Open();
  ASSERT_TRUE(store);
  db::Run run = NewRun(7, 1);
  WriteSet a;
  a.runs.push_back(run);
  a.batch = Batch(7, 0, 4);
  ASSERT_TRUE(store->WriteAndWait(std::move(a)).ok());
  run.state = RunState::kRunning;
  run.started = true;
  run.provenance.timer_unit = "cycles";
  run.provenance.counters = {"instructions", "loads"};
  run.provenance.clock_hz = 32'000'000;
  run.provenance.emulated = true;
  WriteSet b;
  b.runs.push_back(run);
  ASSERT_TRUE(store->WriteAndWait(std::move(b)).ok());
  auto got = store->GetRun(7);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, RunState::kRunning);
  EXPECT_EQ(got->provenance.counters, (std::vector<std::string>{"instructions", "loads"}));
  EXPECT_EQ(got->provenance.clock_hz, 32'000'000u);
  EXPECT_TRUE(got->provenance.emulated);
  EXPECT_EQ(got->progress_done, 4u);  // an upsert of the run does not reset the store's count
  EXPECT_EQ(*store->MaxRunId(), 7);
}

// The kernel set asked for is the job's; the one its runner reported is the run's, and the job
// shows its latest run's.
TEST_P(StoreTest, TheKernelSetAskedForAndTheOneThatRanRoundTrip) {
  auto store = Open();
  ASSERT_TRUE(store);
  Job fast = NewJob();
  fast.id = Insert(*store, fast);
  Job reference = NewJob();
  reference.reference_kernels = true;
  reference.id = Insert(*store, reference);
  EXPECT_FALSE(store->GetJob(fast.id)->reference_kernels);
  EXPECT_TRUE(store->GetJob(reference.id)->reference_kernels);
  EXPECT_EQ(store->GetJob(reference.id)->kernel_set_ran, "") << "no run yet";
  reference.last_run_id = 5;
  db::Run run = NewRun(5, reference.id);
  run.started = true;
  run.provenance.kernel_set = "reference";
  WriteSet ws;
  ws.jobs.push_back(reference);
  ws.runs.push_back(run);
  ASSERT_TRUE(store->WriteAndWait(std::move(ws)).ok());
  EXPECT_EQ(store->GetRun(5)->provenance.kernel_set, "reference");
  EXPECT_EQ(store->GetJob(reference.id)->kernel_set_ran, "reference");
  EXPECT_TRUE(store->GetJob(reference.id)->reference_kernels);
}

TEST_P(StoreTest, JobShowsTheProgressOfItsLatestRun) {
  auto store = Open();
  ASSERT_TRUE(store);
  Job job = NewJob();
  job.id = Insert(*store, job);
  job.last_run_id = 3;
  WriteSet ws;
  ws.jobs.push_back(job);
  ws.runs.push_back(NewRun(3, job.id));
  ws.batch = Batch(3, 0, 6);
  ASSERT_TRUE(store->WriteAndWait(std::move(ws)).ok());
  EXPECT_EQ(store->GetJob(job.id)->progress_done, 6u);
}

TEST_P(StoreTest, QueryJobsFiltersAndPagesNewestFirst) {
  auto store = Open();
  ASSERT_TRUE(store);
  for (int i = 0; i < 5; ++i) Insert(*store, NewJob(i % 2 ? "qemu" : "host", i < 3 ? "ana" : "bo"));
  auto ids = [&](const JobQuery& q) {
    std::vector<JobId> out;
    auto page = store->QueryJobs(q);
    EXPECT_TRUE(page.ok());
    if (page.ok()) {
      for (const JobRow& row : page->jobs) out.push_back(row.job.id);
    }
    return out;
  };
  EXPECT_EQ(ids(JobQuery{}), (std::vector<JobId>{5, 4, 3, 2, 1}));

  JobQuery page;
  page.limit = 2;
  page.before_id = 4;
  EXPECT_EQ(ids(page), (std::vector<JobId>{3, 2}));

  JobQuery kind;
  kind.kind = "qemu";
  EXPECT_EQ(ids(kind), (std::vector<JobId>{4, 2}));

  JobQuery user;
  user.user = "bo";
  user.kind = "host";
  EXPECT_EQ(ids(user), (std::vector<JobId>{5}));
}

TEST_P(StoreTest, ActiveJobsExcludeFinishedOnes) {
  auto store = Open();
  ASSERT_TRUE(store);
  Job a = NewJob();
  a.id = Insert(*store, a);
  Job b = NewJob();
  b.id = Insert(*store, b);
  auto t = server::ApplyTransition(b, JobState::kCancelled, "by user", "ana", 9);
  ASSERT_TRUE(t.ok());
  WriteSet ws;
  ws.jobs.push_back(b);
  ws.transitions.push_back(*t);
  ASSERT_TRUE(store->WriteAndWait(std::move(ws)).ok());
  auto active = store->ListActiveJobs();
  ASSERT_TRUE(active.ok());
  ASSERT_EQ(active->size(), 1u);
  EXPECT_EQ((*active)[0].id, a.id);
}

TEST_P(StoreTest, BoardsAreUpsertedWithTagsAndTheirTransitionsAudited) {
  auto store = Open();
  ASSERT_TRUE(store);
  Board b;
  b.name = "an547-0";
  b.kind = "corstone300-qemu";
  b.agent = "lab-1";
  b.tags = {{"cpu", "cortex-m55"}};
  b.emulated = true;
  b.state = BoardState::kIdle;
  b.health = BoardHealth::kGood;
  WriteSet a;
  a.boards.push_back(b);
  ASSERT_TRUE(store->WriteAndWait(std::move(a)).ok());
  b.health = BoardHealth::kUnknown;
  WriteSet c;
  c.boards.push_back(b);
  c.board_transitions.push_back({b.name, "health", "good", "unknown", "agent lost", "server", 3});
  ASSERT_TRUE(store->WriteAndWait(std::move(c)).ok());
  auto boards = store->ListBoards();
  ASSERT_TRUE(boards.ok());
  ASSERT_EQ(boards->size(), 1u);
  EXPECT_EQ((*boards)[0].health, BoardHealth::kUnknown);
  EXPECT_EQ((*boards)[0].tags.at("cpu"), "cortex-m55");
  EXPECT_TRUE((*boards)[0].emulated);
  auto audit = store->GetBoardTransitions(b.name);
  ASSERT_EQ(audit->size(), 1u);
  EXPECT_EQ((*audit)[0].reason, "agent lost");
}

TEST_P(StoreTest, CaseStatsAndResultsRoundTrip) {
  auto store = Open();
  ASSERT_TRUE(store);
  WriteSet ws;
  ws.case_results.push_back({5, 0, 0xabcd, 0xabcd, true, 12});
  CaseStats s;
  s.job_id = 1;
  s.run_id = 5;
  s.metric = "cycles";
  s.unit = "cycles";
  s.n = 3;
  s.median = 101.5;
  ws.case_stats.push_back(s);
  ASSERT_TRUE(store->WriteAndWait(std::move(ws)).ok());
  auto results = store->GetCaseResults(5);
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0].checksum, 0xabcdu);
  EXPECT_EQ((*results)[0].overhead, 12);
  auto stats = store->GetCaseStats(1);
  ASSERT_EQ(stats->size(), 1u);
  EXPECT_DOUBLE_EQ((*stats)[0].median, 101.5);
}

TEST_P(StoreTest, ArtifactIsStoredOnceByHash) {
  auto store = Open();
  ASSERT_TRUE(store);
  for (int i = 0; i < 2; ++i) {
    WriteSet ws;
    ws.artifacts.push_back({"ab12", 10, i ? "second.csv" : "first.csv", "ana", 1});
    ASSERT_TRUE(store->WriteAndWait(std::move(ws)).ok());
  }
  auto a = store->GetArtifact("ab12");
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->name, "first.csv");
  EXPECT_FALSE(store->GetArtifact("ffff")->has_value());
}

TEST_P(StoreTest, EveryUploaderOfTheSameBytesOwnsThemAndSharingIsAFlag) {
  auto store = Open();
  ASSERT_TRUE(store);
  for (const auto& [user, ms] : {std::pair{"ana", 1}, std::pair{"ben", 50}}) {
    WriteSet ws;
    ws.artifacts.push_back({"ab12", 10, "f.bin", user, ms});
    ASSERT_TRUE(store->WriteAndWait(std::move(ws)).ok());
  }
  EXPECT_EQ((*store->GetArtifact("ab12"))->user, "ana");  // the first uploader
  EXPECT_TRUE(*store->IsArtifactOwner("ab12", "ana"));
  EXPECT_TRUE(*store->IsArtifactOwner("ab12", "ben"));
  EXPECT_FALSE(*store->IsArtifactOwner("ab12", "cy"));
  EXPECT_FALSE(*store->IsArtifactOwner("ffff", "ana"));
  EXPECT_FALSE((*store->GetArtifact("ab12"))->shared);
  WriteSet share;
  share.artifact_sharing.push_back({"ab12", true});
  ASSERT_TRUE(store->WriteAndWait(std::move(share)).ok());
  EXPECT_TRUE((*store->GetArtifact("ab12"))->shared);
  // Collection waits for the latest upload: ben's (at 50) keeps it past 10.
  EXPECT_TRUE(store->ListArtifactsBefore(10)->empty());
  EXPECT_EQ(store->ListArtifactsBefore(51)->size(), 1u);
  WriteSet del;
  del.deleted_artifacts.push_back("ab12");
  ASSERT_TRUE(store->WriteAndWait(std::move(del)).ok());
  EXPECT_FALSE(*store->IsArtifactOwner("ab12", "ben"));
}

TEST_P(StoreTest, CloseAppliesEveryQueuedWriteAndRunsItsCallback) {
  std::atomic<int> done{0};
  {
    auto store = Open();
    ASSERT_TRUE(store);
    for (std::uint64_t seq = 0; seq < 50; ++seq) {
      WriteSet ws;
      ws.batch = Batch(9, seq, 10);
      store->Write(std::move(ws), [&](const WriteOutcome& o) {
        if (o.status.ok()) ++done;
      });
    }
    store->Close();
  }
  EXPECT_EQ(done.load(), 50);
  auto store = Open();
  ASSERT_TRUE(store);
  EXPECT_EQ(*store->CountSamples(9), 50u * 20u);
}

TEST_P(StoreTest, WriteAfterCloseFailsWithUnavailable) {
  auto store = Open();
  ASSERT_TRUE(store);
  store->Close();
  Status s = store->WriteAndWait(WriteSet{});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kUnavailable);
  EXPECT_FALSE(store->GetJob(1).ok());
}

// ---- job events, board counter units, run passes, op profiles, memory ----

TEST_P(StoreTest, ProfileTablesRoundTripAndReplaceByKey) {
  auto store = Open();
  ASSERT_TRUE(store);
  WriteSet ws;
  ws.job_events.push_back({7, {"instructions", "loads"}});
  server::BoardUnits units;
  units.board = "an547-0";
  units.units.push_back({"qemu-plugin", 3, {"instructions", "loads"}, true});
  units.emulated.push_back(true);
  ws.board_units.push_back(units);
  ws.run_passes.push_back({5, 1, {"cycles", "branches"}});
  ws.run_passes.push_back({5, 0, {"cycles", "instructions"}});
  ws.op_profiles.push_back({5, 0, 1, 2, 0, "CONV_2D", "conv", 10, 1000, 90, 110, false});
  ws.op_profiles.push_back({5, 0, 0, 2, 1, "CONV_2D", "conv", 10, 50, 5, 5, true});
  ws.memory.push_back({5, -1, "elf", "flash.text", 4096, 0});
  ws.memory.push_back({5, 0, "runner", "arena", 100, 4096});
  ASSERT_TRUE(store->WriteAndWait(ws).ok());

  auto events = store->GetJobEvents(7);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->events, (std::vector<std::string>{"instructions", "loads"}));
  auto none = store->GetJobEvents(8);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->events.empty());
  auto u = store->ListBoardUnits();
  ASSERT_TRUE(u.ok());
  ASSERT_EQ(u->size(), 1u);
  EXPECT_EQ((*u)[0].units[0].name, "qemu-plugin");
  EXPECT_EQ((*u)[0].units[0].max_simultaneous, 3u);
  EXPECT_EQ((*u)[0].units[0].events.size(), 2u);
  EXPECT_TRUE((*u)[0].emulated[0]);
  auto passes = store->GetRunPasses(5);
  ASSERT_TRUE(passes.ok());
  ASSERT_EQ(passes->size(), 2u);
  EXPECT_EQ((*passes)[0].events, (std::vector<std::string>{"cycles", "instructions"}));
  auto ops = store->GetOpProfiles(5);
  ASSERT_TRUE(ops.ok());
  ASSERT_EQ(ops->size(), 2u);
  EXPECT_EQ((*ops)[0].case_index, 0u);  // ordered by (pass, case, op, metric)
  EXPECT_TRUE((*ops)[0].unclosed);
  EXPECT_EQ((*ops)[1].sum, 1000u);
  auto mem = store->GetMemory(5);
  ASSERT_TRUE(mem.ok());
  ASSERT_EQ(mem->size(), 2u);
  EXPECT_EQ((*mem)[0].case_index, -1);
  EXPECT_EQ((*mem)[1].reserved, 4096u);

  // A board's units are replaced, not appended; a repeated op row replaces the old one.
  WriteSet again;
  units.units[0].max_simultaneous = 2;
  again.board_units.push_back(units);
  again.op_profiles.push_back({5, 0, 1, 2, 0, "CONV_2D", "conv", 10, 2000, 90, 110, false});
  ASSERT_TRUE(store->WriteAndWait(again).ok());
  u = store->ListBoardUnits();
  ASSERT_TRUE(u.ok());
  ASSERT_EQ((*u)[0].units.size(), 1u);
  EXPECT_EQ((*u)[0].units[0].max_simultaneous, 2u);
  ops = store->GetOpProfiles(5);
  ASSERT_TRUE(ops.ok());
  ASSERT_EQ(ops->size(), 2u);
  EXPECT_EQ((*ops)[1].sum, 2000u);
}

}  // namespace
}  // namespace mculab::db

namespace mculab::db {
namespace {

// Health checks used to be known by their user name "lab"; the migration that adds jobs.origin
// marks the ones the server made (user lab, a named board, "health check of <board>") and no
// other job, whoever its user.
TEST_P(StoreTest, OriginMigrationMarksOnlyTheServersOldHealthChecks) {
  // Rows as a server before the origin column wrote them.
  const std::vector<Migration> migrations = MigrationsWithOldRows(
      Migrations(), "job_origin",
      "INSERT INTO jobs(id, user_name, kind, board, op, label, state, iterations, warmup, "
      "num_cases, timeout_s, created_ms) VALUES "
      "(1, 'lab', 'host', 'host-0', 'fully_connected_s8', 'health check of host-0', "
      "'succeeded', 5, 1, 1, 300, 1),"
      "(2, 'lab', 'host', 'host-0', 'fully_connected_s8', 'my run', 'succeeded', 5, 1, 1, "
      "300, 2),"
      "(3, 'ana', 'host', 'host-0', 'fully_connected_s8', 'health check of host-0', "
      "'succeeded', 5, 1, 1, 300, 3);");
  auto store = Open(migrations);
  ASSERT_TRUE(store);
  auto check = store->GetJob(1);
  ASSERT_TRUE(check.ok()) << check.error().message;
  EXPECT_EQ(check->origin, server::JobOrigin::kHealthCheck);
  for (JobId id : {2, 3}) {
    auto job = store->GetJob(id);
    ASSERT_TRUE(job.ok());
    EXPECT_EQ(job->origin, server::JobOrigin::kUser) << "job " << id;
  }
}

// What a kept answer needs to catch up: the jobs written since a state version.
TEST_P(StoreTest, JobsWrittenSinceAVersionNameTheJobsEachStateWriteTouched) {
  auto store = Open();
  ASSERT_TRUE(store);
  const std::uint64_t v0 = store->StateVersion();
  const JobId a = Insert(*store, NewJob());
  auto written = store->JobsWrittenSince(v0);
  ASSERT_TRUE(written);
  EXPECT_EQ(*written, std::vector<JobId>{a});

  const std::uint64_t v1 = store->StateVersion();
  EXPECT_EQ(store->JobsWrittenSince(v1), std::vector<JobId>{}) << "nothing since";
  WriteSet run;
  run.runs.push_back(NewRun(10, a));
  ASSERT_TRUE(store->WriteAndWait(std::move(run)).ok());
  WriteSet samples;  // samples only: no state write
  samples.batch = Batch(10, 0, 4);
  ASSERT_TRUE(store->WriteAndWait(std::move(samples)).ok());
  Board board;
  board.name = "host-9";
  board.kind = "host";
  board.agent = "lab-1";
  WriteSet boards;  // state, but no job
  boards.boards.push_back(board);
  ASSERT_TRUE(store->WriteAndWait(std::move(boards)).ok());
  EXPECT_EQ(store->JobsWrittenSince(v1), std::vector<JobId>{a});
  EXPECT_EQ(store->JobsWrittenSince(store->StateVersion()), std::vector<JobId>{});

  // An artifact may rename a series' runner: the store cannot say which jobs that touches.
  const std::uint64_t v2 = store->StateVersion();
  WriteSet upload;
  upload.artifacts.push_back({"ab12", 10, "runner.elf", "ana", 1});
  ASSERT_TRUE(store->WriteAndWait(std::move(upload)).ok());
  EXPECT_FALSE(store->JobsWrittenSince(v2));
  EXPECT_FALSE(store->JobsWrittenSince(v0));
}

// Transitions written before time_us existed are read in microseconds from their milliseconds.
TEST_P(StoreTest, TransitionsFromBeforeMicrosecondsReadAsTheirMilliseconds) {
  const std::vector<Migration> migrations = MigrationsWithOldRows(
      Migrations(), "transition_microseconds",
      "INSERT INTO job_transitions(job_id, from_state, to_state, reason, actor, time_ms) VALUES "
      "(1, '', 'queued', 'submitted', 'ana', 1500), "
      "(1, 'queued', 'cancelled', 'by user', 'ana', 1502);");
  auto store = Open(migrations);
  ASSERT_TRUE(store);
  auto audit = store->GetTransitions(1);
  ASSERT_TRUE(audit.ok()) << audit.error().message;
  ASSERT_EQ(audit->size(), 2u);
  EXPECT_EQ((*audit)[0].time_us, 1'500'000);
  EXPECT_EQ((*audit)[1].time_ms, 1502);
  EXPECT_EQ((*audit)[1].time_us, 1'502'000);
}

TEST_P(StoreTest, ReservedRunIdsCountAsUsedAndNeverShrink) {
  auto store = Open();
  ASSERT_TRUE(store);
  WriteSet ws;
  ws.reserve_run_ids_to = 1000;
  ASSERT_TRUE(store->WriteAndWait(std::move(ws)).ok());
  WriteSet lower;
  lower.reserve_run_ids_to = 10;
  ASSERT_TRUE(store->WriteAndWait(std::move(lower)).ok());
  auto max = store->MaxRunId();
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(*max, 1000);
  WriteSet run;
  run.runs.push_back(NewRun(1500, Insert(*store, NewJob())));
  ASSERT_TRUE(store->WriteAndWait(std::move(run)).ok());
  EXPECT_EQ(*store->MaxRunId(), 1500);
}

// What README.md promises about commits, on both backends: once a write's `done` has run, the
// write is in the database even if the server dies that instant (here: a child process that
// _exits in the callback, closing nothing), and a reserved run id is never handed out again.
TEST_P(StoreTest, AWriteWhoseCallbackRanSurvivesTheServerDyingThere) {
  { ASSERT_TRUE(Open()); }  // migrated before the child, so it only writes
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto store = TryOpen();
    if (!store.ok()) ::_exit(2);
    Job job = NewJob();
    job.id = 1;
    WriteSet ws;
    ws.new_jobs.push_back({job, {}});
    ws.reserve_run_ids_to = 1000;
    (*store)->Write(std::move(ws), [](const WriteOutcome& o) { ::_exit(o.status.ok() ? 0 : 3); });
    ::sleep(60);
    ::_exit(4);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  auto store = Open();
  ASSERT_TRUE(store);
  EXPECT_TRUE(store->GetJob(1).ok());
  EXPECT_EQ(*store->MaxRunId(), 1000);
}

TEST_F(SqliteStoreTest, DatabaseFilesAreCreatedForTheOwnerOnly) {
  const mode_t old_umask = ::umask(022);  // what a default service would run with
  auto store = Open();
  ::umask(old_umask);
  ASSERT_TRUE(store);
  Insert(*store, NewJob());
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const auto path = db_path().string() + suffix;
    const auto perms = std::filesystem::status(path).permissions();
    EXPECT_EQ(perms, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write)
        << path;
  }
}

// ---- label search (the trigram index of migration 0010) ----

std::vector<JobId> LabelMatches(Store& store, const std::string& text) {
  JobQuery q;
  q.label_contains = text;
  q.sort = JobSortKey::kId;
  q.ascending = true;
  q.limit = 1000;
  auto page = store.QueryJobs(q);
  EXPECT_TRUE(page.ok()) << (page.ok() ? "" : page.error().message);
  std::vector<JobId> ids;
  if (!page.ok()) return ids;
  for (const auto& row : page->jobs) ids.push_back(row.job.id);
  EXPECT_EQ(page->total, ids.size()) << "label \"" << text << "\"";
  return ids;
}

TEST_P(StoreTest, LabelSearchIsACaseInsensitiveAsciiSubstringWhateverItsLength) {
  auto store = Open();
  ASSERT_TRUE(store);
  const std::string labels[] = {"Nightly conv",
                                "ticket 4711",
                                "say \"hi\" 100%_",
                                "\xC3\x89"
                                "clair",
                                "ab",
                                "unroll x4 nightly"};
  for (const std::string& l : labels) {
    Job j = NewJob();
    j.label = l;
    Insert(*store, j);
  }
  EXPECT_EQ(LabelMatches(*store, "NIGHTLY"), (std::vector<JobId>{1, 6}));
  EXPECT_EQ(LabelMatches(*store, "4711"), (std::vector<JobId>{2}));
  EXPECT_EQ(LabelMatches(*store, "\"hi\""), (std::vector<JobId>{3}));
  EXPECT_EQ(LabelMatches(*store, "100%_"), (std::vector<JobId>{3}));
  EXPECT_EQ(LabelMatches(*store, "0%"), (std::vector<JobId>{3}));  // two characters: no trigram
  EXPECT_EQ(LabelMatches(*store, "ab"), (std::vector<JobId>{5}));
  EXPECT_EQ(LabelMatches(*store, "x"), (std::vector<JobId>{6}));
  EXPECT_EQ(LabelMatches(*store,
                         "\xC3\x89"
                         "clair"),
            (std::vector<JobId>{4}));
  // LIKE folds ASCII only: another case of a non-ASCII letter is another letter.
  EXPECT_EQ(LabelMatches(*store,
                         "\xC3\xA9"
                         "clair"),
            (std::vector<JobId>{}));
  EXPECT_EQ(LabelMatches(*store, "nightlyx"), (std::vector<JobId>{}));
  EXPECT_EQ(LabelMatches(*store, "OR"), (std::vector<JobId>{}));
  EXPECT_EQ(LabelMatches(*store, "conv OR 4711"), (std::vector<JobId>{}));
}

TEST_P(StoreTest, LabelSearchFindsWhatABruteForceSubstringSearchFinds) {
  auto store = Open();
  ASSERT_TRUE(store);
  std::mt19937 rng(5);
  const std::string alphabet = "abcAB 12-";
  std::vector<std::string> labels;
  for (int i = 0; i < 300; ++i) {
    std::string l;
    for (int k = static_cast<int>(rng() % 12); k > 0; --k) l += alphabet[rng() % alphabet.size()];
    labels.push_back(l);
    Job j = NewJob();
    j.label = l;
    Insert(*store, j);
  }
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (int q = 0; q < 60; ++q) {
    std::string text;
    for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k) {
      text += alphabet[rng() % alphabet.size()];
    }
    std::vector<JobId> want;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (lower(labels[i]).find(lower(text)) != std::string::npos) {
        want.push_back(static_cast<JobId>(i + 1));
      }
    }
    EXPECT_EQ(LabelMatches(*store, text), want) << "label \"" << text << "\"";
  }
}

TEST_F(SqliteStoreTest, LabelsOfJobsStoredBeforeTheTrigramIndexAreFound) {
  SqliteOptions options;
  options.migrations = MigrationsWithOldRows(
      EmbeddedMigrations(), "label_search",
      "INSERT INTO jobs(id, user_name, kind, board, op, label, state, iterations, warmup, "
      "num_cases, timeout_s, created_ms) VALUES "
      "(1, 'ana', 'host', '', 'fully_connected_s8', 'before the index', 'queued', 5, 1, 1, "
      "300, 1);");
  auto store = OpenSqlite(options);
  ASSERT_TRUE(store);
  Job j = NewJob();
  j.label = "after the index";
  Insert(*store, j);
  EXPECT_EQ(LabelMatches(*store, "the index"), (std::vector<JobId>{1, 2}));
  EXPECT_EQ(LabelMatches(*store, "BEFORE"), (std::vector<JobId>{1}));
}

// ---- history pages and totals ----

TEST_P(StoreTest, EveryPageInEverySortIsItsSliceOfTheWholeListAndTotalsFollowTransitions) {
  auto store = Open();
  ASSERT_TRUE(store);
  const char* const users[] = {"ana", "ben", "chen"};
  const char* const ops[] = {"conv2d_s8", "fully_connected_s8"};
  std::vector<Job> jobs;
  for (int i = 0; i < 23; ++i) {
    Job j = NewJob(i % 2 ? "host" : "corstone300-qemu", users[i % 3]);
    j.op = ops[(i / 2) % 2];
    j.created_ms = 1000 + (i * 7) % 5;  // ties, broken by id
    if (i % 4 == 0) j.board = "h-1";    // requested
    j.id = Insert(*store, j);
    jobs.push_back(j);
  }
  // Transitions move jobs between the counted groups.
  WriteSet ws;
  for (int i = 0; i < 23; i += 3) {
    jobs[i].state = i % 2 ? JobState::kSucceeded : JobState::kFailed;
    jobs[i].assigned_board = i % 2 ? "h-1" : "q-2";
    ws.jobs.push_back(jobs[i]);
  }
  ASSERT_TRUE(store->WriteAndWait(std::move(ws)).ok());

  const JobSortKey sorts[] = {JobSortKey::kId, JobSortKey::kCreated, JobSortKey::kState,
                              JobSortKey::kOp, JobSortKey::kUser,    JobSortKey::kBoard};
  for (JobSortKey sort : sorts) {
    for (bool ascending : {true, false}) {
      JobQuery all;
      all.sort = sort;
      all.ascending = ascending;
      all.limit = 1000;
      auto whole = store->QueryJobs(all);
      ASSERT_TRUE(whole.ok());
      ASSERT_EQ(whole->total, 23u);
      ASSERT_EQ(whole->jobs.size(), 23u);
      for (std::uint64_t offset = 0; offset <= 24; ++offset) {
        JobQuery q = all;
        q.limit = 5;
        q.offset = offset;
        auto page = store->QueryJobs(q);
        ASSERT_TRUE(page.ok());
        EXPECT_EQ(page->total, 23u);
        std::vector<JobId> want, got;
        for (std::uint64_t k = offset; k < std::min<std::uint64_t>(23, offset + 5); ++k) {
          want.push_back(whole->jobs[k].job.id);
        }
        for (const auto& row : page->jobs) got.push_back(row.job.id);
        EXPECT_EQ(got, want) << "sort " << static_cast<int>(sort) << (ascending ? " asc" : " desc")
                             << " offset " << offset;
      }
    }
  }
  // Totals of filters on state, op, kind, user and board, against a count of the jobs.
  for (const char* user : {"", "ana", "chen"}) {
    for (const char* op : {"", "conv2d_s8"}) {
      for (const char* board : {"", "h-1", "q-2"}) {
        for (const std::vector<std::string>& states :
             {std::vector<std::string>{}, {"queued"}, {"failed", "succeeded"}}) {
          JobQuery q;
          q.user = user;
          q.op = op;
          q.board = board;
          q.kind = std::string(user) == "ana" ? "corstone300-qemu" : "";
          q.states = states;
          std::uint64_t want = 0;
          for (const Job& j : jobs) {
            const std::string state(server::JobStateName(j.state));
            if ((q.user.empty() || j.user == q.user) && (q.op.empty() || j.op == q.op) &&
                (q.kind.empty() || j.kind == q.kind) &&
                (q.board.empty() || j.board == q.board || j.assigned_board == q.board) &&
                (states.empty() ||
                 std::find(states.begin(), states.end(), state) != states.end())) {
              ++want;
            }
          }
          auto page = store->QueryJobs(q);
          ASSERT_TRUE(page.ok());
          EXPECT_EQ(page->total, want) << "user " << user << " op " << op << " board " << board;
          EXPECT_EQ(page->jobs.size(), std::min<std::uint64_t>(want, 50));
        }
      }
    }
  }
  // Pages of one op, user or state in id or creation order (read from that column's index) are
  // the slices of the filtered list sorted by (key, id).
  for (int filter = 0; filter < 3; ++filter) {
    for (JobSortKey sort : {JobSortKey::kId, JobSortKey::kCreated}) {
      for (bool ascending : {true, false}) {
        JobQuery q;
        if (filter == 0) q.op = "conv2d_s8";
        if (filter == 1) q.user = "chen";
        if (filter == 2) q.states = {"queued"};
        q.sort = sort;
        q.ascending = ascending;
        std::vector<const Job*> match;
        for (const Job& j : jobs) {
          if ((q.op.empty() || j.op == q.op) && (q.user.empty() || j.user == q.user) &&
              (q.states.empty() || j.state == JobState::kQueued)) {
            match.push_back(&j);
          }
        }
        std::sort(match.begin(), match.end(), [&](const Job* a, const Job* b) {
          const auto ka = std::make_pair(sort == JobSortKey::kId ? 0 : a->created_ms, a->id);
          const auto kb = std::make_pair(sort == JobSortKey::kId ? 0 : b->created_ms, b->id);
          return ascending ? ka < kb : kb < ka;
        });
        for (std::uint64_t offset = 0; offset <= match.size(); offset += 2) {
          q.limit = 3;
          q.offset = offset;
          auto page = store->QueryJobs(q);
          ASSERT_TRUE(page.ok());
          EXPECT_EQ(page->total, match.size());
          std::vector<JobId> want, got;
          for (std::uint64_t k = offset; k < std::min<std::uint64_t>(match.size(), offset + 3);
               ++k) {
            want.push_back(match[k]->id);
          }
          for (const auto& row : page->jobs) got.push_back(row.job.id);
          EXPECT_EQ(got, want) << "filter " << filter << " sort " << static_cast<int>(sort)
                               << (ascending ? " asc" : " desc") << " offset " << offset;
        }
      }
    }
  }
}

TEST_F(SqliteStoreTest, JobsLoadedInBulkAreListedSearchedAndCountedAsIfWrittenOneByOne) {
  auto store = OpenSqlite();
  ASSERT_TRUE(store);
  Insert(*store, NewJob());  // before: indexed as usual
  ASSERT_TRUE(store->BeginBulkLoad().ok());
  for (int i = 0; i < 20; ++i) {
    Job j = NewJob(i % 2 ? "host" : "corstone300-qemu", i % 3 ? "ana" : "ben");
    j.label = i % 4 ? "nightly" : "after im2col change";
    j.created_ms = 2000 - i;
    Insert(*store, j);
  }
  ASSERT_TRUE(store->EndBulkLoad().ok());
  Insert(*store, NewJob());  // after: the indexes and triggers are back
  JobQuery q;
  q.label_contains = "IM2COL";
  auto found = store->QueryJobs(q);
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->total, 5u);
  EXPECT_EQ(found->jobs.size(), 5u);
  q = JobQuery{};
  q.user = "ben";
  q.sort = JobSortKey::kCreated;
  q.ascending = true;
  auto ben = store->QueryJobs(q);
  ASSERT_TRUE(ben.ok()) << ben.error().message;
  ASSERT_EQ(ben->total, 7u);  // 0, 3, ..., 18 of the bulk
  EXPECT_EQ(ben->jobs.front().job.created_ms, 2000 - 18);
  for (JobSortKey sort : {JobSortKey::kId, JobSortKey::kState, JobSortKey::kOp, JobSortKey::kBoard,
                          JobSortKey::kUser}) {
    JobQuery all;
    all.sort = sort;
    auto page = store->QueryJobs(all);
    ASSERT_TRUE(page.ok()) << page.error().message;
    EXPECT_EQ(page->total, 22u);
  }
}

TEST_P(StoreTest, LabelInMoreJobsThanTheTrigramProbeTakesIsCountedAndPagedAlike) {
  auto store = Open();
  ASSERT_TRUE(store);
  WriteSet ws;
  std::vector<Job> jobs;
  for (JobId id = 1; id <= 2300; ++id) {
    Job j = NewJob(id % 2 ? "host" : "corstone300-qemu", id % 3 ? "ana" : "ben");
    j.id = id;
    j.label = id % 10 == 0 ? "baseline" : "Nightly build " + std::to_string(id % 7);
    jobs.push_back(j);
    ws.new_jobs.push_back({j, {{7, {1, 8, 4}}}});
  }
  ASSERT_TRUE(store->WriteAndWait(std::move(ws)).ok());
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (const std::string text : {"nightly", "NI", "build 3", "baseline", "line", "e"}) {
    for (const std::string user : {"", "ben"}) {
      JobQuery q;
      q.label_contains = text;
      q.user = user;
      q.limit = 50;
      std::vector<JobId> want;
      for (auto it = jobs.rbegin(); it != jobs.rend(); ++it) {
        if ((user.empty() || it->user == user) &&
            lower(it->label).find(lower(text)) != std::string::npos) {
          want.push_back(it->id);
        }
      }
      auto page = store->QueryJobs(q);
      ASSERT_TRUE(page.ok()) << page.error().message;
      EXPECT_EQ(page->total, want.size()) << "label \"" << text << "\" user \"" << user << "\"";
      want.resize(std::min<std::size_t>(want.size(), 50));
      std::vector<JobId> got;
      for (const auto& row : page->jobs) got.push_back(row.job.id);
      EXPECT_EQ(got, want) << "label \"" << text << "\" user \"" << user << "\"";
    }
  }
}

// A read connection keeps the statements it prepared, the history query's assembled shapes too,
// and drops the idle ones once it holds too many: every shape still gets its own right answer.
TEST_P(StoreTest, MoreHistoryQueryShapesThanAConnectionKeepsAreEachAnsweredRight) {
  auto store = Open();
  ASSERT_TRUE(store);
  Insert(*store, NewJob("host", "ana"));
  Insert(*store, NewJob("host", "ben"));
  Insert(*store, NewJob("qemu", "ana"));
  for (int n = 1; n <= 300; ++n) {
    JobQuery q;
    // n states: n placeholders, a statement of its own for each n.
    q.states.assign(static_cast<std::size_t>(n), "queued");
    if (n % 2) q.user = "ana";
    if (n % 3 == 0) q.kind = "host";
    auto page = store->QueryJobs(q);
    ASSERT_TRUE(page.ok()) << page.error().message;
    const std::uint64_t want = n % 2 ? (n % 3 == 0 ? 1 : 2) : (n % 3 == 0 ? 2 : 3);
    EXPECT_EQ(page->total, want) << n << " states";
    EXPECT_EQ(page->jobs.size(), want) << n << " states";
  }
  // The first shapes again, after the connection dropped them.
  JobQuery q;
  q.states = {"queued"};
  q.user = "ben";
  auto page = store->QueryJobs(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->jobs.size(), 1u);
  EXPECT_EQ(page->jobs[0].job.user, "ben");
}

// ---- opening a store by URL: clear errors, no password in them ----

TEST(StoreMigrationsTest, BothBackendsHaveMigrationsNumberedAlike) {
  std::vector<int> sqlite, postgres;
  for (const Migration& m : EmbeddedMigrations()) sqlite.push_back(m.version);
  for (const Migration& m : EmbeddedPostgresMigrations()) postgres.push_back(m.version);
  EXPECT_EQ(sqlite, postgres);
  for (std::size_t i = 0;
       i < std::min(EmbeddedMigrations().size(), EmbeddedPostgresMigrations().size()); ++i) {
    EXPECT_EQ(EmbeddedMigrations()[i].name, EmbeddedPostgresMigrations()[i].name);
  }
}

TEST(StoreUrlTest, PasswordsAreRedactedWhereverTheUrlHoldsThem) {
  EXPECT_EQ(RedactStoreUrl("postgresql://lab:s3cret@db.example:5433/mculab"),
            "postgresql://lab:***@db.example:5433/mculab");
  EXPECT_EQ(RedactStoreUrl("postgres://lab:p@ss@db/mculab"), "postgres://lab:***@db/mculab");
  EXPECT_EQ(RedactStoreUrl("postgresql://lab@db/mculab?password=s3cret&sslmode=require"),
            "postgresql://lab@db/mculab?password=***&sslmode=require");
  EXPECT_EQ(RedactStoreUrl("postgresql://db/mculab"), "postgresql://db/mculab");
  EXPECT_EQ(RedactStoreUrl("sqlite:/var/lib/mculab/mculab.db"), "sqlite:/var/lib/mculab/mculab.db");
}

TEST(StoreUrlTest, AnUnknownSchemeIsRefusedNamingTheSchemesThereAre) {
  TempDir home;
  auto store = OpenStore("mysql://lab:s3cret@db/mculab", home.path());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(store.error().message.find("unknown store"), std::string::npos);
  EXPECT_NE(store.error().message.find("sqlite:PATH"), std::string::npos);
  EXPECT_NE(store.error().message.find("postgresql://"), std::string::npos);
  EXPECT_EQ(store.error().message.find("s3cret"), std::string::npos) << store.error().message;
}

TEST(StoreUrlTest, NoUrlIsTheSqliteFileInTheHomeAndSqlitePathsAreRelativeToIt) {
  TempDir home;
  {
    auto store = OpenStore("", home.path());
    ASSERT_TRUE(store.ok()) << store.error().message;
  }
  EXPECT_TRUE(std::filesystem::exists(home.path() / "mculab.db"));
  auto other = OpenStore("sqlite:other.db", home.path());
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_TRUE(std::filesystem::exists(home.path() / "other.db"));
}

TEST(PgOpenTest, AnUnreachableServerIsNamedWithoutItsPasswordAndSaysWhatToCheck) {
  TempDir nowhere;  // no server listens in an empty folder
  const std::string url = "postgresql://lab:s3cret@/mculab?host=" + nowhere.path().string() +
                          "&port=5999&connect_timeout=2";
  auto store = OpenStore(url, nowhere.path());
  ASSERT_FALSE(store.ok());
  const std::string& m = store.error().message;
  EXPECT_EQ(store.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(m.find("cannot connect to PostgreSQL"), std::string::npos) << m;
  EXPECT_NE(m.find("is the server running"), std::string::npos) << m;
  EXPECT_NE(m.find("lab:***@"), std::string::npos) << m;
  EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;
}

TEST(PgOpenTest, APasswordGivenInTheUrlNeverShowsInAnError) {
  auto cluster = testing::PgCluster::Shared();
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  // A database that does not exist: the server answers with an error, which names the database.
  const std::string url = (*cluster)->Url("no_such_database", "password=s3cret");
  auto store = OpenStore(url, "/nonexistent");
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("no_such_database"), std::string::npos)
      << store.error().message;
  EXPECT_EQ(store.error().message.find("s3cret"), std::string::npos) << store.error().message;
}

TEST(PgOpenTest, AMalformedUrlIsRefusedWithoutItsPassword) {
  // libpq quotes the whole URL when it cannot parse it.
  for (const std::string& url : {std::string("postgresql://lab:s3cret@[::1/mculab"),
                                 std::string("postgresql://lab:s%33cret@[::1/mculab")}) {
    auto store = OpenStore(url, "/nonexistent");
    ASSERT_FALSE(store.ok());
    EXPECT_EQ(store.error().message.find("s3cret"), std::string::npos) << store.error().message;
    EXPECT_EQ(store.error().message.find("s%33cret"), std::string::npos) << store.error().message;
  }
}

TEST(PgOpenTest, TwoServersOpeningOneNewDatabaseTogetherMigrateItOnce) {
  auto cluster = testing::PgCluster::Shared();
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  auto url = (*cluster)->NewDatabase();
  ASSERT_TRUE(url.ok()) << url.error().message;
  auto first = std::async(std::launch::async, [&] { return OpenStore(*url, "/nonexistent"); });
  auto second = OpenStore(*url, "/nonexistent");
  auto other = first.get();
  ASSERT_TRUE(second.ok()) << second.error().message;
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ(*(*second)->SchemaVersion(), EmbeddedPostgresMigrations().back().version);
}

}  // namespace
}  // namespace mculab::db
