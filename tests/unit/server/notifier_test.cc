// The Notifier's queue, retries and back-off with a fake POST and a fake clock; PostJson against a
// real listening socket on 127.0.0.1 (what it sends, and each way a webhook can fail).
#include "server/service/notifier.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "fakes.h"
#include "server/http/webhook_client.h"

namespace mculab::server {
namespace {

using testing::FakeClock;
using namespace std::chrono_literals;

// Polls `done` for up to 10 s of real time (the Notifier's thread runs on its own).
template <typename F>
bool Eventually(F done) {
  for (int i = 0; i < 1000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return done();
}

struct FakePost {
  std::mutex mu;
  std::vector<std::pair<std::string, std::string>> calls;  // url, body
  int fail_first = 0;
  PostFunction Function() {
    return [this](const std::string& url, const std::string& body, std::uint32_t) -> Status {
      std::lock_guard l(mu);
      calls.emplace_back(url, body);
      if (static_cast<int>(calls.size()) <= fail_first) {
        return MakeError(ErrorCode::kUnavailable, "webhook hooks.example: HTTP 503");
      }
      return {};
    };
  }
  std::size_t count() {
    std::lock_guard l(mu);
    return calls.size();
  }
};

TEST(Notifier, BackoffDoublesFromOneSecondToAMinute) {
  EXPECT_EQ(BackoffMs(1), 1000);
  EXPECT_EQ(BackoffMs(2), 2000);
  EXPECT_EQ(BackoffMs(3), 4000);
  EXPECT_EQ(BackoffMs(6), 32000);
  EXPECT_EQ(BackoffMs(7), 60000);
  EXPECT_EQ(BackoffMs(40), 60000);
}

TEST(Notifier, AFailedPostIsRetriedAfterItsBackoffUntilItIsDelivered) {
  FakeClock clock;
  FakePost post;
  post.fail_first = 2;
  NotifyOptions o;
  o.webhooks = {"http://hooks.example/a"};
  Notifier n(o, post.Function(), clock);
  ASSERT_TRUE(n.Post(AlertBody("hello", R"({"event":"test"})")));
  ASSERT_TRUE(Eventually([&] { return n.counts().retried == 1; }));
  // Not before its back-off: 999 ms later nothing is tried.
  clock.Advance(999ms);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(post.count(), 1u);
  clock.Advance(1ms);
  ASSERT_TRUE(Eventually([&] { return n.counts().retried == 2; }));
  clock.Advance(2000ms);
  ASSERT_TRUE(Eventually([&] { return n.counts().sent == 1; }));
  EXPECT_EQ(post.count(), 3u);
  EXPECT_EQ(n.pending(), 0u);
  std::lock_guard l(post.mu);
  for (const auto& [url, body] : post.calls) {
    EXPECT_EQ(url, "http://hooks.example/a");
    const auto j = nlohmann::json::parse(body);
    EXPECT_EQ(j["text"], "hello");
    EXPECT_EQ(j["mculab"]["event"], "test");
  }
}

TEST(Notifier, AnAlertIsGivenUpAfterMaxAttemptsAndEveryWebhookGetsItsOwn) {
  FakeClock clock;
  FakePost post;
  post.fail_first = 1000;
  NotifyOptions o;
  o.webhooks = {"http://a.example/", "http://b.example/"};
  o.max_attempts = 2;
  Notifier n(o, post.Function(), clock);
  ASSERT_TRUE(n.Post("{}"));
  ASSERT_TRUE(Eventually([&] { return n.counts().retried == 2; }));
  clock.Advance(1000ms);
  ASSERT_TRUE(Eventually([&] { return n.counts().failed == 2; }));
  EXPECT_EQ(post.count(), 4u);
  EXPECT_EQ(n.counts().sent, 0u);
  EXPECT_EQ(n.pending(), 0u);
}

TEST(Notifier, WithoutWebhooksNothingIsQueuedAndAFullQueueDropsTheOldest) {
  FakeClock clock;
  Notifier none({}, nullptr, clock);
  EXPECT_FALSE(none.enabled());
  EXPECT_FALSE(none.Post("{}"));

  // A webhook that hangs until released: one alert in flight, two wait, the rest push out the
  // oldest waiting.
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> posted{0};
  std::atomic<bool> entered{false};
  NotifyOptions o;
  o.webhooks = {"http://slow.example/"};
  o.max_pending = 2;
  Notifier n(
      o,
      [&](const std::string&, const std::string&, std::uint32_t) -> Status {
        entered = true;
        released.wait();
        ++posted;
        return {};
      },
      clock);
  ASSERT_TRUE(n.Post("1"));
  ASSERT_TRUE(Eventually([&] { return entered.load(); }));  // in flight
  for (const char* body : {"2", "3", "4", "5"}) ASSERT_TRUE(n.Post(body));
  EXPECT_EQ(n.counts().dropped, 2u);
  release.set_value();
  ASSERT_TRUE(Eventually([&] { return n.counts().sent == 3; }));
  EXPECT_EQ(posted.load(), 3);
  n.Stop();
  EXPECT_FALSE(n.Post("6"));
}

// A listener on 127.0.0.1 that answers each connection with the next reply of `replies` ("" to
// close without one) and keeps what it received.
class Listener {
 public:
  explicit Listener(std::vector<std::string> replies) : replies_(std::move(replies)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 8), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~Listener() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url(const std::string& path = "/hook?x=1") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::vector<std::string> received() {
    std::lock_guard l(mu_);
    return received_;
  }

 private:
  void Serve() {
    for (const std::string& reply : replies_) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string in;
      char buf[4096];
      // Headers, then Content-Length bytes of body.
      for (;;) {
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        in.append(buf, static_cast<std::size_t>(n));
        const auto end = in.find("\r\n\r\n");
        if (end == std::string::npos) continue;
        const auto cl = in.find("Content-Length: ");
        const std::size_t want = cl == std::string::npos ? 0 : std::stoul(in.substr(cl + 16));
        if (in.size() >= end + 4 + want) break;
      }
      {
        std::lock_guard l(mu_);
        received_.push_back(in);
      }
      if (!reply.empty()) ::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
      ::close(c);
    }
  }

  std::vector<std::string> replies_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::mutex mu_;
  std::vector<std::string> received_;
  std::thread thread_;
};

TEST(PostJson, PostsTheBodyAndTakesA2xxAsSuccess) {
  Listener l({"HTTP/1.1 204 No Content\r\n\r\n"});
  const std::string body = R"({"text":"change point"})";
  ASSERT_TRUE(PostJson(l.url(), body, 5000).ok());
  const auto got = l.received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].starts_with("POST /hook?x=1 HTTP/1.1\r\n")) << got[0];
  EXPECT_NE(got[0].find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_NE(got[0].find("Host: 127.0.0.1:"), std::string::npos);
  EXPECT_TRUE(got[0].ends_with("\r\n\r\n" + body)) << got[0];
}

TEST(PostJson, EveryFailureIsAnErrorNamingTheHostAndWhatHappened) {
  Listener l({"HTTP/1.1 500 Internal Server Error\r\n\r\n", "", "SSH-2.0-OpenSSH\r\n"});
  auto s = PostJson(l.url(), "{}", 5000);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "webhook 127.0.0.1: HTTP 500 Internal Server Error");
  s = PostJson(l.url(), "{}", 5000);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "webhook 127.0.0.1: the connection closed without a reply");
  s = PostJson(l.url(), "{}", 5000);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "webhook 127.0.0.1: the reply is not HTTP");
  // Nothing listens on a port just closed.
  std::string closed;
  {
    Listener gone({});
    closed = gone.url();
  }
  s = PostJson(closed, "{}", 2000);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("cannot connect to port"), std::string::npos)
      << s.error().message;
}

