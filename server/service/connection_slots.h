// ConnectionSlots: who may hold one of an endpoint's connection slots, decided before anything
// about the client is known. Both network endpoints (HTTP and gRPC) keep one.
//
// A connection is admitted into a general slot while there are some, else into a slot of the
// reserve. A reserved connection must prove itself (a request with a valid token) before it is
// served; until then it is the first to be evicted. So a flood of connections that never
// authenticate (idle sockets, a trickled header, HTTP/2 prefaces) can fill the general slots and
// churn through the reserve, but an authenticated client always gets in: its connection is
// admitted by evicting the oldest unproven reserved one, and it proves itself within a round
// trip. A general connection between requests (keep-alive) holds nothing the client cannot
// reopen, so it is evicted before a newcomer is turned away; a connection that is mid-request,
// or proven and in the reserve, is never evicted. Every address may hold at most
// `max_per_address` slots in all.
//
// The owner closes the connections Admit names in `evict` and calls Release for every admitted
// connection when it ends (evicted ones included). Times are the caller's (steady clock).
// Thread-safety: every member may be called from any thread (one mutex).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace mculab::server {

struct ConnectionLimits {
  std::size_t max_connections = 512;
  std::size_t max_per_address = 64;
  // Slots of max_connections that only a proven connection may keep.
  std::size_t reserved = 64;
};

class ConnectionSlots {
 public:
  using Id = std::uint64_t;
  using TimePoint = std::chrono::steady_clock::time_point;
  enum class Slot { kGeneral, kReserved };

  struct Admission {
    std::optional<Id> id;  // empty: refused
    Slot slot = Slot::kGeneral;
    std::vector<Id> evict;  // to close now (their slots are already reused)
    std::string refusal;    // why, when refused (for a log line)
  };

  explicit ConnectionSlots(ConnectionLimits limits);

  Admission Admit(const std::string& address, TimePoint now);
  // The connection has a request in hand and is waiting for its answer or streaming.
  void Busy(Id id);
  // The connection waits for its client's next request (keep-alive): evictable.
  void Idle(Id id);
  // The connection's client authenticated: it keeps its slot, reserved or not.
  void Prove(Id id);
  void Release(Id id);

  // Whether a request on this connection may be served: always on a general slot; on a reserved
  // one only when it is authenticated (`authenticated` also proves the connection).
  bool MayServe(Id id, bool authenticated);
  // Unproven connections admitted before `deadline` (a transport that cannot time out
  // unauthenticated connections by itself closes these).
  std::vector<Id> UnprovenSince(TimePoint deadline) const;

  std::size_t open() const;
  const ConnectionLimits& limits() const { return limits_; }

 private:
  enum class State { kAwaiting, kBusy, kIdle };
  struct Connection {
    std::string address;
    Slot slot;
    State state = State::kAwaiting;
    bool proven = false;
    TimePoint admitted;
  };
  // The oldest connection (ids grow with age) in `slot` that `evictable` accepts.
  template <typename Pred>
  std::optional<Id> Oldest(Slot slot, Pred evictable) const;
  void Drop(Id id);

  const ConnectionLimits limits_;
  mutable std::mutex mu_;
  std::map<Id, Connection> connections_;
  std::map<std::string, std::size_t> by_address_;
  std::size_t general_ = 0;
  std::size_t reserved_ = 0;
  Id next_ = 1;
};

}  // namespace mculab::server
