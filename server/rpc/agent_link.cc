#include "server/rpc/agent_link.h"

#include <spdlog/spdlog.h>

#include "server/rpc/caller.h"
#include "server/rpc/status.h"

namespace mculab::server::rpc {

namespace v1 = mculab::v1;

StreamChannel::StreamChannel(Stream* stream, grpc::ServerContext* context)
    : stream_(stream), context_(context) {
  sender_ = std::thread([this] { SenderLoop(); });
}

StreamChannel::~StreamChannel() { Close(); }

void StreamChannel::Send(const v1::ServerMessage& message) {
  {
    std::lock_guard l(mu_);
    if (closed_) return;
    queue_.push_back(message);
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
    v1::ServerMessage m = std::move(queue_.front());
    queue_.pop_front();
    l.unlock();
    const bool ok = stream_->Write(m);
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
  auto session = lab_.ConnectAgent(caller, message.register_(), channel);
  if (!session.ok()) {
    channel->Close();
    spdlog::warn("agent {} refused: {}", message.register_().agent(), session.error().message);
    return ToGrpcStatus(session.error());
  }
  while (stream->Read(&message)) lab_.OnAgentMessage(*session, message);
  lab_.DisconnectAgent(*session, context->IsCancelled() ? "the stream was cancelled"
                                                        : "the agent closed the stream");
  channel->Close();
  return grpc::Status::OK;
}

}  // namespace mculab::server::rpc
