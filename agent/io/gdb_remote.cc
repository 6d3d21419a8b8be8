#include "agent/io/gdb_remote.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "agent/io/fd.h"

namespace mculab::agent {

namespace {

constexpr int kMaxRetransmits = 5;
// The longest a single socket wait lasts before the deadline is checked again on the clock.
constexpr std::chrono::milliseconds kSlice{50};

std::string HexNum(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%llx", static_cast<unsigned long long>(v));
  return buf;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::uint64_t> ParseHexNum(std::string_view s) {
  if (s.empty() || s.size() > 16) {
    return MakeError(ErrorCode::kDataLoss, "bad hex number \"" + std::string(s) + "\"");
  }
  std::uint64_t v = 0;
  for (char c : s) {
    int d = HexDigit(c);
    if (d < 0) return MakeError(ErrorCode::kDataLoss, "bad hex number \"" + std::string(s) + "\"");
    v = v << 4 | static_cast<std::uint64_t>(d);
  }
  return v;
}

std::uint64_t ParseNumber(const std::string& s) {
  try {
    return std::stoull(s, nullptr, 0);
  } catch (...) {
    return 0;
  }
}

// Attribute `name` of the tag text `tag` ("" when absent).
std::string Attribute(std::string_view tag, std::string_view name) {
  std::size_t pos = 0;
  while (true) {
    pos = tag.find(name, pos);
    if (pos == std::string_view::npos) return {};
    const bool starts = pos > 0 && (tag[pos - 1] == ' ' || tag[pos - 1] == '\t' ||
                                    tag[pos - 1] == '\n' || tag[pos - 1] == '\r');
    std::size_t p = pos + name.size();
    while (p < tag.size() && tag[p] == ' ') ++p;
    if (!starts || p >= tag.size() || tag[p] != '=') {
      pos += name.size();
      continue;
    }
    ++p;
    while (p < tag.size() && tag[p] == ' ') ++p;
    if (p >= tag.size() || (tag[p] != '"' && tag[p] != '\'')) return {};
    const char q = tag[p];
    const auto end = tag.find(q, p + 1);
    if (end == std::string_view::npos) return {};
    return std::string(tag.substr(p + 1, end - p - 1));
  }
}

// Calls `f(name, tag)` for each element start tag in document order (comments skipped).
template <typename F>
void ForEachTag(std::string_view xml, F f) {
  std::size_t pos = 0;
  while ((pos = xml.find('<', pos)) != std::string_view::npos) {
    if (xml.substr(pos, 4) == "<!--") {
      const auto end = xml.find("-->", pos);
      if (end == std::string_view::npos) return;
      pos = end + 3;
      continue;
    }
    const auto end = xml.find('>', pos);
    if (end == std::string_view::npos) return;
    std::string_view tag = xml.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    if (tag.empty() || tag[0] == '/' || tag[0] == '?' || tag[0] == '!') continue;
    const auto name_end = tag.find_first_of(" \t\r\n/");
    f(tag.substr(0, name_end), tag);
  }
}

Status ParseRegistersInto(std::string_view xml,
                          const std::function<Result<std::string>(const std::string&)>& include,
                          std::vector<GdbRegister>& out, int& next, int depth) {
  if (depth > 4)
    return MakeError(ErrorCode::kDataLoss, "target description includes nest too deep");
  Status status;
  ForEachTag(xml, [&](std::string_view name, std::string_view tag) {
    if (!status) return;
    if (name == "reg") {
      GdbRegister r;
      r.name = Attribute(tag, "name");
      const auto bits = Attribute(tag, "bitsize");
      r.bitsize = bits.empty() ? 32 : static_cast<int>(ParseNumber(bits));
      const auto num = Attribute(tag, "regnum");
      r.regnum = num.empty() ? next : static_cast<int>(ParseNumber(num));
      next = r.regnum + 1;
      out.push_back(std::move(r));
    } else if (name == "xi:include") {
      const auto href = Attribute(tag, "href");
      if (href.empty() || !include) return;
      auto doc = include(href);
      if (!doc) {
        status = doc.error();
        return;
      }
      status = ParseRegistersInto(*doc, include, out, next, depth + 1);
    }
  });
  return status;
}

}  // namespace

std::string GdbChecksum(std::string_view payload) {
  unsigned sum = 0;
  for (unsigned char c : payload) sum += c;
  char buf[3];
  std::snprintf(buf, sizeof(buf), "%02x", sum & 0xff);
  return buf;
}

std::string GdbFrame(std::string_view payload) {
  std::string f;
  f.reserve(payload.size() + 4);
  f += '$';
  f += payload;
  f += '#';
  f += GdbChecksum(payload);
  return f;
}

std::string GdbEscapeBinary(std::span<const std::uint8_t> data) {
  std::string out;
  out.reserve(data.size() + data.size() / 16);
  for (std::uint8_t b : data) {
    if (b == '}' || b == '#' || b == '$' || b == '*') {
      out += '}';
      out += static_cast<char>(b ^ 0x20);
    } else {
      out += static_cast<char>(b);
    }
  }
  return out;
}

Result<std::string> GdbDecodePayload(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '}') {
      if (i + 1 >= raw.size()) return MakeError(ErrorCode::kDataLoss, "packet ends in an escape");
      out += static_cast<char>(raw[++i] ^ 0x20);
    } else if (c == '*') {
      if (out.empty() || i + 1 >= raw.size()) {
        return MakeError(ErrorCode::kDataLoss, "run-length marker without a character to repeat");
      }
      const int n = static_cast<unsigned char>(raw[++i]) - 29;
      if (n < 0) return MakeError(ErrorCode::kDataLoss, "bad run length");
      out.append(static_cast<std::size_t>(n), out.back());
    } else {
      out += c;
    }
  }
  return out;
}

