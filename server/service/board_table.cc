#include "server/service/board_table.h"

#include "server/domain/admission.h"

namespace mculab::server {

Board& BoardTable::Add(Board board) {
  if (Board* old = Find(board.name); old != nullptr && !old->holder.empty()) {
    lease_ends_.Remove(old->lease_until_ms, old->name);
  }
  const std::string name = board.name;
  Board& b = boards_.insert_or_assign(name, std::move(board)).first->second;
  if (!b.holder.empty()) lease_ends_.Add(b.lease_until_ms, name);
  return b;
}

Board& BoardTable::FindOrAdd(const std::string& name, bool* added) {
  auto [it, is_new] = boards_.try_emplace(name);
  if (is_new) {
    it->second.name = name;
    it->second.state = BoardState::kOffline;
    it->second.health = BoardHealth::kUnknown;
  }
  if (added != nullptr) *added = is_new;
  return it->second;
}

Board* BoardTable::Find(const std::string& name) {
  auto it = boards_.find(name);
  return it == boards_.end() ? nullptr : &it->second;
}

const Board* BoardTable::Find(const std::string& name) const {
  auto it = boards_.find(name);
  return it == boards_.end() ? nullptr : &it->second;
}

Error BoardTable::Unknown(const std::string& name) const {
  return MakeError(ErrorCode::kNotFound, NoBoardNamed(name, boards_));
}

void BoardTable::SetLease(Board& b, const std::string& holder, std::int64_t until_ms,
                          const std::string& note, bool hold) {
  if (!b.holder.empty()) lease_ends_.Remove(b.lease_until_ms, b.name);
  b.holder = holder;
  b.lease_until_ms = until_ms;
  b.reservation_note = note;
  b.hold = hold;
  lease_ends_.Add(until_ms, b.name);
}

void BoardTable::RenewLease(Board& b, std::int64_t until_ms) {
  lease_ends_.Remove(b.lease_until_ms, b.name);
  b.lease_until_ms = until_ms;
  lease_ends_.Add(until_ms, b.name);
}

void BoardTable::ClearLease(Board& b) {
  lease_ends_.Remove(b.lease_until_ms, b.name);
  b.holder.clear();
  b.lease_until_ms = 0;
  b.reservation_note.clear();
  b.hold = false;
}

std::int64_t BoardTable::NextLeaseEnd() const { return lease_ends_.Next(); }

std::vector<std::string> BoardTable::TakeEndedLeases(std::int64_t now_ms) {
  std::vector<std::string> ended;
  for (const auto& [until, name] : lease_ends_.TakeDue(now_ms)) {
    const Board* b = Find(name);
    if (b == nullptr || b->holder.empty() || b->lease_until_ms != until) continue;
    ended.push_back(name);
  }
  return ended;
}

std::span<const BoardSlot> BoardTable::Slots(bool health_checks) const {
  if (slots_.size() != boards_.size() || slots_health_checks_ != health_checks) {
    slots_.clear();
    slots_.reserve(boards_.size());
    for (const auto& [name, b] : boards_) slots_.push_back(SlotOf(b, health_checks));
    slots_health_checks_ = health_checks;
    return slots_;
  }
  auto slot = slots_.begin();
  for (const auto& [name, b] : boards_) {
    if (!IsSlotOf(*slot, b, health_checks)) *slot = SlotOf(b, health_checks);
    ++slot;
  }
  return slots_;
}

const std::vector<CounterUnit>& BoardTable::UnitsOf(const std::string& board) const {
  static const std::vector<CounterUnit> kNone;
  auto it = units_.find(board);
  return it == units_.end() ? kNone : it->second.units;
}

const BoardUnits* BoardTable::RegisteredUnits(const std::string& board) const {
  auto it = units_.find(board);
  return it == units_.end() ? nullptr : &it->second;
}

void BoardTable::SetUnits(BoardUnits units) {
  const std::string name = units.board;
  units_.insert_or_assign(name, std::move(units));
}

}  // namespace mculab::server
