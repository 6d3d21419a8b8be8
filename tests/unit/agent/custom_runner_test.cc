// Custom runners on the agent: the artifact cache (fake fetcher: cache hits, a corrupt entry, the
// size caps) and a whole run of an assignment with a custom runner and blob on a fake board.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "agent/boards/fake_board.h"
#include "agent/io/temp_dir.h"
#include "agent/run/artifact_cache.h"
#include "agent/run/run_executor.h"
#include "common/sha256.h"
#include "mculab/runner_protocol.h"
#include "run_records.h"
#include "test_workloads.h"

namespace mculab::agent {
namespace {

using ::testing::HasSubstr;

// Serves artifacts from memory in small chunks; can be told to corrupt them.
class FakeFetcher final : public ArtifactFetcher {
 public:
  std::string Add(std::string bytes) {
    std::string sha = Sha256Hex(bytes);
    files_[sha] = std::move(bytes);
    return sha;
  }
  Status Fetch(const std::string& sha,
               const std::function<Status(std::string_view)>& sink) override {
    ++calls;
    auto it = files_.find(sha);
    if (it == files_.end()) return MakeError(ErrorCode::kNotFound, "no artifact " + sha);
    std::string data = it->second;
    if (corrupt_next) {
      data[0] ^= 0x55;
      corrupt_next = false;
    }
    for (std::size_t off = 0; off < data.size(); off += 7) {
      if (Status s = sink(std::string_view(data).substr(off, 7)); !s.ok()) return s;
    }
    return {};
  }
  int calls = 0;
  bool corrupt_next = false;

 private:
  std::map<std::string, std::string> files_;
};

std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class ArtifactCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = TempDir::Create("mculab-cache-test-");
    ASSERT_TRUE(d.ok());
    dir_ = std::move(*d);
  }
  ArtifactCacheOptions Options() {
    ArtifactCacheOptions o;
    o.dir = dir_->path() / "cache";
    return o;
  }
  std::unique_ptr<TempDir> dir_;
  FakeFetcher fetcher_;
};

TEST_F(ArtifactCacheTest, FetchesOnceVerifiesAndServesFromDiskAfterwards) {
  const std::string sha = fetcher_.Add("runner bytes, not really an ELF");
  ArtifactCache cache(Options(), fetcher_);
  auto p = cache.Get(sha);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->filename(), sha);
  EXPECT_EQ(ReadAll(*p), "runner bytes, not really an ELF");
  EXPECT_EQ(fetcher_.calls, 1);
  auto again = cache.Get(sha);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *p);
  EXPECT_EQ(fetcher_.calls, 1) << "a cached artifact was fetched again";
  // No temporary file is left behind.
  EXPECT_TRUE(std::filesystem::is_empty(Options().dir / "tmp"));
}

TEST_F(ArtifactCacheTest, ACorruptEntryOnDiskIsFetchedAgain) {
  const std::string sha = fetcher_.Add("the model blob");
  ArtifactCache cache(Options(), fetcher_);
  auto p = cache.Get(sha);
  ASSERT_TRUE(p.ok());
  {
    std::ofstream out(*p, std::ios::binary | std::ios::trunc);
    out << "the model blXb, edited";  // other size and content: re-hashed, found wrong
  }
  auto again = cache.Get(sha);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(ReadAll(*again), "the model blob");
  EXPECT_EQ(fetcher_.calls, 2);
}

TEST_F(ArtifactCacheTest, ACorruptTransferIsRefusedAndLeavesNothingUnderTheName) {
  const std::string sha = fetcher_.Add("bytes that arrive damaged");
  ArtifactCache cache(Options(), fetcher_);
  fetcher_.corrupt_next = true;
  auto p = cache.Get(sha);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kDataLoss);
  EXPECT_THAT(p.error().message, HasSubstr("arrived corrupt"));
  EXPECT_FALSE(std::filesystem::exists(Options().dir / sha));
  EXPECT_TRUE(std::filesystem::is_empty(Options().dir / "tmp"));
  auto retry = cache.Get(sha);
  ASSERT_TRUE(retry.ok()) << retry.error().message;
}

TEST_F(ArtifactCacheTest, AnArtifactOverThePerFileCapIsRefused) {
  const std::string sha = fetcher_.Add(std::string(100, 'x'));
  auto o = Options();
  o.max_file_bytes = 64;
  ArtifactCache cache(o, fetcher_);
  auto p = cache.Get(sha);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kResourceExhausted);
  EXPECT_THAT(p.error().message, HasSubstr("larger than this agent's limit of 64 bytes"));
  EXPECT_FALSE(std::filesystem::exists(o.dir / sha));
}

TEST_F(ArtifactCacheTest, TheTotalCapEvictsTheLeastRecentlyUsed) {
  const std::string a = fetcher_.Add(std::string(40, 'a'));
  const std::string b = fetcher_.Add(std::string(40, 'b'));
  const std::string c = fetcher_.Add(std::string(40, 'c'));
  auto o = Options();
  o.max_total_bytes = 100;
  ArtifactCache cache(o, fetcher_);
  ASSERT_TRUE(cache.Get(a).ok());
  ASSERT_TRUE(cache.Get(b).ok());
  // Make a older than b whatever the file system's timestamp resolution.
  std::filesystem::last_write_time(
      o.dir / a, std::filesystem::file_time_type::clock::now() - std::chrono::hours(1));
  ASSERT_TRUE(cache.Get(c).ok());
  EXPECT_FALSE(std::filesystem::exists(o.dir / a));
  EXPECT_TRUE(std::filesystem::exists(o.dir / b));
  EXPECT_TRUE(std::filesystem::exists(o.dir / c));
}

