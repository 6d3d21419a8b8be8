// CopyStore (db/store_copy.h): a lab filled through the store's own API on SQLite, copied to a real
// PostgreSQL (pg_cluster.h) or another SQLite file, and every table of the schema compared row by
// row. The tables are listed from the source's catalogue, and each must hold rows: a table added
// to the schema and not filled here, or filled and not copied, fails the test.
#include "db/store_copy.h"

#include <gtest/gtest.h>

#include <charconv>
#include <filesystem>
#include <set>

#include "db/lab_store.h"
#include "db/pg_statement.h"
#include "db/pg_store.h"
#include "db/sql_statement.h"
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

// Tables a database derives from the others, which a copy rebuilds instead of copying (SQLite's
// job counts and label search, PostgreSQL's samples counter and schema version).
bool Derived(const std::string& table) {
  static const std::set<std::string> derived = {"job_counts", "label_counts", "samples_stored",
                                                "mculab_schema"};
  return derived.count(table) > 0 || table.rfind("sqlite_", 0) == 0 ||
         table.rfind("jobs_label_search", 0) == 0;
}

struct Column {
  std::string name;
  bool real = false;
};

// The lab's tables as the SQLite file's catalogue lists them, with their columns.
std::map<std::string, std::vector<Column>> SqliteSchema(const std::filesystem::path& path) {
  auto c = OpenSqliteConnection(path);
  EXPECT_TRUE(c.ok());
  std::map<std::string, std::vector<Column>> out;
  std::vector<std::string> names;
  {
    Use u((*c)->Statement("SELECT name FROM sqlite_master WHERE type = 'table'"));
    while (u.Next()) names.push_back(u.Text(0));
    EXPECT_TRUE(u.status().ok());
  }
  for (const std::string& name : names) {
    if (Derived(name)) continue;
    Use u((*c)->Statement("SELECT name, type FROM pragma_table_info(?) ORDER BY cid"));
    u.Bind(name);
    while (u.Next()) out[name].push_back({u.Text(0), u.Text(1) == "REAL"});
  }
  return out;
}

std::string Exact(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

// Every row of `table`, each as its values' text (reals exactly), sorted by every column.
template <typename Conn>
std::vector<std::string> Rows(Conn& c, const std::string& table, const std::vector<Column>& cols) {
  std::string select, order;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    if (i > 0) {
      select += ", ";
      order += ", ";
    }
    select += "\"" + cols[i].name + "\"";
    order += std::to_string(i + 1);
  }
  typename Conn::Use u(
      c.Statement("SELECT " + select + " FROM \"" + table + "\" ORDER BY " + order));
  std::vector<std::string> out;
  while (u.Next()) {
    std::string row;
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const int col = static_cast<int>(i);
      if (i > 0) row += '|';
      row += u.IsNull(col) ? "NULL" : cols[i].real ? Exact(u.Real(col)) : u.Text(col);
    }
    out.push_back(std::move(row));
  }
  EXPECT_TRUE(u.status().ok()) << table << ": " << u.status().error().message;
  return out;
}

std::unique_ptr<LabStore> OpenLab(const std::string& url, const std::filesystem::path& home) {
  auto store = OpenStore(url, home);
  EXPECT_TRUE(store.ok()) << (store.ok() ? "" : store.error().message);
  return store.ok() ? std::move(*store) : nullptr;
}

std::string Hex(std::uint64_t n) {
  const std::string tail = std::to_string(n);
  return std::string(64 - tail.size(), '0') + tail;
}

