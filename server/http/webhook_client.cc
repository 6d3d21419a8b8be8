#include "server/http/webhook_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>

namespace mculab::server {
namespace {

using Clock = std::chrono::steady_clock;

Error Failed(const WebhookUrl& u, const std::string& what) {
  return MakeError(ErrorCode::kUnavailable, "webhook " + u.host + ": " + what);
}

int MsLeft(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// Waits until `fd` is ready for `events` or the deadline passes.
bool WaitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const int left = MsLeft(deadline);
    if (left == 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, left);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

Result<int> Connect(const WebhookUrl& u, Clock::time_point deadline, Fd& out) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(u.port);
  if (int rc = ::getaddrinfo(u.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Failed(u, std::string("cannot resolve the host: ") + ::gai_strerror(rc));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> list(found, ::freeaddrinfo);
  std::string last = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    Fd s;
    s.fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (s.fd < 0) continue;
    if (::connect(s.fd, a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        last = std::strerror(errno);
        continue;
      }
      if (!WaitFor(s.fd, POLLOUT, deadline)) {
        last = "connecting timed out";
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        last = std::strerror(err);
        continue;
      }
    }
    out.fd = s.fd;
    s.fd = -1;
    return out.fd;
  }
  return Failed(u, "cannot connect to port " + port + ": " + last);
}

// A byte stream over the socket, through TLS when the URL says https.
class Stream {
 public:
  Stream(const WebhookUrl& u, int fd, Clock::time_point deadline)
      : u_(u), fd_(fd), deadline_(deadline) {}
  ~Stream() {
    if (ssl_ != nullptr) SSL_free(ssl_);
    if (ctx_ != nullptr) SSL_CTX_free(ctx_);
  }

  Status StartTls(const std::string& ca_file) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    if (ctx_ == nullptr) return Failed(u_, "cannot set up TLS");
    SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    const int loaded = ca_file.empty()
                           ? SSL_CTX_set_default_verify_paths(ctx_)
                           : SSL_CTX_load_verify_locations(ctx_, ca_file.c_str(), nullptr);
    if (loaded != 1) return Failed(u_, "cannot read the trusted certificates " + ca_file);
    ssl_ = SSL_new(ctx_);
    if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1 ||
        SSL_set_tlsext_host_name(ssl_, u_.host.c_str()) != 1 ||
        SSL_set1_host(ssl_, u_.host.c_str()) != 1) {
      return Failed(u_, "cannot set up TLS");
    }
    for (;;) {
      ERR_clear_error();
      const int rc = SSL_connect(ssl_);
      if (rc == 1) return {};
      if (Status s = WaitTls(rc, "the TLS handshake"); !s.ok()) return s;
    }
  }

  Status WriteAll(const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
      const char* p = data.data() + done;
      const std::size_t n = data.size() - done;
      if (ssl_ != nullptr) {
        ERR_clear_error();
        const int rc = SSL_write(ssl_, p, static_cast<int>(n));
        if (rc > 0) {
          done += static_cast<std::size_t>(rc);
          continue;
        }
        if (Status s = WaitTls(rc, "sending"); !s.ok()) return s;
        continue;
      }
      const ssize_t rc = ::send(fd_, p, n, MSG_NOSIGNAL);
      if (rc > 0) {
        done += static_cast<std::size_t>(rc);
      } else if (rc < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (!WaitFor(fd_, POLLOUT, deadline_)) return Failed(u_, "sending timed out");
      } else {
        return Failed(u_, std::string("sending failed: ") + std::strerror(errno));
      }
    }
    return {};
  }

  // Up to `max` bytes; 0 at the end of the stream.
  Result<std::size_t> Read(char* buf, std::size_t max) {
    for (;;) {
      if (ssl_ != nullptr) {
        ERR_clear_error();
        const int rc = SSL_read(ssl_, buf, static_cast<int>(max));
        if (rc > 0) return static_cast<std::size_t>(rc);
        const int err = SSL_get_error(ssl_, rc);
        if (err == SSL_ERROR_ZERO_RETURN || (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)) {
          return std::size_t{0};
        }
        if (Status s = WaitTls(rc, "reading the reply"); !s.ok()) return s.error();
        continue;
      }
      const ssize_t rc = ::recv(fd_, buf, max, 0);
      if (rc >= 0) return static_cast<std::size_t>(rc);
      if (errno != EAGAIN && errno != EINTR) {
        return Failed(u_, std::string("reading the reply failed: ") + std::strerror(errno));
      }
      if (!WaitFor(fd_, POLLIN, deadline_)) return Failed(u_, "no reply in time");
    }
  }

