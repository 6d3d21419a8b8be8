// RpcServer: mculab-server's gRPC endpoint, both services (Lab, AgentLink) on one address, plus
// gRPC's standard health service (grpc.health.v1.Health, the one call that needs no token). TLS
// when the Lab's config names tls_cert and tls_key. Keeps every gRPC detail (credentials, channel
// arguments, logging, binding) inside server/rpc.
//
// Connections are capped and unauthenticated ones timed out by a ConnectionGuard
// (rpc/connection_guard.h). gRPC 1.51 stops accepting on a port for good after an accept(2)
// failure such as EMFILE; when its log says so, a watchdog thread rebuilds the gRPC server on
// the same address (running calls are cancelled; agents reconnect), retrying every second until
// it binds again, so the port recovers by itself after any exhaustion.
// Thread-safety: Start, Stop and the accessors from one thread; the watchdog is internal.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/result.h"
#include "server/service/alerts.h"
#include "server/service/lab.h"

namespace grpc {
class Server;
}

namespace mculab::server::rpc {

class LabService;
class AgentLinkService;
class ConnectionGuard;

// Abuse limits of the gRPC endpoint: streams one connection may have open at once, handler
// threads of the whole server (each agent link and upload holds one while it runs), and the pings
// without data a client may send faster than every 5 s before it is disconnected. The first two
// are the defaults of the config keys grpc_max_concurrent_streams and grpc_max_threads.
inline constexpr int kMaxConcurrentStreams = 100;
inline constexpr int kMaxThreads = 256;
inline constexpr int kMaxPingStrikes = 2;

class RpcServer {
 public:
  // Binds `listen` (HOST:PORT; port 0 picks a free one) and starts serving. A port another
  // process holds is an error (SO_REUSEPORT is off) whose message says why binding failed.
  // `alerts` (may be null) serves the follow and gate-report calls.
  static Result<std::unique_ptr<RpcServer>> Start(server::Lab& lab, server::Store& store,
                                                  const std::string& listen,
                                                  server::Alerts* alerts = nullptr);
  ~RpcServer();
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  // HOST:PORT actually bound.
  const std::string& address() const { return address_; }
  // Whether calls use TLS (tls_cert/tls_key in the Lab's config).
  bool tls() const { return tls_; }
  // Stops accepting calls; calls still running after `grace` are cancelled. Idempotent.
  void Stop(std::chrono::milliseconds grace);
  // Times the server was rebuilt because its listener had stopped accepting.
  int restarts() const;

 private:
  RpcServer(server::Lab& lab, server::Store& store);
  // Builds and starts the gRPC server with new service objects on `listen`; the port bound.
  Result<int> Build(const std::string& listen);
  void Watch();

  server::Lab& lab_;
  server::Store& store_;
  server::Alerts* alerts_ = nullptr;
  std::unique_ptr<ConnectionGuard> guard_;  // outlives every server it is installed in
  mutable std::mutex mu_;                   // the server and its services, restarts_
  std::unique_ptr<LabService> lab_service_;
  std::unique_ptr<AgentLinkService> agent_service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  bool tls_ = false;
  int restarts_ = 0;
  bool stopping_ = false;  // guarded by the listener watch's mutex (server.cc)
  std::thread watchdog_;
};

// gRPC's own log lines go to spdlog (errors as warnings, the rest at debug level).
void RouteGrpcLogsToSpdlog();

}  // namespace mculab::server::rpc
