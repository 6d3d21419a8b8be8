#include "server/rpc/connection_guard.h"

#include <arpa/inet.h>
#include <grpc/support/sync.h>
#include <grpcpp/version_info.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <vector>

// gRPC's socket mutator, declared as gRPC 1.51 defines it in src/core/lib/iomgr/socket_mutator.h
// (a header Debian does not install; the functions are exported). Checked against the library's
// grpc_socket_mutator_mutate_fd, which calls the vtable's fourth entry with {fd, usage}.
static_assert(GRPC_CPP_VERSION_MAJOR == 1 && GRPC_CPP_VERSION_MINOR == 51,
              "check the socket mutator declarations below against this gRPC's "
              "src/core/lib/iomgr/socket_mutator.h");
enum grpc_fd_usage {
  GRPC_FD_CLIENT_CONNECTION_USAGE,
  GRPC_FD_SERVER_LISTENER_USAGE,
  GRPC_FD_SERVER_CONNECTION_USAGE,
};
struct grpc_mutate_socket_info {
  int fd;
  grpc_fd_usage usage;
};
struct grpc_socket_mutator_vtable {
  bool (*mutate_fd)(int fd, grpc_socket_mutator* mutator);
  int (*compare)(grpc_socket_mutator* a, grpc_socket_mutator* b);
  void (*destroy)(grpc_socket_mutator* mutator);
  bool (*mutate_fd_2)(const grpc_mutate_socket_info* info, grpc_socket_mutator* mutator);
};
struct grpc_socket_mutator {
  const grpc_socket_mutator_vtable* vtable;
  gpr_refcount refcount;
};
void grpc_socket_mutator_init(grpc_socket_mutator* mutator,
                              const grpc_socket_mutator_vtable* vtable);
grpc_socket_mutator* grpc_socket_mutator_ref(grpc_socket_mutator* mutator);

namespace mculab::server::rpc {

struct ConnectionGuard::Mutator {
  grpc_socket_mutator base;  // first: gRPC hands back a pointer to it
  ConnectionGuard* guard;
};

namespace {

bool MutateFd(int, grpc_socket_mutator*) { return true; }
int Compare(grpc_socket_mutator* a, grpc_socket_mutator* b) { return a < b ? -1 : a > b ? 1 : 0; }
void Destroy(grpc_socket_mutator*) {}  // owned by the guard
// Returning false would make gRPC 1.51 stop accepting on the port for good: always true.
bool MutateFd2(const grpc_mutate_socket_info* info, grpc_socket_mutator* m) {
  if (info->usage == GRPC_FD_SERVER_CONNECTION_USAGE) {
    reinterpret_cast<ConnectionGuard::Mutator*>(m)->guard->OnAccept(info->fd);
  }
  return true;
}
const grpc_socket_mutator_vtable kVtable{MutateFd, Compare, Destroy, MutateFd2};

class MutatorOption final : public grpc::ServerBuilderOption {
 public:
  explicit MutatorOption(grpc_socket_mutator* m) : mutator_(m) {}
  void UpdateArguments(grpc::ChannelArguments* args) override {
    args->SetSocketMutator(grpc_socket_mutator_ref(mutator_));
  }
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>*) override {}

 private:
  grpc_socket_mutator* mutator_;
};

std::size_t DescriptorLimit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 1 << 20;
  return static_cast<std::size_t>(limit.rlim_cur);
}

// The caps, with the total lowered to what the descriptor limit leaves and the reserve to a
// quarter of a total lowered that far.
ConnectionLimits Fit(ConnectionGuardOptions& o) {
  if (o.descriptor_limit == 0) o.descriptor_limit = DescriptorLimit();
  ConnectionLimits l = o.limits;
  const std::size_t room = o.descriptor_limit > 2 * kDescriptorMargin
                               ? o.descriptor_limit - kDescriptorMargin
                               : o.descriptor_limit / 2;
  if (room < l.max_connections) {
    l.max_connections = std::max<std::size_t>(room, 1);
    l.reserved = std::min(l.reserved, l.max_connections / 4);
    l.max_per_address = std::min(l.max_per_address, l.max_connections);
  }
  return l;
}

// "ADDRESS:PORT" of a connected socket, IPv4-mapped IPv6 addresses as IPv4 (as gRPC names them).
std::string PeerOf(int fd, std::string& address) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return {};
  char text[INET6_ADDRSTRLEN] = {};
  unsigned port = 0;
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    port = ntohs(a->sin_port);
    address = text;
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    port = ntohs(a->sin6_port);
    if (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr)) {
      ::inet_ntop(AF_INET, &a->sin6_addr.s6_addr[12], text, sizeof text);
      address = text;
    } else {
      ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
      address = std::string("[") + text + "]";
    }
  } else {
    return {};
  }
  return address + ":" + std::to_string(port);
}

}  // namespace

