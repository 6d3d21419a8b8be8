// AgentLinkService: mculab.v1.AgentLink over gRPC. Each agent's Connect stream is served by a
// synchronous handler that reads in a loop and hands every message to the Lab as its event
// (rpc/agent_wire.h). Commands to the agent go through a StreamChannel: Send() only queues (so
// the Lab may call it under its lock) and a sender thread per stream converts and writes them in
// order; the stream's lifetime ends the sender.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "agent.grpc.pb.h"
#include "server/rpc/caller.h"
#include "server/service/agent_channel.h"
#include "server/service/lab.h"

namespace mculab::server::rpc {

class StreamChannel final : public AgentChannel {
 public:
  using Stream = grpc::ServerReaderWriter<mculab::v1::ServerMessage, mculab::v1::AgentMessage>;
  // `context` (optional) is the stream's call, cancelled by Hangup().
  explicit StreamChannel(Stream* stream, grpc::ServerContext* context = nullptr);
  ~StreamChannel() override;

  void Send(const AgentCommand& command) override;
  // Stops the sender (messages not yet written are dropped) and waits for it. Later Sends are
  // dropped. Must be called before the stream's handler returns.
  void Close();
  void Hangup() override;

 private:
  void SenderLoop();

  Stream* stream_;
  grpc::ServerContext* context_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<AgentCommand> queue_;
  bool closed_ = false;
  std::thread sender_;
};

class AgentLinkService final : public mculab::v1::AgentLink::Service {
 public:
  // `guard` (may be null) hears of every authenticated call's connection.
  explicit AgentLinkService(server::Lab& lab, ConnectionGuard* guard = nullptr)
      : lab_(lab), guard_(guard) {}

  grpc::Status Connect(grpc::ServerContext* context, StreamChannel::Stream* stream) override;
  // Streams an artifact's file in 256 KiB chunks (UploadDesk::OpenArtifact decides who may).
  grpc::Status FetchArtifact(grpc::ServerContext* context,
                             const mculab::v1::FetchArtifactRequest* request,
                             grpc::ServerWriter<mculab::v1::ArtifactData>* writer) override;

 private:
  // The caller of a call, authenticated against the lab's accounts (rpc/caller.h).
  Caller CallerOf(const grpc::ServerContextBase& context) const {
    return rpc::CallerOf(context, lab_.accounts(), guard_);
  }

  server::Lab& lab_;
  ConnectionGuard* const guard_;
};

}  // namespace mculab::server::rpc
