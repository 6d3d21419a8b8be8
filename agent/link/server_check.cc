#include "agent/link/server_check.h"

#include <grpcpp/grpcpp.h>

#include "agent.grpc.pb.h"

namespace mculab::agent {

Status CheckServer(const std::string& address, const std::string& token, const std::string& ca_pem,
                   std::chrono::milliseconds timeout) {
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!ca_pem.empty()) {
    grpc::SslCredentialsOptions tls;
    tls.pem_root_certs = ca_pem;
    credentials = grpc::SslCredentials(tls);
  }
  auto channel = grpc::CreateChannel(address, credentials);
  const auto deadline = std::chrono::system_clock::now() + timeout;
  if (!channel->WaitForConnected(deadline)) {
    return MakeError(ErrorCode::kUnavailable, "nothing answers at " + address + " within " +
                                                  std::to_string(timeout.count()) +
                                                  " ms (no server, or not a gRPC one)");
  }
  auto stub = v1::AgentLink::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(deadline);
  if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
  v1::FetchArtifactRequest req;  // sha256 "": refused as invalid once the token is accepted
  auto reader = stub->FetchArtifact(&ctx, req);
  v1::ArtifactData data;
  while (reader->Read(&data)) {
  }
  const grpc::Status s = reader->Finish();
  switch (s.error_code()) {
    case grpc::StatusCode::UNAUTHENTICATED:
      return MakeError(
          ErrorCode::kUnauthenticated,
          "the server at " + address + " refused the agent's token: " + s.error_message());
    case grpc::StatusCode::PERMISSION_DENIED:
      return MakeError(ErrorCode::kPermissionDenied,
                       "the server at " + address +
                           " took the token but not as an agent's: " + s.error_message());
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return MakeError(ErrorCode::kUnavailable,
                       "the server at " + address + " did not answer: " + s.error_message());
    default:
      return {};
  }
}

}  // namespace mculab::agent
