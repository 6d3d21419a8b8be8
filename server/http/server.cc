#include "server/http/server.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "server/http/event_stream.h"
#include "server/service/connection_slots.h"

namespace mculab::server::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

constexpr std::size_t kMaxHeaderBytes = 16 * 1024;
constexpr std::size_t kMaxBodyBytes = 64 * 1024;  // the API takes no request bodies
// How long a client refused for want of a slot is asked to wait, and how long accepting pauses
// when the process is out of descriptors (accepting again at once would only spin).
constexpr int kRetryAfterSeconds = 5;
constexpr auto kAcceptPause = std::chrono::milliseconds(100);

std::string EndpointText(const tcp::endpoint& e) {
  const auto a = e.address();
  return (a.is_v6() ? "[" + a.to_string() + "]" : a.to_string()) + ":" + std::to_string(e.port());
}

}  // namespace

class Session;

class HttpServer::Impl {
 public:
  Impl(const Router& r, HttpServerOptions o)
      : router(r),
        options(o),
        slots({o.max_connections, o.max_connections_per_address, o.reserved_connections}),
        workers(o.workers),
        acceptor(ioc),
        accept_pause(ioc),
        ingest_timer(ioc) {}
  ~Impl() { Stop(); }

  Status Listen(const std::string& listen);
  void Run();
  void Stop();
  // Counts an event stream of `user` from `address` and remembers its feed (closed by Stop); an
  // error naming the limit when there are too many (in all, of the user, from the address) or
  // the server is stopping.
  Status AddStream(const std::shared_ptr<LabFeed>& feed, const std::string& user,
                   const std::string& address);
  void RemoveStream(const std::string& user, const std::string& address);

  const Router& router;
  const HttpServerOptions options;
  // Declared before the io_context: sessions, destroyed with its handlers, still release.
  ConnectionSlots slots;
  std::atomic<std::size_t> streams{0};
  std::atomic<bool> stopping{false};
  std::mutex feeds_mu;
  std::vector<std::weak_ptr<LabFeed>> feeds;
  // Sessions end on whichever thread drops them last (the I/O thread or a worker).
  std::mutex counts_mu;
  std::map<std::string, std::size_t> streams_by_user;
  std::map<std::string, std::size_t> streams_by_address;
  std::map<ConnectionSlots::Id, std::weak_ptr<Session>> sessions;  // I/O thread only
  std::string address;

  net::io_context ioc{1};
  net::thread_pool workers;
  tcp::acceptor acceptor;
  net::steady_timer accept_pause;
  net::steady_timer ingest_timer;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> guard;
  std::thread io_thread;
  bool stopped = false;

 private:
  void Accept();
  // Takes a slot for an accepted connection (closing it when there is none, and the
  // connections it evicts) and starts its session.
  void Admit(tcp::socket socket);
  void ArmIngestTimer();
};

