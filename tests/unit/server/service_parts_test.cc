// The service's smaller parts: config parsing, the artifact store, job watches, case statistics.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "common/sha256.h"
#include "db/sqlite_store.h"
#include "fakes.h"
#include "server/service/artifacts.h"
#include "server/service/config.h"
#include "server/service/job_watch.h"
#include "server/service/results.h"

namespace mculab::server {
namespace {

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("mculab-svc-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// ---- config ----

TEST(LabConfig, EmptyFileKeepsTheDefaults) {
  auto c = ParseLabConfig("", "server.toml");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->max_artifact_bytes, 64u << 20);
  EXPECT_EQ(c->default_timeout_s, 600u);
  EXPECT_EQ(c->max_attempts, 3u);
}

TEST(LabConfig, KeysOverrideTheDefaults) {
  auto c = ParseLabConfig("max_artifact_bytes = 1024\ndefault_timeout_s = 30\nmax_attempts = 5\n",
                          "server.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->max_artifact_bytes, 1024u);
  EXPECT_EQ(c->default_timeout_s, 30u);
  EXPECT_EQ(c->max_attempts, 5u);
}

TEST(LabConfig, NotifyTakesWebhookUrlsAndRefusesWhatIsNotOne) {
  auto c = ParseLabConfig(
      "[notify]\nwebhooks = [\"https://hooks.example/a\", \"http://127.0.0.1:9/b\"]\n"
      "timeout_ms = 2000\nmax_attempts = 3\npoll_ms = 500\nweb_url = \"http://lab:8080/\"\n"
      "ca_file = \"ca.pem\"\n",
      "server.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->notify_webhooks,
            (std::vector<std::string>{"https://hooks.example/a", "http://127.0.0.1:9/b"}));
  EXPECT_EQ(c->notify_timeout_ms, 2000u);
  EXPECT_EQ(c->notify_max_attempts, 3u);
  EXPECT_EQ(c->notify_poll_ms, 500u);
  EXPECT_EQ(c->notify_web_url, "http://lab:8080/");
  EXPECT_EQ(c->notify_ca_file, "ca.pem");
  EXPECT_TRUE(ParseLabConfig("", "server.toml")->notify_webhooks.empty());
  const std::pair<const char*, const char*> bad[] = {
      {"[notify]\nwebhooks = [\"ftp://x\"]\n", "each must be an http:// or https:// URL"},
      {"[notify]\nwebhooks = \"https://x\"\n", "must be a list of at most 16 URLs"},
      {"[notify]\nwebhook = []\n", "unknown key 'notify.webhook' (known: webhooks,"},
      {"[notify]\nmax_attempts = 0\n", "max_attempts must be between 1 and 100"},
      {"notify = 3\n", "notify must be a table"},
  };
  for (const auto& [text, want] : bad) {
    auto r = ParseLabConfig(text, "server.toml");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.error().message.find(want), std::string::npos) << r.error().message;
  }
}

// Found by fuzzing: a float where an integer belongs, however large, is refused (converting it was
// undefined), and so is a tolerance that is not a number.
TEST(LabConfig, FloatsAndNanAreRefusedWhereTheyDoNotBelong) {
  auto big = ParseLabConfig("heartbeat_ms = 1e23\n", "server.toml");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("heartbeat_ms must be an integer"), std::string::npos);
  auto expected = ParseLabConfig("[health.expected]\ncorstone300-qemu = 1e42\n", "server.toml");
  EXPECT_FALSE(expected.ok());
  auto nan = ParseLabConfig("[health]\ntolerance = nan\n", "server.toml");
  ASSERT_FALSE(nan.ok());
  EXPECT_NE(nan.error().message.find("between 0 and 1"), std::string::npos);
}

TEST(LabConfig, NetworkCapsHaveTodaysDefaultsAndAreValidated) {
  auto d = ParseLabConfig("", "server.toml");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->http_max_connections, 512u);
  EXPECT_EQ(d->http_max_connections_per_address, 64u);
  EXPECT_EQ(d->http_max_event_streams, 128u);
  EXPECT_EQ(d->http_max_event_streams_per_user, 16u);
  EXPECT_EQ(d->http_max_event_streams_per_address, 32u);
  EXPECT_EQ(d->http_max_stream_pending_bytes, 1u << 20);
  EXPECT_EQ(d->http_header_timeout_ms, 10'000u);
  EXPECT_EQ(d->http_idle_timeout_s, 60u);
  EXPECT_EQ(d->http_write_timeout_s, 30u);
  EXPECT_EQ(d->grpc_max_concurrent_streams, 100u);
  EXPECT_EQ(d->grpc_max_threads, 256u);

  auto c = ParseLabConfig(
      "http_max_connections = 2000\nhttp_max_connections_per_address = 8\n"
      "http_max_event_streams = 300\nhttp_max_event_streams_per_user = 250\n"
      "http_max_event_streams_per_address = 250\nhttp_max_stream_pending_bytes = 65536\n"
      "http_header_timeout_ms = 2500\nhttp_idle_timeout_s = 5\nhttp_write_timeout_s = 7\n"
      "grpc_max_concurrent_streams = 20\ngrpc_max_threads = 64\n",
      "server.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->http_max_connections, 2000u);
  EXPECT_EQ(c->http_max_connections_per_address, 8u);
  EXPECT_EQ(c->http_max_event_streams, 300u);
  EXPECT_EQ(c->http_max_event_streams_per_user, 250u);
  EXPECT_EQ(c->http_max_event_streams_per_address, 250u);
  EXPECT_EQ(c->http_max_stream_pending_bytes, 65536u);
  EXPECT_EQ(c->http_header_timeout_ms, 2500u);
  EXPECT_EQ(c->http_idle_timeout_s, 5u);
  EXPECT_EQ(c->http_write_timeout_s, 7u);
  EXPECT_EQ(c->grpc_max_concurrent_streams, 20u);
  EXPECT_EQ(c->grpc_max_threads, 64u);

  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {"http_max_connections = 0\n", "http_max_connections must be between 1 and"},
           {"http_header_timeout_ms = 10\n", "http_header_timeout_ms must be between 100 and"},
           {"grpc_max_threads = 2\n", "grpc_max_threads must be between 8 and"},
           {"grpc_max_concurrent_streams = -1\n", "grpc_max_concurrent_streams must be between"},
           {"http_max_stream_pending_bytes = 1.5\n", "must be an integer"},
           {"http_max_event_streams_per_user = 200\n",
            "http_max_event_streams_per_user (200) cannot exceed http_max_event_streams (128)"},
           {"http_max_connections = 10\n",
            "http_max_connections_per_address (64) cannot exceed http_max_connections (10)"},
           {"http_reserved_connections = 512\n",
            "http_reserved_connections (512) must be less than http_max_connections (512)"},
           {"grpc_max_connections = 100\n",
            "grpc_max_connections_per_address (256) cannot exceed grpc_max_connections (100)"},
           {"grpc_reserved_connections = 4096\n",
            "grpc_reserved_connections (4096) must be less than grpc_max_connections (4096)"},
           {"grpc_auth_timeout_ms = 10\n", "grpc_auth_timeout_ms must be between 100 and"},
       }) {
    auto bad = ParseLabConfig(text, "server.toml");
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_NE(bad.error().message.find(says), std::string::npos) << bad.error().message;
    EXPECT_EQ(bad.error().message.rfind("server.toml: ", 0), 0u) << bad.error().message;
  }
}