std::string GdbHex(std::span<const std::uint8_t> data) {
  static const char* kDigits = "0123456789abcdef";
  std::string s;
  s.reserve(data.size() * 2);
  for (std::uint8_t b : data) {
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

std::uint32_t GdbCrc32(std::span<const std::uint8_t> data) {
  std::uint32_t crc = 0xffffffffu;
  for (std::uint8_t b : data) {
    crc ^= static_cast<std::uint32_t>(b) << 24;
    for (int i = 0; i < 8; ++i) crc = crc & 0x80000000u ? (crc << 1) ^ 0x04c11db7u : crc << 1;
  }
  return crc;
}

Result<std::vector<std::uint8_t>> GdbUnhex(std::string_view hex) {
  if (hex.size() % 2 != 0) return MakeError(ErrorCode::kDataLoss, "odd-length hex data");
  std::vector<std::uint8_t> out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = HexDigit(hex[2 * i]), lo = HexDigit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return MakeError(ErrorCode::kDataLoss, "bad hex data");
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return out;
}

Result<std::vector<GdbRegister>> GdbParseRegisters(
    std::string_view xml, const std::function<Result<std::string>(const std::string&)>& include) {
  std::vector<GdbRegister> regs;
  int next = 0;
  if (auto s = ParseRegistersInto(xml, include, regs, next, 0); !s) return s.error();
  if (regs.empty())
    return MakeError(ErrorCode::kDataLoss, "the target description has no registers");
  return regs;
}

Result<std::vector<GdbMemoryRegion>> GdbParseMemoryMap(std::string_view xml) {
  std::vector<GdbMemoryRegion> regions;
  std::size_t pos = 0;
  while ((pos = xml.find("<memory", pos)) != std::string_view::npos) {
    if (pos + 7 >= xml.size() || (xml[pos + 7] != ' ' && xml[pos + 7] != '\t' &&
                                  xml[pos + 7] != '\n' && xml[pos + 7] != '\r')) {
      pos += 7;  // <memory-map>
      continue;
    }
    auto end = xml.find('>', pos);
    if (end == std::string_view::npos) break;
    std::string_view tag = xml.substr(pos, end - pos);
    GdbMemoryRegion r;
    const auto type = Attribute(tag, "type");
    r.type = type == "flash" ? GdbMemoryRegion::Type::kFlash
             : type == "rom" ? GdbMemoryRegion::Type::kRom
                             : GdbMemoryRegion::Type::kRam;
    r.start = ParseNumber(Attribute(tag, "start"));
    r.length = ParseNumber(Attribute(tag, "length"));
    pos = end + 1;
    if (r.type == GdbMemoryRegion::Type::kFlash && tag.back() != '/') {
      // <property name="blocksize">0x800</property> inside the element.
      const auto close = xml.find("</memory>", pos);
      std::string_view body = xml.substr(pos, close == std::string_view::npos ? 0 : close - pos);
      const auto prop = body.find("\"blocksize\"");
      if (prop != std::string_view::npos) {
        const auto gt = body.find('>', prop);
        const auto lt = body.find('<', gt);
        if (gt != std::string_view::npos && lt != std::string_view::npos) {
          r.blocksize = ParseNumber(std::string(body.substr(gt + 1, lt - gt - 1)));
        }
      }
    }
    if (r.length == 0) {
      return MakeError(ErrorCode::kDataLoss,
                       "memory map region without a length: " + std::string(tag));
    }
    regions.push_back(r);
  }
  return regions;
}

Result<GdbStopReply> GdbParseStopReply(std::string_view p) {
  if (p.size() < 3 || (p[0] != 'S' && p[0] != 'T' && p[0] != 'W' && p[0] != 'X')) {
    return MakeError(ErrorCode::kDataLoss, "not a stop reply: \"" + std::string(p) + "\"");
  }
  auto sig = ParseHexNum(p.substr(1, 2));
  if (!sig) return MakeError(ErrorCode::kDataLoss, "not a stop reply: \"" + std::string(p) + "\"");
  GdbStopReply r;
  r.kind = p[0];
  r.signal = static_cast<int>(*sig);
  r.raw = std::string(p);
  return r;
}

// The start of a packet for messages: at most 40 characters, binary bytes shown as '.'.
std::string Printable(std::string_view payload) {
  std::string s(payload.substr(0, std::min<std::size_t>(payload.size(), 40)));
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '.';
  }
  if (payload.size() > 40) s += "...";
  return s;
}

// ---- transport ----

struct GdbRemote::Transport {
  UniqueFd socket;
  std::vector<std::uint8_t> rx;
  std::size_t rx_pos = 0;
  int fd() const { return socket.get(); }
};

GdbRemote::GdbRemote(std::unique_ptr<Transport> t, std::chrono::milliseconds timeout, Clock& clock)
    : t_(std::move(t)), timeout_(timeout), clock_(clock) {}

GdbRemote::~GdbRemote() { ::shutdown(t_->fd(), SHUT_RDWR); }

Result<std::unique_ptr<GdbRemote>> GdbRemote::Connect(const std::string& host, std::uint16_t port,
                                                      std::chrono::milliseconds timeout,
                                                      Clock& clock) {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  const std::string where = host + ":" + std::to_string(port);
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(io);
  auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (ec) return MakeError(ErrorCode::kUnavailable, "GDB server " + where + ": " + ec.message());
  bool done = false;
  asio::async_connect(socket, endpoints, [&](const boost::system::error_code& e, const auto&) {
    ec = e;
    done = true;
  });
  io.run_for(timeout);
  if (!done) {
    socket.close(ec);
    io.restart();
    io.run();
    return MakeError(ErrorCode::kDeadlineExceeded, "GDB server " + where + ": no connection in " +
                                                       std::to_string(timeout.count()) + " ms");
  }
  if (ec) return MakeError(ErrorCode::kUnavailable, "GDB server " + where + ": " + ec.message());
  socket.set_option(asio::ip::tcp::no_delay(true), ec);
  // The connection outlives the io_context: keep a duplicate of the descriptor.
  UniqueFd fd(::fcntl(socket.native_handle(), F_DUPFD_CLOEXEC, 0));
  if (!fd.valid()) return MakeError(ErrorCode::kInternal, ErrnoMessage("dup", errno));
  socket.close(ec);
  return Adopt(std::move(fd), timeout, clock);
}

Result<std::unique_ptr<GdbRemote>> GdbRemote::Adopt(UniqueFd fd, std::chrono::milliseconds timeout,
                                                    Clock& clock) {
  if (auto s = SetNonBlocking(fd.get()); !s) return s.error();
  auto t = std::make_unique<Transport>();
  t->socket = std::move(fd);
  std::unique_ptr<GdbRemote> g(new GdbRemote(std::move(t), timeout, clock));
  if (auto s = g->Handshake(); !s) return s.error();
  return g;
}

Result<std::unique_ptr<GdbRemote>> ConnectGdbWhenUp(const std::string& host, std::uint16_t port,
                                                    std::chrono::milliseconds timeout,
                                                    std::chrono::milliseconds call_timeout,
                                                    Clock& clock,
                                                    const std::function<bool()>& keep_trying) {
  const auto deadline = clock.Now() + timeout;
  while (true) {
    auto g = GdbRemote::Connect(host, port, call_timeout, clock);
    if (g.ok() || g.error().code != ErrorCode::kUnavailable) return g;
    if (keep_trying && !keep_trying()) return g;
    if (Remaining(clock, deadline).count() == 0) {
      Error e = g.error();
      e.code = ErrorCode::kDeadlineExceeded;
      e.message += " (still, after " + std::to_string(timeout.count()) + " ms)";
      return e;
    }
    clock.SleepFor(std::chrono::milliseconds(5));
  }
}

Result<std::uint16_t> FreeLocalTcpPort() {
  boost::asio::io_context io;
  boost::system::error_code ec;
  boost::asio::ip::tcp::acceptor a(io);
  a.open(boost::asio::ip::tcp::v4(), ec);
  if (!ec) a.bind({boost::asio::ip::address_v4::loopback(), 0}, ec);
  if (ec) return MakeError(ErrorCode::kUnavailable, "no free TCP port: " + ec.message());
  return a.local_endpoint().port();
}

Status GdbRemote::WriteRaw(std::string_view bytes) {
  std::lock_guard lock(write_mu_);
  std::size_t done = 0;
  const auto deadline = clock_.Now() + timeout_;
  while (done < bytes.size()) {
    ssize_t n = ::send(t_->fd(), bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const auto left = Remaining(clock_, deadline);
      if (left.count() == 0) {
        return MakeError(ErrorCode::kDeadlineExceeded, "the GDB server does not take our bytes");
      }
      pollfd p{t_->fd(), POLLOUT, 0};
      ::poll(&p, 1, static_cast<int>(std::min(left, kSlice).count()));
      continue;
    }
    return MakeError(ErrorCode::kUnavailable,
                     ErrnoMessage("GDB connection lost (send)", n < 0 ? errno : EPIPE));
  }
  return {};
}

Result<std::uint8_t> GdbRemote::ReadByte(Clock::TimePoint deadline) {
  auto& t = *t_;
  while (t.rx_pos >= t.rx.size()) {
    t.rx.resize(4096);
    t.rx_pos = 0;
    const auto left = Remaining(clock_, deadline);
    pollfd p{t.fd(), POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min(left, kSlice).count()));
    if (r == 0 || (r < 0 && errno == EINTR)) {
      t.rx.clear();
      if (left.count() == 0) {
        return MakeError(ErrorCode::kDeadlineExceeded, "no reply from the GDB server in time");
      }
      continue;
    }
    ssize_t n = ::recv(t.fd(), t.rx.data(), t.rx.size(), 0);
    if (n > 0) {
      t.rx.resize(static_cast<std::size_t>(n));
      continue;
    }
    t.rx.clear();
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    return MakeError(ErrorCode::kUnavailable,
                     n == 0 ? std::string("the GDB server closed the connection")
                            : ErrnoMessage("GDB connection lost", errno));
  }
  return t.rx[t.rx_pos++];
}

