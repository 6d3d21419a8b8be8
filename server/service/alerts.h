// Alerts: what the lab posts to its webhooks (notifier.h). A user follows one series (`mculab
// trend ... --follow`) or every series of the jobs of a label or branch (`mculab follow --label X`
// / `--branch B`); when a new change point appears in one (a job starting a new level, as the trend
// view finds them), an alert names the series, the two jobs, both levels and the ratio, with the
// compare page's link. A CI gate that failed (`mculab gate`, `submit --baseline`) reports itself
// (ReportGate) and is posted too.
// Follows are stored (FollowStore) with the newest change already posted, so a restart posts
// nothing twice; a new follow starts after the changes its series already has.
// Scan() looks at every follow; a thread (Start) calls it whenever the store's state version
// changed, at most every poll_ms.
// Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "server/service/caller.h"
#include "server/service/clock.h"
#include "server/service/series_query.h"

namespace mculab::server {

class Lab;
class LabQueries;
class HistoryReads;
class Notifier;

// A follow as stored: its query as JSON text (FollowSpec, alerts.cc).
struct StoredFollow {
  std::uint64_t id = 0;
  std::string user;
  std::string query;  // JSON
  std::int64_t created_ms = 0;
  JobId notified_to = 0;  // changes up to this job (its id) were posted or predate the follow
};

class FollowStore {
 public:
  virtual ~FollowStore() = default;
  virtual Result<std::uint64_t> AddFollow(const StoredFollow& follow) = 0;  // its new id
  virtual Result<std::vector<StoredFollow>> ListFollows() = 0;              // by id
  virtual Status DeleteFollow(std::uint64_t id) = 0;                        // kNotFound
  virtual Status SetFollowNotified(std::uint64_t id, JobId to) = 0;
};

// What to follow: one series, or every series of the jobs of a label (substring, as the history's
// filter) or branch (exact), optionally on one board kind.
struct FollowSpec {
  std::optional<SeriesQuery> series;
  std::string label;
  std::string branch;
  std::string kind;
};

struct FollowView {
  std::uint64_t id = 0;
  std::string user;
  FollowSpec spec;
  std::string description;  // "conv2d_s8 params 1,8,4 on host", "label nightly"
  std::int64_t created_ms = 0;
  JobId notified_to = 0;
};

// A failed gate, as the CLI reports it.
struct GateReport {
  JobId job = 0;
  JobId baseline = 0;
  std::string summary;  // at most kMaxGateSummary bytes; control characters are replaced
};

inline constexpr std::size_t kMaxFollowsPerUser = 100;
inline constexpr std::size_t kMaxGateSummary = 2000;
inline constexpr std::uint32_t kGateReportsPerWindow = 30;  // per user, per 10 minutes

struct AlertsOptions {
  std::uint32_t poll_ms = 2000;
  std::string web_url;  // the page's address for links ("http://lab:8080/"); empty: no links
};

class Alerts {
 public:
  Alerts(Lab& lab, LabQueries& queries, HistoryReads& history, FollowStore& store,
         Notifier& notifier, Clock& clock, AlertsOptions options);
  ~Alerts();
  Alerts(const Alerts&) = delete;
  Alerts& operator=(const Alerts&) = delete;

  // Viewer role: following reads nothing a viewer cannot read. kInvalidArgument for a series the
  // trend view refuses, or a follow naming neither a series, a label nor a branch;
  // kResourceExhausted past kMaxFollowsPerUser.
  Result<FollowView> Follow(const Caller& caller, FollowSpec spec);
  // The caller's follows (an admin's: everyone's).
  Result<std::vector<FollowView>> ListFollows(const Caller& caller);
  // One's own follow, or any as an admin; kNotFound otherwise.
  Status Unfollow(const Caller& caller, std::uint64_t id);
  // Member role; the job must exist. Posted when webhooks are configured (the reply says whether).
  Result<bool> ReportGate(const Caller& caller, GateReport report);

  // How many webhook URLs alerts go to (0: none, alerts are kept but go nowhere).
  std::size_t webhooks() const;

  // Posts the change points no alert named yet; returns how many alerts were posted.
  Result<std::size_t> Scan();
  void Start();
  void Stop();

 private:
  Result<FollowView> ViewOf(const StoredFollow& f) const;
  // The newest change's after_job (or job id at a change) of the follow's series now; with
  // `post`, posts those after `from` first.
  Result<JobId> Changes(const FollowView& f, JobId from, bool post, std::size_t* posted);
  void Run();

  Lab& lab_;
  LabQueries& queries_;
  HistoryReads& history_;
  FollowStore& store_;
  Notifier& notifier_;
  Clock& clock_;
  const AlertsOptions options_;
  std::mutex scan_mu_;  // one Scan at a time (the thread's and a test's)
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::map<std::string, std::vector<std::int64_t>> gate_reports_;  // user -> recent times
  std::thread thread_;
};

std::string DescribeFollow(const FollowSpec& spec);
std::string FollowSpecJson(const FollowSpec& spec);
Result<FollowSpec> ParseFollowSpecJson(const std::string& json);

}  // namespace mculab::server
