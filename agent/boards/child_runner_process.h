// ChildRunnerProcess: a RunnerProcess whose runner is a local child process (QEMU, or the host
// runner) and whose link is a pair of descriptors (a unix socket, or the child's stdin/stdout).
// Destruction closes the link, kills the process group, reaps it, then removes the run's temp dir.
// Thread-safety: as RunnerProcess.
#pragma once

#include <filesystem>
#include <memory>

#include "agent/boards/board.h"
#include "agent/io/fd.h"
#include "agent/io/subprocess.h"
#include "agent/io/temp_dir.h"

namespace mculab::agent {

class ChildRunnerProcess final : public RunnerProcess {
 public:
  // `stderr_file` (may be empty) is shown in Diagnostics().
  ChildRunnerProcess(std::unique_ptr<TempDir> dir, std::unique_ptr<Subprocess> process,
                     UniqueFd read_fd, UniqueFd write_fd, std::filesystem::path stderr_file,
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
  // Where the QEMU plugin writes its counts (inside the run's temp dir); EmulatedCounts() parses
  // that file.
  void set_counts_file(std::filesystem::path path) { counts_file_ = std::move(path); }
  bool ExitsAfterDone() const override { return exits_after_done_; }
  void set_exits_after_done(bool exits) { exits_after_done_ = exits; }

 private:
  std::unique_ptr<TempDir> dir_;  // declared first: removed last
  std::unique_ptr<Subprocess> process_;
  UniqueFd read_fd_;
  UniqueFd write_fd_;
  std::filesystem::path stderr_file_;
  RunProvenance provenance_;
  std::filesystem::path counts_file_;
  bool exits_after_done_ = true;
};

// The last `max_bytes` of a text file, trimmed, for error messages ("" if absent or empty).
std::string FileTail(const std::filesystem::path& path, std::size_t max_bytes = 1024);

}  // namespace mculab::agent
