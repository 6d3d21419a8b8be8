// The one place where mculab's error codes become gRPC status codes.
#pragma once

#include <grpcpp/support/status.h>

#include "common/result.h"

namespace mculab::server::rpc {

grpc::StatusCode ToGrpcCode(ErrorCode code);
grpc::Status ToGrpcStatus(const Error& error);
grpc::Status ToGrpcStatus(const Status& status);

}  // namespace mculab::server::rpc
