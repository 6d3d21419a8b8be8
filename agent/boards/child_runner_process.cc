#include "agent/boards/child_runner_process.h"

#include <fstream>
#include <sstream>

#include "agent/boards/plugin_counts.h"

namespace mculab::agent {

ChildRunnerProcess::ChildRunnerProcess(std::unique_ptr<TempDir> dir,
                                       std::unique_ptr<Subprocess> process, UniqueFd read_fd,
                                       UniqueFd write_fd, std::filesystem::path stderr_file,
                                       RunProvenance provenance)
    : dir_(std::move(dir)),
      process_(std::move(process)),
      read_fd_(std::move(read_fd)),
      write_fd_(std::move(write_fd)),
      stderr_file_(std::move(stderr_file)),
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

std::string ChildRunnerProcess::Diagnostics() {
  if (stderr_file_.empty()) return {};
  return FileTail(stderr_file_);
}

std::string FileTail(const std::filesystem::path& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const auto size = static_cast<std::size_t>(in.tellg());
  const std::size_t from = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(from));
  std::string s(size - from, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

Result<RegionCounts> ChildRunnerProcess::EmulatedCounts() {
  if (counts_file_.empty()) return RunnerProcess::EmulatedCounts();
  std::ifstream in(counts_file_, std::ios::binary);
  if (!in) {
    return MakeError(ErrorCode::kUnavailable,
                     "the emulator wrote no counts (" + counts_file_.string() + " is missing)");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParsePluginCounts(ss.str());
}

}  // namespace mculab::agent
