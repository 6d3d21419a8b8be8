// FaultyStore: a Store in front of a real one that a test can make hold or fail its writes, to
// see what the Lab says before, after or without a commit. Reads and account writes go straight
// to the real store; it counts the reads of a run's samples (ScanSamples), so a test can see that a
// run's end read none.
//
// Modes for Write():
// - kPass: forwarded at once.
// - kHold: kept, in order, until Release() forwards them all (a commit that has not happened yet).
// - kFail: the write is dropped and its callback runs on the real store's writer thread, in queue
//   order, with kUnavailable (a commit that failed, e.g. a full disk).
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <utility>

#include "server/service/store.h"

namespace mculab::server::testing {

class FaultyStore final : public Store {
 public:
  enum class Mode { kPass, kHold, kFail };

  explicit FaultyStore(Store& inner) : inner_(inner) {}

  void SetMode(Mode mode) {
    std::lock_guard l(mu_);
    mode_ = mode;
  }
  // Forwards every held write, in order, and passes later ones.
  void Release() {
    std::deque<std::pair<WriteSet, WriteDone>> held;
    {
      std::lock_guard l(mu_);
      held.swap(held_);
      mode_ = Mode::kPass;
    }
    for (auto& [ws, done] : held) inner_.Write(std::move(ws), std::move(done));
  }
  // Waits until at least `n` writes are held (the Lab has decided and queued them).
  bool WaitHeld(std::size_t n) {
    std::unique_lock l(mu_);
    return cv_.wait_for(l, std::chrono::seconds(10), [&] { return held_.size() >= n; });
  }
  // How many times a run's samples were read back (ScanSamples).
  std::size_t sample_scans() const { return sample_scans_.load(); }
  std::size_t failed_writes() {
    std::lock_guard l(mu_);
    return failed_;
  }

  void Write(WriteSet ws, WriteDone done = nullptr) override {
    std::unique_lock l(mu_);
    if (mode_ == Mode::kHold) {
      held_.emplace_back(std::move(ws), std::move(done));
      l.unlock();
      cv_.notify_all();
      return;
    }
    if (mode_ == Mode::kFail) {
      ++failed_;
      l.unlock();
      inner_.Write(WriteSet{}, [done = std::move(done)](const WriteOutcome&) {
        if (done) {
          done(WriteOutcome{MakeError(ErrorCode::kUnavailable,
                                      "database or disk is full (injected by the test)")});
        }
      });
      return;
    }
    l.unlock();
    inner_.Write(std::move(ws), std::move(done));
  }
  void WaitForRoom() override { inner_.WaitForRoom(); }
  void Flush() override { inner_.Flush(); }