 private:
  // After an SSL call returned rc <= 0: waits for the socket when TLS asks to, else the error.
  Status WaitTls(int rc, const char* doing) {
    const int err = SSL_get_error(ssl_, rc);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      if (!WaitFor(fd_, err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline_)) {
        return Failed(u_, std::string(doing) + " timed out");
      }
      return {};
    }
    std::string why = "failed";
    if (const long verify = SSL_get_verify_result(ssl_); verify != X509_V_OK) {
      why = std::string("the certificate was refused: ") + X509_verify_cert_error_string(verify);
    } else if (unsigned long e = ERR_get_error(); e != 0) {
      char text[256];
      ERR_error_string_n(e, text, sizeof text);
      why = text;
    }
    return Failed(u_, std::string(doing) + " " + why);
  }

  const WebhookUrl& u_;
  int fd_;
  Clock::time_point deadline_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
};

}  // namespace

Result<WebhookUrl> ParseWebhookUrl(const std::string& url) {
  auto invalid = [&](const std::string& why) {
    return MakeError(ErrorCode::kInvalidArgument, "webhook \"" + url.substr(0, 80) + "\": " + why);
  };
  WebhookUrl u;
  std::string rest;
  if (url.starts_with("https://")) {
    u.tls = true;
    u.port = 443;
    rest = url.substr(8);
  } else if (url.starts_with("http://")) {
    u.port = 80;
    rest = url.substr(7);
  } else {
    return invalid("must start with http:// or https://");
  }
  for (unsigned char c : url) {
    if (c <= 0x20 || c == 0x7f) return invalid("has a space or a control character");
  }
  const std::size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  u.path = slash == std::string::npos ? "/" : rest.substr(slash);
  if (authority.find('@') != std::string::npos) return invalid("user:password@ is not supported");
  const std::size_t colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']', colon) == std::string::npos) {
    const std::string port = authority.substr(colon + 1);
    authority.resize(colon);
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos) {
      return invalid("bad port");
    }
    const int p = std::stoi(port);
    if (p < 1 || p > 65535) return invalid("bad port");
    u.port = static_cast<std::uint16_t>(p);
  }
  if (authority.size() > 2 && authority.front() == '[' && authority.back() == ']') {
    authority = authority.substr(1, authority.size() - 2);
  }
  if (authority.empty()) return invalid("has no host");
  u.host = authority;
  return u;
}

Status PostJson(const std::string& url, const std::string& body, std::uint32_t timeout_ms,
                const std::string& ca_file) {
  auto parsed = ParseWebhookUrl(url);
  if (!parsed.ok()) return parsed.error();
  const WebhookUrl& u = *parsed;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  Fd fd;
  if (auto c = Connect(u, deadline, fd); !c.ok()) return c.error();
  Stream stream(u, fd.fd, deadline);
  if (u.tls) {
    if (Status s = stream.StartTls(ca_file); !s.ok()) return s;
  }
  const bool default_port = u.port == (u.tls ? 443 : 80);
  const std::string host_header =
      (u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host) +
      (default_port ? "" : ":" + std::to_string(u.port));
  std::string request = "POST " + u.path + " HTTP/1.1\r\nHost: " + host_header +
                        "\r\nUser-Agent: mculab-server\r\nContent-Type: application/json\r\n"
                        "Content-Length: " +
                        std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  if (Status s = stream.WriteAll(request); !s.ok()) return s;
  // The status line is enough: "HTTP/1.1 200 OK".
  std::string reply;
  char buf[1024];
  while (reply.find("\r\n") == std::string::npos && reply.size() < 8192) {
    auto n = stream.Read(buf, sizeof buf);
    if (!n.ok()) return n.error();
    if (*n == 0) break;
    reply.append(buf, *n);
  }
  const std::size_t eol = reply.find("\r\n");
  const std::string status_line = reply.substr(0, eol);
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12) {
    return Failed(
        u, reply.empty() ? "the connection closed without a reply" : "the reply is not HTTP");
  }
  const std::string code = status_line.substr(9, 3);
  if (code[0] != '2') return Failed(u, "HTTP " + status_line.substr(9, 40));
  return {};
}

}  // namespace mculab::server
