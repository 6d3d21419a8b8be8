// Lab: mculab-server's use cases. Clients submit, list, watch, cancel jobs and read results;
// agents register boards and report runs. The Lab owns the live state (boards, agents, jobs that
// are not finished, their runs) under one mutex, writes every change through the store's single
// writer, and pushes messages to agents through AgentChannel. The rpc layer only translates.
//
// State: plain classes the Lab holds, each tested without a Lab, all under its one mutex: the
// jobs not finished with their queue and deadlines (JobTable), the boards with their leases and
// counter units (BoardTable), the runs on boards with their ids, grace periods and finalize queue
// (RunTable), the agents' sessions (AgentSessions), the job watches (JobWatchers), the live feeds
// (FeedHub), and the scheduling passes, queue positions and estimates (Dispatcher).
// Use cases, one file each, decide what changes and add it to one operation's Effects (effects.h):
// jobs (lab_jobs.cc), dispatch (lab_dispatch.cc), boards (lab_boards.cc), agent sessions
// (lab_agents.cc), run ends and finalisation (lab_runs.cc), counters (lab_counters.cc), uploads
// (lab_artifacts.cc). Accounts and the ArtifactStore are built by main and lent to it. Admission,
// run verdicts, health calibration, queue positions and scheduling are pure functions in
// server/domain/.
//
// Concurrency:
// - Public methods may be called from any thread.
// - The store's commit callbacks (sample batches) call back in on the store's writer thread.
// - One background thread ends jobs whose timeout passed (it sleeps until the next deadline on
//   the injected Clock; nothing polls) and computes statistics of finished runs (it reads the
//   store, which must not happen on the writer thread or under the Lab's lock).
// - Under the lock the Lab only decides and queues: store writes (in decision order) with, for
//   each write, what it lets the Lab say: agent messages, watch and feed events. Nothing is said
//   before the state it reports is committed: those are handed out by the write's commit callback
//   (on the store's writer thread, in commit order, so in decision order), and dropped if the
//   commit fails. Replies that report a change (Submit, Cancel) wait for its commit.
// - A failed write stops the Lab (fail-stop): memory would no longer match the database. It is
//   logged, agents are hung up, watches and feeds end, and every use case answers kUnavailable
//   until the server is restarted (which reloads the state from the database).
//
// Scheduling is event driven: a submit, a run that ends, a board that registers or comes free
// runs the pure scheduler (domain/scheduler.h) at once.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "server/domain/board.h"
#include "server/domain/job.h"
#include "server/domain/pass_planner.h"
#include "server/domain/profile.h"
#include "server/domain/run.h"
#include "server/domain/scheduler.h"
#include "server/service/accounts.h"
#include "server/service/agent_channel.h"
#include "server/service/agent_events.h"
#include "server/service/agent_sessions.h"
#include "server/service/artifacts.h"
#include "server/service/board_table.h"
#include "server/service/caller.h"
#include "server/service/clock.h"
#include "server/service/config.h"
#include "server/service/custom_firmware.h"
#include "server/service/dispatcher.h"
#include "server/service/effects.h"
#include "server/service/feed_hub.h"
#include "server/service/job_table.h"
#include "server/service/job_watch.h"
#include "server/service/lab_feed.h"
#include "server/service/model_admission.h"
#include "server/service/results.h"
#include "server/service/run_finalizer.h"
#include "server/service/run_table.h"
#include "server/service/store.h"
#include "server/service/trend.h"

namespace mculab::server {

inline constexpr std::uint32_t kMaxIterations = 100'000;
inline constexpr std::uint32_t kMaxWarmup = 100'000;
inline constexpr std::uint32_t kMaxReruns = 5;
inline constexpr std::size_t kMaxCases = 10'000;
inline constexpr std::uint32_t kMaxTimeoutS = 7 * 24 * 3600;
// How often open streams' tokens are checked against the store (a revocation made by
// `mculab-server admin`, another process, ends them within this).
inline constexpr std::chrono::milliseconds kRevocationCheckPeriod{1000};
inline constexpr std::int64_t kArtifactCollectionPeriodMs = 3'600'000;

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

// What `mculab events --kind KIND` shows.
struct EventsView {
  std::vector<std::string> boards;
  bool emulated = false;
  std::string measured;  // kMeasuredEmulated, kMeasuredHost or kMeasuredSilicon (results.h)
  BoardUnits units;      // of the first matching board that registered units
  std::vector<std::string> countable;  // "cycles" first
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

// `mculab reserve BOARD --for 2h [--note TEXT] | --hold`.
struct ReserveRequest {
  std::string board;
  std::int64_t duration_ms = 0;  // the lease; a --hold renews it while the command runs
  std::string note;
  bool hold = false;
};

struct BoardView {
  Board board;
  std::uint32_t queue_length = 0;       // queued jobs that could run on this board
  std::uint32_t kind_queue_length = 0;  // queued jobs of this board's kind (any of its boards)
};

// The artifact store's limits set by the lab's configuration.
inline ArtifactStore::Limits ArtifactLimitsOf(const LabConfig& config) {
  return {config.max_artifact_bytes, config.max_user_artifact_bytes, config.max_user_artifacts};
}

class Lab {
 public:
  // The Lab uses `accounts` and `artifacts` (built by the caller, main or a test, from the same
  // store and clock; ArtifactLimitsOf(config) gives the artifact store's limits) and must be
  // destroyed before them.
  Lab(Store& store, Clock& clock, LabConfig config, Accounts& accounts, ArtifactStore& artifacts);
  ~Lab();
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;

