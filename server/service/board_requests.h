// What a client asks of the boards and what it gets back (BoardDesk, board_desk.h): plain structs
// the wire layer converts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/domain/board.h"
#include "server/domain/profile.h"

namespace mculab::server {

// `mculab reserve BOARD --for 2h [--note TEXT] | --hold`.
struct ReserveRequest {
  std::string board;
  std::int64_t duration_ms = 0;  // the lease; a --hold renews it while the command runs
  std::string note;
  bool hold = false;
};

struct BoardView {
  Board board;
  std::uint32_t queue_length = 0;       // queued jobs that could run on this board
  std::uint32_t kind_queue_length = 0;  // queued jobs of this board's kind (any of its boards)
};

// What `mculab events --kind KIND` shows.
struct EventsView {
  std::vector<std::string> boards;
  bool emulated = false;
  std::string measured;  // kMeasuredEmulated, kMeasuredHost or kMeasuredSilicon (results.h)
  BoardUnits units;      // of the first matching board that registered units
  std::vector<std::string> countable;  // "cycles" first
};

}  // namespace mculab::server
