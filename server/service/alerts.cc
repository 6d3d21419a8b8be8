#include "server/service/alerts.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "server/service/lab.h"
#include "server/service/notifier.h"
#include "server/service/queries.h"

namespace mculab::server {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::int64_t kGateWindowMs = 10 * 60 * 1000;
// A label or branch follow looks at this many of the newest succeeded jobs matching it.
constexpr std::uint32_t kFollowScan = 100;

Error Invalid(std::string m) { return MakeError(ErrorCode::kInvalidArgument, std::move(m)); }

// A viewer's reads on behalf of the follow's owner.
Caller CallerFor(const std::string& user) {
  Caller c;
  c.user = user;
  c.role = Role::kViewer;
  return c;
}

std::string SeriesText(const SeriesQuery& q) {
  std::string out = q.op;
  if (!q.model.empty()) out += " " + q.model;
  if (!q.runner.empty()) out += " runner " + q.runner;
  if (q.params) out += fmt::format(" params {}", fmt::join(*q.params, ","));
  if (q.case_id) out += fmt::format(" case {}", *q.case_id);
  out += " on " + q.kind;
  if (!q.label_contains.empty()) out += " label ~" + q.label_contains;
  if (!q.user.empty()) out += " user " + q.user;
  return out;
}

std::string Clean(std::string s, std::size_t max) {
  if (s.size() > max) s.resize(max);
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n') c = ' ';
  }
  return s;
}

std::string Link(const AlertsOptions& o, JobId a, JobId b) {
  if (o.web_url.empty()) return "";
  std::string base = o.web_url;
  if (!base.ends_with('/')) base += '/';
  return fmt::format("{}compare.html?jobs={},{}", base, a, b);
}

// The alert of one change point in one series.
std::string ChangeAlert(const AlertsOptions& o, const SeriesQuery& q, const TrendChange& c,
                        const std::string& unit, std::uint64_t follow) {
  const double pct = (c.ratio - 1) * 100;
  const std::string link = Link(o, c.before_job, c.after_job);
  const std::string text = fmt::format(
      "mculab: change point in {}: job {} -> job {}, {:.6g} -> {:.6g}{} ({:+.1f}%, {}){}",
      SeriesText(q), c.before_job, c.after_job, c.before, c.after, unit.empty() ? "" : " " + unit,
      pct, c.after > c.before ? "slower" : "faster", link.empty() ? "" : " " + link);
  Json f;
  f["event"] = "change_point";
  f["follow"] = follow;
  f["series"] = SeriesText(q);
  f["before_job"] = c.before_job;
  f["after_job"] = c.after_job;
  f["before"] = c.before;
  f["after"] = c.after;
  f["ratio"] = c.ratio;
  f["unit"] = unit;
  f["link"] = link;
  return AlertBody(text, f.dump(-1, ' ', false, Json::error_handler_t::replace));
}

}  // namespace

std::string DescribeFollow(const FollowSpec& spec) {
  if (spec.series) return SeriesText(*spec.series);
  std::string out = !spec.label.empty() ? "label ~" + spec.label : "";
  if (!spec.branch.empty()) out += (out.empty() ? "" : ", ") + std::string("branch ") + spec.branch;
  if (!spec.kind.empty()) out += " on " + spec.kind;
  return out;
}