// One connection: requests in order, one at a time (no pipelining), each handed to the worker
// pool and its response written back; or, after GET /api/v1/events, an event stream.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, HttpServer::Impl& server, std::string address,
          ConnectionSlots::Id slot, bool reserved)
      : server_(server),
        stream_(std::move(socket)),
        slot_(slot),
        reserved_(reserved),
        keepalive_(stream_.get_executor()) {
    address_ = std::move(address);
    beast::error_code ec;
    const auto remote = stream_.socket().remote_endpoint(ec);
    peer_ = ec ? std::string("?") : EndpointText(remote);
  }
  ~Session() {
    if (feed_) feed_->Close();
    if (counted_stream_) server_.RemoveStream(stream_user_, address_);
    server_.slots.Release(slot_);
  }

  // Ends the connection now (the server is stopping). I/O thread only.
  void Shutdown() { Close(); }

  void Start() {
    net::dispatch(stream_.get_executor(),
                  beast::bind_front_handler(&Session::DoRead, shared_from_this()));
  }

 private:
  // A new connection's first request must arrive whole within header_timeout of the accept
  // (an idle socket holds a slot no longer than a trickled header does). Between requests a
  // keep-alive connection waits up to idle_timeout for the next one's first byte, and may be
  // evicted meanwhile; from there the whole request must arrive within header_timeout.
  void DoRead() {
    parser_.emplace();
    parser_->header_limit(kMaxHeaderBytes);
    parser_->body_limit(kMaxBodyBytes);
    if (buffer_.size() > 0 || !served_) return ReadRequest();
    server_.slots.Idle(slot_);
    stream_.expires_after(server_.options.idle_timeout);
    stream_.async_read_some(buffer_.prepare(kMaxHeaderBytes),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              if (ec) return self->Close();
                              self->server_.slots.Busy(self->slot_);
                              self->buffer_.commit(n);
                              self->ReadRequest();
                            });
  }

  void ReadRequest() {
    stream_.expires_after(server_.options.header_timeout);
    beast_http::async_read(stream_, buffer_, *parser_,
                           beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, std::size_t) {
    if (ec == beast_http::error::end_of_stream || ec == beast::error::timeout ||
        ec == net::error::eof || ec == net::error::operation_aborted ||
        ec == net::error::connection_reset) {
      return Close();
    }
    if (ec) {
      // The request could not be read as HTTP: say so, then close.
      const auto st = ec == beast_http::error::body_limit ? beast_http::status::payload_too_large
                      : ec == beast_http::error::header_limit
                          ? beast_http::status::request_header_fields_too_large
                          : beast_http::status::bad_request;
      return Write(ErrorResponse(st, "the request could not be read: " + ec.message(), 11, false));
    }
    stream_.expires_never();
    served_ = true;
    server_.slots.Busy(slot_);
    net::post(server_.workers, [self = shared_from_this(), req = parser_->release()]() mutable {
      if (self->reserved_) {
        if (auto refused = self->RefuseOnReserve(req)) {
          auto executor = self->stream_.get_executor();
          net::post(executor, [self = std::move(self), res = std::move(*refused)]() mutable {
            if (!self->closed_) self->Write(std::move(res));
          });
          return;
        }
      }
      Router::Reply reply = self->server_.router.Handle(req, self->peer_);
      if (self->reserved_ && !self->proven_) reply.response.keep_alive(false);
      spdlog::debug("http {} {} {} -> {}", self->peer_,
                    std::string_view(req.method_string().data(), req.method_string().size()),
                    std::string_view(req.target().data(), req.target().size()),
                    reply.response.result_int());
      auto executor = self->stream_.get_executor();
      net::post(executor, [self = std::move(self), reply = std::move(reply)]() mutable {
        self->OnHandled(std::move(reply));
      });
    });
  }

  // Worker thread. A connection in a reserved slot serves authenticated requests (and proves
  // itself with the first), and answers GET /healthz once before it closes; anything else is
  // 503 with Retry-After, so a flood cannot take the slots kept for the lab's users.
  std::optional<Response> RefuseOnReserve(const Request& req) {
    if (req.target() == "/healthz") return std::nullopt;
    if (server_.slots.MayServe(slot_, server_.router.Authenticated(req, peer_))) {
      proven_ = true;
      return std::nullopt;
    }
    Response res = ErrorResponse(beast_http::status::service_unavailable,
                                 "the server is busy: only authenticated requests are served now; "
                                 "try again later",
                                 req.version(), false);
    res.set(beast_http::field::retry_after, std::to_string(kRetryAfterSeconds));
    return res;
  }

  void OnHandled(Router::Reply reply) {
    if (closed_) {
      if (reply.feed) reply.feed->Close();
      return;
    }
    if (reply.feed) return StartStream(std::move(reply));
    Write(std::move(reply.response));
  }

  void Write(Response res) {
    const bool close = res.need_eof();
    res_ = std::make_shared<Response>(std::move(res));
    stream_.expires_after(server_.options.write_timeout);
    beast_http::async_write(stream_, *res_,
                            [self = shared_from_this(), close](beast::error_code ec, std::size_t) {
                              self->res_.reset();
                              if (ec || close) return self->Close();
                              self->DoRead();
                            });
  }

  // ---- event stream ----
  void StartStream(Router::Reply reply) {
    if (Status s = server_.AddStream(reply.feed, reply.user, address_); !s.ok()) {
      reply.feed->Close();
      const auto status = s.error().code == ErrorCode::kUnavailable
                              ? beast_http::status::service_unavailable
                              : beast_http::status::too_many_requests;
      return Write(ErrorResponse(status, s.error().message, reply.response.version(), false));
    }
    counted_stream_ = true;
    stream_user_ = reply.user;
    feed_ = std::move(reply.feed);
    pending_ = std::move(reply.response.body());
    head_.emplace(reply.response.result(), reply.response.version());
    for (const auto& f : reply.response) head_->set(f.name_string(), f.value());
    head_->chunked(true);
    head_sr_.emplace(*head_);
    writing_ = true;
    stream_.expires_after(server_.options.write_timeout);
    beast_http::async_write_header(stream_, *head_sr_,
                                   [self = shared_from_this()](beast::error_code ec, std::size_t) {
                                     self->writing_ = false;
                                     self->stream_.expires_never();
                                     if (ec) return self->Close();
                                     self->OnStreamOpen();
                                   });
  }

  void OnStreamOpen() {
    // The feed's listener runs on a Lab thread: it only posts to this connection's executor.
    feed_->SetListener([weak = weak_from_this(), executor = stream_.get_executor()] {
      net::post(executor, [weak] {
        if (auto self = weak.lock()) self->OnFeed();
      });
    });
    WatchForClose();
    ArmKeepAlive();
    OnFeed();
  }

  void OnFeed() {
    if (closed_ || finishing_ || !feed_) return;
    const std::vector<LabEvent> events = feed_->TakeAll();
    if (!events.empty()) pending_ += FormatEvents(events);
    // A client that fell behind (or a stopping Lab) gets the stream ended; the page reconnects
    // and refetches what it shows.
    if (feed_->overflowed() || feed_->ended()) finishing_ = true;
    if (pending_.size() > server_.options.max_stream_pending_bytes) {
      spdlog::warn(
          "http {}: event stream dropped {} unwritten bytes (a client that reads too "
          "slowly); ending it",
          peer_, pending_.size());
      pending_.clear();
      finishing_ = true;
    }
    MaybeWrite();
  }

  void MaybeWrite() {
    if (writing_ || closed_) return;
    if (pending_.empty()) {
      if (!finishing_) return;
      writing_ = true;
      stream_.expires_after(server_.options.write_timeout);
      net::async_write(
          stream_, beast_http::make_chunk_last(),
          [self = shared_from_this()](beast::error_code, std::size_t) { self->Close(); });
      return;
    }
    writing_ = true;
    out_ = std::move(pending_);
    pending_.clear();
    stream_.expires_after(server_.options.write_timeout);
    net::async_write(stream_, beast_http::make_chunk(net::buffer(out_)),
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       self->writing_ = false;
                       self->stream_.expires_never();
                       if (ec) return self->Close();
                       self->MaybeWrite();
                     });
  }

  // The page never sends anything on an event stream: a read that completes means it is gone.
  void WatchForClose() {
    stream_.socket().async_read_some(
        net::buffer(drain_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
          if (ec) return self->Close();
          self->WatchForClose();
        });
  }

  void ArmKeepAlive() {
    keepalive_.expires_after(server_.options.keep_alive_interval);
    keepalive_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_) return;
      if (!self->writing_ && self->pending_.empty()) {
        self->pending_ = std::string(kEventStreamKeepAlive);
      }
      self->MaybeWrite();
      self->ArmKeepAlive();
    });
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    if (feed_) feed_->Close();
    keepalive_.cancel();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  HttpServer::Impl& server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<beast_http::request_parser<beast_http::string_body>> parser_;
  std::string peer_;
  std::string address_;  // the client's IP address (per-address limits)
  const ConnectionSlots::Id slot_;
  const bool reserved_;               // in a slot kept for authenticated requests
  std::atomic<bool> proven_ = false;  // an authenticated request came on this connection
  bool served_ = false;      // a request has been read (the next one may wait idle_timeout)
  std::string stream_user_;  // who opened the event stream (per-user limits)
  std::shared_ptr<Response> res_;
  bool closed_ = false;
  // Event stream.
  net::steady_timer keepalive_;
  std::shared_ptr<LabFeed> feed_;
  bool counted_stream_ = false;
  std::optional<beast_http::response<beast_http::empty_body>> head_;
  std::optional<beast_http::response_serializer<beast_http::empty_body>> head_sr_;
  std::string pending_;  // formatted, not yet written
  std::string out_;      // being written
  bool writing_ = false;
  bool finishing_ = false;
  std::array<char, 256> drain_{};
};

