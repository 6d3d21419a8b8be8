#include "server/domain/job.h"

namespace mculab::server {

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "queued";
    case JobState::kAssigned:
      return "assigned";
    case JobState::kPreparing:
      return "preparing";
    case JobState::kRunning:
      return "running";
    case JobState::kSucceeded:
      return "succeeded";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
    case JobState::kTimedOut:
      return "timed_out";
  }
  return "unknown";
}

std::optional<JobState> ParseJobState(std::string_view name) {
  for (JobState s : kAllJobStates)
    if (JobStateName(s) == name) return s;
  return std::nullopt;
}

std::string_view JobOriginName(JobOrigin origin) {
  return origin == JobOrigin::kHealthCheck ? "health_check" : "user";
}

std::optional<JobOrigin> ParseJobOrigin(std::string_view name) {
  if (name == "user") return JobOrigin::kUser;
  if (name == "health_check") return JobOrigin::kHealthCheck;
  return std::nullopt;
}

bool IsFinal(JobState state) {
  return state == JobState::kSucceeded || state == JobState::kFailed ||
         state == JobState::kCancelled || state == JobState::kTimedOut;
}

bool IsOnBoard(JobState state) {
  return state == JobState::kAssigned || state == JobState::kPreparing ||
         state == JobState::kRunning;
}

bool IsLegalTransition(JobState from, JobState to) {
  switch (from) {
    case JobState::kQueued:
      return to == JobState::kAssigned || to == JobState::kCancelled;
    case JobState::kAssigned:
      // An agent may skip preparing (nothing to flash).
      return to == JobState::kPreparing || to == JobState::kRunning || to == JobState::kQueued ||
             to == JobState::kFailed || to == JobState::kCancelled || to == JobState::kTimedOut;
    case JobState::kPreparing:
      return to == JobState::kRunning || to == JobState::kQueued || to == JobState::kFailed ||
             to == JobState::kCancelled || to == JobState::kTimedOut;
    case JobState::kRunning:
      return to == JobState::kSucceeded || to == JobState::kQueued || to == JobState::kFailed ||
             to == JobState::kCancelled || to == JobState::kTimedOut;
    case JobState::kSucceeded:
    case JobState::kFailed:
    case JobState::kCancelled:
    case JobState::kTimedOut:
      return false;
  }
  return false;
}

JobTransition CreationTransition(const Job& job, std::string actor, std::int64_t created_us) {
  return JobTransition{job.id,
                       "",
                       std::string(JobStateName(JobState::kQueued)),
                       "submitted",
                       std::move(actor),
                       job.created_ms,
                       created_us};
}

Result<JobTransition> ApplyTransition(Job& job, JobState to, std::string reason, std::string actor,
                                      std::int64_t now_us) {
  const std::int64_t now_ms = now_us / 1000;
  if (!IsLegalTransition(job.state, to)) {
    return MakeError(ErrorCode::kFailedPrecondition, "job " + std::to_string(job.id) +
                                                         " cannot go from " +
                                                         std::string(JobStateName(job.state)) +
                                                         " to " + std::string(JobStateName(to)));
  }
  JobTransition t{job.id,
                  std::string(JobStateName(job.state)),
                  std::string(JobStateName(to)),
                  std::move(reason),
                  std::move(actor),
                  now_ms,
                  now_us};
  job.state = to;
  if (to == JobState::kAssigned) ++job.attempts;
  if (to == JobState::kRunning) job.started_ms = now_ms;
  if (to == JobState::kQueued) job.assigned_board.clear();
  if (IsFinal(to)) job.finished_ms = now_ms;
  return t;
}

std::uint32_t CountedAttempts(const Job& job) {
  // A rerun of an unstable case (Job::reruns_done) is an attempt that succeeded, not a failure.
  return job.attempts > job.reruns_done ? job.attempts - job.reruns_done : 0;
}

JobState AfterInfraFailure(const Job& job, std::uint32_t max_attempts) {
  return CountedAttempts(job) < max_attempts ? JobState::kQueued : JobState::kFailed;
}

}  // namespace mculab::server
