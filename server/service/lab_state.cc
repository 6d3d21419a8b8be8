// LabState (lab_state.h): an operation's effects committed, then said; the fail-stop after a
// failed write.
#include "server/service/lab_state.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <future>

#include "common/crash_point.h"

namespace mculab::server {

namespace {

std::string_view SendPoint(const AgentCommand& c, bool before) {
  namespace cp = crash_points;
  if (std::holds_alternative<RunAssignment>(c)) {
    return before ? cp::kBeforeSendAssignment : cp::kAfterSendAssignment;
  }
  if (std::holds_alternative<BatchAck>(c)) return before ? cp::kBeforeSendAck : cp::kAfterSendAck;
  if (std::holds_alternative<RunClosed>(c)) {
    return before ? cp::kBeforeSendRunClosed : cp::kAfterSendRunClosed;
  }
  if (std::holds_alternative<RunCancel>(c)) {
    return before ? cp::kBeforeSendCancel : cp::kAfterSendCancel;
  }
  return {};
}

}  // namespace

void LabState::CommitLocked(Effects& fx, WriteDone done) {
  if (failed) {
    // Stopped: memory may be ahead of the database, so nothing more is written or said; the
    // database keeps a prefix of what was decided, as after a crash, and a restart resumes there.
    bg_cv.notify_all();
    fx = Effects{};
    if (done) done(WriteOutcome{Serving()});
    return;
  }
  // What the writes let the Lab say, said by the commit callback (see the class comment).
  struct Said {
    std::vector<std::pair<std::shared_ptr<AgentChannel>, AgentCommand>> sends;
    std::vector<std::pair<std::shared_ptr<JobWatch>, JobEvent>> events;
    FeedHub::Delivery feeds;
  };
  if (WriteMark(fx) != fx.scheduled_mark) schedule_stale = true;
  auto said = std::make_shared<Said>();
  said->sends = std::move(fx.sends);
  said->events = std::move(fx.events);
  said->feeds = feeds.Take(fx, boards.all(), [this] { return dispatch.QueueLengths(); });
  fx.sends.clear();
  fx.events.clear();
  const bool says = !said->sends.empty() || !said->events.empty() || !said->feeds.empty();
  if (fx.writes.Rows() == 0 && !says && !done) return;
  store.Write(std::move(fx.writes), [this, said, done = std::move(done)](const WriteOutcome& o) {
    if (!o.status.ok()) {
      FailStop("a database write", o.status);
    } else {
      for (auto& [channel, message] : said->sends) {
        CrashPoint(SendPoint(message, true));
        channel->Send(message);
        CrashPoint(SendPoint(message, false));
      }
      for (auto& [watch, event] : said->events) watch->Push(event);
      for (auto& [watch, event] : said->events) watch->Notify();
      said->feeds.Push();
    }
    if (done) done(o);
  });
  fx.writes = WriteSet{};
  fx.scheduled_mark = 0;
}

Status LabState::WaitForCommit(std::unique_lock<std::mutex>& l, Effects& fx) {
  auto committed = std::make_shared<std::promise<Status>>();
  auto future = committed->get_future();
  CommitLocked(fx, [committed](const WriteOutcome& o) { committed->set_value(o.status); });
  l.unlock();
  Deliver(fx);
  return future.get();
}

Status LabState::CommitAndWait(std::unique_lock<std::mutex>& l, Effects& fx) {
  if (Status s = WaitForCommit(l, fx); !s.ok()) {
    return MakeError(ErrorCode::kUnavailable,
                     "the change could not be stored: " + s.error().message);
  }
  return {};
}

void LabState::FailStop(const std::string& what, const Status& status) {
  const std::string why = what + " failed: " + status.error().message;
  {
    std::lock_guard l(failure_mu);
    if (failure.empty()) failure = why;
  }
  if (!failed.exchange(true)) {
    spdlog::critical(
        "{}. mculab-server stops accepting work now (every request answers UNAVAILABLE) so that "
        "what it holds in memory cannot drift from the database; fix the cause (e.g. free disk "
        "space) and restart it: the restart resumes from what was committed",
        why);
  } else {
    spdlog::error("{} (already stopped after an earlier failed write)", why);
  }
  bg_cv.notify_all();
}

Status LabState::Serving() const {
  if (!failed) return {};
  std::lock_guard l(failure_mu);
  return MakeError(ErrorCode::kUnavailable,
                   "mculab-server stopped accepting work after " + failure +
                       "; an administrator must fix the cause and restart the server");
}

void LabState::ShutDownAfterFailureLocked() {
  if (failure_handled) return;
  failure_handled = true;
  for (auto& [id, session] : sessions.all()) {
    if (session.channel) session.channel->Hangup();
  }
  watchers.EndAll();
  feeds.EndAll();
}

void LabState::Deliver(Effects& fx) {
  for (auto& w : fx.notify) w->Notify();
  fx.notify.clear();
}

}  // namespace mculab::server
