// A run's statistics streamed from the store equal, bit for bit, those computed by loading every
// sample (ComputePassCaseStats, CyclesByPass), whatever the data and however it is chunked; and so
// do those counted as the run's batches are stored (RunStatisticsInProgress), or it gives up.
#include "server/service/run_statistics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
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

// Samples as an agent sends them: each pass's cases one after another, a (pass, case)'s metrics
// and iterations in any order. Some cases have one sample, some none, some outliers far out.
std::vector<Sample> StoredOrderSamples(std::mt19937_64& rng, const Shape& shape) {
  std::vector<Sample> out = RandomSamples(rng, shape);
  std::uniform_int_distribution<int> pick(0, 49);
  for (Sample& s : out) {
    const int p = pick(rng);
    if (p == 0) s.value = s.value * 1000 + 7;  // far above
    if (p == 1) s.value = -s.value;            // far below
    if (p == 2) s.value = std::int64_t{1} << 53 | 1;
  }
  // A case left with its first sample only, and one with none (every sample of case 1 of pass 0).
  if (shape.cases > 2) {
    bool kept = false;
    std::erase_if(out, [&](const Sample& s) {
      if (s.case_index != 2) return false;
      if (!kept) return !(kept = true);
      return true;
    });
    std::erase_if(out, [](const Sample& s) { return s.pass == 0 && s.case_index == 1; });
  }
  std::stable_sort(out.begin(), out.end(), [](const Sample& a, const Sample& b) {
    return std::tie(a.pass, a.case_index) < std::tie(b.pass, b.case_index);
  });
  return out;
}

// `samples` cut into batches of random sizes (a batch may span cases and passes).
std::vector<std::vector<Sample>> RandomBatches(std::mt19937_64& rng,
                                               const std::vector<Sample>& samples) {
  std::vector<std::vector<Sample>> out;
  std::uniform_int_distribution<std::size_t> size(1, 300);
  for (std::size_t i = 0; i < samples.size();) {
    const std::size_t n = std::min(size(rng), samples.size() - i);
    out.emplace_back(samples.begin() + static_cast<std::ptrdiff_t>(i),
                     samples.begin() + static_cast<std::ptrdiff_t>(i + n));
    i += n;
  }
  return out;
}

TEST(RunStatisticsInProgress, CountedAsBatchesAreStoredEqualsLoadingTheWholeRun) {
  std::mt19937_64 rng(20261206);
  const Shape shapes[] = {{1, 4, 1, 200}, {1, 3, 2, 50}, {2, 4, 5, 37},
                          {3, 5, 4, 101}, {1, 1, 1, 1},  {2, 6, 3, 1}};
  for (int round = 0; round < 20; ++round) {
    for (const Shape& shape : shapes) {
      SCOPED_TRACE("round " + std::to_string(round) + ", " + std::to_string(shape.passes) +
                   " passes x " + std::to_string(shape.cases) + " cases");
      const std::vector<Sample> samples = StoredOrderSamples(rng, shape);
      const Provenance prov = TestProvenance(shape.metrics);
      // Summarised at once, and as the Lab does it: the cases a batch ended handed back later.
      RunStatisticsInProgress counting, apart;
      std::uint64_t seq = 0;
      std::vector<RunStatisticsInProgress::PassCaseSummary> late;
      for (const auto& batch : RandomBatches(rng, samples)) {
        counting.Add(seq, batch);
        auto ended = apart.AddBatch(seq++, batch);
        apart.AddSummaries(std::move(late));  // the previous batch's, after this one was counted
        late.clear();
        for (auto& e : ended) late.push_back(RunStatisticsInProgress::Summarise(std::move(e)));
      }
      apart.AddSummaries(std::move(late));
      std::optional<RunStatistics> got_apart = apart.Finish(7, 9, prov, shape.passes, shape.cases);
      ASSERT_TRUE(got_apart.has_value());
      ExpectSameStats(ComputePassCaseStats(7, 9, prov, samples), got_apart->stats);
      ExpectSameCycles(CyclesByPass(samples, shape.passes, shape.cases), got_apart->cycles_by_pass);
      std::optional<RunStatistics> got = counting.Finish(7, 9, prov, shape.passes, shape.cases);
      ASSERT_TRUE(got.has_value());
      EXPECT_EQ(got->samples, samples.size());
      ExpectSameStats(ComputePassCaseStats(7, 9, prov, samples), got->stats);
      ExpectSameCycles(CyclesByPass(samples, shape.passes, shape.cases), got->cycles_by_pass);
    }
  }
}