  // Loads the boards and unfinished jobs from the store. Boards start offline until their agent
  // registers. A job that was on a board when the server stopped keeps its run, which waits for
  // its agent (config reconnect_grace_s): when the agent registers and lists the run in
  // AgentRegistration.active_runs, the run resumes (the agent resends what the server has not
  // acknowledged; committed batches are known from the store); when the agent registers without
  // it, or the grace ends, the job is requeued as an infrastructure failure. Starts the
  // background thread. Call once, before serving.
  Status Start();
  // Ends every watch, stops the background thread, and waits until the store has committed what
  // the Lab queued (and run its callbacks).
  void Stop();

  // ---- clients ----
  Result<SubmitReply> Submit(const Caller& caller, SubmitRequest request);
  Result<std::vector<BoardView>> ListBoards(const Caller& caller);
  Result<Job> GetJob(const Caller& caller, JobId id);
  // A model blob's operators, whole names and types (for a model job's per-operator rows).
  Result<std::shared_ptr<const ModelLayerNames>> ModelLayers(const std::string& blob_sha256) {
    return model_layers_.Get(blob_sha256, artifacts_.PathOf(blob_sha256));
  }
  // Fills job.wait when the job is queued (its position, the reservation it waits on, an
  // estimated start) from the live state; for views that read the job from the store and have
  // checked the caller may see it. GetJob and LabQueries::ListJobs call it.
  void AddQueueWait(Job& job);
  // The same for a page of jobs: one lock and one walk of the queue for all their positions.
  void AddQueueWaits(const std::vector<Job*>& jobs);
  // From any state that is not final; a job on a board gets its run cancelled on the agent and is
  // cancelled at once; the board is free when the agent confirms the run ended. A member cancels
  // their own jobs, an admin anyone's.
  Result<Job> Cancel(const Caller& caller, JobId id);
  // Events from the job's current state until a final one.
  Result<std::shared_ptr<JobWatch>> Watch(const Caller& caller, JobId id);
  // The job's results (ReadJobResults, job_results.h).
  Result<JobResults> GetResults(const Caller& caller, JobId id, bool include_samples);
  Result<std::unique_ptr<ArtifactUpload>> BeginUpload(const Caller& caller, std::string name,
                                                      std::uint64_t declared_size);
  Result<std::vector<JobTransition>> JobHistory(const Caller& caller, JobId id);
  // The events the boards of a kind (or one board) can count.
  Result<EventsView> ListEvents(const Caller& caller, const std::string& kind,
                                const std::string& board);
  // Viewer: a case's series over time (LabQueries::GetTrend, lab_trend.cc).
  Result<Trend> GetTrend(const Caller& caller, const TrendRequest& request);
  // An artifact's file for AgentLink.FetchArtifact: an agent only while it holds an active run
  // whose job references the artifact (a stranger agent is PERMISSION_DENIED whether or not the
  // artifact exists); admins always.
  Result<std::pair<std::filesystem::path, Artifact>> OpenArtifact(const Caller& caller,
                                                                  const std::string& sha256);

