// The CLI's connection to the server and the helpers several commands share: uploads, results,
// following a job. Errors leave through UsageError (bad usage or input, exit code 2) or
// Client::Fail (a failed request: one line on stderr, exit code 1).
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
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
  explicit Client(ClientConfig cfg) : cfg_(std::move(cfg)) {
    std::shared_ptr<grpc::ChannelCredentials> creds;
    if (!cfg_.ca_file.empty()) {
      std::ifstream in(cfg_.ca_file);
      if (!in) throw UsageError{"cannot read CA file " + cfg_.ca_file};
      std::stringstream ss;
      ss << in.rdbuf();
      grpc::SslCredentialsOptions opts;
      opts.pem_root_certs = ss.str();
      creds = grpc::SslCredentials(opts);
    } else {
      creds = grpc::InsecureChannelCredentials();
    }
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 * 1024 * 1024);
    stub_ = v1::Lab::NewStub(grpc::CreateCustomChannel(cfg_.server, creds, args));
  }

  std::unique_ptr<grpc::ClientContext> Context(int timeout_s = 30) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (timeout_s > 0)
      ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(timeout_s));
    if (!cfg_.token.empty()) ctx->AddMetadata("authorization", "Bearer " + cfg_.token);
    return ctx;
  }

  // One line naming what went wrong and what to do.
  [[noreturn]] void Fail(const grpc::Status& s, const std::string& what) {
    std::string msg;
    switch (s.error_code()) {
      case grpc::StatusCode::UNAVAILABLE:
        if (IsTransportFailure(s.error_message())) {
          msg = "cannot reach mculab-server at " + cfg_.server + " (from " + cfg_.source +
                "): " + s.error_message() + "; " + UnavailableHint(s.error_message());
        } else {  // the server answered: its reason is the message
          msg =
              what + ": mculab-server at " + cfg_.server + " is unavailable: " + s.error_message();
        }
        break;
      case grpc::StatusCode::DEADLINE_EXCEEDED:
        msg = what + ": the server at " + cfg_.server + " did not answer in time";
        break;
      case grpc::StatusCode::UNAUTHENTICATED:
        msg = "no valid token: " + what + ": " + s.error_message() +
              "; ask an admin for one (`mculab-server admin user add`) and pass it with --token, "
              "MCULAB_TOKEN or `token = \"...\"` in ~/.config/mculab/config.toml";
        break;
      case grpc::StatusCode::PERMISSION_DENIED:
        msg = what + ": " + s.error_message();
        break;
      default:
        msg = what + ": " + s.error_message();
    }
    std::cerr << "mculab: error: " << msg << "\n";
    std::exit(1);
  }

  // What to check when the server cannot be reached: TLS trouble, or whether it runs.
  std::string UnavailableHint(const std::string& message) const {
    const bool tls_trouble = message.find("SSL") != std::string::npos ||
                             message.find("ssl") != std::string::npos ||
                             message.find("handshake") != std::string::npos ||
                             message.find("CERTIFICATE") != std::string::npos;
    if (!cfg_.ca_file.empty() && tls_trouble) {
      return "the TLS handshake failed: is the server's certificate signed by the CA in " +
             cfg_.ca_file + " (--ca) and issued for the host name in " + cfg_.server + "?";
    }
    if (cfg_.ca_file.empty()) {
      return "is it running? (./deploy/quickstart.sh starts a lab); if the server uses TLS, "
             "pass its CA certificate with --ca";
    }
    return "is it running, and does it use TLS (tls_cert in its config)?";
  }

  v1::Lab::Stub& stub() { return *stub_; }
  const ClientConfig& config() const { return cfg_; }

 private:
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
