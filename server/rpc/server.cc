#include "server/rpc/server.h"

#include <grpc/support/log.h>
#include <grpcpp/grpcpp.h>
#include <netdb.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <sstream>

#include "server/rpc/agent_link.h"
#include "server/rpc/connection_guard.h"
#include "server/rpc/lab_service.h"

namespace mculab::server::rpc {
namespace {

// Calls still running when a server with a dead listener is replaced get this long to end.
constexpr auto kRestartGrace = std::chrono::seconds(1);

// While binding, gRPC's log lines are held back so that a busy port gives one clear error.
std::atomic<bool> g_quiet{false};

// gRPC 1.51's listener gives up on its port after an accept(2) error other than EAGAIN and EINTR
// (EMFILE, ENFILE, ENOBUFS, ...); this log line is the only sign of it. Later versions retry by
// themselves and log something else.
constexpr std::string_view kListenerDied = "Failed accept4";
std::mutex g_watch_mu;
std::condition_variable g_watch_cv;
bool g_listener_died = false;  // guarded by g_watch_mu

void GrpcLog(gpr_log_func_args* args) {
  if (std::string_view(args->message).starts_with(kListenerDied)) {
    {
      std::lock_guard l(g_watch_mu);
      g_listener_died = true;
    }
    g_watch_cv.notify_all();
  }
  if (g_quiet) return;
  if (args->severity == GPR_LOG_SEVERITY_ERROR) {
    spdlog::warn("grpc: {}", args->message);
  } else {
    spdlog::debug("grpc: {}", args->message);
  }
}

// Why HOST:PORT cannot be bound ("Address already in use"), found by trying it.
std::string BindProblem(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  std::string h = host;
  if (h.size() > 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(h.empty() ? nullptr : h.c_str(), port.c_str(), &hints, &found);
      rc != 0) {
    return gai_strerror(rc);
  }
  std::string problem = "the address is not valid";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const int rc = ::bind(fd, a->ai_addr, a->ai_addrlen);
    const int err = errno;
    ::close(fd);
    if (rc != 0) {
      problem = std::strerror(err);
      break;
    }
  }
  freeaddrinfo(found);
  return problem;
}

Result<std::string> ReadPem(const std::filesystem::path& path, const char* key) {
  std::ifstream in(path);
  if (!in) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("cannot read ") + key + " " + path.string() +
                         " (the server config's TLS files; both are PEM)");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string pem = ss.str();
  if (pem.find("-----BEGIN") == std::string::npos) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string(key) + " " + path.string() + " is not a PEM file");
  }
  return pem;
}

// TLS with the configured certificate and key; plaintext when none is configured.
Result<std::shared_ptr<grpc::ServerCredentials>> CredentialsOf(const LabConfig& config) {
  if (config.tls_cert.empty()) return grpc::InsecureServerCredentials();
  auto cert = ReadPem(config.tls_cert, "tls_cert");
  if (!cert.ok()) return cert.error();
  auto key = ReadPem(config.tls_key, "tls_key");
  if (!key.ok()) return key.error();
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(options);
}

}  // namespace

void RouteGrpcLogsToSpdlog() { gpr_set_log_function(GrpcLog); }

RpcServer::RpcServer(server::Lab& lab, server::Store& store) : lab_(lab), store_(store) {
  const LabConfig& c = lab.config();
  ConnectionGuardOptions options;
  options.limits = {c.grpc_max_connections, c.grpc_max_connections_per_address,
                    c.grpc_reserved_connections};
  options.auth_timeout = std::chrono::milliseconds(c.grpc_auth_timeout_ms);
  guard_ = std::make_unique<ConnectionGuard>(options);
}

RpcServer::~RpcServer() { Stop(std::chrono::milliseconds(0)); }

int RpcServer::restarts() const {
  std::lock_guard l(mu_);
  return restarts_;
}

