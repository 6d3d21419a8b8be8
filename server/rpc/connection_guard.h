// ConnectionGuard: the gRPC endpoint's connection caps, which gRPC 1.51 does not have. Every
// accepted socket is shown to the guard (a gRPC socket mutator) before gRPC reads from it, and the
// guard admits it into a slot (server/service/connection_slots.h: a total, a share per client
// address, a reserve for connections that authenticate) or ends it at once. It also ends every
// connection that has not made an authenticated call within `auth_timeout` of its accept, so
// idle sockets, bare HTTP/2 prefaces and health-check watches cannot hold slots.
//
// gRPC owns the descriptors: the guard never closes one. It ends a connection with
// shutdown(2), after which gRPC sees the end of the stream and closes the descriptor itself. A
// connection is known to be gone when its descriptor no longer refers to the socket it was
// accepted as (fstat's inode), checked by a sweep every `sweep_interval` and when slots run out.
//
// The total is also held below the process's descriptor limit (minus a margin for the store,
// HTTP and artifacts), and a socket accepted into the last part of that margin is ended at once.
// That keeps accept(2) supplied with descriptors only while gRPC closes ended sockets as fast as
// they arrive: gRPC 1.51 accepts a whole burst before it closes any, so a burst faster than that
// can still run the process out of them (measured: 1,200 connections against 400 descriptors),
// and RpcServer's watchdog then rebuilds the server (rpc/server.h).
// Thread-safety: every member may be called from any thread; the sweep runs on its own thread,
// which the destructor stops. The guard must outlive every server it is installed in.
#pragma once

#include <grpcpp/server_builder.h>
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "server/service/connection_slots.h"

namespace mculab::server::rpc {

// Descriptors kept free for everything but gRPC connections.
inline constexpr std::size_t kDescriptorMargin = 256;

struct ConnectionGuardOptions {
  ConnectionLimits limits{.max_connections = 4096, .max_per_address = 256, .reserved = 64};
  std::chrono::milliseconds auth_timeout{10'000};
  std::chrono::milliseconds sweep_interval{250};
  // RLIMIT_NOFILE's soft limit when 0.
  std::size_t descriptor_limit = 0;
};

class ConnectionGuard {
 public:
  explicit ConnectionGuard(ConnectionGuardOptions options);
  ~ConnectionGuard();
  ConnectionGuard(const ConnectionGuard&) = delete;
  ConnectionGuard& operator=(const ConnectionGuard&) = delete;

  // Makes `builder`'s server show its accepted sockets to this guard.
  void Install(grpc::ServerBuilder& builder);
  // A call on the connection `peer` (grpc::ServerContext::peer()) was authenticated.
  void Authenticated(const std::string& peer);
  // The caps in force (max_connections lowered to fit the descriptor limit).
  const ConnectionLimits& limits() const { return slots_.limits(); }
  std::size_t open() const { return slots_.open(); }

  // Called by gRPC for each accepted socket; always lets gRPC go on (a refusal is a shutdown).
  void OnAccept(int fd);

  struct Mutator;

 private:
  struct Socket {
    int fd;
    ino_t inode;
    std::string peer;  // "ADDRESS:PORT", as Authenticated() is given it
  };
  // Ends the connection if its descriptor still refers to its socket. mu_ held.
  static void End(const Socket& socket);
  // Releases the slots of connections gRPC has closed. mu_ held.
  void PruneClosed();
  void Sweep();

  ConnectionSlots slots_;
  const ConnectionGuardOptions options_;
  std::unique_ptr<Mutator> mutator_;
  mutable std::mutex mu_;
  std::map<ConnectionSlots::Id, Socket> sockets_;
  std::map<std::string, ConnectionSlots::Id> by_peer_;
  std::chrono::steady_clock::time_point last_prune_{};
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread sweeper_;
};

// "ADDRESS:PORT" of a gRPC peer string ("ipv4:127.0.0.1:5000", "ipv6:%5B::1%5D:5000"); empty for
// other schemes.
std::string PeerKey(const std::string& grpc_peer);

}  // namespace mculab::server::rpc
