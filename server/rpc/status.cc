#include "server/rpc/status.h"

namespace mculab::server::rpc {

grpc::StatusCode ToGrpcCode(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return grpc::StatusCode::INVALID_ARGUMENT;
    case ErrorCode::kNotFound:
      return grpc::StatusCode::NOT_FOUND;
    case ErrorCode::kAlreadyExists:
      return grpc::StatusCode::ALREADY_EXISTS;
    case ErrorCode::kFailedPrecondition:
      return grpc::StatusCode::FAILED_PRECONDITION;
    case ErrorCode::kResourceExhausted:
      return grpc::StatusCode::RESOURCE_EXHAUSTED;
    case ErrorCode::kUnauthenticated:
      return grpc::StatusCode::UNAUTHENTICATED;
    case ErrorCode::kPermissionDenied:
      return grpc::StatusCode::PERMISSION_DENIED;
    case ErrorCode::kUnavailable:
      return grpc::StatusCode::UNAVAILABLE;
    case ErrorCode::kDataLoss:
      return grpc::StatusCode::DATA_LOSS;
    case ErrorCode::kInternal:
      return grpc::StatusCode::INTERNAL;
    case ErrorCode::kCancelled:
      return grpc::StatusCode::CANCELLED;
    case ErrorCode::kDeadlineExceeded:
      return grpc::StatusCode::DEADLINE_EXCEEDED;
  }
  return grpc::StatusCode::UNKNOWN;
}

grpc::Status ToGrpcStatus(const Error& error) {
  return grpc::Status(ToGrpcCode(error.code), error.message);
}

grpc::Status ToGrpcStatus(const Status& status) {
  return status.ok() ? grpc::Status::OK : ToGrpcStatus(status.error());
}

}  // namespace mculab::server::rpc
