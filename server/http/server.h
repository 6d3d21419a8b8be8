// HttpServer: the Router behind a socket (Boost.Beast on its own Asio io_context). One I/O thread
// accepts connections, reads requests and writes responses; the router runs on a small worker
// pool, so a slow query holds up neither other connections nor the event streams. Event streams
// (GET /api/v1/events) are written from the Lab's feed as events arrive, with a keep-alive
// comment every 15 s; the Lab never waits for a client (its feed is bounded: a client that falls
// behind has its stream ended and reconnects); a client that goes away is noticed at once (a read
// stays pending on the stream) and its feed is closed.
// Thread-safety: Start/Stop/address from one thread; everything else is internal.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "common/result.h"
#include "server/http/event_stream.h"
#include "server/http/router.h"

namespace mculab::server::http {

struct HttpServerOptions {
  std::size_t workers = 2;  // threads that run the router
  // Connection slots (server/service/connection_slots.h): all, per client IP address, and those
  // kept for authenticated requests. A connection admitted into the reserve is answered only
  // with a valid token (or for GET /healthz, then closed); other requests get 503 with
  // Retry-After. A keep-alive connection gives its slot to a newcomer when there is none left.
  std::size_t max_connections = 512;
  std::size_t max_connections_per_address = 64;
  std::size_t reserved_connections = 64;
  std::size_t max_event_streams = 128;             // beyond this, GET /api/v1/events is 503
  std::size_t max_event_streams_per_user = 16;     // the same per user (429), so one user's
  std::size_t max_event_streams_per_address = 32;  // tabs or scripts cannot take them all
  // Formatted events not yet written to a slow stream; beyond this the stream ends (the page
  // reconnects and refetches), like the Lab's feed when its reader falls behind.
  std::size_t max_stream_pending_bytes = 1 << 20;
  std::chrono::seconds idle_timeout{60};  // a keep-alive connection without a request
  // From a request's first byte to its end, and from a new connection's accept to the end of its
  // first request, whatever its address (slowloris: idle sockets, a trickled header).
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::seconds write_timeout{30};  // a client that reads nothing for this long is gone
  std::chrono::milliseconds keep_alive_interval = kKeepAliveInterval;  // event stream comments
};

class HttpServer {
 public:
  // Binds `listen` (HOST:PORT, an IP address or "localhost"; port 0 picks a free one) and serves.
  static Result<std::unique_ptr<HttpServer>> Start(const Router& router, const std::string& listen,
                                                   HttpServerOptions options = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // HOST:PORT actually bound.
  const std::string& address() const;
  // Event streams open now (diagnostics and tests).
  std::size_t event_streams() const;
  // Closes the event streams' feeds, stops accepting, waits for running handlers and closes
  // every connection. Idempotent.
  void Stop();

  class Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mculab::server::http
