// Builds the configured boards: the one place that maps `backend = "..."` to a Board class.
// Thread-safety: a function; the boards it returns are as Board.
#pragma once

#include <filesystem>
#include <memory>
#include <vector>

#include "agent/boards/board.h"
#include "agent/boards/board_config.h"
#include "agent/io/clock.h"
#include "agent/io/probe_lister.h"
#include "agent/io/sandbox.h"
#include "agent/io/subprocess.h"

namespace mculab::agent {

struct BoardDeps {
  Clock& clock;
  ProbeLister& probes;              // the agent's USB probe lister (probe presence)
  ProcessRunner& runner;            // short commands the agent runs
  std::filesystem::path state_dir;  // gdb boards remember what they flashed here
  const Sandbox& sandbox;           // qemu and host boards run their runners inside it
};

Result<std::vector<std::unique_ptr<Board>>> MakeBoards(const std::vector<BoardConfig>& configs,
                                                       BoardDeps& deps);

}  // namespace mculab::agent