// A small lab through the store's API: accounts and tokens (one revoked), uploads (one owned by
// two users, one shared), boards with counter units and audit rows, jobs with cases, events,
// transitions and state changes, runs of several sample batches with passes, results, statistics,
// profiles and memory figures, reserved run ids, follows (one deleted, so ids have a gap).
void FillLab(LabStore& store, const std::string& who, int jobs) {
  const std::string u1 = who + "-ana", u2 = who + "-ben";
  ASSERT_TRUE(
      store.AddUser({u1, "admin", 10}, {Hex(1) + who, "mcl_u_00000001", "user", u1, 10, 0}).ok());
  ASSERT_TRUE(
      store.AddUser({u2, "member", 11}, {Hex(2) + who, "mcl_u_00000002", "user", u2, 11, 0}).ok());
  ASSERT_TRUE(store.AddToken({Hex(3) + who, "mcl_a_00000003", "agent", "lab-1", 12, 0}).ok());
  ASSERT_TRUE(store.RevokeToken(Hex(2) + who, 99).ok());

  WriteSet setup;
  setup.artifacts.push_back({Hex(10), 1234, "cases.csv", u1, 20, false});
  setup.artifacts.push_back({Hex(10), 1234, "same.csv", u2, 21, false});
  setup.artifacts.push_back({Hex(11), 99, "runner's \"elf\"", u2, 22, false});
  setup.artifact_sharing.push_back({Hex(11), true});
  for (int b = 0; b < 2; ++b) {
    server::Board board;
    board.name = who + "-board-" + std::to_string(b);
    board.kind = "host";
    board.agent = "lab-1";
    board.tags = {{"cpu", "cortex-m55"}, {"note", "ünïcode"}};
    board.state = BoardState::kIdle;
    board.health = b == 0 ? BoardHealth::kGood : BoardHealth::kMaintenance;
    board.updated_ms = 30 + b;
    board.calibration = 4242;
    setup.boards.push_back(board);
    setup.board_transitions.push_back(
        {board.name, "health", "unknown", "good", "check", "server", 31});
    server::CounterUnit unit{"cortex-m55-pmu", 4, {"instructions", "l1d_cache_miss"}, true};
    setup.board_units.push_back({board.name, {unit}, {b == 1}});
  }
  setup.reserve_run_ids_to = 1000;
  ASSERT_TRUE(store.WriteAndWait(std::move(setup)).ok());

  RunId run_id = 100;
  for (int i = 0; i < jobs; ++i) {
    auto max = store.MaxJobId();
    ASSERT_TRUE(max.ok());
    Job j;
    j.id = *max + 1 + static_cast<JobId>(i % 2) * 5;  // ids with gaps
    j.user = i % 2 ? u1 : u2;
    j.kind = "host";
    j.op = "fully_connected_s8";
    j.label = "resnet sweep " + std::to_string(i) + (i == 0 ? " 'quoted' ?" : "");
    j.iterations = 10;
    j.warmup = 1;
    j.num_cases = 2;
    j.timeout_s = 600;
    j.created_ms = 1000 + i;
    j.max_cv_pct = 2.5 + 1.0 / 3.0;
    j.branch = "main";
    j.tags = {{"cpu", "cortex-m55"}};
    WriteSet ws;
    ws.new_jobs.push_back({j, {{7, {1, 8, 4}}, {9, {1, 16, 4}}}});
    ws.transitions.push_back(server::CreationTransition(j, j.user, j.created_ms * 1000 + 7));
    ws.job_events.push_back({j.id, {"instructions"}});
    ASSERT_TRUE(store.WriteAndWait(std::move(ws)).ok());

    for (int attempt = 1; attempt <= 2; ++attempt) {
      const RunId run = ++run_id;
      WriteSet rs;
      db::Run r;
      r.id = run;
      r.job_id = j.id;
      r.attempt = static_cast<std::uint32_t>(attempt);
      r.board = who + "-board-0";
      r.agent = "lab-1";
      r.created_ms = 2000 + i;
      r.state = RunState::kSucceeded;
      r.started = true;
      r.provenance.counters = {"instructions"};
      r.provenance.timer_unit = "cycles";
      r.provenance.kernel_set = "helium";
      rs.runs.push_back(r);
      rs.run_passes.push_back({run, 0, {"cycles", "instructions"}});
      ASSERT_TRUE(store.WriteAndWait(std::move(rs)).ok());
      for (std::uint64_t seq = 0; seq < 3; ++seq) {
        WriteSet bs;
        SampleBatch b;
        b.run_id = run;
        b.sequence = seq;
        for (std::uint32_t k = 0; k < 5; ++k) {
          const std::uint32_t it = static_cast<std::uint32_t>(seq) * 5 + k;
          b.samples.push_back({0, it % 2, it, 0, 100 + static_cast<std::int64_t>(it) - 50});
          b.samples.push_back({0, it % 2, it, 1, -static_cast<std::int64_t>(it)});
        }
        b.iterations = 5;
        bs.batch = std::move(b);
        ASSERT_TRUE(store.WriteAndWait(std::move(bs)).ok());
      }
      WriteSet done;
      done.case_results.push_back({run, 0, 0xdeadbeef, 0xdeadbeef, true, 17});
      done.case_results.push_back({run, 1, 1, 2, false, -3});
      done.case_stats.push_back({j.id, run, 0, 0, "cycles", "cycles", 15, 0.1, 0.2 + 0.1, 1.0 / 3.0,
                                 1e-300, 1e300, 0.0, -0.0, 123456.789});
      done.op_profiles.push_back({run, 0, 0, 3, 0, "CONV_2D", "conv/1", 4, 400, 90, 110, false});
      done.memory.push_back({run, -1, "elf", "flash.text", 65536, 0});
      done.memory.push_back({run, 0, "runner", "arena", 1024, 2048});
      ASSERT_TRUE(store.WriteAndWait(std::move(done)).ok());
    }
    WriteSet finish;
    j.state = JobState::kSucceeded;
    j.finished_ms = 5000 + i;
    j.assigned_board = who + "-board-0";
    j.message = "done";
    finish.jobs.push_back(j);
    finish.transitions.push_back({j.id, "queued", "succeeded", "finished", "server", 5000 + i});
    ASSERT_TRUE(store.WriteAndWait(std::move(finish)).ok());
  }
  for (int f = 0; f < 3; ++f) {
    ASSERT_TRUE(store
                    .AddFollow({0, u1, "{\"label\":\"resnet\",\"n\":" + std::to_string(f) + "}",
                                40 + f, static_cast<JobId>(f)})
                    .ok());
  }
  ASSERT_TRUE(store.DeleteFollow(2).ok());
}

