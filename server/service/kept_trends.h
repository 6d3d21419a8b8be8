// KeptTrends: what ListChangedJobs (queries_trend.cc) computed, kept until a write may change it,
// so an answer after a commit recomputes only the series of the jobs that were written.
//
//   SeriesOfJob   the series each case of a job belongs to (its key, the query, the case).
//   KeptTrends    each series' trend and each job's series, current at one store state version.
//                 Sync(store, version) brings them to `version`: it asks the store which jobs
//                 were written since (Store::JobsWrittenSince) and forgets those jobs' series and
//                 their trends; everything when the store cannot say, or too many were written.
//
// Thread-safety: none; LabQueries holds its own lock around a Sync and the use that follows.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "server/service/store.h"
#include "server/service/trend.h"

namespace mculab::server {

// One case of a job as a member of a series.
struct CaseSeries {
  std::string key;  // names the series (every field of the query)
  SeriesQuery query;
  std::int64_t case_id = 0;
  std::vector<std::int32_t> params;
};

// The series of each case of `job` (none for jobs the lab made, model jobs stored before the lab
// kept model names, custom-runner jobs whose runner upload is gone).
Result<std::vector<CaseSeries>> SeriesOfJob(Store& store, const Job& job);

class KeptTrends {
 public:
  // More jobs written than this since the last Sync: everything is forgotten (reading each one's
  // series would cost more than computing the series again).
  static constexpr std::size_t kMaxWrittenJobs = 256;
  static constexpr std::size_t kMaxTrends = 2'000;
  static constexpr std::size_t kMaxJobs = 20'000;

  // Forgets what the jobs written since the last Sync may have changed; afterwards everything
  // kept is current at `version` (read from Store::StateVersion before the kept data is used).
  Status Sync(Store& store, std::uint64_t version);

  // The series of `job` (SeriesOfJob), kept from an earlier call while the job is not written.
  Result<std::vector<CaseSeries>> SeriesOf(Store& store, const Job& job);

  const Trend* FindTrend(const std::string& key) const;
  void KeepTrend(const std::string& key, Trend trend);

  // Diagnostics: trends kept, and how often everything was forgotten.
  std::size_t trends_kept() const { return trends_.size(); }
  std::uint64_t forgot_everything() const { return forgot_everything_; }

 private:
  void Clear();

  std::optional<std::uint64_t> version_;  // unset: nothing kept yet
  std::map<std::string, Trend> trends_;
  std::map<JobId, std::vector<CaseSeries>> job_series_;
  std::uint64_t forgot_everything_ = 0;
};

}  // namespace mculab::server