Status GdbRemote::SendPacket(std::string_view payload, Clock::TimePoint deadline) {
  const std::string frame = GdbFrame(payload);
  ++packets_sent_;
  for (int attempt = 0;; ++attempt) {
    if (auto s = WriteRaw(frame); !s) return s;
    if (no_ack_) return {};
    // Wait for the ack; anything else before it (a stray notification) is skipped.
    while (true) {
      auto b = ReadByte(deadline);
      if (!b) return b.error();
      if (*b == '+') return {};
      if (*b == '-') break;
    }
    if (attempt + 1 >= kMaxRetransmits) {
      return MakeError(ErrorCode::kDataLoss, "the GDB server rejected our packet " +
                                                 std::to_string(kMaxRetransmits) +
                                                 " times: " + Printable(payload));
    }
  }
}

Result<std::string> GdbRemote::ReadPacket(Clock::TimePoint deadline, bool ack) {
  for (int attempt = 0;; ++attempt) {
    // Skip to the start of a packet (acks, a '%' notification's bytes are not ours).
    while (true) {
      auto b = ReadByte(deadline);
      if (!b) return b.error();
      if (*b == '$') break;
    }
    // A packet that has begun is read whole: a short wait (WaitForStop's) must not cut it.
    deadline = std::max(deadline, clock_.Now() + timeout_);
    std::string raw;
    while (true) {
      auto b = ReadByte(deadline);
      if (!b) return b.error();
      if (*b == '#') break;
      raw += static_cast<char>(*b);
      if (raw.size() > (1u << 24)) return MakeError(ErrorCode::kDataLoss, "runaway packet");
    }
    char cs[2];
    for (char& c : cs) {
      auto b = ReadByte(deadline);
      if (!b) return b.error();
      c = static_cast<char>(*b);
    }
    const bool good = HexDigit(cs[0]) >= 0 && HexDigit(cs[1]) >= 0 &&
                      GdbChecksum(raw) == std::string{static_cast<char>(std::tolower(cs[0])),
                                                      static_cast<char>(std::tolower(cs[1]))};
    if (good) {
      if (!no_ack_ && ack) {
        if (auto s = WriteRaw("+"); !s) return s.error();
      }
      return GdbDecodePayload(raw);
    }
    if (no_ack_) {
      return MakeError(ErrorCode::kDataLoss, "a reply with a bad checksum in no-ack mode");
    }
    if (attempt + 1 >= kMaxRetransmits) {
      return MakeError(ErrorCode::kDataLoss,
                       "replies from the GDB server keep failing their checksum");
    }
    if (auto s = WriteRaw("-"); !s) return s.error();
  }
}