Status HttpServer::Impl::Listen(const std::string& listen) {
  const std::size_t colon = listen.rfind(':');
  auto bad = [&] {
    return MakeError(
        ErrorCode::kInvalidArgument,
        "the HTTP address must be HOST:PORT (e.g. 127.0.0.1:8080), got '" + listen + "'");
  };
  if (colon == std::string::npos || colon == 0) return bad();
  std::string host = listen.substr(0, colon);
  const std::string port_text = listen.substr(colon + 1);
  unsigned port = 0;
  auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || p != port_text.data() + port_text.size() || port > 65535) {
    return bad();
  }
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  beast::error_code err;
  tcp::endpoint endpoint;
  const auto address = net::ip::make_address(host, err);
  if (!err) {
    endpoint = tcp::endpoint(address, static_cast<unsigned short>(port));
  } else {
    tcp::resolver resolver(ioc);
    auto results = resolver.resolve(host, port_text, err);
    if (err || results.empty()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "cannot resolve the HTTP address '" + listen + "': " + err.message());
    }
    endpoint = results.begin()->endpoint();
  }
  auto fail = [&](const char* what) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot listen for HTTP on " + listen + " (" + what + "): " + err.message());
  };
  acceptor.open(endpoint.protocol(), err);
  if (err) return fail("open");
  acceptor.set_option(net::socket_base::reuse_address(true), err);
  if (err) return fail("SO_REUSEADDR");
  acceptor.bind(endpoint, err);
  if (err) return fail("bind");
  acceptor.listen(net::socket_base::max_listen_connections, err);
  if (err) return fail("listen");
  this->address = EndpointText(acceptor.local_endpoint());
  return {};
}

