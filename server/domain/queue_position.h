// Queue positions: how many queued jobs go before a job. A queued job's position is 1 + the queued
// jobs ahead of it (lower id: submitted earlier) that compete with it for a board, that is, that
// fit (scheduler.h Fits) some board the job fits, whatever the boards' state. It is what the
// history, `mculab show` and a submit's reply say about a queued job.
//
// Computed for a page of jobs at once, in one walk of the queue: jobs are grouped by shape (what
// Fits reads of them: kind, board, tags, runner), so the cost is O(Q log S + W·S·B) for Q queued
// jobs of S shapes, W shapes asked about and B boards a job asked about fits, instead of Q·B per
// job. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "server/domain/board.h"
#include "server/domain/scheduler.h"

namespace mculab::server {

// `queue`: every queued job, in ascending id. Returns the position of each of `wanted`, in its
// order; 0 for an id that is not in the queue.
std::vector<std::uint32_t> QueuePositions(std::span<const QueuedJob* const> queue,
                                          std::span<const BoardSlot> boards,
                                          std::span<const JobId> wanted);

}  // namespace mculab::server