Result<std::string> GdbRemote::Request(std::string_view payload) {
  if (!broken_.empty()) return MakeError(ErrorCode::kUnavailable, broken_);
  if (auto s = ReadUnread(); !s) return s.error();
  const auto deadline = clock_.Now() + timeout_;
  if (auto s = SendPacket(payload, deadline); !s) {
    broken_ = "the GDB connection is unusable after: " + s.error().message;
    return s.error();
  }
  auto reply = ReadPacket(deadline);
  if (!reply) {
    Error e = reply.error();
    e.message += " (request " + Printable(payload) + ")";
    // A reply that may still come would answer the next request: the connection is done.
    broken_ = "the GDB connection is unusable after: " + e.message;
    return e;
  }
  if (reply->size() == 3 && (*reply)[0] == 'E' && HexDigit((*reply)[1]) >= 0 &&
      HexDigit((*reply)[2]) >= 0) {
    return ReplyError(payload, *reply);
  }
  return reply;
}

Status GdbRemote::Send(std::string_view payload) {
  return SendPacket(payload, clock_.Now() + timeout_);
}

Error GdbRemote::ReplyError(std::string_view request, std::string_view reply) const {
  return MakeError(ErrorCode::kFailedPrecondition,
                   "the GDB server answered " + std::string(reply) + " to " + Printable(request));
}

