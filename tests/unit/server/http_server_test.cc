// The HTTP transport over a real loopback socket: responses and keep-alive, unreadable requests,
// and event streams (their head, Lab events as they happen, the end of a client's stream when it
// goes away, and Stop() with streams open). Waits for bytes with a receive timeout, never sleeps.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "db/sqlite_store.h"
#include "fakes.h"
#include "server/http/server.h"
#include "tests/unit/server/owned_lab.h"

namespace mculab::server::http {
namespace {

using testing::FakeAgentChannel;
using testing::FakeClock;

// A blocking loopback client whose reads give up after 10 s.
class Client {
 public:
  explicit Client(const std::string& address) {
    const auto colon = address.rfind(':');
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
    inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa.sin_addr);
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0;
  }
  ~Client() { Close(); }
  bool connected() const { return connected_; }
  void Send(const std::string& text) {
    ASSERT_EQ(::send(fd_, text.data(), text.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(text.size()));
  }
  // Reads until `needle` has arrived (true) or the peer closed / 10 s passed (false).
  bool ReadUntil(const std::string& needle) {
    while (received_.find(needle) == std::string::npos) {
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return false;
      received_.append(buf, static_cast<std::size_t>(n));
    }
    return true;
  }
  // Reads until the peer closes; true if it did within 10 s.
  bool ReadToEnd() {
    char buf[4096];
    while (true) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0) return true;
      if (n < 0) return false;
      received_.append(buf, static_cast<std::size_t>(n));
    }
  }
  const std::string& received() const { return received_; }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string received_;
};

std::string g_token;  // the fixture's admin token

std::string GetRequest(const std::string& target) {
  return "GET " + target + " HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer " + g_token +
         "\r\n\r\n";
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() /
           ("mculab-http-server-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(dir_);
    auto store = db::SqliteStore::Open(dir_ / "mculab.db");
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    LabConfig config;
    config.health_checks = false;  // a new board's health check would take the job's place
    lab_ = std::make_unique<mculab::server::testing::OwnedLab>(*store_, clock_, config, dir_);
    ASSERT_TRUE(lab_->Start().ok());
    router_ = std::make_unique<Router>(*lab_, *store_, clock_, RouterOptions{});
    auto admin = lab_->accounts().AddUser("admin", "admin");
    ASSERT_TRUE(admin.ok());
    g_token = admin->token;
    HttpServerOptions options;
    options.keep_alive_interval = std::chrono::milliseconds(50);  // the real one is 15 s
    auto server = HttpServer::Start(*router_, "127.0.0.1:0", options);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
    mculab::v1::Register reg;
    reg.set_agent("lab-1");
    reg.add_boards()->set_name("host-0");
    reg.mutable_boards(0)->set_kind("host");
    ASSERT_TRUE(
        lab_->agents()
            .ConnectAgent(testing::AgentCaller(reg.agent()), testing::RegistrationOf(reg), agent_)
            .ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
    lab_->Stop();
    lab_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  JobId Submit() {
    SubmitRequest r;
    r.kind = "host";
    r.op = "fully_connected_s8";
    r.cases = {{0, {1, 8, 4}}};
    r.iterations = 1;
    auto reply = lab_->jobs().Submit(Caller{}, r);
    EXPECT_TRUE(reply.ok());
    return reply.ok() ? reply->id : 0;
  }

  // Replaces the fixture's server by one with `options`.
  void Restart(const HttpServerOptions& options) {
    server_->Stop();
    auto server = HttpServer::Start(*router_, "127.0.0.1:0", options);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
  }

  // Waits (yielding, at most 10 s) until `pred` holds.
  template <typename Pred>
  static bool Eventually(Pred pred) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!pred()) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::yield();
    }
    return true;
  }

  std::filesystem::path dir_;
  FakeClock clock_;
  std::unique_ptr<db::SqliteStore> store_;
  std::unique_ptr<mculab::server::testing::OwnedLab> lab_;
  std::unique_ptr<Router> router_;
  std::unique_ptr<HttpServer> server_;
  std::shared_ptr<FakeAgentChannel> agent_ = std::make_shared<FakeAgentChannel>();
};

