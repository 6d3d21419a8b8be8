// Job: one benchmark request, and its state machine (DESIGN.md §3).
//
//   queued -> assigned -> preparing -> running -> succeeded | failed | cancelled | timed_out
//
// An infrastructure failure (agent lost, board process crashed) puts an assigned, preparing or
// running job back to queued while attempts remain, and fails it after the last one. A workload
// failure fails the job. Cancel works from every non-final state. ApplyTransition is the one
// function that changes a job's state: it rejects illegal moves and returns the audit record.
// Pure: standard library only. Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace mculab::server {

using JobId = std::int64_t;
using RunId = std::int64_t;

enum class JobState {
  kQueued,
  kAssigned,
  kPreparing,
  kRunning,
  kSucceeded,
  kFailed,
  kCancelled,
  kTimedOut,
};
inline constexpr JobState kAllJobStates[] = {
    JobState::kQueued,    JobState::kAssigned, JobState::kPreparing, JobState::kRunning,
    JobState::kSucceeded, JobState::kFailed,   JobState::kCancelled, JobState::kTimedOut};

std::string_view JobStateName(JobState state);  // "queued", "timed_out", ...
std::optional<JobState> ParseJobState(std::string_view name);
bool IsFinal(JobState state);
// Assigned, preparing or running: a run on a board belongs to the job.
bool IsOnBoard(JobState state);
bool IsLegalTransition(JobState from, JobState to);

// `mculab submit --priority high|normal|low` (defined in scheduler.cc).
enum class JobPriority { kLow, kNormal, kHigh };

std::string_view JobPriorityName(JobPriority priority);  // "low", "normal", "high"
std::optional<JobPriority> ParseJobPriority(std::string_view name);

// Who made a job: a user's submit, or the server's own health check of a board (identity is
// this field, never the user name the job shows).
enum class JobOrigin { kUser, kHealthCheck };

std::string_view JobOriginName(JobOrigin origin);  // "user", "health_check"
std::optional<JobOrigin> ParseJobOrigin(std::string_view name);

// One row of the parameter sweep: the CSV's case id and the op's parameters in catalog order.
struct CaseSpec {
  std::int64_t id = 0;
  std::vector<std::int32_t> params;
  bool operator==(const CaseSpec&) const = default;
};

// Why a queued job waits and when it should start (all zero/empty when it is not queued).
struct QueueWait {
  // 1 + the queued jobs ahead of it that compete for the same boards.
  std::uint32_t position = 0;
  // Every board the job could run on is reserved by someone else: the reservation that ends
  // first (its board, holder, lease end and note). Empty board: not waiting on a reservation.
  std::string board;
  std::string holder;
  std::int64_t lease_until_ms = 0;
  std::string note;
  // When it is expected to start (ms since the epoch), 0 when nothing is known: the lease end
  // when it waits on a reservation, plus the jobs ahead of it times the median duration of
  // recent runs of its kind and op.
  std::int64_t estimated_start_ms = 0;
};

struct Job {
  JobId id = 0;
  std::string user;
  std::string kind;   // board kind
  std::string board;  // requested board name, empty for "any board of this kind"
  std::string op;
  std::string label;
  JobState state = JobState::kQueued;
  JobPriority priority = JobPriority::kNormal;
  JobOrigin origin = JobOrigin::kUser;
  std::uint32_t iterations = 0;
  std::uint32_t warmup = 0;
  std::uint32_t num_cases = 0;
  std::string cases_artifact;
  // Custom runner (op "custom"): SHA-256 of the uploaded runner and blob; empty otherwise.
  std::string firmware_artifact;
  std::string blob_artifact;
  // Model job (op "model"): the model's file name as submitted, the SHA-256 of the .tflite alone
  // (the blob may carry an input too) and its graph summary; empty otherwise.
  std::string model_name;
  std::string model_sha256;
  std::string model_summary;
  // The code the job measures, as given at submit (empty when not given).
  std::string commit;
  std::string branch;
  std::string url;
  std::map<std::string, std::string> tags;  // board tags asked for at submit (cpu=cortex-m55)
  // `--kernels reference`: the runner runs its reference kernels instead of its fastest set.
  bool reference_kernels = false;
  std::uint32_t timeout_s = 0;
  // `--reruns N`: a succeeded run with a case whose timer varies more than `max_cv_pct` (0: the
  // default of its kind of measurement, common/stats.h) is run again on the same board, at most
  // `reruns` times; `reruns_done` counts those runs. Emulated counts are exact: never rerun.
  std::uint32_t reruns = 0;
  double max_cv_pct = 0;
  std::uint32_t reruns_done = 0;
  std::uint32_t attempts = 0;  // runs started (incremented on every assignment)
  std::int64_t created_ms = 0;
  std::int64_t started_ms = 0;   // latest entry into running
  std::int64_t finished_ms = 0;  // entry into a final state
  std::string message;
  std::string assigned_board;  // board of the current run, empty while queued
  RunId last_run_id = 0;
  // Derived, not stored on the job: measured iterations stored by the latest run.
  std::uint64_t progress_done = 0;
  // Derived, not stored on the job: the kernel set the latest run's runner reported (HELLO).
  std::string kernel_set_ran;
  // Derived from the Lab's live state, not stored: why a queued job waits (JobDesk::AddQueueWait).
  QueueWait wait;

  std::uint64_t ProgressTotal() const { return static_cast<std::uint64_t>(num_cases) * iterations; }
};

// The audit record of one transition (table job_transitions). from is empty for creation.
struct JobTransition {
  JobId job_id = 0;
  std::string from;
  std::string to;
  std::string reason;
  std::string actor;  // a user, an agent ("agent:NAME") or "server"
  std::int64_t time_ms = 0;
  std::int64_t time_us = 0;  // the same instant in microseconds (dispatch takes about 1 ms)
};

// The creation record: "" -> queued, at `created_us` (job.created_ms in microseconds).
JobTransition CreationTransition(const Job& job, std::string actor, std::int64_t created_us);

// Moves job to `to` at `now_us` (microseconds since the Unix epoch) when legal and returns the
// audit record; otherwise an error naming both states and leaves job unchanged. Side effects on
// job: entering assigned increments attempts; entering running sets started_ms; entering a final
// state sets finished_ms; entering queued clears assigned_board.
Result<JobTransition> ApplyTransition(Job& job, JobState to, std::string reason, std::string actor,
                                      std::int64_t now_us);

// Where an infrastructure failure sends a job that is on a board: back to queued while it has
// attempts left (attempts < max_attempts, the reruns of unstable cases not counted), otherwise
// failed.
JobState AfterInfraFailure(const Job& job, std::uint32_t max_attempts);

// The attempts that count against max_attempts: every run the job was assigned, less the reruns
// of unstable cases (runs that succeeded). What "attempt N of M" says.
std::uint32_t CountedAttempts(const Job& job);

}  // namespace mculab::server