  // ---- reservations, maintenance, board history (lab_boards.cc) ----
  // Member. Reserves a board for the caller until now + duration (a busy board becomes the
  // caller's when its job ends); the caller's own reservation is extended. Another user's
  // reservation in force is FAILED_PRECONDITION naming the holder and its end.
  Result<Board> Reserve(const Caller& caller, const ReserveRequest& request);
  // Member, the holder only: the lease now ends at now + duration_ms.
  Result<Board> RenewReservation(const Caller& caller, const std::string& board,
                                 std::int64_t duration_ms);
  // Member for their own reservation; admin for anyone's.
  Result<Board> Release(const Caller& caller, const std::string& board);
  // Admin. On: health maintenance (no jobs; a running one finishes). Off: health unknown, so a
  // health check runs before the board takes jobs again (good at once when checks are off); a
  // board waiting for approval is refused (ApproveBoard).
  Result<Board> SetMaintenance(const Caller& caller, const std::string& board, bool on,
                               const std::string& reason);
  // Admin (`mculab board BOARD --approve`). A new board waiting for approval (approve_new_boards)
  // leaves maintenance for health unknown, so its health check runs before users' jobs (good at
  // once when checks are off). FAILED_PRECONDITION when the board is not waiting.
  Result<Board> ApproveBoard(const Caller& caller, const std::string& board);
  // Viewer. The board's audit trail (state, health, reservation changes), oldest first.
  Result<std::vector<BoardTransition>> BoardHistory(const Caller& caller, const std::string& board);
  // Deletes the uploads older than config artifact_grace_s that no unfinished job references
  // (rows and files), so the per-user quota frees up; finished jobs keep their results and the
  // artifact's hash. Runs every kArtifactCollectionPeriod on the background thread. Returns how
  // many were deleted.
  Result<std::size_t> CollectArtifacts();
  // Admin (`mculab board BOARD --agent NAME`). A board belongs to the agent that
  // first registered it; this gives it to `agent` (the old agent's registration of it is refused
  // from now on). A busy board is refused (cancel its job first); otherwise the board goes offline
  // until `agent` registers it.
  Result<Board> AssignBoard(const Caller& caller, const std::string& board,
                            const std::string& agent);

  // ---- agents ----
  // The first message of an agent's stream; the caller must hold reg.agent's agent token. A board
  // that belongs to another agent (whoever registered it first, or an admin's AssignBoard) is
  // refused, naming its owner; so are more boards or tags than config max_boards_per_agent /
  // max_tags_per_board. The session ends when the agent's token is revoked. Upserts
  // its boards (idle, or busy with a run it resumes after a server restart; a board new to the lab
  // is trusted with no user's job yet: AdmitNewBoardLocked), sends Registered, and
  // replaces an older session of the same agent (whose runs are infrastructure failures). An agent
  // that then sends nothing (not even a heartbeat) for config heartbeat_timeout is dropped like a
  // disconnected one, and its channel is hung up.
  Result<AgentSessionId> ConnectAgent(const Caller& caller, const AgentRegistration& reg,
                                      std::shared_ptr<AgentChannel> channel);
  // Every later message of that stream. A message about a run the agent does not hold (another
  // agent's, or one never assigned) is refused, counted (refused_agent_messages) and never stored.
  void OnAgentMessage(AgentSessionId session, AgentEvent event);
  // The stream ended: the agent's boards go offline and their runs are infrastructure failures
  // (except while the Lab is stopping: then the next Start() deals with them).
  void DisconnectAgent(AgentSessionId session, const std::string& reason);

  const LabConfig& config() const { return config_; }
  // Agent messages refused because they named a run the agent does not hold (since start).
  std::uint64_t refused_agent_messages() const { return refused_agent_messages_.load(); }
  // Scheduling passes run since start (the scheduler called on the queue and the boards): a
  // call with no free board, or with nothing changed since a pass that placed nothing, runs none.
  std::uint64_t schedule_passes() const { return schedule_passes_.load(); }
  // Users and tokens: the rpc and HTTP layers turn a request's bearer token into its Caller here.
  Accounts& accounts() { return accounts_; }

  // ---- the web page's live view ----
  // Every job change (submitted, state, progress, message) and board change (state, health,
  // queue length) from now on, until the subscriber closes the feed or the Lab stops (then the
  // feed ends). See lab_feed.h for the delivery contract.
  // samples_of: a job whose per-iteration values the feed also carries as they are committed
  // (LiveSamples, for the job page's plot while it runs); 0: none.
  std::shared_ptr<LabFeed> Subscribe(std::size_t capacity = LabFeed::kDefaultCapacity,
                                     JobId samples_of = 0);
  // The same for a caller with a token: the feed ends when that token is revoked.
  std::shared_ptr<LabFeed> Subscribe(const Caller& subscriber,
                                     std::size_t capacity = LabFeed::kDefaultCapacity,
                                     JobId samples_of = 0);

 private:
  // The Lab's parts, one file each; *Locked functions need mu_, and every part adds what it
  // changed to the operation's Effects (effects.h), committed and then said by CommitLocked.