std::string FollowSpecJson(const FollowSpec& spec) {
  Json j;
  if (spec.series) {
    const SeriesQuery& q = *spec.series;
    Json s;
    s["kind"] = q.kind;
    s["op"] = q.op;
    if (q.params) s["params"] = *q.params;
    if (q.case_id) s["case"] = *q.case_id;
    s["runner"] = q.runner;
    s["model"] = q.model;
    s["user"] = q.user;
    s["label"] = q.label_contains;
    s["tags"] = q.tags;
    j["series"] = std::move(s);
  } else {
    j["label"] = spec.label;
    j["branch"] = spec.branch;
    j["kind"] = spec.kind;
  }
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<FollowSpec> ParseFollowSpecJson(const std::string& text) {
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Invalid("a stored follow is not JSON");
  FollowSpec spec;
  try {
    if (j.contains("series")) {
      const Json& s = j["series"];
      SeriesQuery q;
      q.kind = s.value("kind", "");
      q.op = s.value("op", "");
      if (s.contains("params")) q.params = s["params"].get<std::vector<std::int32_t>>();
      if (s.contains("case")) q.case_id = s["case"].get<std::int64_t>();
      q.runner = s.value("runner", "");
      q.model = s.value("model", "");
      q.user = s.value("user", "");
      q.label_contains = s.value("label", "");
      if (s.contains("tags")) q.tags = s["tags"].get<std::map<std::string, std::string>>();
      spec.series = std::move(q);
    } else {
      spec.label = j.value("label", "");
      spec.branch = j.value("branch", "");
      spec.kind = j.value("kind", "");
    }
  } catch (const std::exception& e) {
    return Invalid(std::string("a stored follow is not one: ") + e.what());
  }
  return spec;
}

Alerts::Alerts(Lab& lab, LabQueries& queries, HistoryReads& history, FollowStore& store,
               Notifier& notifier, Clock& clock, AlertsOptions options)
    : lab_(lab),
      queries_(queries),
      history_(history),
      store_(store),
      notifier_(notifier),
      clock_(clock),
      options_(std::move(options)) {}

Alerts::~Alerts() { Stop(); }

std::size_t Alerts::webhooks() const { return notifier_.webhook_count(); }

Result<FollowView> Alerts::ViewOf(const StoredFollow& f) const {
  auto spec = ParseFollowSpecJson(f.query);
  if (!spec.ok()) return spec.error();
  FollowView v;
  v.id = f.id;
  v.user = f.user;
  v.spec = std::move(*spec);
  v.description = DescribeFollow(v.spec);
  v.created_ms = f.created_ms;
  v.notified_to = f.notified_to;
  return v;
}

Result<JobId> Alerts::Changes(const FollowView& f, JobId from, bool post, std::size_t* posted) {
  const Caller caller = CallerFor(f.user);
  JobId newest = from;
  if (f.spec.series) {
    TrendRequest r;
    r.series = *f.spec.series;
    auto trend = queries_.GetTrend(caller, r);
    if (!trend.ok()) return trend.error();
    for (const TrendChange& c : trend->changes) {
      if (c.after_job <= from) continue;
      newest = std::max(newest, c.after_job);
      if (post && notifier_.Post(ChangeAlert(options_, trend->query, c, trend->unit, f.id))) {
        ++*posted;
      }
    }
    return newest;
  }
  JobQuery q;
  q.label_contains = f.spec.label;
  q.branch = f.spec.branch;
  q.kind = f.spec.kind;
  auto changed = queries_.ListChangedJobs(caller, q, kFollowScan);
  if (!changed.ok()) return changed.error();
  // Oldest first, so the alerts come in the order the jobs ran.
  for (auto it = changed->jobs.rbegin(); it != changed->jobs.rend(); ++it) {
    if (it->job.id <= from) continue;
    newest = std::max(newest, it->job.id);
    if (!post) continue;
    for (const JobCaseChange& c : it->changes) {
      if (notifier_.Post(ChangeAlert(options_, c.series, c.change, "", f.id))) ++*posted;
    }
  }
  return newest;
}

Result<FollowView> Alerts::Follow(const Caller& caller, FollowSpec spec) {
  if (Status s = RequireRole(caller, Role::kViewer, "following a series"); !s.ok()) {
    return s.error();
  }
  if (!spec.series && spec.label.empty() && spec.branch.empty()) {
    return Invalid("follow a series (mculab trend ... --follow), a label or a branch");
  }
  if (spec.label.size() > 256 || spec.branch.size() > 255 || spec.kind.size() > 128) {
    return Invalid("the label, branch or board kind followed is too long");
  }
  auto all = store_.ListFollows();
  if (!all.ok()) return all.error();
  const auto mine = std::count_if(all->begin(), all->end(),
                                  [&](const StoredFollow& f) { return f.user == caller.user; });
  if (static_cast<std::size_t>(mine) >= kMaxFollowsPerUser) {
    return MakeError(ErrorCode::kResourceExhausted,
                     fmt::format("{} follows {} series already, the most kept per user; unfollow "
                                 "some (mculab follows, mculab unfollow ID)",
                                 caller.user, mine));
  }
  FollowView view;
  view.user = caller.user;
  view.spec = std::move(spec);
  view.description = DescribeFollow(view.spec);
  // The changes the series has now are not news: the follow starts after them (and the query is
  // checked as the trend view checks it).
  std::size_t none = 0;
  auto newest = Changes(view, 0, false, &none);
  if (!newest.ok()) return newest.error();
  StoredFollow f;
  f.user = caller.user;
  f.query = FollowSpecJson(view.spec);
  f.created_ms = clock_.NowMs();
  f.notified_to = *newest;
  auto id = store_.AddFollow(f);
  if (!id.ok()) return id.error();
  view.id = *id;
  view.created_ms = f.created_ms;
  view.notified_to = f.notified_to;
  spdlog::info("{} follows {} (follow {})", caller.user, view.description, view.id);
  return view;
}

Result<std::vector<FollowView>> Alerts::ListFollows(const Caller& caller) {
  if (Status s = RequireRole(caller, Role::kViewer, "listing follows"); !s.ok()) return s.error();
  auto all = store_.ListFollows();
  if (!all.ok()) return all.error();
  std::vector<FollowView> out;
  for (const StoredFollow& f : *all) {
    if (caller.role != Role::kAdmin && f.user != caller.user) continue;
    auto v = ViewOf(f);
    if (!v.ok()) return v.error();
    out.push_back(std::move(*v));
  }
  return out;
}

Status Alerts::Unfollow(const Caller& caller, std::uint64_t id) {
  if (Status s = RequireRole(caller, Role::kViewer, "unfollowing"); !s.ok()) return s;
  auto all = store_.ListFollows();
  if (!all.ok()) return all.error();
  auto it = std::find_if(all->begin(), all->end(), [&](const StoredFollow& f) {
    return f.id == id && (f.user == caller.user || caller.role == Role::kAdmin);
  });
  if (it == all->end()) {
    return MakeError(ErrorCode::kNotFound,
                     fmt::format("no follow {} of yours (mculab follows lists them)", id));
  }
  return store_.DeleteFollow(id);
}

Result<bool> Alerts::ReportGate(const Caller& caller, GateReport report) {
  if (Status s = RequireRole(caller, Role::kMember, "reporting a gate"); !s.ok()) {
    return s.error();
  }
  auto job = lab_.jobs().GetJob(caller, report.job);
  if (!job.ok()) return job.error();
  {
    std::lock_guard l(mu_);
    auto& times = gate_reports_[caller.user];
    const std::int64_t now = clock_.NowMs();
    std::erase_if(times, [&](std::int64_t t) { return t + kGateWindowMs <= now; });
    if (times.size() >= kGateReportsPerWindow) {
      return MakeError(ErrorCode::kResourceExhausted,
                       fmt::format("{} reported {} failed gates in 10 minutes, the most posted; "
                                   "this one was not",
                                   caller.user, times.size()));
    }
    times.push_back(now);
  }
  const std::string summary = Clean(std::move(report.summary), kMaxGateSummary);
  std::string code;
  if (!job->branch.empty()) code += " on branch " + job->branch;
  if (!job->commit.empty()) code += " at " + job->commit.substr(0, 12);
  const std::string link = report.baseline ? Link(options_, report.baseline, report.job) : "";
  const std::string text =
      fmt::format("mculab: gate failed for job {}{} against job {}: {}{}", report.job, code,
                  report.baseline, summary, link.empty() ? "" : " " + link);
  Json f;
  f["event"] = "gate_failed";
  f["job"] = report.job;
  f["baseline"] = report.baseline;
  f["user"] = caller.user;
  f["branch"] = job->branch;
  f["commit"] = job->commit;
  f["summary"] = summary;
  f["link"] = link;
  const bool posted =
      notifier_.Post(AlertBody(text, f.dump(-1, ' ', false, Json::error_handler_t::replace)));
  spdlog::info("gate failed for job {} against job {} (reported by {}){}", report.job,
               report.baseline, caller.user, posted ? "; posted" : "");
  return posted;
}

Result<std::size_t> Alerts::Scan() {
  std::lock_guard scan(scan_mu_);
  auto all = store_.ListFollows();
  if (!all.ok()) return all.error();
  std::size_t posted = 0;
  for (const StoredFollow& f : *all) {
    auto view = ViewOf(f);
    if (!view.ok()) {
      spdlog::warn("follow {}: {}", f.id, view.error().message);
      continue;
    }
    auto newest = Changes(*view, f.notified_to, true, &posted);
    if (!newest.ok()) {
      spdlog::warn("follow {} ({}): {}", f.id, view->description, newest.error().message);
      continue;
    }
    if (*newest != f.notified_to) {
      if (Status s = store_.SetFollowNotified(f.id, *newest); !s.ok()) return s.error();
    }
  }
  return posted;
}

void Alerts::Start() {
  if (!notifier_.enabled() || thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void Alerts::Stop() {
  {
    std::lock_guard l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Alerts::Run() {
  std::uint64_t seen = 0;
  std::unique_lock l(mu_);
  while (!stopping_) {
    l.unlock();
    const std::uint64_t version = history_.StateVersion();
    if (version != seen) {
      seen = version;
      if (auto n = Scan(); !n.ok()) spdlog::warn("alerts: {}", n.error().message);
    }
    l.lock();
    if (stopping_) break;
    clock_.WaitUntil(l, cv_, clock_.NowMs() + options_.poll_ms);
  }
}

}  // namespace mculab::server