Status GdbRemote::ExpectOk(std::string_view request) {
  auto r = Request(request);
  if (!r) return r.error();
  if (*r == "OK") return {};
  if (r->empty()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the GDB server does not support " + std::string(request.substr(0, 20)));
  }
  return ReplyError(request, *r);
}

Status GdbRemote::Handshake() {
  // A fresh connection in ack mode: an early '+' from the server is harmless.
  auto r = Request("qSupported:swbreak+;hwbreak+;xmlRegisters=arm;vContSupported+");
  if (!r) return r.error();
  supported_ = *r;
  std::size_t pos = 0;
  while (pos < supported_.size()) {
    auto end = supported_.find(';', pos);
    if (end == std::string::npos) end = supported_.size();
    std::string_view f(supported_.data() + pos, end - pos);
    if (f.starts_with("PacketSize=")) {
      auto v = ParseHexNum(f.substr(11));
      if (v && *v >= 64)
        packet_size_ = static_cast<std::size_t>(std::min<std::uint64_t>(*v, 1 << 20));
    }
    pos = end + 1;
  }
  // Asked even when not offered (some servers accept it without listing it); an empty reply keeps
  // the acks (Debian's QEMU 7.2.22 gdbstub answers empty, and has no `X` either).
  auto ok = Request("QStartNoAckMode");
  if (!ok) return ok.error();
  if (*ok == "OK") no_ack_ = true;
  return {};
}

Result<std::string> GdbRemote::ReadXfer(const std::string& object, const std::string& annex) {
  std::string doc;
  const std::size_t chunk = std::max<std::size_t>(packet_size_ > 8 ? packet_size_ - 8 : 64, 64);
  while (true) {
    auto r = Request("qXfer:" + object + ":read:" + annex + ":" + HexNum(doc.size()) + "," +
                     HexNum(chunk));
    if (!r) return r.error();
    if (r->empty()) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "the GDB server does not offer qXfer:" + object + ":read");
    }
    if ((*r)[0] != 'm' && (*r)[0] != 'l') {
      return ReplyError("qXfer:" + object, *r);
    }
    doc.append(*r, 1);
    if ((*r)[0] == 'l' || r->size() == 1) return doc;
  }
}

Result<std::vector<GdbRegister>> GdbRemote::Registers() {
  if (registers_) return *registers_;
  auto xml = ReadXfer("features", "target.xml");
  if (!xml) return xml.error();
  auto regs = GdbParseRegisters(
      *xml, [this](const std::string& href) { return ReadXfer("features", href); });
  if (!regs) return regs.error();
  registers_ = *regs;
  return *regs;
}