  // ---- effects, fail-stop, background thread (lab.cc) ----
  // Queues the effects' writes; once they commit, says what they changed (messages, watch and feed
  // events) and then runs `done`. A failed commit says nothing, stops the Lab (FailStop) and runs
  // `done` with the failure.
  void CommitLocked(Effects& fx, WriteDone done = nullptr);
  // CommitLocked, unlock, then wait for the commit: its status (a failure is the write's).
  Status WaitForCommit(std::unique_lock<std::mutex>& l, Effects& fx);
  // CommitLocked, unlock, then wait for the commit: for a reply that reports the change.
  // kUnavailable when the commit failed (the Lab has stopped).
  Status CommitAndWait(std::unique_lock<std::mutex>& l, Effects& fx);
  static void Deliver(Effects& fx);
  // A write failed: log it and stop accepting work. Never takes mu_ (a closed store runs write
  // callbacks on the writing thread, which holds it).
  void FailStop(const std::string& what, const Status& status);
  // kUnavailable (naming the failed write) once FailStop ran; ok otherwise.
  Status Serving() const;
  // Background thread, after FailStop: hang up agents, end watches and feeds.
  void ShutDownAfterFailureLocked();
  void BackgroundLoop();

  // ---- jobs (lab_jobs.cc) ----
  // The one place a job changes state: domain check, memory (jobs_ and its indexes), job row +
  // audit row, watch events. A job reaching a final state leaves jobs_.
  Status TransitionLocked(ActiveJob& aj, JobState to, std::string reason, std::string actor,
                          Effects& fx);
  // Inserts a new job (memory, row, creation audit, events) without scheduling.
  JobId CreateJobLocked(Job job, std::vector<CaseSpec> cases, const std::string& actor,
                        Effects& fx);
  void EmitLocked(const Job& job, Effects& fx);  // current state/progress to the job's watchers
  void ExpireDeadlinesLocked(Effects& fx);
  Status ValidateSubmit(const SubmitRequest& r) const;
  // A custom-runner job's artifacts against the boards that could run it (custom_firmware.cc).
  Status AdmitCustomLocked(const SubmitRequest& r, const CustomFirmwareFiles& files) const;

  // ---- dispatch (lab_dispatch.cc) ----
  void ScheduleLocked(Effects& fx);
  void AssignLocked(ActiveJob& aj, Board& board, Effects& fx);

  // ---- boards: state, reservations, maintenance, health checks (lab_boards.cc) ----
  void SetBoardStateLocked(Board& b, BoardState to, const std::string& reason, Effects& fx,
                           const std::string& actor = "server");
  void SetBoardHealthLocked(Board& b, BoardHealth to, const std::string& reason, Effects& fx,
                            const std::string& actor = "server");
  // A free board's state: reserved while it has a holder, else idle.
  static BoardState FreeState(const Board& b);
  // Records a reservation change in the board's audit trail (field "reservation").
  void AuditReservationLocked(Board& b, const std::string& from, const std::string& to,
                              const std::string& reason, const std::string& actor, Effects& fx);
  void ClearReservationLocked(Board& b, const std::string& reason, const std::string& actor,
                              Effects& fx);
  void ExpireLeasesLocked(Effects& fx);
  void ExpireCancelGraceLocked(Effects& fx);
  // A cancelled or timed-out run the agent must confirm within config_.cancel_grace_ms.
  void ArmCancelGraceLocked(RunId run);
  static bool IsHealthCheck(const Job& job);
  // Queues a health-check job for the board unless one is queued or running.
  void QueueHealthCheckLocked(Board& b, Effects& fx);
  // A board registered for the first time (health unknown): it waits for an admin's approval when
  // config approve_new_boards says so, else for its health check (good at once when checks are
  // off); until then it gets no user's job.
  void AdmitNewBoardLocked(Board& b, Effects& fx);
  // A health-check job ended (final state `to`): the board's health follows.
  void HealthCheckEndedLocked(const ActiveJob& aj, JobState to, Effects& fx);