class StoreCopyTest : public ::testing::Test {
 protected:
  std::filesystem::path SourcePath() const { return dir_.path() / "lab.db"; }
  std::string SourceUrl() const { return "sqlite:" + SourcePath().string(); }

  // A SQLite lab of `jobs` jobs at SourcePath(), with NULLs where an older server's rows have
  // them (a column a migration added without a default).
  void MakeSourceLab(int jobs = 4) {
    auto store = OpenLab(SourceUrl(), dir_.path());
    ASSERT_TRUE(store);
    FillLab(*store, "src", jobs);
    store->Close();
    auto c = OpenSqliteConnection(SourcePath());
    ASSERT_TRUE(c.ok());
    Use u((*c)->Statement("UPDATE job_transitions SET time_us = NULL WHERE id <= 2"));
    ASSERT_TRUE(u.Exec("old rows").ok());
  }

  std::string NewPgDatabase() {
    auto cluster = testing::PgCluster::Shared();
    EXPECT_TRUE(cluster.ok()) << cluster.error().message;
    if (!cluster.ok()) return "";
    auto url = (*cluster)->NewDatabase();
    EXPECT_TRUE(url.ok()) << url.error().message;
    return url.ok() ? *url : "";
  }

  StoreCopyOptions Options(std::size_t batch_rows = 20'000) const {
    StoreCopyOptions o;
    o.home = dir_.path();
    o.batch_rows = batch_rows;
    return o;
  }

