// The store's QuerySeries (server/service/series_query.h) on both backends, a real SQLite file and
// a real PostgreSQL database (pg_cluster.h): which jobs make a benchmark series, in which order,
// and what narrows it.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <random>

#include "db/lab_store.h"
#include "db/pg_store.h"
#include "db/sqlite_store.h"
#include "tests/unit/db/pg_cluster.h"

namespace mculab::db {
namespace {

using server::JobState;

enum class Backend { kSqlite, kPostgres };

class SeriesQueryTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() /
           ("mculab-series-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(dir_);
    std::string url = "sqlite:mculab.db";
    if (GetParam() == Backend::kPostgres) {
      auto cluster = testing::PgCluster::Shared();
      ASSERT_TRUE(cluster.ok()) << cluster.error().message;
      auto db = (*cluster)->NewDatabase();
      ASSERT_TRUE(db.ok()) << db.error().message;
      url = *db;
    }
    auto s = OpenStore(url, dir_);
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::move(*s);
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  struct Spec {
    std::string kind = "host";
    std::string op = "fully_connected_s8";
    std::string user = "ana";
    std::string label;
    std::int64_t created_ms = 0;
    std::map<std::string, std::string> tags;
    std::vector<CaseSpec> cases = {{7, {1, 8, 4}}, {9, {1, 16, 4}}};
    std::vector<double> medians = {100, 200};  // per case; stored statistics (a succeeded run)
    bool stats = true;
    std::string firmware;                  // a custom runner's artifact
    std::string model_name, model_sha256;  // a model job's
    std::string commit, branch;            // the code it measured
    server::JobOrigin origin = server::JobOrigin::kUser;
  };

  // A job from the default spec changed by `edit`.
  JobId Add(const std::function<void(Spec&)>& edit = nullptr) {
    Spec spec;
    if (edit) edit(spec);
    const JobId id = ++next_id_;
    Job j;
    j.id = id;
    j.user = spec.user;
    j.kind = spec.kind;
    j.op = spec.op;
    j.label = spec.label;
    j.iterations = 5;
    j.num_cases = static_cast<std::uint32_t>(spec.cases.size());
    j.timeout_s = 60;
    j.created_ms = spec.created_ms;
    j.tags = spec.tags;
    j.firmware_artifact = spec.firmware;
    j.model_name = spec.model_name;
    j.commit = spec.commit;
    j.branch = spec.branch;
    j.url = spec.commit.empty() ? "" : "https://ci.example/" + spec.commit;
    j.model_sha256 = spec.model_sha256;
    j.model_summary = spec.model_name.empty() ? "" : "3 operators";
    j.origin = spec.origin;
    j.state = spec.stats ? JobState::kSucceeded : JobState::kFailed;
    j.last_run_id = id;
    WriteSet ws;
    ws.new_jobs.push_back({j, spec.cases});
    if (spec.stats) {
      for (std::size_t i = 0; i < spec.cases.size(); ++i) {
        server::CaseStats st;
        st.job_id = id;
        st.run_id = id;
        st.case_index = static_cast<std::uint32_t>(i);
        st.metric = "cycles";
        st.unit = "cycles";
        st.n = 5;
        st.median = spec.medians[i];
        ws.case_stats.push_back(st);
      }
    }
    EXPECT_TRUE(store_->WriteAndWait(std::move(ws)).ok());
    return id;
  }

  std::vector<JobId> Ids(const SeriesQuery& q) {
    auto rows = store_->QuerySeries(q);
    EXPECT_TRUE(rows.ok()) << rows.error().message;
    std::vector<JobId> ids;
    if (rows.ok()) {
      for (const SeriesRow& r : *rows) ids.push_back(r.job.id);
    }
    return ids;
  }

  static SeriesQuery Case9() {
    SeriesQuery q;
    q.kind = "host";
    q.op = "fully_connected_s8";
    q.params = std::vector<std::int32_t>{1, 16, 4};
    return q;
  }

  std::filesystem::path dir_;
  std::unique_ptr<LabStore> store_;
  JobId next_id_ = 0;
};

TEST_P(SeriesQueryTest, JobsWithTheSameCaseOnTheSameKindOldestFirst) {
  const JobId a = Add([&](Spec& s) { s.created_ms = 3000; });
  const JobId b = Add([&](Spec& s) { s.created_ms = 1000; });
  Add([&](Spec& s) {
    s.kind = "corstone300-qemu";
    s.created_ms = 2000;
  });  // another kind
  Add([&](Spec& s) {
    s.op = "conv2d_s8";
    s.created_ms = 2000;
  });  // another op
  Add([&](Spec& s) {
    s.created_ms = 2500;
    s.cases = {{9, {1, 32, 4}}};
    s.medians = {1};
  });  // other parameters
  Add([&](Spec& s) {
    s.created_ms = 2600;
    s.stats = false;
  });  // no statistics: never succeeded
  Add([&](Spec& s) {
    s.created_ms = 2700;
    s.origin = server::JobOrigin::kHealthCheck;
  });
  // The case moved: another id and index, the same parameters.
  const JobId c = Add([&](Spec& s) {
    s.created_ms = 2000;
    s.cases = {{1, {1, 16, 4}}};
    s.medians = {210};
  });
  EXPECT_EQ(Ids(Case9()), (std::vector<JobId>{b, c, a}));

  auto rows = store_->QuerySeries(Case9());
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].case_index, 1u);
  EXPECT_EQ((*rows)[0].case_id, 9);
  EXPECT_EQ((*rows)[0].params, (std::vector<std::int32_t>{1, 16, 4}));
  EXPECT_EQ((*rows)[0].stats.median, 200);
  EXPECT_EQ((*rows)[0].stats.run_id, b);
  EXPECT_EQ((*rows)[0].stats.unit, "cycles");
  EXPECT_EQ((*rows)[1].case_index, 0u);
  EXPECT_EQ((*rows)[1].stats.median, 210);
  EXPECT_EQ((*rows)[2].job.id, a);
  EXPECT_EQ((*rows)[2].job.state, JobState::kSucceeded);
}