Result<GdbRegister> GdbRemote::FindRegister(const std::string& name) {
  auto regs = Registers();
  if (!regs) return regs.error();
  // Aliases GDB targets use for the same register.
  static const std::map<std::string, std::vector<std::string>> kAliases = {
      {"sp", {"sp", "r13", "msp"}},
      {"pc", {"pc", "r15"}},
      {"lr", {"lr", "r14"}},
      {"xpsr", {"xpsr", "xPSR", "cpsr"}}};
  std::vector<std::string> names{name};
  if (auto a = kAliases.find(name); a != kAliases.end()) names = a->second;
  for (const auto& n : names) {
    for (const auto& r : *regs) {
      if (r.name == n) return r;
    }
  }
  return MakeError(ErrorCode::kNotFound, "the target description has no register \"" + name + "\"");
}

Result<std::vector<GdbMemoryRegion>> GdbRemote::MemoryMap() {
  if (supported_.find("qXfer:memory-map:read+") == std::string::npos) {
    return std::vector<GdbMemoryRegion>{};
  }
  auto xml = ReadXfer("memory-map", "");
  if (!xml) return xml.error();
  return GdbParseMemoryMap(*xml);
}

Result<std::vector<std::uint8_t>> GdbRemote::ReadMemory(std::uint64_t addr, std::size_t length) {
  std::vector<std::uint8_t> out;
  out.reserve(length);
  const std::size_t chunk = std::max<std::size_t>((packet_size_ - 4) / 2, 16);
  while (out.size() < length) {
    const std::size_t n = std::min(chunk, length - out.size());
    const std::string req = "m" + HexNum(addr + out.size()) + "," + HexNum(n);
    auto r = Request(req);
    if (!r) return r.error();
    if (r->empty()) return MakeError(ErrorCode::kFailedPrecondition, "empty reply to " + req);
    auto bytes = GdbUnhex(*r);
    if (!bytes) return bytes.error();
    if (bytes->empty()) return ReplyError(req, *r);
    out.insert(out.end(), bytes->begin(), bytes->end());
  }
  return out;
}

std::string GdbRemote::WriteChunk(std::uint64_t addr, std::span<const std::uint8_t> data,
                                  std::size_t& taken) const {
  const bool x = x_supported_.value_or(true);
  const std::string head_probe = (x ? "X" : "M") + HexNum(addr) + "," + HexNum(data.size()) + ":";
  const std::size_t budget =
      packet_size_ > head_probe.size() + 8 ? packet_size_ - head_probe.size() - 8 : 16;
  if (!x) {
    taken = std::min(budget / 2, data.size());
    return "M" + HexNum(addr) + "," + HexNum(taken) + ":" + GdbHex(data.first(taken));
  }
  // Take as many bytes as fit once escaped.
  std::size_t n = 0, escaped = 0;
  while (n < data.size()) {
    const std::uint8_t b = data[n];
    const std::size_t w = (b == '}' || b == '#' || b == '$' || b == '*') ? 2 : 1;
    if (escaped + w > budget) break;
    escaped += w;
    ++n;
  }
  taken = n;
  return "X" + HexNum(addr) + "," + HexNum(n) + ":" + GdbEscapeBinary(data.first(n));
}

Status GdbRemote::WriteMemory(std::uint64_t addr, std::span<const std::uint8_t> data) {
  return WriteMemoryThen(addr, data, {}, true);
}

Status GdbRemote::WriteMemoryAndContinue(std::uint64_t addr, std::span<const std::uint8_t> data,
                                         bool await_replies) {
  if (auto s = PrepareContinue(); !s) return s;
  return WriteMemoryThen(addr, data, *vcont_c_ ? "vCont;c" : "c", await_replies);
}

