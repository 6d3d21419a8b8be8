// HostBoard: the runner built for Linux (`mculab-runner-host <workload file>`), one child process
// per run in its own process group, its stdin/stdout the link. Its timer is CLOCK_MONOTONIC in ns:
// real time on this machine, not a microcontroller's cycles.
//
// Custom runners (a job's uploaded Linux executable) run only when the board's configuration says
// allow_custom_runners = true. The child is in its own process group, dies with the agent, may not
// dump core, and gets a fresh temp dir as its working directory, but it is NOT sandboxed: it runs
// as the agent's user with that user's files and network. Enable it only for an agent on a
// dedicated machine or container whose users you trust with a shell there.
// Thread-safety: as Board.
#pragma once

#include <filesystem>

#include "agent/boards/board.h"
#include "agent/boards/firmware_identity.h"
#include "agent/io/sandbox.h"

namespace mculab::agent {

class HostBoard final : public Board {
 public:
  // allow_custom_runners: run a job's uploaded executable (RunSpec::firmware) instead of `runner`.
  // Every runner runs inside `sandbox`.
  HostBoard(BoardInfo info, std::filesystem::path runner, bool allow_custom_runners,
            Sandbox sandbox);
  const BoardInfo& Info() const override { return info_; }
  Result<std::unique_ptr<RunnerProcess>> Start(const RunSpec& spec) override;

 private:
  BoardInfo info_;
  FirmwareFile runner_;
  Sandbox sandbox_;
};

}  // namespace mculab::agent