TEST(LabConfig, DurabilityKeys) {
  auto d = ParseLabConfig("", "server.toml");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->reconnect_grace_s, 30u);
  EXPECT_EQ(d->HeartbeatTimeoutMs(), 3 * 5000);
  auto c = ParseLabConfig(
      "heartbeat_ms = 1000\nheartbeat_timeout_ms = 2500\nreconnect_grace_s = 5\n", "server.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->HeartbeatTimeoutMs(), 2500);
  EXPECT_EQ(c->reconnect_grace_s, 5u);
  auto bad = ParseLabConfig("heartbeat_ms = 1000\nheartbeat_timeout_ms = 1000\n", "s.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(
      bad.error().message.find("heartbeat_timeout_ms (1000) must be longer than heartbeat_ms"),
      std::string::npos)
      << bad.error().message;
}

TEST(LabConfig, NewBoardsNeedApprovalByDefaultOnlyWithTls) {
  auto plain = ParseLabConfig("", "server.toml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->ApproveNewBoards());
  EXPECT_EQ(plain->max_model_arena, 64ull << 20);
  auto tls = ParseLabConfig("tls_cert = \"s.pem\"\ntls_key = \"s.key\"\n", "server.toml");
  ASSERT_TRUE(tls.ok()) << tls.error().message;
  EXPECT_TRUE(tls->ApproveNewBoards());
  auto tls_off = ParseLabConfig(
      "tls_cert = \"s.pem\"\ntls_key = \"s.key\"\napprove_new_boards = false\n", "server.toml");
  ASSERT_TRUE(tls_off.ok()) << tls_off.error().message;
  EXPECT_FALSE(tls_off->ApproveNewBoards());
  auto on = ParseLabConfig("approve_new_boards = true\nmax_model_arena = 1048576\n", "s.toml");
  ASSERT_TRUE(on.ok()) << on.error().message;
  EXPECT_TRUE(on->ApproveNewBoards());
  EXPECT_EQ(on->max_model_arena, 1u << 20);
  auto bad = ParseLabConfig("approve_new_boards = 1\n", "s.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("approve_new_boards must be true or false"),
            std::string::npos);
  EXPECT_FALSE(ParseLabConfig("max_model_arena = 10\n", "s.toml").ok());
}

TEST(LabConfig, TheStoreIsAUrlAndAbsentMeansTheSqliteFileInTheHome) {
  auto plain = ParseLabConfig("", "server.toml");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->store, "");
  auto pg = ParseLabConfig("store = \"postgresql://mculab@db/lab\"\n", "server.toml");
  ASSERT_TRUE(pg.ok()) << pg.error().message;
  EXPECT_EQ(pg->store, "postgresql://mculab@db/lab");
  auto bad = ParseLabConfig("store = 5\n", "server.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("store must be a store URL"), std::string::npos)
      << bad.error().message;
}

TEST(LabConfig, SchedulingAndHealthKeys) {
  auto d = ParseLabConfig("", "server.toml");
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->health_checks);
  EXPECT_EQ(d->health_max_failures, 3u);
  EXPECT_EQ(d->cancel_grace_ms, 10000u);
  auto c = ParseLabConfig(
      "cancel_grace_ms = 2000\nmax_reservation_s = 3600\n[health]\nchecks = false\n"
      "max_failures = 2\ntolerance = 0.05\n[health.expected]\ncorstone300-qemu = 1234\n",
      "server.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->cancel_grace_ms, 2000u);
  EXPECT_EQ(c->max_reservation_s, 3600u);
  EXPECT_FALSE(c->health_checks);
  EXPECT_EQ(c->health_max_failures, 2u);
  EXPECT_DOUBLE_EQ(c->health_tolerance, 0.05);
  EXPECT_EQ(c->health_expected.at("corstone300-qemu"), 1234);
  auto bad = ParseLabConfig("[health]\nmax_failure = 2\n", "s.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("health.max_failure"), std::string::npos);
  auto bad_value = ParseLabConfig("[health.expected]\nhost = -1\n", "s.toml");
  ASSERT_FALSE(bad_value.ok());
  EXPECT_NE(bad_value.error().message.find("health.expected.host"), std::string::npos);
}

TEST(LabConfig, QuotaKeysHaveDefaultsAndRanges) {
  auto d = ParseLabConfig("", "server.toml");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->max_user_artifact_bytes, 1ull << 30);
  EXPECT_EQ(d->max_user_artifacts, 1000u);
  EXPECT_EQ(d->artifact_grace_s, 86400u);
  EXPECT_EQ(d->max_queued_jobs_per_user, 1000u);
  EXPECT_EQ(d->max_boards_per_agent, 64u);
  EXPECT_EQ(d->max_tags_per_board, 32u);
  EXPECT_EQ(d->upload_timeout_s, 600u);
  auto c = ParseLabConfig(
      "max_user_artifact_bytes = 4096\nmax_user_artifacts = 3\nartifact_grace_s = 120\n"
      "max_queued_jobs_per_user = 7\nmax_boards_per_agent = 2\nmax_tags_per_board = 0\n"
      "upload_timeout_s = 30\n",
      "server.toml");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->max_user_artifact_bytes, 4096u);
  EXPECT_EQ(c->max_user_artifacts, 3u);
  EXPECT_EQ(c->artifact_grace_s, 120u);
  EXPECT_EQ(c->max_queued_jobs_per_user, 7u);
  EXPECT_EQ(c->max_boards_per_agent, 2u);
  EXPECT_EQ(c->max_tags_per_board, 0u);
  EXPECT_EQ(c->upload_timeout_s, 30u);
  auto zero = ParseLabConfig("max_queued_jobs_per_user = 0\n", "s.toml");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message.find("max_queued_jobs_per_user must be between 1"),
            std::string::npos)
      << zero.error().message;
}

