#include "server/service/kept_trends.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/op_catalog.h"
#include "common/tflite_model.h"
#include "server/service/custom_firmware.h"

namespace mculab::server {
namespace {

std::string KeyOf(const SeriesQuery& s) {
  const std::string params = s.params ? fmt::format("{}", fmt::join(*s.params, ",")) : "-";
  return fmt::format("{}|{}|{}|{}|{}|{}", s.kind, s.op, params,
                     s.case_id ? std::to_string(*s.case_id) : "-", s.runner, s.model);
}

}  // namespace

Result<std::vector<CaseSeries>> SeriesOfJob(Store& store, const Job& job) {
  std::vector<CaseSeries> out;
  if (job.origin != JobOrigin::kUser) return out;
  // Model jobs stored before the lab kept model names form no series.
  if (job.op == kModelOp && job.model_name.empty()) return out;
  std::string runner;
  if (!job.firmware_artifact.empty()) {
    auto a = store.GetArtifact(job.firmware_artifact);
    if (!a.ok()) return a.error();
    if (*a) runner = (*a)->name;
  }
  // Nor custom-runner jobs whose runner upload is gone.
  if (job.op == kCustomOp && runner.empty()) return out;
  auto cases = store.GetJobCases(job.id);
  if (!cases.ok()) return cases.error();
  const bool by_params = FindOp(job.op) != nullptr;
  for (const CaseSpec& c : *cases) {
    CaseSeries s;
    s.query.kind = job.kind;
    s.query.op = job.op;
    if (by_params) {
      s.query.params = c.params;
    } else {
      s.query.case_id = c.id;
    }
    s.query.runner = runner;
    s.query.model = job.model_name;
    s.key = KeyOf(s.query);
    s.case_id = c.id;
    s.params = c.params;
    out.push_back(std::move(s));
  }
  return out;
}

void KeptTrends::Clear() {
  trends_.clear();
  job_series_.clear();
  ++forgot_everything_;
}

Status KeptTrends::Sync(Store& store, std::uint64_t version) {
  if (!version_) {
    version_ = version;
    return {};
  }
  if (*version_ == version) return {};
  const std::optional<std::vector<JobId>> written = store.JobsWrittenSince(*version_);
  if (!written || written->size() > kMaxWrittenJobs) {
    Clear();
    version_ = version;
    return {};
  }
  for (JobId id : *written) {
    job_series_.erase(id);  // a job's series are read again (cheap) once it has been written
    auto job = store.GetJob(id);
    if (!job.ok()) {
      if (job.error().code != ErrorCode::kNotFound) return job.error();
      Clear();  // a job that is gone (or not yet readable): its series are unknown
      break;
    }
    auto series = SeriesOfJob(store, *job);
    if (!series.ok()) return series.error();
    for (const CaseSeries& s : *series) trends_.erase(s.key);
  }
  version_ = version;
  return {};
}

Result<std::vector<CaseSeries>> KeptTrends::SeriesOf(Store& store, const Job& job) {
  if (auto it = job_series_.find(job.id); it != job_series_.end()) return it->second;
  auto series = SeriesOfJob(store, job);
  if (!series.ok()) return series.error();
  if (job_series_.size() >= kMaxJobs) job_series_.clear();
  job_series_.emplace(job.id, *series);
  return series;
}

const Trend* KeptTrends::FindTrend(const std::string& key) const {
  auto it = trends_.find(key);
  return it == trends_.end() ? nullptr : &it->second;
}

void KeptTrends::KeepTrend(const std::string& key, Trend trend) {
  if (trends_.size() >= kMaxTrends) trends_.clear();
  trends_.insert_or_assign(key, std::move(trend));
}

}  // namespace mculab::server