void HttpServer::Impl::Run() {
  guard.emplace(ioc.get_executor());
  Accept();
  ArmIngestTimer();
  io_thread = std::thread([this] { ioc.run(); });
}

void HttpServer::Impl::Accept() {
  acceptor.async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || stopping) return;
    if (ec) {
      // Out of descriptors (or another transient failure): pause, then accept again; the
      // listener itself stays open and the backlog waits.
      spdlog::warn("http: accepting a connection failed: {}", ec.message());
      accept_pause.expires_after(kAcceptPause);
      accept_pause.async_wait([this](beast::error_code wec) {
        if (!wec && !stopping) Accept();
      });
      return;
    }
    Admit(std::move(socket));
    Accept();
  });
}

void HttpServer::Impl::Admit(tcp::socket socket) {
  beast::error_code rec;
  const auto remote = socket.remote_endpoint(rec);
  std::string address = rec ? std::string("?") : remote.address().to_string();
  auto admission = slots.Admit(address, std::chrono::steady_clock::now());
  if (!admission.id) {
    spdlog::debug("http: closed a connection from {}: {}", address, admission.refusal);
    beast::error_code ignored;
    socket.close(ignored);
    return;
  }
  for (ConnectionSlots::Id victim : admission.evict) {
    auto it = sessions.find(victim);
    if (it == sessions.end()) continue;
    if (auto session = it->second.lock()) session->Shutdown();
    sessions.erase(it);
  }
  auto session =
      std::make_shared<Session>(std::move(socket), *this, std::move(address), *admission.id,
                                admission.slot == ConnectionSlots::Slot::kReserved);
  std::erase_if(sessions, [](const auto& entry) { return entry.second.expired(); });
  sessions.emplace(*admission.id, session);
  session->Start();
}