  // ---- agent sessions and their messages (lab_agents.cc) ----
  void DropSessionLocked(AgentSession& s, const std::string& reason, Effects& fx);
  // Queues a message for the agent's current session, sent after the effects' writes commit.
  void SendToAgentLocked(const std::string& agent, AgentCommand command, Effects& fx);
  // Silent agents and restored runs whose agent did not come back (background thread).
  void ExpireAgentsLocked(Effects& fx);
  // The earliest of those deadlines, kNoDeadline when none.
  std::int64_t NextAgentDeadlineLocked() const;
  // In ConnectAgent: the agent's restored runs resume (listed in active_runs) or fail.
  void ReconcileRunsLocked(const std::string& agent, const std::set<std::uint64_t>& active_runs,
                           Effects& fx);
  // The agent's active run `id`; null (and counted as refused, unless the run merely ended) when
  // the agent does not hold it.
  ActiveRun* FindRunLocked(RunId id, const std::string& agent);
  // The token of session `id` was revoked: drop it and hang up its stream.
  void OnAgentTokenRevoked(AgentSessionId id);
  void OnAgentStopping(AgentSessionId session);
  void OnBoardStatus(AgentSessionId session, const BoardStatusReport& m);
  // Whether `board`'s agent is stopping or has said the board is gone.
  bool BoardUnavailableLocked(const Board& board) const;
  void OnRunState(const std::string& agent, const RunPhaseReport& m);
  void OnRunStarted(const std::string& agent, RunStartedReport m);
  void OnBatch(const std::string& agent, SampleBatchReport m);
  // live: the batch's timer values per case for feeds that follow the job's samples (null when
  // no feed follows any job's).
  void OnBatchCommitted(const std::string& agent, RunId run, std::uint64_t sequence,
                        const WriteOutcome& outcome,
                        std::shared_ptr<std::vector<LiveSamples>> live);
  void OnCaseDone(const std::string& agent, CaseDoneReport m);
  void OnRunFinished(const std::string& agent, const RunFinishedReport& m);

  // ---- runs ending and finalisation (lab_runs.cc) ----
  // Ends an active run: records it, frees (or takes offline) its board, tells the agent.
  void CloseRunLocked(ActiveRun& r, RunState state, const std::string& message, bool board_offline,
                      Effects& fx);
  void InfraFailLocked(ActiveRun& r, const std::string& why, const std::string& actor,
                       bool board_offline, Effects& fx);
  void FailJobOfRunLocked(ActiveRun& r, JobState to, const std::string& message,
                          const std::string& actor, Effects& fx);
  void MaybeFinalizeLocked(ActiveRun& r);
  // On the background thread: the run's statistics and verdict (finalizer_), then its end.
  void Finalize(RunId run);

  // ---- counters, passes, op profiles, memory (lab_counters.cc) ----
  // Remembers (and stores) the counter units an agent registered for a board.
  void SetBoardUnitsLocked(const std::string& board, BoardUnits units, Effects& fx);
  // Plans the run's passes on its board and fills the assignment's passes.
  void PlanPassesLocked(const ActiveJob& aj, const Board& board, ActiveRun& run,
                        RunAssignment& assignment, Effects& fx);
  // Store rows for the op profiles and memory figures of a case's end / a run's start, for `run`.
  static void AddCaseProfiles(RunId run, CaseDoneReport& m, Effects& fx);
  static void AddFirmwareMemory(RunId run, RunStartedReport& m, Effects& fx);

  Store& store_;
  Clock& clock_;
  const LabConfig config_;
  ArtifactStore& artifacts_;
  Accounts& accounts_;
  ModelLayerCache model_layers_;

  std::mutex mu_;
  std::condition_variable bg_cv_;  // deadlines changed, a run to finalize, stopping
  bool started_ = false;
  bool stopping_ = false;
  std::atomic<bool> failed_{false};
  bool failure_handled_ = false;  // ShutDownAfterFailureLocked ran
  mutable std::mutex failure_mu_;
  std::string failure_;     // what failed, for kUnavailable answers (failure_mu_)
  JobTable jobs_;           // every job not in a final state, its queue, deadlines, jobs on boards
  BoardTable boards_;       // by name, with their leases and counter units
  RunTable runs_;           // runs on boards, their ids, cancel grace periods, runs to finalize
  AgentSessions sessions_;  // connected agents
  JobWatchers watchers_;    // of live jobs (Watch)
  Dispatcher dispatch_{jobs_, boards_, config_.health_checks};  // passes, positions, estimates
  FeedHub feeds_;                                               // the live feeds (Subscribe)
  RunFinalizer finalizer_{store_};  // a finished run's statistics and verdict (Finalize)
  PassPlanCache plans_;             // the pass plans of (events, units) seen (PlanPassesLocked)
  std::thread background_;
  std::atomic<std::uint64_t> refused_agent_messages_{0};
  // The schedule is stale until a pass (or the short-cut that finds no free board) saw every
  // change committed since; it is stale again at schedule_recheck_ms_ (a lease ending lets
  // anyone's jobs onto the board, with or without a write).
  bool schedule_stale_ = true;
  std::int64_t schedule_recheck_ms_ = kNoDeadline;
  std::atomic<std::uint64_t> schedule_passes_{0};
  std::int64_t next_artifact_collection_ms_ = 0;  // background thread
};

}  // namespace mculab::server