TEST_F(HttpServerTest, AnswersRequestsOneAfterAnotherOnOneConnection) {
  EXPECT_TRUE(server_->address().starts_with("127.0.0.1:"));
  Client c(server_->address());
  ASSERT_TRUE(c.connected());
  c.Send(GetRequest("/healthz"));
  ASSERT_TRUE(c.ReadUntil("{\"ok\":true}")) << c.received();
  EXPECT_TRUE(c.received().starts_with("HTTP/1.1 200 OK\r\n"));
  EXPECT_NE(c.received().find("Content-Security-Policy: default-src 'self'"), std::string::npos);
  c.Send(GetRequest("/api/v1/jobs/7"));
  ASSERT_TRUE(c.ReadUntil("job 7 does not exist")) << c.received();
  EXPECT_NE(c.received().find("HTTP/1.1 404 Not Found"), std::string::npos);
}

TEST_F(HttpServerTest, AnUnreadableRequestGets400AndTheConnectionCloses) {
  Client c(server_->address());
  c.Send("GET /healthz HTTP/1.1\r\nBad Header Line\r\n\r\n");
  EXPECT_TRUE(c.ReadToEnd());
  EXPECT_TRUE(c.received().starts_with("HTTP/1.1 400 Bad Request\r\n")) << c.received();
  EXPECT_NE(c.received().find("X-Frame-Options: DENY"), std::string::npos);
}

TEST_F(HttpServerTest, AnEventStreamCarriesLabEventsAsTheyHappen) {
  Client c(server_->address());
  c.Send(GetRequest("/api/v1/events"));
  ASSERT_TRUE(c.ReadUntil("retry: 1000\n: connected\n\n")) << c.received();
  EXPECT_NE(c.received().find("Content-Type: text/event-stream"), std::string::npos);
  EXPECT_NE(c.received().find("Transfer-Encoding: chunked"), std::string::npos);
  EXPECT_NE(c.received().find("Content-Security-Policy: "), std::string::npos);
  ASSERT_TRUE(Eventually([&] { return server_->event_streams() == 1; }));
  const JobId id = Submit();
  ASSERT_TRUE(
      c.ReadUntil("event: job\ndata: {\"id\":" + std::to_string(id) + ",\"state\":\"assigned\""))
      << c.received();
  ASSERT_TRUE(c.ReadUntil("event: board\ndata: {\"name\":\"host-0\"")) << c.received();
}

TEST_F(HttpServerTest, AQuietStreamGetsKeepAliveComments) {
  Client c(server_->address());
  c.Send(GetRequest("/api/v1/events"));
  ASSERT_TRUE(c.ReadUntil(": connected\n\n"));
  EXPECT_TRUE(c.ReadUntil(": keep-alive\n\n")) << c.received();
}

TEST_F(HttpServerTest, AClientThatGoesAwayHasItsStreamClosed) {
  {
    Client c(server_->address());
    c.Send(GetRequest("/api/v1/events"));
    ASSERT_TRUE(c.ReadUntil(": connected"));
    ASSERT_TRUE(Eventually([&] { return server_->event_streams() == 1; }));
  }
  EXPECT_TRUE(Eventually([&] { return server_->event_streams() == 0; }));
  Submit();  // the Lab publishes to no one and nothing breaks
  Client again(server_->address());
  again.Send(GetRequest("/healthz"));
  EXPECT_TRUE(again.ReadUntil("{\"ok\":true}"));
}

TEST_F(HttpServerTest, StopEndsOpenStreamsAndReturns) {
  Client c(server_->address());
  c.Send(GetRequest("/api/v1/events"));
  ASSERT_TRUE(c.ReadUntil(": connected"));
  server_->Stop();
  EXPECT_TRUE(c.ReadToEnd()) << "the connection is closed";
  Submit();  // the Lab's feed was closed: no listener runs on a stopped server
}

