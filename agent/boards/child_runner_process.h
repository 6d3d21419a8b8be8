// ChildRunnerProcess: a RunnerProcess whose runner is a local child process (QEMU, or the host
// runner) and whose link is a pair of descriptors (a unix socket, or the child's stdin/stdout).
// Destruction closes the link, kills the process group, reaps it, then removes the run's folder.
// Nothing the process could have touched is read by path: its stderr is an unnamed file read
// through the descriptor, the emulator's counts through RunDir::ReadFile (no link followed).
// Thread-safety: as RunnerProcess.
#pragma once

#include <memory>
#include <string>

#include "agent/boards/board.h"
#include "agent/io/fd.h"
#include "agent/io/run_dir.h"
#include "agent/io/subprocess.h"

namespace mculab::agent {

class ChildRunnerProcess final : public RunnerProcess {
 public:
  // The tail of `stderr_capture` (the process's stderr; may be invalid) is shown in Diagnostics().
  ChildRunnerProcess(std::unique_ptr<RunDir> dir, std::unique_ptr<Subprocess> process,
                     UniqueFd read_fd, UniqueFd write_fd, UniqueFd stderr_capture,
                     RunProvenance provenance);
  ~ChildRunnerProcess() override;

  Result<std::size_t> Read(std::span<std::uint8_t> buf, std::chrono::milliseconds timeout) override;
  Status Write(std::span<const std::uint8_t> bytes) override;
  void Kill() override { process_->Kill(); }
  Result<ExitStatus> Wait(std::chrono::milliseconds timeout) override {
    return process_->Wait(timeout);
  }
  const RunProvenance& provenance() const override { return provenance_; }
  std::string Diagnostics() override;
  Result<RegionCounts> EmulatedCounts() override;
  // The file in the run's folder where the QEMU plugin writes its counts; EmulatedCounts() parses
  // it.
  void set_counts_file(std::string name) { counts_file_ = std::move(name); }
  bool ExitsAfterDone() const override { return exits_after_done_; }
  void set_exits_after_done(bool exits) { exits_after_done_ = exits; }

 private:
  std::unique_ptr<RunDir> dir_;  // declared first: removed last
  std::unique_ptr<Subprocess> process_;
  UniqueFd read_fd_;
  UniqueFd write_fd_;
  UniqueFd stderr_capture_;
  RunProvenance provenance_;
  std::string counts_file_;
  bool exits_after_done_ = true;
};

}  // namespace mculab::agent
