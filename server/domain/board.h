// Board: one device an agent exposes. Its scheduling state (idle, reserved, busy, offline) is kept
// apart from its health (good, unknown, bad, maintenance), as in LAVA: an infrastructure error
// makes health unknown instead of blaming the board; only idle boards that are good or unknown get
// work. Pure: standard library only. Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "server/domain/job.h"

namespace mculab::server {

enum class BoardState { kIdle, kReserved, kBusy, kOffline };
enum class BoardHealth { kGood, kUnknown, kBad, kMaintenance };

std::string_view BoardStateName(BoardState state);
std::optional<BoardState> ParseBoardState(std::string_view name);
std::string_view BoardHealthName(BoardHealth health);
std::optional<BoardHealth> ParseBoardHealth(std::string_view name);

// Health that lets the scheduler give a board work.
bool IsSchedulable(BoardHealth health);

struct Board {
  std::string name;
  std::string kind;
  std::string agent;
  std::map<std::string, std::string> tags;
  bool emulated = false;
  std::string serial;
  std::uint64_t ram_bytes = 0;
  BoardState state = BoardState::kOffline;
  BoardHealth health = BoardHealth::kGood;
  JobId current_job = 0;  // 0 when none
  std::int64_t updated_ms = 0;
};

// Audit record of a change of a board's state or health (table board_transitions).
struct BoardTransition {
  std::string board;
  std::string field;  // "state" | "health"
  std::string from;
  std::string to;
  std::string reason;
  std::string actor;
  std::int64_t time_ms = 0;
};

}  // namespace mculab::server
