// BoardTable: the lab's boards by name, the ends of their leases (reservations), and the counter
// units their agents registered. The Lab decides what happens to a board (board_desk.cc,
// board_upkeep.cc); the table keeps a lease's end indexed whenever a board's holder or lease
// changes.
//
// Not thread-safe: the Lab calls it under its lock.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "server/domain/board.h"
#include "server/domain/profile.h"
#include "server/service/clock.h"
#include "server/service/deadlines.h"

namespace mculab::server {

class BoardTable {
 public:
  // Adds (or replaces) a board as stored, its lease indexed when it has a holder.
  Board& Add(Board board);
  // The board named `name`, added (offline, health unknown: trusted with nothing yet) when the
  // lab did not know it; `added` says which.
  Board& FindOrAdd(const std::string& name, bool* added = nullptr);
  // Null when the lab has no board of that name.
  Board* Find(const std::string& name);
  const Board* Find(const std::string& name) const;
  // kNotFound naming the boards the lab has.
  Error Unknown(const std::string& name) const;
  // Every board, by name.
  std::map<std::string, Board>& all() { return boards_; }
  const std::map<std::string, Board>& all() const { return boards_; }

  // Leases: the board's holder and the end of its lease; a lease ending is a deadline of the
  // background thread.
  void SetLease(Board& b, const std::string& holder, std::int64_t until_ms, const std::string& note,
                bool hold);
  void RenewLease(Board& b, std::int64_t until_ms);
  void ClearLease(Board& b);
  // The earliest lease end, kNoDeadline when no board is reserved.
  std::int64_t NextLeaseEnd() const;
  // Boards whose lease ended at or before `now_ms`, earliest first (still held: ClearLease).
  std::vector<std::string> TakeEndedLeases(std::int64_t now_ms);

  // The counter units the board's agent registered; empty when none.
  const std::vector<CounterUnit>& UnitsOf(const std::string& board) const;
  // The registered units with their flags; null when none.
  const BoardUnits* RegisteredUnits(const std::string& board) const;
  void SetUnits(BoardUnits units);
  const std::map<std::string, BoardUnits>& units() const { return units_; }

 private:
  std::map<std::string, Board> boards_;
  Deadlines<std::string> lease_ends_;        // boards by the end of their lease
  std::map<std::string, BoardUnits> units_;  // by board name
};

}  // namespace mculab::server