TEST(LabConfig, UnknownKeyIsAnErrorNamingIt) {
  auto c = ParseLabConfig("max_atempts = 5\n", "server.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("unknown key 'max_atempts'"), std::string::npos);
}

TEST(LabConfig, WrongTypeOrRangeIsAnError) {
  EXPECT_FALSE(ParseLabConfig("max_attempts = \"three\"\n", "s.toml").ok());
  auto c = ParseLabConfig("max_attempts = 0\n", "s.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("max_attempts must be between 1 and 100, got 0"),
            std::string::npos);
}

TEST(LabConfig, SyntaxErrorNamesTheFileAndLine) {
  auto c = ParseLabConfig("max_attempts = 3\nmax_artifact_bytes = = 1\n", "lab.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message.rfind("lab.toml: line 2", 0), 0u) << c.error().message;
}

TEST(LabConfig, MissingFileIsAnError) {
  auto c = LoadLabConfig("/nonexistent/mculab.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find("/nonexistent/mculab.toml"), std::string::npos);
}

// ---- artifacts ----

class ArtifactStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = db::SqliteStore::Open(dir_.path() / "mculab.db");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    artifacts_ = std::make_unique<ArtifactStore>(
        dir_.path() / "artifacts", ArtifactStore::Limits{1024, 1ull << 30, 1000}, *store_, clock_);
    ASSERT_TRUE(artifacts_->Init().ok());
  }

  Result<Artifact> Upload(const std::string& name, const std::vector<std::string>& chunks,
                          std::uint64_t declared = 0) {
    auto up = artifacts_->Begin(caller_, name, declared);
    if (!up.ok()) return up.error();
    for (const auto& c : chunks) {
      if (Status s = (*up)->Append(c); !s.ok()) return s.error();
    }
    return (*up)->Finish();
  }

  static std::string Read(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  TempDir dir_;
  testing::FakeClock clock_;
  Caller caller_;
  std::unique_ptr<db::SqliteStore> store_;
  std::unique_ptr<ArtifactStore> artifacts_;
};

TEST_F(ArtifactStoreTest, UploadIsStoredUnderItsSha256) {
  auto a = Upload("cases.csv", {"id,N\n", "0,1\n"});
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->sha256, Sha256Hex(std::string_view("id,N\n0,1\n")));
  EXPECT_EQ(a->size, 9u);
  const auto path = dir_.path() / "artifacts" / a->sha256.substr(0, 2) / a->sha256;
  EXPECT_EQ(artifacts_->PathOf(a->sha256), path);
  EXPECT_EQ(Read(path), "id,N\n0,1\n");
  auto row = store_->GetArtifact(a->sha256);
  ASSERT_TRUE(row.ok() && row->has_value());
  EXPECT_EQ((*row)->name, "cases.csv");
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path() / "artifacts" / "tmp"));
}

