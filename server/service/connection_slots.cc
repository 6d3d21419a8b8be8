#include "server/service/connection_slots.h"

#include <algorithm>

namespace mculab::server {

ConnectionSlots::ConnectionSlots(ConnectionLimits limits) : limits_(limits) {}

template <typename Pred>
std::optional<ConnectionSlots::Id> ConnectionSlots::Oldest(Slot slot, Pred evictable) const {
  for (const auto& [id, c] : connections_) {
    if (c.slot == slot && evictable(c)) return id;
  }
  return std::nullopt;
}

void ConnectionSlots::Drop(Id id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  (it->second.slot == Slot::kGeneral ? general_ : reserved_)--;
  auto a = by_address_.find(it->second.address);
  if (a != by_address_.end() && --a->second == 0) by_address_.erase(a);
  connections_.erase(it);
}

ConnectionSlots::Admission ConnectionSlots::Admit(const std::string& address, TimePoint now) {
  std::lock_guard l(mu_);
  Admission a;
  if (auto it = by_address_.find(address);
      it != by_address_.end() && it->second >= limits_.max_per_address) {
    a.refusal =
        address + " holds " + std::to_string(it->second) + " connections, the most one address may";
    return a;
  }
  const std::size_t reserve = std::min(limits_.reserved, limits_.max_connections);
  const std::size_t general = limits_.max_connections - reserve;
  auto idle = [](const Connection& c) { return c.state == State::kIdle; };
  // A proven connection waiting between requests keeps its reserved slot: the reserve is there
  // for its client.
  auto unproven = [](const Connection& c) { return !c.proven && c.state != State::kBusy; };
  if (general_ < general) {
    a.slot = Slot::kGeneral;
  } else if (auto victim = Oldest(Slot::kGeneral, idle)) {
    a.slot = Slot::kGeneral;
    a.evict.push_back(*victim);
  } else if (reserved_ < reserve) {
    a.slot = Slot::kReserved;
  } else if (auto victim = Oldest(Slot::kReserved, unproven)) {
    a.slot = Slot::kReserved;
    a.evict.push_back(*victim);
  } else {
    a.refusal = "all " + std::to_string(limits_.max_connections) +
                " connections are in use by requests or authenticated clients";
    return a;
  }
  for (Id victim : a.evict) Drop(victim);
  const Id id = next_++;
  connections_.emplace(id, Connection{address, a.slot, State::kAwaiting, false, now});
  ++by_address_[address];
  (a.slot == Slot::kGeneral ? general_ : reserved_)++;
  a.id = id;
  return a;
}

void ConnectionSlots::Busy(Id id) {
  std::lock_guard l(mu_);
  if (auto it = connections_.find(id); it != connections_.end()) it->second.state = State::kBusy;
}

void ConnectionSlots::Idle(Id id) {
  std::lock_guard l(mu_);
  if (auto it = connections_.find(id); it != connections_.end()) it->second.state = State::kIdle;
}

void ConnectionSlots::Prove(Id id) {
  std::lock_guard l(mu_);
  if (auto it = connections_.find(id); it != connections_.end()) it->second.proven = true;
}

void ConnectionSlots::Release(Id id) {
  std::lock_guard l(mu_);
  Drop(id);
}

bool ConnectionSlots::MayServe(Id id, bool authenticated) {
  std::lock_guard l(mu_);
  auto it = connections_.find(id);
  if (it == connections_.end()) return false;
  if (authenticated) it->second.proven = true;
  return it->second.slot == Slot::kGeneral || authenticated;
}

std::vector<ConnectionSlots::Id> ConnectionSlots::UnprovenSince(TimePoint deadline) const {
  std::lock_guard l(mu_);
  std::vector<Id> out;
  for (const auto& [id, c] : connections_) {
    if (!c.proven && c.admitted < deadline) out.push_back(id);
  }
  return out;
}

std::size_t ConnectionSlots::open() const {
  std::lock_guard l(mu_);
  return connections_.size();
}

}  // namespace mculab::server