  // Every table of the source's schema holds rows, and the same rows in the copy.
  void ExpectSameRowsEverywhere(
      const std::function<std::vector<std::string>(const std::string&, const std::vector<Column>&)>&
          copy_rows) {
    auto source = OpenSqliteConnection(SourcePath());
    ASSERT_TRUE(source.ok());
    const auto schema = SqliteSchema(SourcePath());
    ASSERT_GT(schema.size(), 15u);
    for (const auto& [table, cols] : schema) {
      const auto want = Rows(**source, table, cols);
      EXPECT_FALSE(want.empty()) << "the test's lab has no rows in table " << table
                                 << ": fill it in FillLab so its copy is checked";
      EXPECT_EQ(copy_rows(table, cols), want) << "table " << table;
    }
  }

  void ExpectSameRowsInPostgres(const std::string& url) {
    auto pg = PgConnection::Open(url);
    ASSERT_TRUE(pg.ok()) << pg.error().message;
    ExpectSameRowsEverywhere([&](const std::string& table, const std::vector<Column>& cols) {
      return Rows(**pg, table, cols);
    });
    // No table of the lab's on PostgreSQL only.
    PgUse u((*pg)->Statement(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = "
        "current_schema()"));
    const auto schema = SqliteSchema(SourcePath());
    while (u.Next()) {
      const std::string t = u.Text(0);
      EXPECT_TRUE(Derived(t) || schema.count(t) > 0) << t << " exists only on PostgreSQL";
    }
  }

  TempDir dir_;
};

TEST_F(StoreCopyTest, SqliteLabCopiedToPostgresHasEveryTableRowByRowAndGoesOnFromIt) {
  MakeSourceLab();
  const std::string url = NewPgDatabase();
  ASSERT_FALSE(url.empty());
  auto report = CopyStore(SourceUrl(), url, Options());
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->status.ok()) << report->status.error().message;
  for (const TableCount& c : report->tables) {
    EXPECT_EQ(c.source, c.destination) << c.table;
    EXPECT_EQ(c.copied, c.source) << c.table;
  }
  // Dependency order: accounts and boards before jobs, jobs before runs, runs before samples.
  std::vector<std::string> order;
  for (const TableCount& c : report->tables) order.push_back(c.table);
  auto at = [&](const char* t) { return std::find(order.begin(), order.end(), t) - order.begin(); };
  EXPECT_LT(at("users"), at("tokens"));
  EXPECT_LT(at("boards"), at("jobs"));
  EXPECT_LT(at("jobs"), at("runs"));
  EXPECT_LT(at("runs"), at("samples"));
  ExpectSameRowsInPostgres(url);

  // The copy is a lab a server runs on: derived counters, label search, new ids past the copied.
  auto source = OpenLab(SourceUrl(), dir_.path());
  auto copy = OpenLab(url, dir_.path());
  ASSERT_TRUE(source && copy);
  EXPECT_EQ(*copy->SamplesStored(), *source->SamplesStored());
  EXPECT_EQ(*copy->MaxRunId(), *source->MaxRunId());
  EXPECT_EQ(*copy->MaxJobId(), *source->MaxJobId());
  JobQuery q;
  q.label_contains = "'QUOTED'";
  auto page = copy->QueryJobs(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->jobs.size(), 1u);
  auto follow = copy->AddFollow({0, "src-ana", "{}", 50, 0});
  ASSERT_TRUE(follow.ok()) << follow.error().message;
  EXPECT_EQ(*follow, 4u);  // past the copied 3 (2 deleted)
  WriteSet ws;
  ws.transitions.push_back({1, "succeeded", "succeeded", "probe", "server", 9});
  ASSERT_TRUE(copy->WriteAndWait(std::move(ws)).ok());
  auto audit = copy->GetTransitions(1);
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(audit->back().reason, "probe");
  source->Close();
  copy->Close();
}