TEST_F(ArtifactCacheTest, UnknownArtifactsAndBadNamesAreErrors) {
  ArtifactCache cache(Options(), fetcher_);
  auto missing = cache.Get(std::string(64, 'a'));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
  auto bad = cache.Get("../../etc/passwd");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(fetcher_.calls, 1);
}

// ---- a whole custom-runner run on a fake board ----

class CustomRunTest : public ArtifactCacheTest {
 protected:
  void SetUp() override {
    ArtifactCacheTest::SetUp();
    auto s = Spool::Open(dir_->path() / "spool");
    ASSERT_TRUE(s.ok());
    spool_ = std::move(*s);
    cache_ = std::make_unique<ArtifactCache>(Options(), fetcher_);
  }
  RunAssignment Custom(const std::string& fw, const std::string& blob) {
    RunAssignment a;
    a.run_id = 9;
    a.job_id = 3;
    a.board = "fake-0";
    a.op = "custom";
    a.iterations = 4;
    a.warmup = 1;
    a.firmware_sha256 = fw;
    a.blob_sha256 = blob;
    return a;
  }
  RunFinishedRecord Execute(const RunAssignment& a, bool custom_runners = true) {
    BoardInfo info = testing::Info("fake-0", "fake");
    info.custom_runners = custom_runners;
    board_ = std::make_unique<FakeBoard>(info, FakeOptions{}, clock_);
    ExecutorOptions o;
    o.artifacts = cache_.get();
    return ExecuteRun(a, *board_, *spool_, sink_, clock_, cancel_, o);
  }
  FakeClock clock_;
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<ArtifactCache> cache_;
  std::unique_ptr<FakeBoard> board_;
  testing::RecordingSink sink_;
  CancelToken cancel_;
};

TEST_F(CustomRunTest, RunsTheFetchedRunnerWithTheBlobAndReportsChecksumsUnverified) {
  const std::string fw = fetcher_.Add(
      "\x7f"
      "ELF a custom runner");
  const std::string blob_bytes = "model: conv then fc";
  const std::string blob = fetcher_.Add(blob_bytes);
  auto a = Custom(fw, blob);
  a.cases = {RunCase{0, 5, {}}, RunCase{1, 6, {}}};
  auto fin = Execute(a);
  ASSERT_EQ(fin.outcome, RunOutcome::kSucceeded) << fin.message;
  auto log = board_->last_run();
  EXPECT_EQ(log->firmware, Options().dir / fw);
  EXPECT_EQ(std::string(log->blob.begin(), log->blob.end()), blob_bytes);
  int done = 0;
  for (const auto& m : sink_.sent) {
    if (auto* started = std::get_if<RunStartedRecord>(&m)) {
      EXPECT_EQ(started->firmware_sha256, fw);
    }
    if (auto* cd = std::get_if<CaseDoneRecord>(&m)) {
      ++done;
      EXPECT_TRUE(cd->checksum_unverified);
      EXPECT_FALSE(cd->checksum_ok);
      EXPECT_EQ(cd->checksum,
                mculab_crc32(0, reinterpret_cast<const std::uint8_t*>(blob_bytes.data()),
                             blob_bytes.size()));
    }
  }
  EXPECT_EQ(done, 2);
}

TEST_F(CustomRunTest, NoCasesMeansOneCaseWithIdZero) {
  const std::string fw = fetcher_.Add("runner");
  auto fin = Execute(Custom(fw, ""));
  ASSERT_EQ(fin.outcome, RunOutcome::kSucceeded) << fin.message;
  int done = 0;
  for (const auto& m : sink_.sent) done += std::holds_alternative<CaseDoneRecord>(m);
  EXPECT_EQ(done, 1);
  EXPECT_TRUE(board_->last_run()->blob.empty());
}

TEST_F(CustomRunTest, AnArtifactTheServerDoesNotHaveFailsTheJobNotTheBoard) {
  auto fin = Execute(Custom(std::string(64, 'e'), ""));
  EXPECT_EQ(fin.outcome, RunOutcome::kWorkloadFailed);
  EXPECT_THAT(fin.message, HasSubstr("cannot get the custom runner"));
}

TEST_F(CustomRunTest, ABoardThatDoesNotRunCustomRunnersSaysWhy) {
  const std::string fw = fetcher_.Add("runner");
  auto fin = Execute(Custom(fw, ""), /*custom_runners=*/false);
  EXPECT_EQ(fin.outcome, RunOutcome::kWorkloadFailed);
  EXPECT_THAT(fin.message, HasSubstr("does not run custom runners"));
  EXPECT_EQ(fetcher_.calls, 0);
}

}  // namespace
}  // namespace mculab::agent
