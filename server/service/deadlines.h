// Deadlines: keys by the time they are due, earliest first, for the deadlines the Lab's
// background thread waits on (a job's timeout, a lease's end, a cancel grace period). The owner
// keeps each key's current deadline beside its object and removes the old one when it changes;
// TakeDue hands back what fell due, and the owner checks that it still applies.
//
// Not thread-safe: the Lab calls it under its lock.
#pragma once

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "server/service/clock.h"

namespace mculab::server {

template <class Key>
class Deadlines {
 public:
  // kNoDeadline is never due: adding it does nothing.
  void Add(std::int64_t at_ms, const Key& key) {
    if (at_ms != kNoDeadline) due_.insert({at_ms, key});
  }
  void Remove(std::int64_t at_ms, const Key& key) { due_.erase({at_ms, key}); }
  // The earliest deadline, kNoDeadline when none.
  std::int64_t Next() const { return due_.empty() ? kNoDeadline : due_.begin()->first; }
  // Every (deadline, key) due at or before now_ms, earliest first; they are removed.
  std::vector<std::pair<std::int64_t, Key>> TakeDue(std::int64_t now_ms) {
    std::vector<std::pair<std::int64_t, Key>> out;
    while (!due_.empty() && due_.begin()->first <= now_ms) {
      out.push_back(std::move(due_.extract(due_.begin()).value()));
    }
    return out;
  }
  bool empty() const { return due_.empty(); }

 private:
  std::set<std::pair<std::int64_t, Key>> due_;
};

}  // namespace mculab::server
