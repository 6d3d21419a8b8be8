// HostBoard: the runner built for Linux (`mculab-runner-host <workload file>`), one child process
// per run in its own process group, its stdin/stdout the link. Its timer is CLOCK_MONOTONIC in ns:
// real time on this machine, not a microcontroller's cycles.
//
// Custom runners (a job's uploaded Linux executable) run only when the board's configuration says
// allow_custom_runners = true. The child is in its own process group, dies with the agent, may not
// dump core, and gets a fresh temp dir as its working directory, but it is NOT sandboxed: it runs
// as the agent's user with that user's files and network. Enable it only for an agent on a
// dedicated machine or container whose users you trust with a shell there.
//
// Prepare() starts the next run's runner ahead of its job: the run's folder, the sandbox and a
// shell in it waiting for one line on the link; Start() writes the workload into that folder and
// sends the line, and the shell execs the runner (same program, same arguments, same sandbox as a
// cold start). A custom runner, or a prepared runner that died meanwhile, starts cold.
// Thread-safety: as Board; Prepare() and Start() on the board's worker thread.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <string_view>

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
  ~HostBoard() override;  // stops the runner prepared ahead, if any
  const BoardInfo& Info() const override { return info_; }
  Result<std::unique_ptr<RunnerProcess>> Start(const RunSpec& spec) override;
  void Prepare() override;

  // How many runs started from a prepared runner (tests).
  std::uint64_t prepared_starts() const { return prepared_starts_.load(); }

 private:
  struct Launch;  // a started runner, or one waiting for its workload
  // A runner in a new folder holding `workload`; `waiting`: behind the shell that waits.
  Result<std::unique_ptr<Launch>> Spawn(const std::filesystem::path& program, bool waiting,
                                        std::string_view workload);

  BoardInfo info_;
  FirmwareFile runner_;
  Sandbox sandbox_;
  std::unique_ptr<Launch> prepared_;
  std::atomic<std::uint64_t> prepared_starts_{0};
};

}  // namespace mculab::agent
