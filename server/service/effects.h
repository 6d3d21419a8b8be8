// Effects: what one Lab operation changed under the Lab's lock, to be said only after it is
// committed. The Lab's parts (jobs, boards, agent sessions, dispatch, run finalisation) add to
// one Effects while they decide; LabState::CommitLocked queues its writes on the store's writer,
// and their commit callback then sends the agent messages and hands the events to their watches and
// feeds, so whoever hears of a change can read it, and a crash never leaves a change announced but
// not stored. A failed commit says nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/service/agent_channel.h"
#include "server/service/agent_events.h"
#include "server/service/job_watch.h"
#include "server/service/lab_feed.h"
#include "server/service/store.h"

namespace mculab::server {

struct Effects {
  WriteSet writes;
  // Messages for agents, sent once `writes` (and every write queued before) is committed.
  std::vector<std::pair<std::shared_ptr<AgentChannel>, AgentCommand>> sends;
  JobWatchers::Delivery events;
  std::vector<std::shared_ptr<JobWatch>> notify;
  // For the feeds (FeedHub::Take): job events in order, boards that changed, and whether
  // a job entered or left the queue (which changes boards' queue lengths).
  std::vector<JobEvent> feed_jobs;
  std::vector<LiveSamples> feed_samples;  // after feed_jobs
  std::set<std::string> feed_boards;
  bool queue_changed = false;
  // WriteMark(*this) when the scheduler last ran a pass or found nothing to do in these effects:
  // writes after it may let a job run, so the commit marks the schedule stale.
  std::size_t scheduled_mark = 0;
};

// Rows that can change what the scheduler decides (boards and jobs, new or changed): every such
// change is written, so their count grows whenever scheduling's inputs change.
inline std::size_t WriteMark(const Effects& fx) {
  return fx.writes.boards.size() + fx.writes.jobs.size() + fx.writes.new_jobs.size();
}

}  // namespace mculab::server