Status GdbRemote::WriteMemoryThen(std::uint64_t addr, std::span<const std::uint8_t> data,
                                  std::string_view then, bool await_replies) {
  if (auto s = ReadUnread(); !s) return s;
  const bool pipelined = no_ack_ || pipeline_with_acks_;
  std::size_t done = 0;
  // One packet at a time until the server's answer to X is known (or when it cannot be
  // pipelined); the rest in one burst.
  while (done < data.size() && !(pipelined && x_supported_.has_value() && broken_.empty())) {
    const bool x = x_supported_.value_or(true);
    std::size_t n = 0;
    const std::string req = WriteChunk(addr + done, data.subspan(done), n);
    auto r = Request(req);
    if (!r) return r.error();
    if (*r == "OK") {
      if (x) x_supported_ = true;
      done += n;
      continue;
    }
    if (!x || !r->empty() || x_supported_.has_value()) return ReplyError(req, *r);
    x_supported_ = false;  // an empty reply: no X, fall back to M
  }
  if (done == data.size()) return then.empty() ? Status{} : Send(then);
  // Every chunk and `then` in one write, then the chunks' replies in order. The replies are a few
  // bytes each, so the server never blocks on them while we still write.
  std::string burst;
  std::vector<std::string> requests;
  while (done < data.size()) {
    std::size_t n = 0;
    requests.push_back(WriteChunk(addr + done, data.subspan(done), n));
    burst += GdbFrame(requests.back());
    done += n;
  }
  if (!then.empty()) burst += GdbFrame(then);
  packets_sent_ += requests.size() + (then.empty() ? 0 : 1);
  // A failed write leaves replies (or acks) to come that would answer later requests.
  auto broken = [this](Error e) {
    broken_ = "the GDB connection is unusable after: " + e.message;
    return e;
  };
  if (auto s = WriteRaw(burst); !s) return broken(s.error());
  unread_.insert(unread_.end(), requests.begin(), requests.end());
  // In ack mode `then`'s ack may come before or among the replies; a later read skips it.
  return await_replies ? ReadUnread() : Status{};
}

Status GdbRemote::ReadUnread() {
  while (!unread_.empty()) {
    const std::string req = std::move(unread_.front());
    unread_.erase(unread_.begin());
    // In ack mode ReadPacket skips the server's '+' before each reply; the replies are not acked
    // (see set_pipeline_with_acks).
    auto reply = ReadPacket(clock_.Now() + timeout_, /*ack=*/false);
    if (reply && *reply == "OK") continue;
    Error e = reply ? ReplyError(req, *reply) : reply.error();
    if (!reply) e.message += " (request " + Printable(req) + ")";
    // The replies still to come would answer later requests.
    unread_.clear();
    broken_ = "the GDB connection is unusable after: " + e.message;
    return e;
  }
  return {};
}

Status GdbRemote::WriteRegister(const std::string& name, std::uint64_t value) {
  auto reg = FindRegister(name);
  if (!reg) return reg.error();
  if (p_supported_.value_or(true)) {
    std::vector<std::uint8_t> le(static_cast<std::size_t>(reg->bitsize / 8));
    for (std::size_t i = 0; i < le.size(); ++i) le[i] = static_cast<std::uint8_t>(value >> (8 * i));
    const std::string req =
        "P" + HexNum(static_cast<std::uint64_t>(reg->regnum)) + "=" + GdbHex(le);
    auto r = Request(req);
    if (!r) return r.error();
    if (*r == "OK") {
      p_supported_ = true;
      return {};
    }
    if (!r->empty()) return ReplyError(req, *r);
    p_supported_ = false;
  }
  return WriteRegisterG(*reg, value);
}

Status GdbRemote::WriteRegisterG(const GdbRegister& reg, std::uint64_t value) {
  auto regs = Registers();
  if (!regs) return regs.error();
  auto g = Request("g");
  if (!g) return g.error();
  auto bytes = GdbUnhex(*g);
  if (!bytes) return bytes.error();
  // `g` holds the registers in number order, each bitsize/8 bytes, as far as the server sends.
  std::vector<GdbRegister> sorted = *regs;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.regnum < b.regnum; });
  std::size_t offset = 0;
  for (const auto& r : sorted) {
    if (r.regnum == reg.regnum) break;
    offset += static_cast<std::size_t>(r.bitsize / 8);
  }
  const std::size_t width = static_cast<std::size_t>(reg.bitsize / 8);
  if (offset + width > bytes->size()) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "register " + reg.name + " is beyond the server's `g` packet");
  }
  for (std::size_t i = 0; i < width; ++i) {
    (*bytes)[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
  }
  return ExpectOk("G" + GdbHex(*bytes));
}

Result<std::uint64_t> GdbRemote::ReadRegister(const std::string& name) {
  auto reg = FindRegister(name);
  if (!reg) return reg.error();
  const std::string req = "p" + HexNum(static_cast<std::uint64_t>(reg->regnum));
  auto r = Request(req);
  if (!r) return r.error();
  auto bytes = GdbUnhex(*r);
  if (!bytes || bytes->empty()) return ReplyError(req, *r);
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < bytes->size() && i < 8; ++i)
    v |= std::uint64_t{(*bytes)[i]} << (8 * i);
  return v;
}

Status GdbRemote::PrepareContinue() {
  if (!vcont_c_) {
    auto r = Request("vCont?");
    if (!r) return r.error();
    vcont_c_ = r->starts_with("vCont") && r->find(";c") != std::string::npos;
  }
  return {};
}