  Result<Job> GetJob(JobId id) override { return inner_.GetJob(id); }
  Result<std::vector<Job>> ListActiveJobs() override { return inner_.ListActiveJobs(); }
  Result<std::vector<CaseSpec>> GetJobCases(JobId id) override { return inner_.GetJobCases(id); }
  Result<std::vector<JobTransition>> GetTransitions(JobId id) override {
    return inner_.GetTransitions(id);
  }
  Result<std::vector<Board>> ListBoards() override { return inner_.ListBoards(); }
  Result<std::vector<BoardTransition>> GetBoardTransitions(const std::string& b) override {
    return inner_.GetBoardTransitions(b);
  }
  Result<Run> GetRun(RunId id) override { return inner_.GetRun(id); }
  Result<std::vector<Run>> ListRuns(JobId job) override { return inner_.ListRuns(job); }
  Result<JobId> MaxJobId() override { return inner_.MaxJobId(); }
  Result<RunId> MaxRunId() override { return inner_.MaxRunId(); }
  Result<std::vector<Sample>> GetSamples(RunId run) override { return inner_.GetSamples(run); }
  Result<std::uint64_t> CountSamples(RunId run) override { return inner_.CountSamples(run); }
  Status ScanSamples(RunId run,
                     const std::function<void(std::span<const Sample>)>& chunk) override {
    ++sample_scans_;
    return inner_.ScanSamples(run, chunk);
  }
  Result<std::vector<std::uint64_t>> ListBatchSequences(RunId run) override {
    return inner_.ListBatchSequences(run);
  }
  Result<std::map<std::uint32_t, std::vector<double>>> GetMetricValues(
      RunId run, std::uint32_t metric, std::optional<std::uint32_t> case_index) override {
    return inner_.GetMetricValues(run, metric, case_index);
  }
  Result<std::vector<CaseResult>> GetCaseResults(RunId run) override {
    return inner_.GetCaseResults(run);
  }
  Result<std::vector<CaseStats>> GetCaseStats(JobId job) override {
    return inner_.GetCaseStats(job);
  }
  Result<std::optional<Artifact>> GetArtifact(const std::string& sha256) override {
    return inner_.GetArtifact(sha256);
  }
  Result<ArtifactUsage> GetArtifactUsage(const std::string& user) override {
    return inner_.GetArtifactUsage(user);
  }
  Result<bool> IsArtifactOwner(const std::string& sha256, const std::string& user) override {
    return inner_.IsArtifactOwner(sha256, user);
  }
  Result<std::vector<Artifact>> ListArtifactsBefore(std::int64_t ms) override {
    return inner_.ListArtifactsBefore(ms);
  }
  Result<JobPage> QueryJobs(const JobQuery& q) override { return inner_.QueryJobs(q); }
  Result<std::vector<SeriesPoint>> GetCaseSeries(RunId run, std::uint32_t pass,
                                                 std::uint32_t case_index,
                                                 std::uint32_t metric) override {
    return inner_.GetCaseSeries(run, pass, case_index, metric);
  }
  Result<std::vector<std::pair<std::string, std::uint64_t>>> CountJobsByState() override {
    return inner_.CountJobsByState();
  }
  Result<std::uint64_t> SamplesStored() override { return inner_.SamplesStored(); }
  Result<std::vector<SeriesRow>> QuerySeries(const SeriesQuery& q) override {
    return inner_.QuerySeries(q);
  }
  std::uint64_t StateVersion() override { return inner_.StateVersion(); }
  std::optional<std::vector<JobId>> JobsWrittenSince(std::uint64_t version) override {
    return inner_.JobsWrittenSince(version);
  }
  Result<JobEvents> GetJobEvents(JobId job) override { return inner_.GetJobEvents(job); }
  Result<std::vector<BoardUnits>> ListBoardUnits() override { return inner_.ListBoardUnits(); }
  Result<std::vector<RunPass>> GetRunPasses(RunId run) override { return inner_.GetRunPasses(run); }
  Result<std::vector<OpProfileRow>> GetOpProfiles(RunId run) override {
    return inner_.GetOpProfiles(run);
  }
  Result<std::vector<MemoryFigure>> GetMemory(RunId run) override { return inner_.GetMemory(run); }
  Status AddUser(const User& user, const TokenRecord& token) override {
    return inner_.AddUser(user, token);
  }
  Status AddToken(const TokenRecord& token) override { return inner_.AddToken(token); }
  Status RevokeToken(const std::string& hash, std::int64_t revoked_ms) override {
    return inner_.RevokeToken(hash, revoked_ms);
  }
  Result<std::optional<User>> GetUser(const std::string& name) override {
    return inner_.GetUser(name);
  }
  Result<std::vector<User>> ListUsers() override { return inner_.ListUsers(); }
  Result<std::optional<TokenRecord>> FindToken(const std::string& hash) override {
    return inner_.FindToken(hash);
  }
  Result<std::vector<TokenRecord>> ListTokens() override { return inner_.ListTokens(); }

 private:
  Store& inner_;
  std::atomic<std::size_t> sample_scans_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  Mode mode_ = Mode::kPass;
  std::deque<std::pair<WriteSet, WriteDone>> held_;
  std::size_t failed_ = 0;
};

}  // namespace mculab::server::testing