TEST(RunStatisticsInProgress, EqualsTheStatisticsReadBackFromTheStore) {
  TempDir dir;
  auto store = db::SqliteStore::Open(dir.path() / "mculab.db");
  ASSERT_TRUE(store.ok()) << store.error().message;
  std::mt19937_64 rng(7);
  const Shape shapes[] = {{1, 5, 3, 3000}, {2, 4, 3, 500}};
  RunId run = 10;
  for (const Shape& shape : shapes) {
    ++run;
    const std::vector<Sample> samples = StoredOrderSamples(rng, shape);
    const Provenance prov = TestProvenance(shape.metrics);
    RunStatisticsInProgress counting;
    std::uint64_t seq = 0;
    for (auto& batch : RandomBatches(rng, samples)) {
      counting.Add(seq, batch);
      WriteSet ws;
      ws.batch = SampleBatch{run, seq++, std::move(batch), 0};
      ASSERT_TRUE((*store)->WriteAndWait(std::move(ws)).ok());
    }
    auto read = ComputeRunStatistics(**store, 5, run, prov, shape.passes, shape.cases);
    ASSERT_TRUE(read.ok()) << read.error().message;
    std::optional<RunStatistics> got = counting.Finish(5, run, prov, shape.passes, shape.cases);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->samples, read->samples);
    ExpectSameStats(read->stats, got->stats);
    ExpectSameCycles(read->cycles_by_pass, got->cycles_by_pass);
  }
}

TEST(RunStatisticsInProgress, ABatchSentTwiceIsCountedOnce) {
  RunStatisticsInProgress counting;
  const std::vector<Sample> batch = {Sample{0, 0, 0, 0, 10}, Sample{0, 0, 1, 0, 30}};
  counting.Add(0, batch);
  counting.Add(0, batch);
  EXPECT_EQ(counting.batches(), 1u);
  std::optional<RunStatistics> got = counting.Finish(1, 1, Provenance{}, 1, 1);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->samples, 2u);
  ASSERT_EQ(got->stats.size(), 1u);
  EXPECT_EQ(got->stats[0].n, 2u);
  EXPECT_EQ(got->stats[0].median, 20);
  EXPECT_EQ(got->cycles_by_pass, (std::vector<std::vector<double>>{{20}}));
}

TEST(RunStatisticsInProgress, ACaseThatComesBackAfterAnotherBeganGivesUp) {
  // A batch of case 0 replayed after case 1 began: case 0's values are not held together.
  RunStatisticsInProgress counting;
  counting.Add(0, std::vector<Sample>{{0, 0, 0, 0, 10}});
  counting.Add(2, std::vector<Sample>{{0, 1, 0, 0, 20}});
  counting.Add(1, std::vector<Sample>{{0, 0, 1, 0, 11}});
  EXPECT_TRUE(counting.abandoned());
  EXPECT_FALSE(counting.Finish(1, 1, Provenance{}, 1, 2).has_value());
}

TEST(RunStatisticsInProgress, ACounterOfOneCaseInTwoPassesGivesUp) {
  // Its statistics pool both passes' values, which are not held together.
  RunStatisticsInProgress counting;
  counting.Add(0, std::vector<Sample>{{0, 0, 0, 0, 10}, {0, 0, 0, 1, 5}});
  counting.Add(1, std::vector<Sample>{{1, 0, 0, 0, 10}, {1, 0, 0, 1, 6}});
  EXPECT_FALSE(counting.Finish(1, 1, Provenance{}, 2, 1).has_value());
}

TEST(RunStatisticsInProgress, ACaseLargerThanItHoldsGivesUp) {
  RunStatisticsInProgress counting;
  std::vector<Sample> batch(RunStatisticsInProgress::kMaxHeldValues, Sample{0, 0, 0, 0, 1});
  counting.Add(0, batch);
  EXPECT_FALSE(counting.abandoned());
  counting.Add(1, std::vector<Sample>{{0, 0, 1, 0, 2}});
  EXPECT_TRUE(counting.abandoned());
  EXPECT_FALSE(counting.Finish(1, 1, Provenance{}, 1, 1).has_value());
}

TEST(RunStatisticsInProgress, ACaseWhoseSummaryIsNotBackByTheEndGivesUp) {
  // The Lab summarises the cases a batch ended without its lock; a run's end that comes first
  // reads the samples back.
  RunStatisticsInProgress counting;
  counting.Add(0, std::vector<Sample>{{0, 0, 0, 0, 10}});
  auto ended = counting.AddBatch(1, std::vector<Sample>{{0, 1, 0, 0, 20}});
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].case_index, 0u);
  EXPECT_FALSE(counting.Finish(1, 1, Provenance{}, 1, 2).has_value());
}

TEST(RunStatisticsInProgress, AbandonedForBatchesStoredBeforeItBeganGivesNothing) {
  // A server restarted mid-run: the batches stored before are not counted.
  RunStatisticsInProgress counting;
  counting.Abandon();
  counting.Add(3, std::vector<Sample>{{0, 0, 0, 0, 10}});
  EXPECT_EQ(counting.batches(), 1u);
  EXPECT_FALSE(counting.Finish(1, 1, Provenance{}, 1, 1).has_value());
}

}  // namespace
}  // namespace mculab::server