TEST(PostJson, AHostThatNeverAnswersTimesOut) {
  // Accepts (the kernel's backlog) but never replies.
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 8), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const auto start = std::chrono::steady_clock::now();
  auto s = PostJson("http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/", "{}", 300);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "webhook 127.0.0.1: no reply in time");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  ::close(fd);
}

TEST(WebhookUrl, SchemesHostsPortsAndPathsAreParsedAndBadOnesRefused) {
  auto u = ParseWebhookUrl("https://hooks.slack.com/services/T0/B0/x");
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->host, "hooks.slack.com");
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->path, "/services/T0/B0/x");
  u = ParseWebhookUrl("http://[::1]:8008");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 8008);
  EXPECT_EQ(u->path, "/");
  for (const char* bad :
       {"ftp://x/", "http://", "http://h:0/", "http://h:99999/", "http://h/a b", "http://u:p@h/"}) {
    EXPECT_FALSE(ParseWebhookUrl(bad).ok()) << bad;
  }
}

TEST(Notifier, RetriesAgainstARealListenerUntilItAnswers2xx) {
  FakeClock clock;
  Listener l({"HTTP/1.1 503 Service Unavailable\r\n\r\n", "HTTP/1.1 200 OK\r\n\r\nok"});
  NotifyOptions o;
  o.webhooks = {l.url()};
  Notifier n(
      o,
      [](const std::string& url, const std::string& body, std::uint32_t timeout) {
        return PostJson(url, body, timeout);
      },
      clock);
  ASSERT_TRUE(n.Post(AlertBody("gate failed", "{}")));
  ASSERT_TRUE(Eventually([&] { return n.counts().retried == 1; }));
  clock.Advance(1000ms);
  ASSERT_TRUE(Eventually([&] { return n.counts().sent == 1; }));
  EXPECT_EQ(l.received().size(), 2u);
}

}  // namespace
}  // namespace mculab::server
