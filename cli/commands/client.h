// The CLI's connection to the server and the helpers several commands share: uploads, results,
// following a job. Errors leave through UsageError (bad usage or input, exit code 2) or
// Client::Fail (a failed request: one line on stderr, exit code 1).
#pragma once

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <string>

#include "cli/client_config.h"
#include "lab.grpc.pb.h"

namespace mculab::cli {

namespace v1 = mculab::v1;

struct UsageError {
  std::string message;
};

// The process's environment as a map (for ResolveClientConfig).
std::map<std::string, std::string> Environment();

class Client {
 public:
  explicit Client(ClientConfig cfg);

  // A context with the token and, when timeout_s > 0, a deadline.
  std::unique_ptr<grpc::ClientContext> Context(int timeout_s = 30);

  // One line naming what went wrong and what to do.
  [[noreturn]] void Fail(const grpc::Status& s, const std::string& what);

  v1::Lab::Stub& stub() { return *stub_; }
  const ClientConfig& config() const { return cfg_; }

 private:
  // What to check when the server cannot be reached: TLS trouble, or whether it runs.
  std::string UnavailableHint(const std::string& message) const;

  ClientConfig cfg_;
  std::unique_ptr<v1::Lab::Stub> stub_;
};

// The whole file at `path`; UsageError when it cannot be read or is over `limit` bytes.
std::string ReadFile(const std::string& path, size_t limit);
// Uploads `data` as an artifact called `name`.
v1::ArtifactRef Upload(Client& c, const std::string& name, const std::string& data);
// Streams a file to UploadArtifact in chunks, with progress on a terminal for files over 1 MiB.
// The server enforces its size limit and says so (RESOURCE_EXHAUSTED) before the whole file went.
v1::ArtifactRef UploadFile(Client& c, const std::string& path);
bool IsFinal(const std::string& state);
v1::Results GetResults(Client& c, uint64_t id, bool samples);
// Follows a job until it ends; returns its final state.
std::string Watch(Client& c, uint64_t id, bool quiet);

}  // namespace mculab::cli
