// A run's outcome on the wire (agent.proto's RunFinished.Outcome) and in the agent's and the
// server's own enums, which name the same five outcomes (kSucceeded, kWorkloadFailed,
// kInfraFailed, kCancelled, kTimedOut): one mapping for both sides of the link.
#pragma once

#include "agent.pb.h"

namespace mculab::proto {

template <class Outcome>
mculab::v1::RunFinished::Outcome OutcomeToWire(Outcome o) {
  switch (o) {
    case Outcome::kSucceeded:
      return mculab::v1::RunFinished::SUCCEEDED;
    case Outcome::kWorkloadFailed:
      return mculab::v1::RunFinished::WORKLOAD_FAILED;
    case Outcome::kInfraFailed:
      return mculab::v1::RunFinished::INFRA_FAILED;
    case Outcome::kCancelled:
      return mculab::v1::RunFinished::CANCELLED;
    case Outcome::kTimedOut:
      return mculab::v1::RunFinished::TIMED_OUT;
  }
  return mculab::v1::RunFinished::INFRA_FAILED;
}

// An outcome this side does not know counts as the board's side failing.
template <class Outcome>
Outcome OutcomeFromWire(mculab::v1::RunFinished::Outcome o) {
  switch (o) {
    case mculab::v1::RunFinished::SUCCEEDED:
      return Outcome::kSucceeded;
    case mculab::v1::RunFinished::WORKLOAD_FAILED:
      return Outcome::kWorkloadFailed;
    case mculab::v1::RunFinished::CANCELLED:
      return Outcome::kCancelled;
    case mculab::v1::RunFinished::TIMED_OUT:
      return Outcome::kTimedOut;
    default:
      return Outcome::kInfraFailed;
  }
}

}  // namespace mculab::proto