void HttpServer::Impl::ArmIngestTimer() {
  ingest_timer.expires_after(std::chrono::seconds(1));
  ingest_timer.async_wait([this](beast::error_code ec) {
    if (ec || stopping) return;
    // The store read runs on a worker; the next reading is a second after this one ends.
    net::post(workers, [this] {
      router.ObserveIngest();
      net::post(ioc, [this] {
        if (!stopping) ArmIngestTimer();
      });
    });
  });
}

Status HttpServer::Impl::AddStream(const std::shared_ptr<LabFeed>& feed, const std::string& user,
                                   const std::string& address) {
  std::lock_guard l(feeds_mu);
  if (stopping || streams >= options.max_event_streams) {
    return MakeError(ErrorCode::kUnavailable, "too many event streams are open; try again later");
  }
  {
    std::lock_guard c(counts_mu);
    if (streams_by_user[user] >= options.max_event_streams_per_user) {
      return MakeError(ErrorCode::kResourceExhausted,
                       fmt::format("{} has {} event streams open, the most one user may have; "
                                   "close some pages",
                                   user, streams_by_user[user]));
    }
    if (streams_by_address[address] >= options.max_event_streams_per_address) {
      return MakeError(ErrorCode::kResourceExhausted,
                       fmt::format("{} has {} event streams open, the most one address may have; "
                                   "close some pages",
                                   address, streams_by_address[address]));
    }
    ++streams_by_user[user];
    ++streams_by_address[address];
  }
  ++streams;
  std::erase_if(feeds, [](const std::weak_ptr<LabFeed>& w) { return w.expired(); });
  feeds.push_back(feed);
  return {};
}

namespace {
void CountDown(std::map<std::string, std::size_t>& counts, const std::string& key) {
  auto it = counts.find(key);
  if (it == counts.end()) return;
  if (--it->second == 0) counts.erase(it);
}
}  // namespace

void HttpServer::Impl::RemoveStream(const std::string& user, const std::string& address) {
  --streams;
  std::lock_guard c(counts_mu);
  CountDown(streams_by_user, user);
  CountDown(streams_by_address, address);
}

void HttpServer::Impl::Stop() {
  if (stopped) return;
  stopped = true;
  {
    // No feed listener may post to the io_context once it is gone.
    std::lock_guard l(feeds_mu);
    stopping = true;
    for (auto& w : feeds) {
      if (auto f = w.lock()) f->Close();
    }
    feeds.clear();
  }
  if (io_thread.joinable()) {
    // Close every connection on the I/O thread (the io_context has one), so clients see the end
    // now rather than when the server object is destroyed.
    std::promise<void> closed;
    net::post(ioc, [this, &closed] {
      beast::error_code ec;
      acceptor.close(ec);
      accept_pause.cancel();
      for (auto& [id, w] : sessions) {
        if (auto session = w.lock()) session->Shutdown();
      }
      sessions.clear();
      closed.set_value();
    });
    closed.get_future().wait();
  }
  guard.reset();
  ioc.stop();
  if (io_thread.joinable()) io_thread.join();
  workers.join();  // running handlers finish; what they post back is dropped with the io_context
  beast::error_code ec;
  acceptor.close(ec);
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() = default;

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const Router& router,
                                                      const std::string& listen,
                                                      HttpServerOptions options) {
  auto impl = std::make_unique<Impl>(router, options);
  if (Status s = impl->Listen(listen); !s.ok()) return s.error();
  impl->Run();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

const std::string& HttpServer::address() const { return impl_->address; }

std::size_t HttpServer::event_streams() const { return impl_->streams; }

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace mculab::server::http
