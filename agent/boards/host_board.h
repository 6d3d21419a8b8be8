// HostBoard: the runner built for Linux (`mculab-runner-host <workload file>`), one child process
// per run in its own process group, its stdin/stdout the link. Its timer is CLOCK_MONOTONIC in ns:
// real time on this machine, not a microcontroller's cycles.
// Thread-safety: as Board.
#pragma once

#include <filesystem>

#include "agent/boards/board.h"
#include "agent/boards/firmware_identity.h"

namespace mculab::agent {

class HostBoard final : public Board {
 public:
  HostBoard(BoardInfo info, std::filesystem::path runner);
  const BoardInfo& Info() const override { return info_; }
  Result<std::unique_ptr<RunnerProcess>> Start(const RunSpec& spec) override;

 private:
  BoardInfo info_;
  FirmwareFile runner_;
};

}  // namespace mculab::agent
