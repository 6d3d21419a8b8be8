// Units a run's timer is reported in (RunStarted.timer_unit), shared by the agent that converts
// and the server that compares.
#pragma once

#include <string_view>

namespace mculab {

// An emulated board's timer: executed instructions, derived from QEMU's -icount virtual time
// (agent/boards/board.h EmulatedInstructions). The same unit on every emulated board kind, so a
// ratio across kinds is a ratio of instruction counts, never a speed-up.
inline constexpr std::string_view kInstructionsUnit = "instructions";

}  // namespace mculab
