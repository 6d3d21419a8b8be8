// Test doubles for the Lab's seams: a clock the test moves by hand and an agent channel that
// records what the Lab sent. Both implement the product's interfaces; nothing real is subclassed.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "agent.pb.h"
#include "server/rpc/agent_wire.h"
#include "server/service/agent_channel.h"
#include "server/service/caller.h"
#include "server/service/clock.h"

namespace mculab::server::testing {

// The Lab driven as an agent's stream drives it: agent.proto's messages converted as the agent
// link service converts them (server/rpc/agent_wire.h).
inline AgentRegistration RegistrationOf(const mculab::v1::Register& reg) {
  return rpc::RegistrationFromProto(reg);
}
inline AgentEvent AgentEventOf(const mculab::v1::AgentMessage& m) {
  return rpc::EventFromProto(m, "test-agent");
}

// The caller an agent's stream has once its agent token is checked (agents are bound to a name).
inline Caller AgentCaller(const std::string& agent) {
  Caller c;
  c.user = agent;
  c.role = Role::kAgent;
  return c;
}

// Time moves only in Advance(). A thread sleeping in WaitUntil wakes when Advance passes its
// deadline (or when its condition variable is notified, as with a real clock).
class FakeClock final : public Clock {
 public:
  explicit FakeClock(std::int64_t start_ms = 1'700'000'000'000) : now_(start_ms) {}

  std::int64_t NowMs() const override { return now_.load(); }

  void WaitUntil(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                 std::int64_t deadline_ms) override {
    // Registered before the time check, so an Advance between the check and the wait still finds
    // us; Advance takes our mutex before notifying, so the notification cannot be lost.
    Register(lock.mutex(), &cv);
    if (NowMs() < deadline_ms) cv.wait(lock);
    Unregister(lock.mutex(), &cv);
  }

  void Advance(std::chrono::milliseconds by) {
    now_ += by.count();
    std::vector<std::pair<std::mutex*, std::condition_variable*>> waiters;
    {
      std::lock_guard l(mu_);
      waiters = waiters_;
    }
    for (auto [m, cv] : waiters) {
      std::lock_guard l(*m);
      cv->notify_all();
    }
  }

 private:
  void Register(std::mutex* m, std::condition_variable* cv) {
    std::lock_guard l(mu_);
    waiters_.emplace_back(m, cv);
  }
  void Unregister(std::mutex* m, std::condition_variable* cv) {
    std::lock_guard l(mu_);
    auto it = std::find(waiters_.begin(), waiters_.end(), std::make_pair(m, cv));
    if (it != waiters_.end()) waiters_.erase(it);
  }

  std::atomic<std::int64_t> now_;
  std::mutex mu_;
  std::vector<std::pair<std::mutex*, std::condition_variable*>> waiters_;
};

// Records every command as the agent receives it (agent.proto's ServerMessage, converted as the
// agent link service converts it); tests take the ones they expect, waiting for those sent from
// the store's writer thread (acknowledgements) or the Lab's background thread (timeouts).
class FakeAgentChannel final : public AgentChannel {
 public:
  using Message = mculab::v1::ServerMessage;
  using Pred = std::function<bool(const Message&)>;

  void Send(const AgentCommand& command) override {
    Message m = rpc::ToProto(command);
    {
      std::lock_guard l(mu_);
      pending_.push_back(std::move(m));
      ++sent_;
    }
    cv_.notify_all();
  }

  // Removes and returns the first message matching `pred`, waiting up to `timeout` for it.
  std::optional<Message> Take(const Pred& pred,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    std::unique_lock l(mu_);
    std::optional<Message> found;
    cv_.wait_for(l, timeout, [&] {
      auto it = std::find_if(pending_.begin(), pending_.end(), pred);
      if (it == pending_.end()) return false;
      found = *it;
      pending_.erase(it);
      return true;
    });
    return found;
  }

  // The Lab hung up on this agent (heartbeat timeout).
  void Hangup() override {
    {
      std::lock_guard l(mu_);
      hung_up_ = true;
    }
    cv_.notify_all();
  }
  bool hung_up() {
    std::lock_guard l(mu_);
    return hung_up_;
  }

  // Whether a matching message is waiting, without waiting.
  bool Has(const Pred& pred) {
    std::lock_guard l(mu_);
    return std::any_of(pending_.begin(), pending_.end(), pred);
  }
  std::size_t Count(const Pred& pred) {
    std::lock_guard l(mu_);
    return static_cast<std::size_t>(std::count_if(pending_.begin(), pending_.end(), pred));
  }

  static bool IsAssign(const Message& m) { return m.has_assign(); }
  static bool IsCancel(const Message& m) { return m.has_cancel(); }
  static bool IsRegistered(const Message& m) { return m.has_registered(); }
  static Pred AckOf(std::uint64_t run, std::uint64_t seq) {
    return [=](const Message& m) {
      return m.has_ack() && m.ack().run_id() == run && m.ack().sequence() == seq;
    };
  }
  static Pred ClosedOf(std::uint64_t run) {
    return [=](const Message& m) { return m.has_run_closed() && m.run_closed().run_id() == run; };
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Message> pending_;
  std::size_t sent_ = 0;
  bool hung_up_ = false;
};

}  // namespace mculab::server::testing
