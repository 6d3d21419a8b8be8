#include "server/rpc/agent_link.h"

#include <spdlog/spdlog.h>

#include <fstream>
#include <vector>

#include "server/rpc/agent_wire.h"
#include "server/rpc/caller.h"
#include "server/rpc/status.h"

namespace mculab::server::rpc {

namespace v1 = mculab::v1;

StreamChannel::StreamChannel(Stream* stream, grpc::ServerContext* context)
    : stream_(stream), context_(context) {
  sender_ = std::thread([this] { SenderLoop(); });
}

StreamChannel::~StreamChannel() { Close(); }

void StreamChannel::Send(const AgentCommand& command) {
  {
    std::lock_guard l(mu_);
    if (closed_) return;
    queue_.push_back(command);
  }
  cv_.notify_one();
}

void StreamChannel::Close() {
  {
    std::lock_guard l(mu_);
    closed_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  if (sender_.joinable()) sender_.join();
}

void StreamChannel::Hangup() {
  std::lock_guard l(mu_);
  if (closed_) return;  // the handler is done with the call (or about to be)
  closed_ = true;
  queue_.clear();
  cv_.notify_all();
  // The handler's Read fails; it tells the Lab (which already dropped the session) and returns.
  if (context_ != nullptr) context_->TryCancel();
}

void StreamChannel::SenderLoop() {
  std::unique_lock l(mu_);
  while (true) {
    cv_.wait(l, [&] { return closed_ || !queue_.empty(); });
    if (closed_) return;
    AgentCommand command = std::move(queue_.front());
    queue_.pop_front();
    l.unlock();
    const bool ok = stream_->Write(ToProto(command));
    l.lock();
    if (!ok) {
      // The stream is broken; the handler's Read fails too and ends the session.
      closed_ = true;
      queue_.clear();
      return;
    }
  }
}

grpc::Status AgentLinkService::Connect(grpc::ServerContext* context,
                                       StreamChannel::Stream* stream) {
  const Caller caller = CallerOf(*context);
  // Only agent tokens get as far as reading; the Lab checks the name the agent registers with.
  if (Status s = RequireAgent(caller, caller.user); !s.ok()) {
    spdlog::warn("agent link from {} refused: {}", caller.peer, s.error().message);
    return ToGrpcStatus(s.error());
  }
  v1::AgentMessage message;
  if (!stream->Read(&message)) return grpc::Status::OK;  // gone before saying anything
  if (!message.has_register_()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "the first message on AgentLink.Connect must be Register");
  }
  auto channel = std::make_shared<StreamChannel>(stream, context);
  const std::string agent = message.register_().agent();
  auto session =
      lab_.agents().ConnectAgent(caller, RegistrationFromProto(message.register_()), channel);
  if (!session.ok()) {
    channel->Close();
    spdlog::warn("agent {} refused: {}", agent, session.error().message);
    return ToGrpcStatus(session.error());
  }
  while (stream->Read(&message))
    lab_.agents().OnAgentMessage(*session, EventFromProto(message, agent));
  lab_.agents().DisconnectAgent(*session, context->IsCancelled() ? "the stream was cancelled"
                                                                 : "the agent closed the stream");
  channel->Close();
  return grpc::Status::OK;
}

grpc::Status AgentLinkService::FetchArtifact(grpc::ServerContext* context,
                                             const v1::FetchArtifactRequest* request,
                                             grpc::ServerWriter<v1::ArtifactData>* writer) {
  auto opened = lab_.uploads().OpenArtifact(CallerOf(*context), request->sha256());
  if (!opened.ok()) return ToGrpcStatus(opened.error());
  const auto& [path, artifact] = *opened;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return grpc::Status(grpc::StatusCode::DATA_LOSS,
                        "artifact " + artifact.sha256 + " is recorded but its file is missing");
  }
  constexpr std::size_t kChunk = 256 * 1024;
  std::vector<char> buf(kChunk);
  bool first = true;
  while (!context->IsCancelled()) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    if (n == 0 && !first) break;
    v1::ArtifactData chunk;
    if (first) chunk.set_total_size(artifact.size);
    chunk.set_data(buf.data(), n);
    first = false;
    if (!writer->Write(chunk)) return grpc::Status(grpc::StatusCode::CANCELLED, "agent went away");
    if (n < buf.size()) break;
  }
  return grpc::Status::OK;
}

}  // namespace mculab::server::rpc