Status GdbRemote::Continue() {
  if (auto s = PrepareContinue(); !s) return s;
  return Send(*vcont_c_ ? "vCont;c" : "c");
}

Result<GdbStopReply> GdbRemote::WaitForStop(std::chrono::milliseconds timeout) {
  if (auto s = ReadUnread(); !s) return s.error();
  const auto deadline = clock_.Now() + timeout;
  while (true) {
    auto p = ReadPacket(deadline);
    if (!p) return p.error();
    if (!p->empty() && (*p)[0] == 'O' && *p != "OK") continue;  // console output
    if (p->size() == 3 && (*p)[0] == 'E') return ReplyError("continue", *p);
    return GdbParseStopReply(*p);
  }
}

Status GdbRemote::Interrupt() { return WriteRaw(std::string_view("\x03", 1)); }

Result<GdbStopReply> GdbRemote::Halt() {
  if (auto s = Interrupt(); !s) return s.error();
  return WaitForStop(timeout_);
}

Result<GdbStopReply> GdbRemote::QueryStop() {
  auto r = Request("?");
  if (!r) return r.error();
  return GdbParseStopReply(*r);
}

Status GdbRemote::InsertBreakpoint(int type, std::uint64_t addr, int kind) {
  return ExpectOk("Z" + std::to_string(type) + "," + HexNum(addr) + "," + std::to_string(kind));
}

Status GdbRemote::RemoveBreakpoint(int type, std::uint64_t addr, int kind) {
  return ExpectOk("z" + std::to_string(type) + "," + HexNum(addr) + "," + std::to_string(kind));
}

Result<std::string> GdbRemote::Monitor(const std::string& command) {
  const std::string req =
      "qRcmd," +
      GdbHex(std::span(reinterpret_cast<const std::uint8_t*>(command.data()), command.size()));
  if (auto s = ReadUnread(); !s) return s.error();
  const auto deadline = clock_.Now() + timeout_;
  if (auto s = SendPacket(req, deadline); !s) return s.error();
  std::string output;
  while (true) {
    auto r = ReadPacket(deadline);
    if (!r) return r.error();
    if (*r == "OK") return output;
    if (r->empty()) {
      return MakeError(ErrorCode::kFailedPrecondition,
                       "the GDB server does not know the monitor command \"" + command + "\"");
    }
    if ((*r)[0] == 'O') {
      auto text = GdbUnhex(std::string_view(*r).substr(1));
      if (text) output.append(text->begin(), text->end());
      continue;
    }
    if (r->size() == 3 && (*r)[0] == 'E') return ReplyError("monitor " + command, *r);
    // Some servers answer with the output itself, hex-encoded, instead of O packets.
    auto text = GdbUnhex(*r);
    if (text) output.append(text->begin(), text->end());
    return output;
  }
}

Result<std::optional<std::uint32_t>> GdbRemote::Crc32(std::uint64_t addr, std::uint64_t length) {
  const std::string req = "qCRC:" + HexNum(addr) + "," + HexNum(length);
  auto r = Request(req);
  if (!r) return r.error();
  if (r->empty()) return std::optional<std::uint32_t>{};
  if ((*r)[0] != 'C') return ReplyError(req, *r);
  auto v = ParseHexNum(std::string_view(*r).substr(1));
  if (!v) return v.error();
  return std::optional<std::uint32_t>(static_cast<std::uint32_t>(*v));
}

Status GdbRemote::FlashErase(std::uint64_t addr, std::uint64_t length) {
  return ExpectOk("vFlashErase:" + HexNum(addr) + "," + HexNum(length));
}

Status GdbRemote::FlashWrite(std::uint64_t addr, std::span<const std::uint8_t> data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const std::string head = "vFlashWrite:" + HexNum(addr + done) + ":";
    const std::size_t budget = packet_size_ > head.size() + 8 ? packet_size_ - head.size() - 8 : 16;
    std::size_t n = 0, escaped = 0;
    while (done + n < data.size()) {
      const std::uint8_t b = data[done + n];
      const std::size_t w = (b == '}' || b == '#' || b == '$' || b == '*') ? 2 : 1;
      if (escaped + w > budget) break;
      escaped += w;
      ++n;
    }
    if (auto s = ExpectOk(head + GdbEscapeBinary(data.subspan(done, n))); !s) return s;
    done += n;
  }
  return {};
}

Status GdbRemote::FlashDone() { return ExpectOk("vFlashDone"); }

}  // namespace mculab::agent
