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
  // The reservation: only `holder`'s jobs run here while now < lease_until_ms. A
  // `--hold` lease is short and renewed by the holder's command while it runs.
  std::string holder;  // empty: not reserved
  std::int64_t lease_until_ms = 0;
  std::string reservation_note;
  bool hold = false;
  // Health checks: consecutive failed checks, and the board's calibrated value (the health-check
  // workload's median timer value; 0 until its first passing check).
  std::uint32_t health_failures = 0;
  std::int64_t calibration = 0;
  // False while a board new to the lab waits for an admin's approval (approve_new_boards); its
  // health is maintenance meanwhile, so it takes no work.
  bool approved = true;
  // Custom runners, as the agent's last registration said (not stored: unknown until the agent
  // registers after a restart). custom_runners_off: when the board does not take them, what to
  // change; empty when the agent did not say (then only the run finds out).
  bool custom_runners = false;
  std::string custom_runners_off;
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