TEST_F(StoreCopyTest, InterruptedCopyRunAgainCompletesWithoutDuplicates) {
  MakeSourceLab();
  const std::string url = NewPgDatabase();
  ASSERT_FALSE(url.empty());
  StoreCopyOptions stop = Options(7);
  stop.stop_after_batches = 10;
  auto first = CopyStore(SourceUrl(), url, stop);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().code, ErrorCode::kCancelled);
  // Stopped again, later: the second run resumes the first's tables.
  stop.stop_after_batches = 12;
  auto second = CopyStore(SourceUrl(), url, stop);
  ASSERT_FALSE(second.ok());

  auto rest = CopyStore(SourceUrl(), url, Options(7));
  ASSERT_TRUE(rest.ok()) << rest.error().message;
  EXPECT_TRUE(rest->status.ok()) << rest->status.error().message;
  std::uint64_t copied = 0, total = 0;
  for (const TableCount& c : rest->tables) {
    EXPECT_EQ(c.source, c.destination) << c.table;
    copied += c.copied;
    total += c.source;
  }
  EXPECT_LT(copied, total);  // the interrupted runs' rows were kept, not copied again
  ExpectSameRowsInPostgres(url);

  // A complete copy run again copies nothing and still checks.
  auto again = CopyStore(SourceUrl(), url, Options(7));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->status.ok());
  for (const TableCount& c : again->tables) EXPECT_EQ(c.copied, 0u) << c.table;
  ExpectSameRowsInPostgres(url);
}

TEST_F(StoreCopyTest, LongTablesReportProgressInBatches) {
  MakeSourceLab(2);
  const std::string url = NewPgDatabase();
  ASSERT_FALSE(url.empty());
  std::vector<CopyProgress> seen;
  StoreCopyOptions o = Options(25);
  o.progress = [&](const CopyProgress& p) { seen.push_back(p); };
  auto report = CopyStore(SourceUrl(), url, o);
  ASSERT_TRUE(report.ok()) << report.error().message;
  std::vector<CopyProgress> samples;
  for (const CopyProgress& p : seen) {
    if (p.table == "samples") samples.push_back(p);
  }
  ASSERT_GE(samples.size(), 2u);
  EXPECT_EQ(samples.back().copied, samples.back().total);
  EXPECT_EQ(samples.back().total, 2u * 2 * 3 * 10);
  // A run's samples are never split between batches: each batch ends at a whole run (30 rows).
  for (const CopyProgress& p : samples) EXPECT_EQ(p.copied % 30, 0u);
}

TEST_F(StoreCopyTest, DestinationHoldingAnotherLabIsRefusedAndLeftAlone) {
  MakeSourceLab(2);
  const std::string url = NewPgDatabase();
  ASSERT_FALSE(url.empty());
  {
    auto other = OpenLab(url, dir_.path());
    ASSERT_TRUE(other);
    ASSERT_TRUE(
        other->AddUser({"zed", "admin", 1}, {Hex(77), "mcl_u_00000077", "user", "zed", 1, 0}).ok());
    other->Close();
  }
  auto report = CopyStore(SourceUrl(), url, Options());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(report.error().message.find("table users"), std::string::npos)
      << report.error().message;
  auto other = OpenLab(url, dir_.path());
  ASSERT_TRUE(other);
  auto users = other->ListUsers();
  ASSERT_TRUE(users.ok());
  ASSERT_EQ(users->size(), 1u);
  EXPECT_EQ((*users)[0].name, "zed");
  EXPECT_EQ(*other->MaxJobId(), 0u);
  other->Close();
}

TEST_F(StoreCopyTest, SameKeysWithOtherValuesAreRefused) {
  MakeSourceLab(2);
  const std::filesystem::path other_path = dir_.path() / "other.db";
  {
    // Another lab whose users sort before and whose last user differs from the source's.
    auto other = OpenLab("sqlite:" + other_path.string(), dir_.path());
    ASSERT_TRUE(other);
    ASSERT_TRUE(
        other
            ->AddUser({"src-ana", "viewer", 1}, {Hex(5), "mcl_u_00000005", "user", "src-ana", 1, 0})
            .ok());
    other->Close();
  }
  auto report = CopyStore(SourceUrl(), "sqlite:" + other_path.string(), Options());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(report.error().message.find("table users"), std::string::npos)
      << report.error().message;
}

