#include "agent/boards/child_runner_process.h"

#include "agent/boards/plugin_counts.h"

namespace mculab::agent {
namespace {
// The counting plugin writes one short line per region it saw (case, iteration, operator): a long
// model run writes megabytes; a file near this is not its output.
constexpr std::size_t kMaxCountsBytes = 256u << 20;
}  // namespace

ChildRunnerProcess::ChildRunnerProcess(std::unique_ptr<RunDir> dir,
                                       std::unique_ptr<Subprocess> process, UniqueFd read_fd,
                                       UniqueFd write_fd, UniqueFd stderr_capture,
                                       RunProvenance provenance)
    : dir_(std::move(dir)),
      process_(std::move(process)),
      read_fd_(std::move(read_fd)),
      write_fd_(std::move(write_fd)),
      stderr_capture_(std::move(stderr_capture)),
      provenance_(std::move(provenance)) {}

ChildRunnerProcess::~ChildRunnerProcess() {
  read_fd_.Reset();
  write_fd_.Reset();
  process_.reset();  // kills the group and reaps
}

Result<std::size_t> ChildRunnerProcess::Read(std::span<std::uint8_t> buf,
                                             std::chrono::milliseconds timeout) {
  if (!read_fd_.valid()) return MakeError(ErrorCode::kUnavailable, "link closed");
  return ReadSome(read_fd_.get(), buf, timeout);
}

Status ChildRunnerProcess::Write(std::span<const std::uint8_t> bytes) {
  if (!write_fd_.valid()) return MakeError(ErrorCode::kUnavailable, "link closed");
  return WriteAll(write_fd_.get(), bytes, std::chrono::seconds(2));
}

std::string ChildRunnerProcess::Diagnostics() { return ReadTail(stderr_capture_.get()); }

Result<RegionCounts> ChildRunnerProcess::EmulatedCounts() {
  if (counts_file_.empty()) return RunnerProcess::EmulatedCounts();
  auto text = dir_->ReadFile(counts_file_, kMaxCountsBytes);
  if (!text) {
    return MakeError(
        text.error().code == ErrorCode::kNotFound ? ErrorCode::kUnavailable : text.error().code,
        "the emulator's counts: " + text.error().message);
  }
  return ParsePluginCounts(*text);
}

}  // namespace mculab::agent