TEST_F(ArtifactStoreTest, SameContentTwiceIsStoredOnce) {
  auto a = Upload("a.csv", {"same"});
  auto b = Upload("b.csv", {"sa", "me"});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->sha256, b->sha256);
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir_.path() / "artifacts")) {
    files += e.is_regular_file() ? 1 : 0;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(ArtifactStoreTest, DeclaredSizeOverTheLimitIsRefusedBeforeAnyByte) {
  auto a = Upload("big.elf", {}, 4096);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code, ErrorCode::kResourceExhausted);
  EXPECT_NE(a.error().message.find("'big.elf' is 4 KiB; the server accepts at most 1 KiB"),
            std::string::npos)
      << a.error().message;
  EXPECT_NE(a.error().message.find("max_artifact_bytes"), std::string::npos);
}

TEST_F(ArtifactStoreTest, BytesOverTheLimitFailTheUploadAndLeaveNothing) {
  auto a = Upload("big.elf", {std::string(1000, 'x'), std::string(100, 'y')});
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code, ErrorCode::kResourceExhausted);
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path() / "artifacts" / "tmp"));
}

TEST_F(ArtifactStoreTest, SizeDifferentFromTheDeclaredOneIsRefused) {
  auto a = Upload("x.bin", {"abc"}, 5);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code, ErrorCode::kInvalidArgument);
}

TEST_F(ArtifactStoreTest, AbandonedUploadRemovesItsTemporaryFile) {
  {
    auto up = artifacts_->Begin(caller_, "x.bin", 0);
    ASSERT_TRUE(up.ok());
    ASSERT_TRUE((*up)->Append("partial").ok());
    EXPECT_FALSE(std::filesystem::is_empty(dir_.path() / "artifacts" / "tmp"));
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path() / "artifacts" / "tmp"));
}

TEST(HumanBytes, ReadsLikeAPerson) {
  EXPECT_EQ(HumanBytes(12), "12 bytes");
  EXPECT_EQ(HumanBytes(64u << 20), "64 MiB");
  EXPECT_EQ(HumanBytes(1536), "1.5 KiB");
}

