#include "common/result.h"

namespace mculab {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kAlreadyExists: return "already exists";
    case ErrorCode::kFailedPrecondition: return "failed precondition";
    case ErrorCode::kResourceExhausted: return "resource exhausted";
    case ErrorCode::kUnauthenticated: return "unauthenticated";
    case ErrorCode::kPermissionDenied: return "permission denied";
    case ErrorCode::kUnavailable: return "unavailable";
    case ErrorCode::kDataLoss: return "data loss";
    case ErrorCode::kInternal: return "internal";
    case ErrorCode::kCancelled: return "cancelled";
    case ErrorCode::kDeadlineExceeded: return "deadline exceeded";
  }
  return "unknown";
}

}  // namespace mculab