TEST_P(SeriesQueryTest, LabelTagUserAndLimitNarrowIt) {
  const JobId a = Add([&](Spec& s) {
    s.user = "ana";
    s.label = "Nightly main";
    s.created_ms = 1;
    s.tags = {{"cpu", "m55"}};
  });
  const JobId b = Add([&](Spec& s) {
    s.user = "bo";
    s.label = "nightly branch";
    s.created_ms = 2;
  });
  const JobId c = Add([&](Spec& s) {
    s.user = "ana";
    s.label = "try";
    s.created_ms = 3;
    s.tags = {{"cpu", "m55"}, {"x", "1"}};
  });
  SeriesQuery q = Case9();
  q.label_contains = "NIGHTLY";
  EXPECT_EQ(Ids(q), (std::vector<JobId>{a, b}));
  q = Case9();
  q.user = "ana";
  EXPECT_EQ(Ids(q), (std::vector<JobId>{a, c}));
  q = Case9();
  q.tags = {{"cpu", "m55"}};
  EXPECT_EQ(Ids(q), (std::vector<JobId>{a, c}));
  q.tags = {{"cpu", "m7"}};
  EXPECT_TRUE(Ids(q).empty());
  q = Case9();
  q.limit = 2;  // the newest two
  EXPECT_EQ(Ids(q), (std::vector<JobId>{b, c}));
}

TEST_P(SeriesQueryTest, CustomRunnersAreMatchedByCaseIdAndRunnerName) {
  WriteSet ws;
  ws.artifacts.push_back({"aa", 10, "tflm-runner.elf", "ana", 1});
  ws.artifacts.push_back({"bb", 10, "tflm-runner.elf", "ana", 2});  // a rebuild
  ws.artifacts.push_back({"cc", 10, "other.elf", "ana", 3});
  ASSERT_TRUE(store_->WriteAndWait(std::move(ws)).ok());
  auto custom = [&](std::string fw, std::int64_t t) {
    return Add([&](Spec& s) {
      s.op = "custom";
      s.created_ms = t;
      s.cases = {{0, {}}, {1, {}}};
      s.firmware = fw;
    });
  };
  const JobId a = custom("aa", 1);
  const JobId b = custom("bb", 2);
  const JobId c = custom("cc", 3);
  SeriesQuery q;
  q.kind = "host";
  q.op = "custom";
  q.case_id = 1;
  EXPECT_EQ(Ids(q), (std::vector<JobId>{a, b, c}));
  q.runner = "tflm-runner.elf";
  EXPECT_EQ(Ids(q), (std::vector<JobId>{a, b}));
  auto rows = store_->QuerySeries(q);
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ((*rows)[1].runner_name, "tflm-runner.elf");
  EXPECT_EQ((*rows)[1].case_index, 1u);
  EXPECT_EQ((*rows)[1].stats.median, 200);
}