std::string PeerKey(const std::string& grpc_peer) {
  std::string rest;
  for (const char* scheme : {"ipv4:", "ipv6:"}) {
    if (grpc_peer.starts_with(scheme)) rest = grpc_peer.substr(5);
  }
  std::string out;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest.compare(i, 3, "%5B") == 0 || rest.compare(i, 3, "%5b") == 0) {
      out += '[';
      i += 2;
    } else if (rest.compare(i, 3, "%5D") == 0 || rest.compare(i, 3, "%5d") == 0) {
      out += ']';
      i += 2;
    } else {
      out += rest[i];
    }
  }
  return out;
}

ConnectionGuard::ConnectionGuard(ConnectionGuardOptions options)
    : slots_(Fit(options)), options_(options), mutator_(std::make_unique<Mutator>()) {
  grpc_socket_mutator_init(&mutator_->base, &kVtable);
  mutator_->guard = this;
  sweeper_ = std::thread([this] { Sweep(); });
}

ConnectionGuard::~ConnectionGuard() {
  {
    std::lock_guard l(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  sweeper_.join();
}

void ConnectionGuard::Install(grpc::ServerBuilder& builder) {
  builder.SetOption(std::make_unique<MutatorOption>(&mutator_->base));
  // The HTTP/2 handshake (SETTINGS included) must end within the same time as authentication.
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             static_cast<int>(options_.auth_timeout.count()));
}

void ConnectionGuard::End(const Socket& socket) {
  struct stat st {};
  if (::fstat(socket.fd, &st) == 0 && st.st_ino == socket.inode) {
    ::shutdown(socket.fd, SHUT_RDWR);
  }
}

void ConnectionGuard::PruneClosed() {
  last_prune_ = std::chrono::steady_clock::now();
  for (auto it = sockets_.begin(); it != sockets_.end();) {
    struct stat st {};
    if (::fstat(it->second.fd, &st) != 0 || st.st_ino != it->second.inode) {
      slots_.Release(it->first);
      by_peer_.erase(it->second.peer);
      it = sockets_.erase(it);
    } else {
      ++it;
    }
  }
}

void ConnectionGuard::OnAccept(int fd) {
  std::string address;
  const std::string peer = PeerOf(fd, address);
  struct stat st {};
  if (peer.empty() || ::fstat(fd, &st) != 0) {
    ::shutdown(fd, SHUT_RDWR);
    return;
  }
  // accept(2) returns the lowest free descriptor: this high, the process is nearly out of them.
  if (static_cast<std::size_t>(fd) + kDescriptorMargin / 2 >= options_.descriptor_limit) {
    ::shutdown(fd, SHUT_RDWR);
    return;
  }
  std::lock_guard l(mu_);
  const auto now = std::chrono::steady_clock::now();
  auto admission = slots_.Admit(address, now);
  // Slots may still be counted for connections gRPC has closed since the last sweep.
  if (!admission.id && now - last_prune_ > std::chrono::milliseconds(50)) {
    PruneClosed();
    admission = slots_.Admit(address, now);
  }
  if (!admission.id) {
    spdlog::debug("grpc: ended a connection from {}: {}", peer, admission.refusal);
    ::shutdown(fd, SHUT_RDWR);
    return;
  }
  for (ConnectionSlots::Id victim : admission.evict) {
    auto it = sockets_.find(victim);
    if (it == sockets_.end()) continue;
    End(it->second);
    by_peer_.erase(it->second.peer);
    sockets_.erase(it);
  }
  // A descriptor reused for a new connection: the old entry's socket is gone.
  if (auto old = by_peer_.find(peer); old != by_peer_.end()) {
    slots_.Release(old->second);
    sockets_.erase(old->second);
  }
  sockets_[*admission.id] = Socket{fd, st.st_ino, peer};
  by_peer_[peer] = *admission.id;
}

void ConnectionGuard::Authenticated(const std::string& peer) {
  std::lock_guard l(mu_);
  auto it = by_peer_.find(PeerKey(peer));
  if (it != by_peer_.end()) slots_.Prove(it->second);
}

void ConnectionGuard::Sweep() {
  std::unique_lock l(mu_);
  while (!stopping_) {
    wake_.wait_for(l, options_.sweep_interval);
    if (stopping_) break;
    PruneClosed();
    const auto deadline = std::chrono::steady_clock::now() - options_.auth_timeout;
    for (ConnectionSlots::Id id : slots_.UnprovenSince(deadline)) {
      auto it = sockets_.find(id);
      if (it == sockets_.end()) continue;
      spdlog::debug("grpc: ended {}: no authenticated call within {} ms", it->second.peer,
                    options_.auth_timeout.count());
      End(it->second);
      slots_.Release(id);
      by_peer_.erase(it->second.peer);
      sockets_.erase(it);
    }
  }
}

}  // namespace mculab::server::rpc
