// Queue positions computed for a page at once equal the definition applied job by job.
#include "server/domain/queue_position.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace mculab::server {
namespace {

// The definition, job by job: 1 + the queued jobs with a lower id that fit a board the job fits.
std::uint32_t PositionByDefinition(const std::vector<QueuedJob>& queue,
                                   const std::vector<BoardSlot>& boards, JobId id) {
  auto me =
      std::find_if(queue.begin(), queue.end(), [&](const QueuedJob& q) { return q.id == id; });
  if (me == queue.end()) return 0;
  std::uint32_t ahead = 0;
  for (const QueuedJob& other : queue) {
    if (other.id >= id) continue;
    for (const BoardSlot& b : boards) {
      if (Fits(*me, b) && Fits(other, b)) {
        ++ahead;
        break;
      }
    }
  }
  return ahead + 1;
}

std::vector<const QueuedJob*> Views(const std::vector<QueuedJob>& queue) {
  std::vector<const QueuedJob*> v;
  for (const QueuedJob& q : queue) v.push_back(&q);
  return v;
}

BoardSlot Slot(std::string name, std::string kind, std::map<std::string, std::string> tags = {}) {
  BoardSlot b{std::move(name), std::move(kind), BoardState::kBusy, BoardHealth::kGood};
  b.tags = std::move(tags);
  return b;
}

TEST(QueuePosition, JobsOfOtherKindsAndBoardsDoNotCount) {
  const std::vector<BoardSlot> boards = {Slot("a-0", "a"), Slot("a-1", "a"), Slot("b-0", "b")};
  const std::vector<QueuedJob> queue = {{1, "a", ""}, {2, "b", ""}, {3, "a", "a-1"},
                                        {4, "b", ""}, {5, "a", ""}, {6, "a", "a-0"}};
  const std::vector<JobId> wanted = {5, 4, 6, 3, 1};
  const auto views = Views(queue);
  // 5: 1 and 3 (a-1 is of kind a) ahead; 4: 2; 6: 1 and 5 (any board of a), not 3 (only a-1).
  EXPECT_EQ(QueuePositions(views, boards, wanted), (std::vector<std::uint32_t>{3, 2, 3, 2, 1}));
}

TEST(QueuePosition, AnIdNotInTheQueueHasNoPosition) {
  const std::vector<BoardSlot> boards = {Slot("a-0", "a")};
  const std::vector<QueuedJob> queue = {{1, "a", ""}, {3, "a", ""}};
  const std::vector<JobId> wanted = {2, 3, 9};
  EXPECT_EQ(QueuePositions(Views(queue), boards, wanted), (std::vector<std::uint32_t>{0, 2, 0}));
}

TEST(QueuePosition, AJobThatFitsNoBoardIsFirst) {
  const std::vector<BoardSlot> boards = {Slot("a-0", "a")};
  const std::vector<QueuedJob> queue = {{1, "c", ""}, {2, "c", ""}};
  const std::vector<JobId> wanted = {2};
  EXPECT_EQ(QueuePositions(Views(queue), boards, wanted), (std::vector<std::uint32_t>{1}));
}

TEST(QueuePosition, APageOfManyQueuedJobsMatchesTheDefinitionJobByJob) {
  std::mt19937 rng(7);
  const char* kinds[] = {"a", "b", "c"};
  std::vector<BoardSlot> boards;
  for (int i = 0; i < 30; ++i) {
    BoardSlot b = Slot(std::string(kinds[i % 3]) + "-" + std::to_string(i), kinds[i % 3]);
    if (rng() % 2) b.tags["cpu"] = "m55";
    if (rng() % 3 == 0) b.tags["npu"] = "u55";
    b.refuses_custom_runners = rng() % 4 == 0;
    boards.push_back(std::move(b));
  }
  std::vector<QueuedJob> queue;
  JobId id = 0;
  for (int i = 0; i < 400; ++i) {
    id += 1 + static_cast<JobId>(rng() % 3);  // ids with gaps, ascending
    QueuedJob q{id, kinds[rng() % 3], ""};
    if (rng() % 5 == 0) q.tags["cpu"] = "m55";
    if (rng() % 7 == 0) q.tags["npu"] = "u55";
    if (rng() % 9 == 0) q.custom_runner = true;
    if (rng() % 10 == 0) {
      const BoardSlot& b = boards[rng() % boards.size()];
      q.board = b.name;
      q.kind = rng() % 2 ? b.kind : "";
    }
    queue.push_back(std::move(q));
  }
  std::vector<JobId> wanted;
  for (const QueuedJob& q : queue) wanted.push_back(q.id);
  wanted.push_back(id + 1);  // not queued
  std::shuffle(wanted.begin(), wanted.end(), rng);
  const auto positions = QueuePositions(Views(queue), boards, wanted);
  ASSERT_EQ(positions.size(), wanted.size());
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    EXPECT_EQ(positions[i], PositionByDefinition(queue, boards, wanted[i])) << "job " << wanted[i];
  }
}

}  // namespace
}  // namespace mculab::server