TEST_P(SeriesQueryTest, ModelJobsAreMatchedByTheModelsFileNameAndKeepTheirHashes) {
  auto model = [&](std::string name, std::string sha, std::int64_t t) {
    return Add([&](Spec& s) {
      s.op = "model";
      s.created_ms = t;
      s.cases = {{0, {}}};
      s.medians = {100};
      s.model_name = name;
      s.model_sha256 = sha;
    });
  };
  const JobId kws1 = model("kws.tflite", "k1", 1);
  const JobId resnet = model("resnet.tflite", "r1", 2);
  const JobId kws2 = model("kws.tflite", "k2", 3);  // another file under the same name
  model("", "", 4);                                 // stored before the lab kept names
  SeriesQuery q;
  q.kind = "host";
  q.op = "model";
  q.case_id = 0;
  q.model = "kws.tflite";
  EXPECT_EQ(Ids(q), (std::vector<JobId>{kws1, kws2}));
  auto rows = store_->QuerySeries(q);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].job.model_sha256, "k1");
  EXPECT_EQ((*rows)[1].job.model_sha256, "k2");
  EXPECT_EQ((*rows)[1].job.model_summary, "3 operators");
  q.model = "resnet.tflite";
  EXPECT_EQ(Ids(q), (std::vector<JobId>{resnet}));
  // The history's model filter is exact and counts only model jobs of that name.
  JobQuery h;
  h.model = "kws.tflite";
  auto page = store_->QueryJobs(h);
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_EQ(page->total, 2u);
  ASSERT_EQ(page->jobs.size(), 2u);
  EXPECT_EQ(page->jobs[0].job.id, kws2);
  EXPECT_EQ(page->jobs[0].job.model_name, "kws.tflite");
  h.model = "kws";
  page = store_->QueryJobs(h);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 0u);
}

// The code a job measured is stored, read back with the job and its series, and filters the
// history: the branch exactly, the commit exactly or by a prefix.
TEST_P(SeriesQueryTest, JobsKeepTheirCodeAndTheHistoryFiltersOnIt) {
  auto coded = [&](std::string commit, std::string branch) {
    return Add([&](Spec& s) {
      s.commit = commit;
      s.branch = branch;
    });
  };
  const JobId main1 = coded("1a2b3c4d5e", "main");
  const JobId feat = coded("1a2b3cffff", "feature/x");
  const JobId main2 = coded("9999aaaa00", "main");
  Add();  // no code known
  JobQuery h;
  h.branch = "main";
  auto page = store_->QueryJobs(h);
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(page->total, 2u);
  EXPECT_EQ(page->jobs[0].job.id, main2);
  EXPECT_EQ(page->jobs[1].job.id, main1);
  EXPECT_EQ(page->jobs[1].job.commit, "1a2b3c4d5e");
  EXPECT_EQ(page->jobs[1].job.url, "https://ci.example/1a2b3c4d5e");
  h = {};
  h.commit = "1a2b3c";
  page = store_->QueryJobs(h);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 2u) << "a prefix matches both";
  h.commit = "1A2B3CF";  // any case
  page = store_->QueryJobs(h);
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->total, 1u);
  EXPECT_EQ(page->jobs[0].job.id, feat);
  EXPECT_EQ(page->jobs[0].job.branch, "feature/x");
  h.commit = "1a2b3c4d5e";
  h.branch = "feature/x";
  page = store_->QueryJobs(h);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 0u) << "both filters hold";
  SeriesQuery q;
  q.kind = "host";
  q.op = "fully_connected_s8";
  q.params = std::vector<std::int32_t>{1, 8, 4};
  auto rows = store_->QuerySeries(q);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[0].job.branch, "main");
  EXPECT_EQ((*rows)[1].job.commit, "1a2b3cffff");
}

TEST_P(SeriesQueryTest, AQueryWithoutTheCaseIsRefused) {
  SeriesQuery q;
  q.kind = "host";
  q.op = "fully_connected_s8";
  auto rows = store_->QuerySeries(q);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.error().code, ErrorCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Backends, SeriesQueryTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return info.param == Backend::kSqlite ? "Sqlite" : "PostgreSQL";
                         });

}  // namespace
}  // namespace mculab::db