TEST_F(HttpServerTest, TheLabStoppingEndsTheStreamCleanly) {
  Client c(server_->address());
  c.Send(GetRequest("/api/v1/events"));
  ASSERT_TRUE(c.ReadUntil(": connected"));
  ASSERT_TRUE(Eventually([&] { return server_->event_streams() == 1; }));
  lab_->Stop();
  EXPECT_TRUE(c.ReadToEnd());
  EXPECT_TRUE(c.received().ends_with("0\r\n\r\n")) << "the last chunk ends the stream";
}

TEST_F(HttpServerTest, AnAddressInUseIsAnErrorThatSaysSo) {
  auto second = HttpServer::Start(*router_, server_->address());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("cannot listen for HTTP on " + server_->address()),
            std::string::npos)
      << second.error().message;
  EXPECT_FALSE(HttpServer::Start(*router_, "nonsense").ok());
}

// ---- abuse: slow headers, many streams, revoked tokens ----

std::string GetWithToken(const std::string& target, const std::string& token) {
  return "GET " + target + " HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer " + token + "\r\n\r\n";
}

TEST_F(HttpServerTest, AClientTricklingAHeaderIsCutOffAtTheHeaderDeadline) {
  HttpServerOptions options;
  options.header_timeout = std::chrono::milliseconds(200);  // idle_timeout stays 60 s
  Restart(options);
  Client slow(server_->address());
  slow.Send("GET /healthz HTTP/1.1\r\nHost: te");  // and nothing more
  EXPECT_TRUE(slow.ReadToEnd()) << "the server closes the connection (the client gives up at 10 s)";
  Client quick(server_->address());
  quick.Send(GetRequest("/healthz"));
  EXPECT_TRUE(quick.ReadUntil("{\"ok\":true}"));
}

TEST_F(HttpServerTest, TwoHundredEventStreamsFromOneUserAreCappedPerUser) {
  std::vector<std::unique_ptr<Client>> clients;
  int open = 0, refused = 0;
  for (int i = 0; i < 200; ++i) {
    auto c = std::make_unique<Client>(server_->address());
    ASSERT_TRUE(c->connected());
    c->Send(GetRequest("/api/v1/events"));
    ASSERT_TRUE(c->ReadUntil("\r\n\r\n")) << i;
    if (c->received().starts_with("HTTP/1.1 200 OK")) {
      ++open;
      clients.push_back(std::move(c));  // kept open
    } else {
      EXPECT_TRUE(c->received().starts_with("HTTP/1.1 429")) << c->received();
      ++refused;
    }
  }
  EXPECT_EQ(open, 16);  // max_event_streams_per_user
  EXPECT_EQ(refused, 184);
  ASSERT_TRUE(Eventually([&] { return server_->event_streams() == 16; }));
  // Another user still gets one.
  auto other = lab_->accounts().AddUser("other", "viewer");
  ASSERT_TRUE(other.ok());
  Client c(server_->address());
  c.Send(GetWithToken("/api/v1/events", other->token));
  ASSERT_TRUE(c.ReadUntil(": connected")) << c.received();
}

TEST_F(HttpServerTest, ConnectionsFromOneAddressAreCapped) {
  HttpServerOptions options;
  options.max_connections_per_address = 3;
  Restart(options);
  std::vector<std::unique_ptr<Client>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<Client>(server_->address()));
    held.back()->Send(GetRequest("/healthz"));
    ASSERT_TRUE(held.back()->ReadUntil("{\"ok\":true}"));  // open, keep-alive
  }
  Client fourth(server_->address());
  EXPECT_TRUE(fourth.ReadToEnd()) << "closed at once";
  EXPECT_TRUE(fourth.received().empty());
  held.pop_back();
  EXPECT_TRUE(Eventually([&] {
    Client again(server_->address());
    again.Send(GetRequest("/healthz"));
    return again.ReadUntil("{\"ok\":true}");
  }));
}