Result<std::unique_ptr<RpcServer>> RpcServer::Start(server::Lab& lab, server::Store& store,
                                                    const std::string& listen,
                                                    server::Alerts* alerts) {
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the listen address must be HOST:PORT, got '" + listen + "'");
  }
  // The watchdog below learns of a dead listener from gRPC's log.
  RouteGrpcLogsToSpdlog();
  // grpc.health.v1.Health: the one service that needs no token; Check("") says SERVING while
  // the server runs.
  grpc::EnableDefaultHealthCheckService(true);
  std::unique_ptr<RpcServer> s(new RpcServer(lab, store));
  s->alerts_ = alerts;
  s->tls_ = !lab.config().tls_cert.empty();
  auto port = s->Build(listen);
  if (!port.ok()) return port.error();
  s->address_ = listen.substr(0, colon) + ":" + std::to_string(*port);
  s->watchdog_ = std::thread([raw = s.get()] { raw->Watch(); });
  return s;
}

Result<int> RpcServer::Build(const std::string& listen) {
  const std::size_t colon = listen.rfind(':');
  auto credentials = CredentialsOf(lab_.config());
  if (!credentials.ok()) return credentials.error();
  lab_service_ = std::make_unique<LabService>(lab_, store_, guard_.get(), alerts_);
  agent_service_ = std::make_unique<AgentLinkService>(lab_, guard_.get());
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(listen, *credentials, &port);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);  // a busy port must fail
  // Notice agents whose host vanished without closing the connection.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5'000);
  // Ping-flood protection stays on: a client that pings more often than the interval above
  // gets GOAWAY after a few strikes (agents ping every 30 s).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, kMaxPingStrikes);
  // One connection cannot open unbounded streams, and the server as a whole runs a bounded
  // number of handler threads (a call beyond them is RESOURCE_EXHAUSTED, not a new thread).
  // Both from the config (grpc_max_concurrent_streams, grpc_max_threads; defaults below).
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             static_cast<int>(lab_.config().grpc_max_concurrent_streams));
  grpc::ResourceQuota quota("mculab-server");
  quota.SetMaxThreads(static_cast<int>(lab_.config().grpc_max_threads));
  builder.SetResourceQuota(quota);
  builder.SetMaxReceiveMessageSize(16 << 20);
  guard_->Install(builder);
  builder.RegisterService(lab_service_.get());
  builder.RegisterService(agent_service_.get());
  g_quiet = true;
  server_ = builder.BuildAndStart();
  g_quiet = false;
  if (!server_ || port == 0) {
    server_.reset();
    return MakeError(ErrorCode::kUnavailable,
                     "cannot listen on " + listen + ": " +
                         BindProblem(listen.substr(0, colon), listen.substr(colon + 1)));
  }
  return port;
}

void RpcServer::Watch() {
  std::unique_lock l(g_watch_mu);
  while (true) {
    g_watch_cv.wait(l, [this] { return g_listener_died || stopping_; });
    if (stopping_) return;
    g_listener_died = false;
    spdlog::warn(
        "grpc: the listener on {} stopped accepting (out of descriptors?); restarting the gRPC "
        "server",
        address_);
    // Rebuild until the port is bound again (socket(2) itself may still fail for a while).
    while (!stopping_) {
      l.unlock();
      Status built;
      {
        std::lock_guard s(mu_);
        if (server_) server_->Shutdown(std::chrono::system_clock::now() + kRestartGrace);
        server_.reset();
        auto port = Build(address_);
        if (port.ok()) ++restarts_;
        built = port.ok() ? Status{} : Status(port.error());
      }
      l.lock();
      if (built.ok()) {
        spdlog::info("grpc: listening on {} again", address_);
        break;
      }
      spdlog::warn("grpc: {}; trying again in 1 s", built.error().message);
      g_watch_cv.wait_for(l, std::chrono::seconds(1), [this] { return stopping_; });
    }
  }
}

void RpcServer::Stop(std::chrono::milliseconds grace) {
  {
    std::lock_guard l(g_watch_mu);
    stopping_ = true;
  }
  g_watch_cv.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
  std::lock_guard l(mu_);
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  server_.reset();
}

}  // namespace mculab::server::rpc
