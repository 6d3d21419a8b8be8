#include "cli/commands/client.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/custom_submit.h"
#include "cli/format.h"

extern char** environ;

namespace mculab::cli {
namespace {

constexpr size_t kChunk = 64 * 1024;

}  // namespace

Client::Client(ClientConfig cfg) : cfg_(std::move(cfg)) {
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

std::unique_ptr<grpc::ClientContext> Client::Context(int timeout_s) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  if (timeout_s > 0)
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(timeout_s));
  if (!cfg_.token.empty()) ctx->AddMetadata("authorization", "Bearer " + cfg_.token);
  return ctx;
}

void Client::Fail(const grpc::Status& s, const std::string& what) {
  std::string msg;
  switch (s.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      if (IsTransportFailure(s.error_message())) {
        msg = "cannot reach mculab-server at " + cfg_.server + " (from " + cfg_.source +
              "): " + s.error_message() + "; " + UnavailableHint(s.error_message());
      } else {  // the server answered: its reason is the message
        msg = what + ": mculab-server at " + cfg_.server + " is unavailable: " + s.error_message();
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

std::string Client::UnavailableHint(const std::string& message) const {
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

std::map<std::string, std::string> Environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

std::string ReadFile(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError{"cannot open " + path};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(in.tellg());
  if (size > limit)
    throw UsageError{path + " is " + std::to_string(size) + " bytes; the limit is " +
                     std::to_string(limit)};
  in.seekg(0);
  std::string data(size, '\0');
  in.read(data.data(), static_cast<std::streamsize>(size));
  return data;
}

v1::ArtifactRef Upload(Client& c, const std::string& name, const std::string& data) {
  auto ctx = c.Context(120);
  v1::ArtifactRef ref;
  auto writer = c.stub().UploadArtifact(ctx.get(), &ref);
  size_t off = 0;
  do {
    v1::ArtifactChunk chunk;
    if (off == 0) {
      chunk.set_name(name);
      chunk.set_total_size(data.size());
    }
    const size_t n = std::min(kChunk, data.size() - off);
    chunk.set_data(data.substr(off, n));
    off += n;
    if (!writer->Write(chunk)) break;
  } while (off < data.size());
  writer->WritesDone();
  grpc::Status s = writer->Finish();
  if (!s.ok()) c.Fail(s, "uploading " + name);
  return ref;
}

bool IsFinal(const std::string& state) {
  return state == "succeeded" || state == "failed" || state == "cancelled" || state == "timed_out";
}

v1::Results GetResults(Client& c, uint64_t id, bool samples) {
  v1::GetResultsRequest req;
  req.set_id(id);
  req.set_include_samples(samples);
  v1::Results res;
  auto ctx = c.Context();
  grpc::Status s = c.stub().GetResults(ctx.get(), req, &res);
  if (!s.ok()) c.Fail(s, "job " + std::to_string(id));
  return res;
}

std::string Watch(Client& c, uint64_t id, bool quiet) {
  const bool tty = isatty(STDERR_FILENO);
  v1::WatchJobRequest req;
  req.set_id(id);
  auto ctx = c.Context(0);
  auto reader = c.stub().WatchJob(ctx.get(), req);
  v1::JobEvent ev;
  std::string last_state, last_line, final_state;
  while (reader->Read(&ev)) {
    std::string line = ev.state();
    if (!ev.board().empty()) line += " on " + ev.board();
    if (ev.progress_total() > 0 && ev.state() == "running")
      line += " " + ProgressBar(ev.progress_done(), ev.progress_total());
    if (!ev.message().empty() && IsFinal(ev.state())) line += ": " + ev.message();
    if (!quiet && line != last_line) {
      if (tty) {
        std::cerr << "\r\033[K"
                  << "job " << id << " " << line << std::flush;
        if (ev.state() != last_state && !last_state.empty() && ev.state() != "running")
          std::cerr << "";
      } else if (ev.state() != last_state || IsFinal(ev.state())) {
        std::cerr << "job " << id << " " << line << "\n";
      }
    }
    last_line = line;
    last_state = ev.state();
    if (IsFinal(ev.state())) {
      final_state = ev.state();
      break;
    }
  }
  if (!quiet && tty) std::cerr << "\n";
  if (final_state.empty()) {
    ctx->TryCancel();
    grpc::Status s = reader->Finish();
    if (!s.ok() && s.error_code() != grpc::StatusCode::CANCELLED)
      c.Fail(s, "watching job " + std::to_string(id));
    std::cerr << "mculab: error: the server closed the watch of job " << id
              << " before it ended; `mculab show " << id << "` shows where it is\n";
    std::exit(1);
  }
  ctx->TryCancel();
  reader->Finish();
  return final_state;
}

v1::ArtifactRef UploadFile(Client& c, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError{"cannot open " + path};
  in.seekg(0, std::ios::end);
  const auto total = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  const std::string name = std::filesystem::path(path).filename().string();
  const bool progress = total > (1u << 20) && isatty(STDERR_FILENO);
  auto ctx = c.Context(600);
  v1::ArtifactRef ref;
  auto writer = c.stub().UploadArtifact(ctx.get(), &ref);
  std::string buf(256 * 1024, '\0');
  uint64_t sent = 0;
  bool first = true;
  while (first || sent < total) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<size_t>(in.gcount());
    if (n == 0 && !first) break;
    v1::ArtifactChunk chunk;
    if (first) {
      chunk.set_name(name);
      chunk.set_total_size(total);
    }
    first = false;
    chunk.set_data(buf.data(), n);
    if (!writer->Write(chunk)) break;  // the server stopped reading: Finish says why
    sent += n;
    if (progress) std::cerr << "\r\033[K" << cli::UploadProgress(name, sent, total) << std::flush;
    if (n == 0) break;
  }
  if (progress) std::cerr << "\n";
  writer->WritesDone();
  grpc::Status s = writer->Finish();
  if (!s.ok()) c.Fail(s, "uploading " + path);
  return ref;
}

}  // namespace mculab::cli
