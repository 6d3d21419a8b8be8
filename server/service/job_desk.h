// JobDesk: the client use cases on jobs (submit, get, cancel, watch, history, what a queued job
// waits for) and the one place a job changes state (TransitionLocked), over the LabState
// (lab_state.h). Admission of what is submitted is in domain/admission.h, model_admission.h and
// custom_firmware.h; placing queued jobs on boards is Scheduling's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "server/domain/job.h"
#include "server/service/caller.h"
#include "server/service/custom_firmware.h"
#include "server/service/job_requests.h"
#include "server/service/lab_state.h"

namespace mculab::server {

class JobDesk {
 public:
  JobDesk(LabState& st, LabParts& parts) : st_(st), p_(parts) {}

  // Member. Admits the job against the registered boards, stores it, and schedules it at once;
  // replies once the job is committed.
  Result<SubmitReply> Submit(const Caller& caller, SubmitRequest request);
  // Viewer. From the store (only what is committed), with its queue wait.
  Result<Job> GetJob(const Caller& caller, JobId id);
  // From any state that is not final; a job on a board gets its run cancelled on the agent and is
  // cancelled at once; the board is free when the agent confirms the run ended. A member cancels
  // their own jobs, an admin anyone's.
  Result<Job> Cancel(const Caller& caller, JobId id);
  // Events from the job's current state until a final one.
  Result<std::shared_ptr<JobWatch>> Watch(const Caller& caller, JobId id);
  Result<std::vector<JobTransition>> JobHistory(const Caller& caller, JobId id);
  // Fills job.wait when the job is queued (its position, the reservation it waits on, an
  // estimated start) from the live state; for views that read the job from the store and have
  // checked the caller may see it.
  void AddQueueWait(Job& job);
  // The same for a page of jobs: one lock and one walk of the queue for all their positions.
  void AddQueueWaits(const std::vector<Job*>& jobs);

  // ---- for the Lab's parts, with st.mu held ----
  // The one place a job changes state: domain check, memory (the job table and its indexes), job
  // row + audit row, watch events. A job reaching a final state leaves the table.
  Status TransitionLocked(ActiveJob& aj, JobState to, std::string reason, std::string actor,
                          Effects& fx);
  // Inserts a new job (memory, row, creation audit, events) without scheduling.
  JobId CreateJobLocked(Job job, std::vector<CaseSpec> cases, const std::string& actor,
                        Effects& fx);
  // The job's current state/progress to its watchers and the feeds.
  void EmitLocked(const Job& job, Effects& fx);
  // Jobs on boards whose timeout passed (background thread).
  void ExpireDeadlinesLocked(Effects& fx);

 private:
  Status ValidateSubmit(const SubmitRequest& r) const;
  // A custom-runner job's artifacts against the boards that could run it (custom_firmware.cc).
  Status AdmitCustomLocked(const SubmitRequest& r, const CustomFirmwareFiles& files) const;

  LabState& st_;
  LabParts& p_;
};

}  // namespace mculab::server
