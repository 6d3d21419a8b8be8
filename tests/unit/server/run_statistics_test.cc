// A run's statistics streamed from the store equal, bit for bit, those computed by loading every
// sample (ComputePassCaseStats, CyclesByPass), whatever the data and however it is chunked.
#include "server/service/run_statistics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <tuple>

#include "db/sqlite_store.h"
#include "server/service/profiles.h"
#include "server/service/results.h"

namespace mculab::server {
namespace {

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("mculab-runstats-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct Shape {
  std::uint32_t passes, cases, metrics, iterations;
};

// Random samples of a run: every (pass, case, iteration) has the timer; counters are spread over
// the passes (metric m in pass (m - 1) % passes) and some (pass, case) pairs lose iterations.
std::vector<Sample> RandomSamples(std::mt19937_64& rng, const Shape& shape) {
  std::vector<Sample> out;
  std::uniform_int_distribution<std::int64_t> base(1, 2'000'000'000);
  std::uniform_int_distribution<int> keep(0, 9);
  for (std::uint32_t p = 0; p < shape.passes; ++p) {
    for (std::uint32_t c = 0; c < shape.cases; ++c) {
      const std::int64_t centre = base(rng);
      std::normal_distribution<double> noise(0, static_cast<double>(centre) * 0.01);
      for (std::uint32_t i = 0; i < shape.iterations; ++i) {
        if (keep(rng) == 0) continue;  // a lost iteration
        out.push_back(Sample{p, c, i, 0, centre + static_cast<std::int64_t>(noise(rng))});
        for (std::uint32_t m = 1; m < shape.metrics; ++m) {
          if ((m - 1) % shape.passes != p) continue;
          out.push_back(Sample{p, c, i, m, static_cast<std::int64_t>(rng() % 1'000'000) - 1000});
        }
      }
    }
  }
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

Provenance TestProvenance(std::uint32_t metrics) {
  Provenance p;
  p.timer_unit = "cycles";
  for (std::uint32_t m = 1; m < metrics; ++m) p.counters.push_back("event" + std::to_string(m));
  return p;
}

void ExpectSameStats(const std::vector<CaseStats>& want, const std::vector<CaseStats>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const CaseStats& a = want[i];
    const CaseStats& b = got[i];
    SCOPED_TRACE("stats row " + std::to_string(i));
    EXPECT_EQ(std::tie(a.job_id, a.run_id, a.case_index, a.metric_index, a.metric, a.unit, a.n),
              std::tie(b.job_id, b.run_id, b.case_index, b.metric_index, b.metric, b.unit, b.n));
    // Exact equality: the same values summarised by the same code.
    EXPECT_EQ(a.min, b.min);
    EXPECT_EQ(a.median, b.median);
    EXPECT_EQ(a.mean, b.mean);
    EXPECT_EQ(a.p90, b.p90);
    EXPECT_EQ(a.p99, b.p99);
    EXPECT_EQ(a.stddev, b.stddev);
    EXPECT_EQ(a.cv, b.cv);
    EXPECT_EQ(a.max, b.max);
  }
}

void ExpectSameCycles(const std::vector<std::vector<double>>& want,
                      const std::vector<std::vector<double>>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (std::size_t p = 0; p < want.size(); ++p) {
    ASSERT_EQ(want[p].size(), got[p].size());
    for (std::size_t c = 0; c < want[p].size(); ++c) {
      if (std::isnan(want[p][c])) {
        EXPECT_TRUE(std::isnan(got[p][c])) << "pass " << p << " case " << c;
      } else {
        EXPECT_EQ(want[p][c], got[p][c]) << "pass " << p << " case " << c;
      }
    }
  }
}

TEST(RunStatistics, StreamedInAnyChunksEqualsLoadingTheWholeRun) {
  std::mt19937_64 rng(20261201);
  const Shape shapes[] = {{1, 3, 2, 50}, {2, 4, 5, 37}, {3, 2, 4, 101}, {1, 1, 1, 1}};
  for (const Shape& shape : shapes) {
    std::vector<Sample> samples = RandomSamples(rng, shape);
    const Provenance prov = TestProvenance(shape.metrics);
    const auto want = ComputePassCaseStats(7, 9, prov, samples);
    const auto want_cycles = CyclesByPass(samples, shape.passes, shape.cases);

    // The store's order: (case, metric, pass), iterations in any order.
    std::stable_sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
      return std::tie(a.case_index, a.metric, a.pass) < std::tie(b.case_index, b.metric, b.pass);
    });
    for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, samples.size() + 1}) {
      SCOPED_TRACE("chunks of " + std::to_string(chunk));
      RunStatisticsBuilder b(7, 9, prov, shape.passes, shape.cases);
      for (std::size_t i = 0; i < samples.size(); i += chunk) {
        b.Add(std::span<const Sample>(samples).subspan(i, std::min(chunk, samples.size() - i)));
      }
      RunStatistics got = b.Finish();
      EXPECT_EQ(got.samples, samples.size());
      ExpectSameStats(want, got.stats);
      ExpectSameCycles(want_cycles, got.cycles_by_pass);
    }
  }
}

TEST(RunStatistics, EmptyRunHasNoStatisticsAndNoCycles) {
  RunStatisticsBuilder b(1, 1, Provenance{}, 2, 3);
  RunStatistics got = b.Finish();
  EXPECT_TRUE(got.stats.empty());
  EXPECT_EQ(got.samples, 0u);
  ASSERT_EQ(got.cycles_by_pass.size(), 2u);
  for (const auto& pass : got.cycles_by_pass) {
    ASSERT_EQ(pass.size(), 3u);
    for (double v : pass) EXPECT_TRUE(std::isnan(v));
  }
}

TEST(RunStatistics, ReadFromTheStoreEqualsTheStatisticsOfEveryLoadedSample) {
  TempDir dir;
  auto store = db::SqliteStore::Open(dir.path() / "mculab.db");
  ASSERT_TRUE(store.ok()) << store.error().message;
  std::mt19937_64 rng(42);
  const Shape shape{2, 5, 3, 3000};  // 30,000+ samples: several of the store's chunks
  std::vector<Sample> samples = RandomSamples(rng, shape);
  const RunId run = 3;
  for (std::size_t i = 0, seq = 0; i < samples.size(); i += 1000, ++seq) {
    WriteSet ws;
    ws.batch = SampleBatch{run, seq, {}, 0};
    ws.batch->samples.assign(
        samples.begin() + static_cast<std::ptrdiff_t>(i),
        samples.begin() + static_cast<std::ptrdiff_t>(std::min(i + 1000, samples.size())));
    ASSERT_TRUE((*store)->WriteAndWait(std::move(ws)).ok());
  }
  // Another run's samples are not read.
  WriteSet other;
  other.batch = SampleBatch{run + 1, 0, {Sample{0, 0, 0, 0, 1}}, 0};
  ASSERT_TRUE((*store)->WriteAndWait(std::move(other)).ok());

  const Provenance prov = TestProvenance(shape.metrics);
  auto loaded = (*store)->GetSamples(run);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->size(), samples.size());
  auto got = ComputeRunStatistics(**store, 5, run, prov, shape.passes, shape.cases);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->samples, samples.size());
  ExpectSameStats(ComputePassCaseStats(5, run, prov, *loaded), got->stats);
  ExpectSameCycles(CyclesByPass(*loaded, shape.passes, shape.cases), got->cycles_by_pass);
}

}  // namespace
}  // namespace mculab::server
