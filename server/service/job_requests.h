// What a client asks of the jobs and what it gets back (JobDesk, job_desk.h): plain structs the
// wire layer converts, with the limits a submission is checked against.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "server/domain/job.h"

namespace mculab::server {

inline constexpr std::uint32_t kMaxIterations = 100'000;
inline constexpr std::uint32_t kMaxWarmup = 100'000;
inline constexpr std::uint32_t kMaxReruns = 5;
inline constexpr std::size_t kMaxCases = 10'000;
inline constexpr std::uint32_t kMaxTimeoutS = 7 * 24 * 3600;

struct SubmitRequest {
  std::string kind;
  std::string board;  // optional: one board by name
  std::string op;
  std::vector<CaseSpec> cases;
  std::uint32_t iterations = 0;
  std::uint32_t warmup = 0;
  std::string label;
  std::string cases_artifact;   // optional: SHA-256 of an uploaded CSV
  std::uint32_t timeout_s = 0;  // 0: the configured default
  JobPriority priority = JobPriority::kNormal;
  // Custom runner (service/custom_firmware.h): SHA-256 of an uploaded runner ELF and blob.
  std::string firmware_artifact;
  std::string blob_artifact;
  // Model job: the model's file name as the user has it (mculab submit --model sends it); empty:
  // the uploaded artifact's name.
  std::string model_name;
  // The code it measures (`--commit`, `--branch`, `--url`): checked by CheckCodeRefs.
  std::string commit, branch, url;
  // `--reruns N --max-cv PCT` (Job::reruns): at most kMaxReruns; max_cv_pct 0..1000 (0: default).
  std::uint32_t reruns = 0;
  double max_cv_pct = 0;
  std::vector<std::string> events;          // counter events besides cycles
  std::map<std::string, std::string> tags;  // board tags the job needs (cpu=cortex-m55)
  // The kernel set (common/kernel_set.h): "fast" or empty for the runner's fastest, "reference".
  std::string kernels;
};

struct SubmitReply {
  JobId id = 0;
  JobState state = JobState::kQueued;
  QueueWait wait;  // why it waits (position and estimate repeated below)
  // 0 when the job went to a board at once; otherwise 1 + the queued jobs ahead of it that
  // compete for the same boards.
  std::uint32_t queue_position = 0;
  // When the job is expected to start (ms since the epoch): queued jobs ahead per fitting board
  // times the median duration of recent runs of its kind and op; 0 when nothing is known.
  std::int64_t estimated_start_ms = 0;
};

}  // namespace mculab::server