// ---- job watch ----

TEST(JobWatch, ProgressEventsOfOneStateCoalesce) {
  JobWatch w(1);
  w.Push({1, JobState::kRunning, "", 1, 10, "b", 0});
  w.Push({1, JobState::kRunning, "", 5, 10, "b", 0});
  auto e = w.TryNext();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->progress_done, 5u);
  EXPECT_FALSE(w.TryNext());
}

TEST(JobWatch, FinalEventEndsTheStream) {
  JobWatch w(1);
  w.Push({1, JobState::kRunning, "", 1, 10, "b", 0});
  w.Push({1, JobState::kSucceeded, "", 10, 10, "b", 0});
  w.Push({1, JobState::kRunning, "", 10, 10, "b", 0});  // nothing after the end
  EXPECT_FALSE(w.Ended());
  EXPECT_EQ(w.TryNext()->state, JobState::kRunning);
  EXPECT_EQ(w.TryNext()->state, JobState::kSucceeded);
  EXPECT_FALSE(w.TryNext());
  EXPECT_TRUE(w.Ended());
}

TEST(JobWatch, ListenerRunsOnNotifyUntilClosed) {
  JobWatch w(1);
  int calls = 0;
  w.SetListener([&] { ++calls; });
  w.Notify();
  w.Close();
  w.Notify();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(w.Ended());
}

// ---- statistics of a run ----

TEST(CaseStatistics, OnePerCaseAndMetricNamedByTheRunsTimerAndCounters) {
  Provenance p;
  p.timer_unit = "cycles";
  p.counters = {"instructions"};
  std::vector<Sample> samples = {
      {0, 0, 0, 0, 10}, {0, 0, 1, 0, 30}, {0, 0, 0, 1, 5}, {0, 1, 0, 0, 7}, {0, 0, 2, 0, 20}};
  auto stats = ComputeCaseStats(3, 4, p, samples);
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats[0].case_index, 0u);
  EXPECT_EQ(stats[0].metric, "cycles");
  EXPECT_EQ(stats[0].unit, "cycles");
  EXPECT_EQ(stats[0].n, 3u);
  EXPECT_DOUBLE_EQ(stats[0].median, 20);
  EXPECT_EQ(stats[0].job_id, 3);
  EXPECT_EQ(stats[0].run_id, 4);
  EXPECT_EQ(stats[1].metric, "instructions");
  EXPECT_EQ(stats[1].unit, "count");
  EXPECT_EQ(stats[2].case_index, 1u);
  EXPECT_DOUBLE_EQ(stats[2].mean, 7);
}

TEST(CaseStatistics, RawSeriesFollowTheSortedSamples) {
  Provenance p;
  p.timer_unit = "ns";
  std::vector<Sample> samples = {{0, 0, 0, 0, 3}, {0, 0, 1, 0, 4}, {0, 1, 0, 0, 5}};
  auto series = GroupSamples(p, samples);
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].metric, "ns");
  EXPECT_EQ(series[0].values, (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(series[1].case_index, 1u);
}

}  // namespace
// The one rule for "measured" (results.h): a run is what its runner said, a job before its run
// what its boards are; every writer (CLI, page, CSV) shows the server's word.
TEST(Measured, ARunIsWhatItsRunnerSaidAndABoardWhatItsTagsSay) {
  EXPECT_EQ(MeasuredOfRun(true, "host", "ns"), kMeasuredEmulated) << "an emulator's count first";
  EXPECT_EQ(MeasuredOfRun(false, "host", "cycles"), kMeasuredHost);
  EXPECT_EQ(MeasuredOfRun(false, "stm32h7", "ns"), kMeasuredHost) << "a timer in ns is the host's";
  EXPECT_EQ(MeasuredOfRun(false, "stm32h7", "cycles"), kMeasuredSilicon);
  Provenance p;
  p.port = "an547";
  p.timer_unit = "cycles";
  p.emulated = true;
  EXPECT_EQ(MeasuredOfRun(p), kMeasuredEmulated);
  Board host;
  host.tags["timing"] = "host";
  EXPECT_TRUE(IsHostBoard(host));
  EXPECT_EQ(MeasuredOfBoard(false, IsHostBoard(host)), kMeasuredHost);
  EXPECT_EQ(MeasuredOfBoard(true, true), kMeasuredEmulated);
  EXPECT_EQ(MeasuredOfBoard(false, IsHostBoard(Board{})), kMeasuredSilicon);
}

}  // namespace mculab::server
