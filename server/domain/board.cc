#include "server/domain/board.h"

namespace mculab::server {

std::string_view BoardStateName(BoardState state) {
  switch (state) {
    case BoardState::kIdle:
      return "idle";
    case BoardState::kReserved:
      return "reserved";
    case BoardState::kBusy:
      return "busy";
    case BoardState::kOffline:
      return "offline";
  }
  return "unknown";
}

std::optional<BoardState> ParseBoardState(std::string_view name) {
  for (BoardState s :
       {BoardState::kIdle, BoardState::kReserved, BoardState::kBusy, BoardState::kOffline})
    if (BoardStateName(s) == name) return s;
  return std::nullopt;
}

std::string_view BoardHealthName(BoardHealth health) {
  switch (health) {
    case BoardHealth::kGood:
      return "good";
    case BoardHealth::kUnknown:
      return "unknown";
    case BoardHealth::kBad:
      return "bad";
    case BoardHealth::kMaintenance:
      return "maintenance";
  }
  return "unknown";
}

std::optional<BoardHealth> ParseBoardHealth(std::string_view name) {
  for (BoardHealth h :
       {BoardHealth::kGood, BoardHealth::kUnknown, BoardHealth::kBad, BoardHealth::kMaintenance})
    if (BoardHealthName(h) == name) return h;
  return std::nullopt;
}

bool IsSchedulable(BoardHealth health) {
  return health == BoardHealth::kGood || health == BoardHealth::kUnknown;
}

}  // namespace mculab::server