TEST_F(HttpServerTest, ANewConnectionThatSendsNothingIsClosedAtTheHeaderDeadline) {
  HttpServerOptions options;
  options.header_timeout = std::chrono::milliseconds(200);  // idle_timeout stays 60 s
  Restart(options);
  Client silent(server_->address());
  EXPECT_TRUE(silent.ReadToEnd()) << "closed long before the idle timeout";
  EXPECT_TRUE(silent.received().empty());
}

TEST_F(HttpServerTest, WhenOnlyTheReserveIsLeftOnlyAuthenticatedRequestsAreServed) {
  HttpServerOptions options;
  options.max_connections = 4;
  options.max_connections_per_address = 8;  // every client here is 127.0.0.1
  options.reserved_connections = 2;
  Restart(options);
  // The two general slots and the two reserved ones held by connections that send nothing.
  std::vector<std::unique_ptr<Client>> flood;
  for (int i = 0; i < 4; ++i) flood.push_back(std::make_unique<Client>(server_->address()));
  // A newcomer takes the reserved slot of the oldest unauthenticated one...
  Client anonymous(server_->address());
  anonymous.Send("GET /api/v1/boards HTTP/1.1\r\nHost: test\r\n\r\n");
  ASSERT_TRUE(anonymous.ReadUntil("\r\n\r\n"));
  EXPECT_TRUE(anonymous.received().starts_with("HTTP/1.1 503")) << anonymous.received();
  EXPECT_NE(anonymous.received().find("Retry-After: 5"), std::string::npos);
  // ...and with a token it is served, and keeps its slot for the next request.
  Client user(server_->address());
  user.Send(GetRequest("/api/v1/boards"));
  ASSERT_TRUE(user.ReadUntil("host-0")) << user.received();
  EXPECT_TRUE(flood[2]->ReadToEnd()) << "the flood's oldest reserved connection was evicted";
  Client probe(server_->address());
  probe.Send("GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n");
  EXPECT_TRUE(probe.ReadUntil("{\"ok\":true}")) << "a health probe is answered, then closed";
  EXPECT_TRUE(probe.ReadToEnd());
  EXPECT_TRUE(flood[3]->ReadToEnd()) << "the probe took the other one's slot, not the user's";
  user.Send(GetRequest("/healthz"));
  EXPECT_TRUE(user.ReadUntil("{\"ok\":true}"));
}

TEST_F(HttpServerTest, AStreamWhoseUnwrittenEventsPassTheBoundIsEnded) {
  HttpServerOptions options;
  options.max_stream_pending_bytes = 100;  // less than one job event
  Restart(options);
  Client c(server_->address());
  c.Send(GetRequest("/api/v1/events"));
  ASSERT_TRUE(c.ReadUntil(": connected\n\n"));
  ASSERT_TRUE(Eventually([&] { return server_->event_streams() == 1; }));
  Submit();
  EXPECT_TRUE(c.ReadToEnd());
  EXPECT_TRUE(c.received().ends_with("0\r\n\r\n")) << "the last chunk ends the stream";
  EXPECT_EQ(c.received().find("event: job"), std::string::npos) << "the events were dropped";
}

TEST_F(HttpServerTest, RevokingTheTokenOfAnOpenEventStreamEndsIt) {
  auto member = lab_->accounts().AddUser("mia", "member");
  ASSERT_TRUE(member.ok());
  Client c(server_->address());
  c.Send(GetWithToken("/api/v1/events", member->token));
  ASSERT_TRUE(c.ReadUntil(": connected"));
  ASSERT_TRUE(Eventually([&] { return server_->event_streams() == 1; }));
  ASSERT_TRUE(lab_->accounts().Revoke(member->token).ok());
  EXPECT_TRUE(c.ReadToEnd());
  EXPECT_TRUE(c.received().ends_with("0\r\n\r\n")) << "the last chunk ends the stream";
}

}  // namespace
}  // namespace mculab::server::http
