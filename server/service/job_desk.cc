// JobDesk (job_desk.h): the one place a job changes state, the client use cases on jobs, and
// the jobs' timeouts.
#include "server/service/job_desk.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "common/crash_point.h"
#include "common/kernel_set.h"
#include "common/op_catalog.h"
#include "server/domain/admission.h"
#include "server/service/agent_desk.h"
#include "server/service/board_upkeep.h"
#include "server/service/model_admission.h"
#include "server/service/profiles.h"
#include "server/service/run_ends.h"
#include "server/service/scheduling.h"

namespace mculab::server {

Status JobDesk::TransitionLocked(ActiveJob& aj, JobState to, std::string reason, std::string actor,
                                 Effects& fx) {
  const JobId id = aj.job.id;
  const JobState from = aj.job.state;
  auto t = ApplyTransition(aj.job, to, std::move(reason), std::move(actor), st_.clock.NowUs());
  if (!t.ok()) {
    spdlog::warn("{}", t.error().message);
    return t.error();
  }
  spdlog::debug("job {}: {} -> {} ({})", id, t->from, t->to, t->reason);
  st_.jobs.Moved(aj, from);
  fx.writes.jobs.push_back(aj.job);
  fx.writes.transitions.push_back(std::move(*t));
  if ((from == JobState::kQueued) != (to == JobState::kQueued)) fx.queue_changed = true;
  EmitLocked(aj.job, fx);
  if (to == JobState::kSucceeded) st_.dispatch.Succeeded(aj.job);
  if (IsFinal(to) && BoardUpkeep::IsHealthCheck(aj.job))
    p_.upkeep->HealthCheckEndedLocked(aj, to, fx);
  if (IsFinal(to)) {
    st_.watchers.Forget(id);
    st_.jobs.Remove(id);  // aj is gone
  }
  return {};
}

JobId JobDesk::CreateJobLocked(Job job, std::vector<CaseSpec> cases, const std::string& actor,
                               Effects& fx) {
  job.id = st_.jobs.TakeId();
  job.state = JobState::kQueued;
  const std::int64_t now_us = st_.clock.NowUs();
  job.created_ms = now_us / 1000;
  fx.writes.new_jobs.push_back({job, cases});
  fx.writes.transitions.push_back(CreationTransition(job, actor, now_us));
  fx.queue_changed = true;
  EmitLocked(job, fx);
  ActiveJob aj;
  aj.job = job;
  aj.cases = std::move(cases);
  st_.jobs.Add(std::move(aj));
  return job.id;
}

void JobDesk::EmitLocked(const Job& job, Effects& fx) {
  const JobEvent e = JobEventOf(job, st_.clock.NowMs());
  if (!st_.feeds.empty()) fx.feed_jobs.push_back(e);
  st_.watchers.Collect(e, fx.events);
}

Status JobDesk::ValidateSubmit(const SubmitRequest& r) const {
  auto invalid = [](std::string m) { return MakeError(ErrorCode::kInvalidArgument, std::move(m)); };
  if (r.kind.empty() && r.board.empty()) {
    return invalid("give a board kind or a board name to run on");
  }
  for (const auto& [key, value] : r.tags) {
    if (key.empty() || value.empty() || key.find('=') != std::string::npos) {
      return invalid("tag '" + key + "=" + value +
                     "' is not KEY=VALUE with a non-empty key and value (e.g. cpu=cortex-m55)");
    }
  }
  if (auto kernels = ParseKernelSet(r.kernels); !kernels.ok()) return kernels.error();
  if (r.op == kModelOp) {
    if (Status s = ValidateModelRequest(r); !s.ok()) return s;
  } else if (!r.firmware_artifact.empty() || !r.blob_artifact.empty() || r.op == kCustomOp) {
    if (Status s = ValidateCustomRequest(r); !s.ok()) return s;
    if (!r.kernels.empty()) {
      return invalid("kernels '" + r.kernels +
                     "' means nothing for a custom runner: it runs its own runtime's kernels, "
                     "not the lab's (the kernel set is for operator benchmarks and models)");
    }
  } else {
    if (r.op.empty()) return invalid("op is required (built-in ops: " + OpNames() + ")");
    const OpInfo* op = FindOp(r.op);
    if (op == nullptr) {
      return invalid("unknown op '" + r.op + "' (built-in ops: " + OpNames() + ")");
    }
    if (r.cases.empty()) return invalid("the job has no cases");
    for (std::size_t i = 0; i < r.cases.size(); ++i) {
      if (Status s = ValidateCaseParams(*op, r.cases[i].params); !s.ok()) {
        return invalid(fmt::format("case {} (id {}): {}", i, r.cases[i].id, s.error().message));
      }
    }
  }
  if (r.cases.size() > kMaxCases) {
    return invalid(
        fmt::format("the job has {} cases; at most {} are accepted", r.cases.size(), kMaxCases));
  }
  if (r.iterations < 1 || r.iterations > kMaxIterations) {
    return invalid(
        fmt::format("iterations must be between 1 and {}, got {}", kMaxIterations, r.iterations));
  }
  if (r.warmup > kMaxWarmup) {
    return invalid(fmt::format("warmup must be between 0 and {}, got {}", kMaxWarmup, r.warmup));
  }
  if (r.timeout_s > kMaxTimeoutS) {
    return invalid(fmt::format("timeout must be at most {} s, got {}", kMaxTimeoutS, r.timeout_s));
  }
  if (r.label.size() > 256) return invalid("label is longer than 256 characters");
  if (r.reruns > kMaxReruns) {
    return invalid(fmt::format("reruns must be between 0 and {}, got {}", kMaxReruns, r.reruns));
  }
  if (!std::isfinite(r.max_cv_pct) || r.max_cv_pct < 0 || r.max_cv_pct > 1000) {
    return invalid(
        fmt::format("max_cv must be a percentage from 0 to 1000 (0: the default of each kind of "
                    "measurement), got {}",
                    r.max_cv_pct));
  }
  if (Status s = ValidateCodeRefs(r.commit, r.branch, r.url); !s.ok()) return s;
  if (!r.cases_artifact.empty() && !IsArtifactHash(r.cases_artifact)) {
    return invalid("cases_artifact must be a SHA-256 in lowercase hex, got '" + r.cases_artifact +
                   "'");
  }
  return {};
}

Result<SubmitReply> JobDesk::Submit(const Caller& caller, SubmitRequest request) {
  if (Status s = RequireRole(caller, Role::kMember, "submitting a job"); !s.ok()) return s.error();
  if (Status s = ValidateSubmit(request); !s.ok()) return s.error();
  auto events = NormalizeEvents(request.events);
  if (!events.ok()) return events.error();
  request.events = std::move(*events);
  // Every artifact the job references is the submitter's own upload or shared (artifacts.h).
  if (!request.cases_artifact.empty()) {
    auto artifact = FindUsableArtifact(st_.store, request.cases_artifact, caller.user, "cases",
                                       "mculab submit --cases uploads it");
    if (!artifact.ok()) return artifact.error();
  }

  std::optional<CustomFirmwareFiles> custom;
  // A model job: the blob parsed here, before the lock (model_admission.h).
  std::optional<ModelInspection> model;
  std::optional<Artifact> model_blob;
  if (request.op == kModelOp) {
    if (request.cases.empty()) request.cases.push_back(CaseSpec{0, {}});
    auto blob = FindUsableArtifact(st_.store, request.blob_artifact, caller.user, "model",
                                   "mculab submit --model uploads it");
    if (!blob.ok()) return blob.error();
    model_blob = *blob;
    auto inspected = AdmitModelFile(st_.artifacts.PathOf(request.blob_artifact), model_blob->name,
                                    model_blob->size);
    if (!inspected.ok()) return inspected.error();
    model = std::move(*inspected);
  } else if (!request.firmware_artifact.empty()) {
    request.op = kCustomOp;
    if (request.cases.empty()) request.cases.push_back(CaseSpec{0, {}});
    auto files = FindCustomFiles(st_.store, st_.artifacts, request, caller.user);
    if (!files.ok()) return files.error();
    custom = std::move(*files);
  }

  std::unique_lock l(st_.mu);
  if (st_.stopping) return MakeError(ErrorCode::kUnavailable, "the server is shutting down");
  if (Status s = st_.Serving(); !s.ok()) return s.error();
  {
    std::uint32_t queued = 0;
    for (const auto& [id, aj] : st_.jobs.all()) {
      if (aj.job.user == caller.user && aj.job.state == JobState::kQueued) ++queued;
    }
    if (queued >= st_.config.max_queued_jobs_per_user) {
      return MakeError(ErrorCode::kResourceExhausted,
                       fmt::format("{} has {} jobs queued, the most this server queues per user "
                                   "(max_queued_jobs_per_user in the server config); wait for "
                                   "some to start or cancel them",
                                   caller.user, queued));
    }
  }
  // Admission control: only what some registered board (online or not) could run.
  AdmissionRequest admission{request.kind, request.board, request.op, request.tags, request.events};
  auto kind = AdmitToBoards(admission, st_.boards.all(), st_.boards.units());
  if (!kind.ok()) return kind.error();
  request.kind = admission.kind = *kind;

  if (custom) {
    if (Status s = AdmitCustomLocked(request, *custom); !s.ok()) return s.error();
  }
  if (model) {
    std::vector<const Board*> candidates;
    for (const auto& [name, b] : st_.boards.all()) {
      if (!request.board.empty() ? name == request.board : b.kind == request.kind) {
        candidates.push_back(&b);
      }
    }
    if (Status s = AdmitModelOnBoards(*model, model_blob->size, model_blob->name, candidates,
                                      st_.config.max_model_arena);
        !s.ok()) {
      return s.error();
    }
  }
  if (Status s = AdmitWorkloadMemory(admission, request.cases, st_.boards.all()); !s.ok()) {
    return s.error();
  }

  Job job;
  job.user = caller.user;
  job.priority = request.priority;
  job.kind = request.kind;
  job.board = request.board;
  job.op = request.op;
  job.label = request.label;
  job.state = JobState::kQueued;
  job.iterations = request.iterations;
  job.warmup = request.warmup;
  job.num_cases = static_cast<std::uint32_t>(request.cases.size());
  job.cases_artifact = request.cases_artifact;
  job.firmware_artifact = request.firmware_artifact;
  job.blob_artifact = request.blob_artifact;
  job.commit = request.commit;
  for (char& c : job.commit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  job.branch = request.branch;
  job.url = request.url;
  job.reruns = request.reruns;
  job.max_cv_pct = request.max_cv_pct;
  if (model) {
    job.model_name = !request.model_name.empty() ? request.model_name : model_blob->name;
    job.model_sha256 = model->model_sha256;
    job.model_summary = ModelSummary(*model);
  }
  job.tags = request.tags;
  job.reference_kernels = *ParseKernelSet(request.kernels) == KernelSet::kReference;
  job.timeout_s = request.timeout_s != 0 ? request.timeout_s : st_.config.default_timeout_s;

  Effects fx;
  job.id = CreateJobLocked(job, std::move(request.cases), caller.user, fx);
  if (!request.events.empty()) {
    fx.writes.job_events.push_back(JobEvents{job.id, request.events});
    st_.jobs.Find(job.id)->events = request.events;  // a new job cannot be final yet
  }
  spdlog::info("job {} submitted by {}: {} on {} ({} case{} x {} iteration{})", job.id, caller.user,
               job.op, job.board.empty() ? job.kind : job.board, job.num_cases,
               job.num_cases == 1 ? "" : "s", job.iterations, job.iterations == 1 ? "" : "s");
  p_.scheduling->ScheduleLocked(fx);
  SubmitReply reply;
  reply.id = job.id;
  const ActiveJob& aj = *st_.jobs.Find(job.id);  // a new job cannot be final yet
  reply.state = aj.job.state;
  const JobId ids[] = {job.id};
  reply.wait = st_.dispatch.Wait(aj, st_.dispatch.QueuePositions(ids)[0], st_.clock.NowMs());
  reply.queue_position = reply.wait.position;
  reply.estimated_start_ms = reply.wait.estimated_start_ms;

  if (Status s = st_.WaitForCommit(l, fx); !s.ok()) {
    // Not stored, so it must not run: the Lab has stopped (FailStop) and the job leaves memory.
    spdlog::error("job {} could not be stored: {}", job.id, s.error().message);
    {
      std::lock_guard relock(st_.mu);
      st_.jobs.Remove(job.id);
    }
    return MakeError(ErrorCode::kUnavailable, "the job could not be stored (" + s.error().message +
                                                  "); it was not accepted and will not run");
  }
  CrashPoint(crash_points::kBeforeReply);
  return reply;
}

Result<Job> JobDesk::GetJob(const Caller& caller, JobId id) {
  if (Status s = RequireRole(caller, Role::kViewer, "reading a job"); !s.ok()) return s.error();
  if (Status s = st_.Serving(); !s.ok()) return s.error();
  // From the store, never from memory: the reply reports only what is committed (the read waits
  // for the state writes queued before it, so it shows every change decided so far).
  auto job = st_.store.GetJob(id);
  if (job.ok()) AddQueueWait(*job);
  return job;
}

Result<Job> JobDesk::Cancel(const Caller& caller, JobId id) {
  if (Status s = RequireRole(caller, Role::kMember, "cancelling a job"); !s.ok()) return s.error();
  // Someone else's job needs the admin role, whatever its state.
  auto owned_by_caller = [&](const std::string& owner) -> Status {
    if (owner == caller.user || caller.role == Role::kAdmin) return {};
    return MakeError(
        ErrorCode::kPermissionDenied,
        fmt::format("job {} belongs to {}: only they or an admin can cancel it", id, owner));
  };
  if (Status s = st_.Serving(); !s.ok()) return s.error();
  std::unique_lock l(st_.mu);
  ActiveJob* found = st_.jobs.Find(id);
  if (found == nullptr) {
    l.unlock();
    auto job = st_.store.GetJob(id);
    if (!job.ok()) return job.error();
    if (Status s = owned_by_caller(job->user); !s.ok()) return s.error();
    return MakeError(ErrorCode::kFailedPrecondition,
                     fmt::format("job {} already {}", id, JobStateName(job->state)));
  }
  ActiveJob& aj = *found;
  if (Status s = owned_by_caller(aj.job.user); !s.ok()) return s.error();
  Effects fx;
  const std::string reason = "cancelled by " + caller.user;
  bool freed_board = false;
  if (IsOnBoard(aj.job.state)) {
    if (ActiveRun* r = st_.runs.Find(aj.job.last_run_id)) {
      p_.agents->SendToAgentLocked(r->run.agent, RunCancel{r->run.id, reason}, fx);
      r->job_ended = true;
      r->end_state = RunState::kCancelled;
      if (!r->finish_received) p_.runs->ArmCancelGraceLocked(r->run.id);
    }
  }
  aj.job.message = reason;
  Job out = aj.job;
  if (Status s = TransitionLocked(aj, JobState::kCancelled, reason, caller.user, fx); !s.ok()) {
    return s.error();
  }
  out.state = JobState::kCancelled;
  out.finished_ms = st_.clock.NowMs();
  // A run whose agent already reported its end (we were only waiting for batches) ends now.
  ActiveRun* r = st_.runs.Find(out.last_run_id);
  if (r != nullptr && r->job_ended && r->finish_received) {
    p_.runs->CloseRunLocked(*r, RunState::kCancelled, reason, false, fx);
    freed_board = true;
  }
  if (freed_board) p_.scheduling->ScheduleLocked(fx);
  if (Status s = st_.WaitForCommit(l, fx); !s.ok()) {
    return MakeError(
        ErrorCode::kUnavailable,
        fmt::format("the cancellation of job {} could not be stored ({})", id, s.error().message));
  }
  spdlog::info("job {} {}", id, reason);
  CrashPoint(crash_points::kBeforeReply);
  return out;
}

Result<std::shared_ptr<JobWatch>> JobDesk::Watch(const Caller& caller, JobId id) {
  if (Status s = RequireRole(caller, Role::kViewer, "watching a job"); !s.ok()) return s.error();
  if (Status s = st_.Serving(); !s.ok()) return s.error();
  auto watch = std::make_shared<JobWatch>(id);
  {
    std::lock_guard l(st_.mu);
    if (const ActiveJob* live = st_.jobs.Find(id)) {
      if (st_.stopping) {
        watch->End();
        return watch;
      }
      // The current state, told once every write queued so far (the state's own) is committed;
      // later changes follow in commit order.
      const Job& j = live->job;
      Effects fx;
      fx.events.emplace_back(watch, JobEventOf(j, st_.clock.NowMs()));
      st_.watchers.Add(id, watch);
      // A revoked token ends the watch (Accounts runs this without locks held).
      watch->Hold(st_.accounts.WatchToken(caller.token, [weak = std::weak_ptr<JobWatch>(watch)] {
        if (auto w = weak.lock()) w->Fail("the watcher's token was revoked");
      }));
      st_.CommitLocked(fx);
      return watch;
    }
  }
  // Not live: finished (or unknown). Every unfinished job is live, so this is the last event.
  auto job = st_.store.GetJob(id);
  if (!job.ok()) return job.error();
  watch->Push(JobEvent{job->id, job->state, job->message,
                       std::min(job->progress_done, job->ProgressTotal()), job->ProgressTotal(),
                       job->assigned_board, job->finished_ms});
  watch->End();
  return watch;
}

Result<std::vector<JobTransition>> JobDesk::JobHistory(const Caller& caller, JobId id) {
  if (Status s = RequireRole(caller, Role::kViewer, "reading a job's history"); !s.ok()) {
    return s.error();
  }
  auto t = st_.store.GetTransitions(id);
  if (!t.ok()) return t.error();
  if (t->empty()) return MakeError(ErrorCode::kNotFound, fmt::format("no job {}", id));
  return t;
}

void JobDesk::ExpireDeadlinesLocked(Effects& fx) {
  const std::int64_t now = st_.clock.NowMs();
  for (const JobId id : st_.jobs.TakeExpired(now)) {
    ActiveJob* found = st_.jobs.Find(id);
    if (found == nullptr || !IsOnBoard(found->job.state)) continue;  // ended by an earlier one
    ActiveJob& aj = *found;
    const std::string why =
        fmt::format("timed out after {} s on board {}", aj.job.timeout_s, aj.job.assigned_board);
    bool close_run = false;
    if (ActiveRun* r = st_.runs.Find(aj.job.last_run_id)) {
      p_.agents->SendToAgentLocked(r->run.agent, RunCancel{r->run.id, why}, fx);
      r->job_ended = true;
      r->end_state = RunState::kTimedOut;
      close_run = r->finish_received;
      if (!close_run) p_.runs->ArmCancelGraceLocked(r->run.id);
    }
    aj.job.message = why;
    const RunId run = aj.job.last_run_id;
    spdlog::warn("job {} {}", id, why);
    (void)TransitionLocked(aj, JobState::kTimedOut, why, "server", fx);
    if (close_run) {
      p_.runs->CloseRunLocked(*st_.runs.Find(run), RunState::kTimedOut, why, false, fx);
      p_.scheduling->ScheduleLocked(fx);
    }
  }
}

void JobDesk::AddQueueWait(Job& job) { AddQueueWaits({&job}); }

void JobDesk::AddQueueWaits(const std::vector<Job*>& jobs) {
  std::vector<JobId> queued;
  for (const Job* j : jobs) {
    if (j->state == JobState::kQueued) queued.push_back(j->id);
  }
  if (queued.empty()) return;
  std::lock_guard l(st_.mu);
  const std::vector<std::uint32_t> positions = st_.dispatch.QueuePositions(queued);
  const std::int64_t now = st_.clock.NowMs();
  std::size_t i = 0;
  for (Job* j : jobs) {
    if (j->state != JobState::kQueued) continue;
    const std::uint32_t position = positions[i++];
    const ActiveJob* aj = st_.jobs.Find(j->id);
    if (position == 0 || aj == nullptr) continue;  // no longer queued
    j->wait = st_.dispatch.Wait(*aj, position, now);
  }
}

}  // namespace mculab::server