TEST_F(StoreCopyTest, SqliteLabCopiedToAnotherSqliteFileHasEveryRowAndItsLabelSearch) {
  MakeSourceLab();
  const std::filesystem::path copy_path = dir_.path() / "copy.db";
  auto report = CopyStore(SourceUrl(), "sqlite:copy.db", Options(11));
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_TRUE(report->status.ok());
  auto copy = OpenSqliteConnection(copy_path);
  ASSERT_TRUE(copy.ok());
  ExpectSameRowsEverywhere([&](const std::string& table, const std::vector<Column>& cols) {
    return Rows(**copy, table, cols);
  });
  auto source = OpenLab(SourceUrl(), dir_.path());
  auto lab = OpenLab("sqlite:copy.db", dir_.path());
  ASSERT_TRUE(source && lab);
  EXPECT_EQ(*lab->SamplesStored(), *source->SamplesStored());
  JobQuery q;
  q.label_contains = "sweep 3";
  auto page = lab->QueryJobs(q);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->jobs.size(), 1u);
  auto all = lab->QueryJobs({});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->total, 4u);  // the job counts the triggers kept
  source->Close();
  lab->Close();
}

TEST_F(StoreCopyTest, PostgresLabCopiedBackToSqliteIsTheSameLab) {
  MakeSourceLab(2);
  const std::string url = NewPgDatabase();
  ASSERT_FALSE(url.empty());
  auto there = CopyStore(SourceUrl(), url, Options(13));
  ASSERT_TRUE(there.ok()) << there.error().message;
  auto back = CopyStore(url, "sqlite:back.db", Options(13));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->status.ok());
  auto copy = OpenSqliteConnection(dir_.path() / "back.db");
  ASSERT_TRUE(copy.ok());
  ExpectSameRowsEverywhere([&](const std::string& table, const std::vector<Column>& cols) {
    return Rows(**copy, table, cols);
  });
}

TEST_F(StoreCopyTest, UnknownUrlMissingSourceAndSameStoreAreErrors) {
  auto bad = CopyStore("mysql://db/lab", "sqlite:x.db", Options());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.error().message.find("source: unknown store"), std::string::npos)
      << bad.error().message;

  auto missing = CopyStore("sqlite:nothing.db", "sqlite:x.db", Options());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "nothing.db"));

  MakeSourceLab(1);
  auto same = CopyStore(SourceUrl(), "sqlite:lab.db", Options());
  ASSERT_FALSE(same.ok());
  EXPECT_EQ(same.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(StoreCopyTest, UnreachableDatabaseIsAnErrorWithoutItsPassword) {
  MakeSourceLab(1);
  const std::string url =
      "postgresql://lab:s3cr3t-pw@/mculab?host=" + (dir_.path() / "no-server").string() +
      "&port=1&connect_timeout=2";
  auto report = CopyStore(SourceUrl(), url, Options());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(report.error().message.find("destination: cannot connect"), std::string::npos)
      << report.error().message;
  EXPECT_EQ(report.error().message.find("s3cr3t-pw"), std::string::npos) << report.error().message;
}

TEST_F(StoreCopyTest, SourceNewerThanThisBuildIsRefused) {
  {
    SqliteOptions newer;
    newer.migrations = EmbeddedMigrations();
    newer.migrations.push_back(
        {newer.migrations.back().version + 1, "9999_future.sql", "CREATE TABLE future(x INT);"});
    auto store = SqliteStore::Open(SourcePath(), std::move(newer));
    ASSERT_TRUE(store.ok());
    (*store)->Close();
  }
  auto report = CopyStore(SourceUrl(), "sqlite:copy.db", Options());
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code, ErrorCode::kFailedPrecondition);
  EXPECT_NE(report.error().message.find("source: the database is at schema version"),
            std::string::npos)
      << report.error().message;
  EXPECT_NE(report.error().message.find("newer"), std::string::npos);
}

}  // namespace
}  // namespace mculab::db
