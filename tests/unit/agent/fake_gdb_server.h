// A small scripted GDB server for tests: listens on 127.0.0.1 (a free port), accepts one
// connection on its own thread, speaks the packet layer (acks, checksums, no-ack mode, the break
// byte) and hands each decoded packet to a handler that says what to answer. It records every
// packet it received and can misbehave on purpose: corrupt a reply's checksum, reject a packet with
// '-', stay silent (a timeout), close the connection.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/io/gdb_remote.h"

namespace mculab::agent::testing {

struct FakeGdbAction {
  std::vector<std::string> replies;  // payloads sent in order (none: stay silent)
  bool close = false;                // then close the connection
};

class FakeGdbServer {
 public:
  // `handler` gets each packet's decoded payload ("\x03" for the break byte).
  using Handler = std::function<FakeGdbAction(const std::string&)>;

  explicit FakeGdbServer(Handler handler, bool offer_no_ack = true)
      : handler_(std::move(handler)), offer_no_ack_(offer_no_ack) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    ::listen(listen_fd_, 1);
    socklen_t len = sizeof(a);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeGdbServer() {
    stop_ = true;
    thread_.join();
    if (conn_fd_ >= 0) ::close(conn_fd_);
    ::close(listen_fd_);
  }

  std::uint16_t port() const { return port_; }
  std::vector<std::string> packets() {
    std::lock_guard lock(mu_);
    return packets_;
  }
  int naks_received() const { return naks_received_; }
  // The next `n` replies go out with a wrong checksum first (ack mode only).
  void CorruptReplies(int n) { corrupt_ = n; }
  // The next `n` packets from the client are answered with '-' (ack mode only).
  void RejectPackets(int n) { reject_ = n; }
  // Whether the fake accepted QStartNoAckMode.
  bool no_ack() const { return no_ack_; }

 private:
  void Send(const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::send(conn_fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return;
      done += static_cast<std::size_t>(n);
    }
  }
  void Reply(const std::string& payload) {
    last_frame_ = GdbFrame(payload);
    SendLast();
  }
  void SendLast() {
    const std::string& frame = last_frame_;
    if (!no_ack_ && corrupt_ > 0) {
      --corrupt_;
      std::string bad = frame;
      bad[bad.size() - 1] = bad[bad.size() - 1] == '0' ? '1' : '0';
      Send(bad);
      return;
    }
    Send(frame);
  }
  // Returns false when the connection should close.
  bool Handle(const std::string& payload) {
    {
      std::lock_guard lock(mu_);
      packets_.push_back(payload);
    }
    if (payload.starts_with("qSupported")) {
      Reply(std::string("PacketSize=100;qXfer:features:read+;qXfer:memory-map:read+") +
            (offer_no_ack_ ? ";QStartNoAckMode+" : ""));
      return true;
    }
    if (payload == "QStartNoAckMode" && offer_no_ack_) {
      Reply("OK");
      no_ack_ = true;
      return true;
    }
    FakeGdbAction a = handler_(payload);
    for (const auto& r : a.replies) Reply(r);
    return !a.close;
  }
  void Serve() {
    while (!stop_ && conn_fd_ < 0) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) > 0) conn_fd_ = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    }
    std::string buf;
    while (!stop_) {
      pollfd p{conn_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char tmp[4096];
      ssize_t n = ::recv(conn_fd_, tmp, sizeof(tmp), 0);
      if (n <= 0) return;
      buf.append(tmp, static_cast<std::size_t>(n));
      while (!buf.empty()) {
        const char c = buf[0];
        if (c == '+') {
          buf.erase(0, 1);
        } else if (c == '-') {
          buf.erase(0, 1);
          ++naks_received_;
          SendLast();
        } else if (c == '\x03') {
          buf.erase(0, 1);
          if (!Handle("\x03")) return Close();
        } else if (c == '$') {
          const auto hash = buf.find('#');
          if (hash == std::string::npos || buf.size() < hash + 3) break;
          const std::string raw = buf.substr(1, hash - 1);
          const std::string cs = buf.substr(hash + 1, 2);
          buf.erase(0, hash + 3);
          if (cs != GdbChecksum(raw)) {
            Send("-");
            continue;
          }
          if (!no_ack_ && reject_ > 0) {
            --reject_;
            Send("-");
            continue;
          }
          if (!no_ack_) Send("+");
          auto decoded = GdbDecodePayload(raw);
          if (!Handle(decoded.ok() ? *decoded : raw)) return Close();
        } else {
          buf.erase(0, 1);
        }
      }
    }
  }
  void Close() { ::shutdown(conn_fd_, SHUT_RDWR); }

  Handler handler_;
  bool offer_no_ack_;
  int listen_fd_ = -1;
  int conn_fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::string> packets_;
  std::string last_frame_;
  std::atomic<int> corrupt_{0};
  std::atomic<int> reject_{0};
  std::atomic<int> naks_received_{0};
  std::atomic<bool> no_ack_{false};
};

// A fake target's memory behind the fake server: X/M/m packets, and a log of flash operations.
struct FakeTargetMemory {
  std::vector<std::uint8_t> bytes;
  std::uint64_t base = 0;
  explicit FakeTargetMemory(std::uint64_t b, std::size_t size) : bytes(size, 0), base(b) {}
  // Applies a write packet; returns false when it is not one.
  bool Apply(const std::string& p, std::string& reply) {
    if (p[0] == 'X' || p.starts_with("vFlashWrite:")) {
      const bool flash = p[0] == 'v';
      const auto colon = p.find(':', flash ? 12 : 0);
      std::uint64_t addr = std::stoull(p.substr(flash ? 12 : 1), nullptr, 16);
      std::string data = p.substr(colon + 1);
      if (!flash) {
        const auto comma = p.find(',');
        const std::size_t len = std::stoull(p.substr(comma + 1), nullptr, 16);
        if (len != data.size()) {
          reply = "E99";
          return true;
        }
      }
      for (std::size_t i = 0; i < data.size(); ++i) {
        bytes.at(addr - base + i) = static_cast<std::uint8_t>(data[i]);
      }
      reply = "OK";
      return true;
    }
    if (p[0] == 'm') {
      const auto comma = p.find(',');
      std::uint64_t addr = std::stoull(p.substr(1, comma - 1), nullptr, 16);
      std::size_t len = std::stoull(p.substr(comma + 1), nullptr, 16);
      reply = GdbHex(std::span(bytes).subspan(addr - base, len));
      return true;
    }
    return false;
  }
};

// Serves a qXfer read of `doc` in small chunks ("" when `p` is not a read of `object`).
inline std::optional<std::string> ServeXfer(const std::string& p, const std::string& object,
                                            const std::string& annex, const std::string& doc) {
  const std::string prefix = "qXfer:" + object + ":read:" + annex + ":";
  if (!p.starts_with(prefix)) return std::nullopt;
  const auto comma = p.find(',', prefix.size());
  const std::size_t off = std::stoull(p.substr(prefix.size(), comma - prefix.size()), nullptr, 16);
  const std::size_t len = std::stoull(p.substr(comma + 1), nullptr, 16);
  const std::size_t n = std::min<std::size_t>({len, 50, doc.size() - std::min(off, doc.size())});
  const bool last = off + n >= doc.size();
  return std::string(last ? "l" : "m") + doc.substr(std::min(off, doc.size()), n);
}

}  // namespace mculab::agent::testing
