// Admission control (DESIGN.md §3): a submit is rejected at once when no board of the lab, online
// or not, could ever run it, with an error that names what the lab has. Checked here against
// the registered boards: the named board or kind exists, some candidate board counts every event
// asked for, some candidate board has every tag asked for, and the largest case's tensors fit the
// RAM of some candidate board. (An uploaded runner and a model are checked against the boards by
// service/custom_firmware.h and service/model_admission.h, which read their files.)
//
// The memory check: how much RAM a case of a built-in op needs for its tensors (input, weights,
// bias, output; int8, int32 bias). An estimate from the op's parameters (the runner also needs its
// stack and code): a lower bound. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "server/domain/board.h"
#include "server/domain/job.h"
#include "server/domain/profile.h"

namespace mculab::server {

// What admission reads of a submit.
struct AdmissionRequest {
  std::string kind;   // empty when `board` names one (then it is the board's kind)
  std::string board;  // empty: any board of `kind`
  std::string op;
  std::map<std::string, std::string> tags;
  std::vector<std::string> events;  // normalised, besides cycles
};

// The candidate boards of a request: the named board, or every board of its kind.
bool IsCandidate(const AdmissionRequest& request, const Board& board);

// The named board exists (and is of the kind asked for, if any) or some board is of the kind;
// every candidate board can count the events (`units` by board name); some candidate has every
// tag. Returns the job's kind: the named board's, or the one asked for. kFailedPrecondition
// (kInvalidArgument for events a board cannot count) naming what the lab has.
Result<std::string> AdmitToBoards(const AdmissionRequest& request,
                                  const std::map<std::string, Board>& boards,
                                  const std::map<std::string, BoardUnits>& units);

// The largest case's tensors (WorkloadTensorBytes) fit a runner's address space and the RAM of
// some candidate board (boards that do not report their RAM are not checked).
Status AdmitWorkloadMemory(const AdmissionRequest& request, std::span<const CaseSpec> cases,
                           const std::map<std::string, Board>& boards);

// "a, b, c", or "none" for an empty list (admission's lists of what the lab has).
std::string JoinNames(const std::vector<std::string>& names);

// "no board named 'x'; the lab has: a, b" (or "none"): a board name the lab does not know.
std::string NoBoardNamed(const std::string& name, const std::map<std::string, Board>& boards);

// The code a job measures, as given at submit (each may be empty): a commit of 4 to 64 hex digits
// (a short or full SHA-1 or SHA-256), a branch of at most 255 bytes without control characters,
// a link of at most 2048 bytes starting http:// or https:// (the page links it). kInvalidArgument
// names the field and what it takes.
Status ValidateCodeRefs(std::string_view commit, std::string_view branch, std::string_view url);

// 0 for an op it does not know (no check is made then). Parameters in the op's catalog order.
// The arithmetic is checked: a size that does not fit 64 bits is UINT64_MAX.
std::uint64_t WorkloadTensorBytes(std::string_view op, const std::vector<std::int32_t>& params);

}  // namespace mculab::server
