// RunDir: the folder of one run, handed to a process the agent does not trust (a job's own runner,
// QEMU running a job's ELF), and the agent's own files beside it.
//
//   <$TMPDIR or /tmp>/<prefix>XXXXXX/     the agent's (mode 0711: others may pass, not list)
//     work/                               path(): given to the sandbox's user by the sandbox
//     (unnamed files)                     CreateCapture(): stderr and logs, never reachable by name
//
// Once the process runs, it may replace any name in work/ by a symbolic link, a hard link or a
// FIFO, and (in the sandbox's "namespaces" mode, where other runners share its user) so may
// another job's runner. So after Start() the agent never opens a name there with its own rights:
// it reads and writes through descriptors it opened before the process started, or through
// ReadFile(), which opens relative to the folder's own descriptor, follows no link and accepts
// only a plain file with one name. work/ itself cannot be renamed by the process (its parent is
// the agent's), and the tree is removed through descriptors, never by following a link.
//
// Thread-safety: one thread at a time; the descriptors it returns are the caller's.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "agent/io/fd.h"
#include "common/result.h"

namespace mculab::agent {

class RunDir {
 public:
  static Result<std::unique_ptr<RunDir>> Create(const std::string& prefix);
  ~RunDir();  // removes the whole tree
  RunDir(const RunDir&) = delete;
  RunDir& operator=(const RunDir&) = delete;

  // The run's folder (work/): bound or named on the process's command line.
  const std::filesystem::path& path() const { return work_; }

  // Creates `name` in work/ (it must not exist yet) holding `data`, and returns it open for
  // writing, so a later rewrite (Rewrite()) never goes through the name again.
  Result<UniqueFd> CreateFile(std::string_view name, std::string_view data);

  // A file with no name, outside work/ (O_TMPFILE in the agent's folder): give it to the process
  // as its stderr, read it back with ReadTail(). The process can fill it, never swap it.
  Result<UniqueFd> CreateCapture();

  // What the process left in work/`name`, at most `max_bytes` (its start): kNotFound when there is
  // none, kPermissionDenied naming the file when it is not a plain file with one name (a link, a
  // FIFO, a device), kResourceExhausted when it is larger than `max_bytes`.
  Result<std::string> ReadFile(std::string_view name, std::size_t max_bytes) const;

 private:
  RunDir(std::filesystem::path root, std::filesystem::path work, UniqueFd work_fd)
      : root_(std::move(root)), work_(std::move(work)), work_fd_(std::move(work_fd)) {}

  std::filesystem::path root_;
  std::filesystem::path work_;
  UniqueFd work_fd_;
};

// A workload's bytes as the characters CreateFile() and Rewrite() take.
inline std::string_view AsChars(std::span<const std::uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Replaces what an open file holds by `data` (from its start, then cut to that length).
Status Rewrite(int fd, std::string_view data);

// The last `max_bytes` of an open file, trimmed of trailing white space, for error messages ("" if
// empty or unreadable). Reads through the descriptor, never a path.
std::string ReadTail(int fd, std::size_t max_bytes = 1024);

// Removes `path` and everything below it without following a symbolic link anywhere (each folder
// is opened with O_NOFOLLOW and emptied through its descriptor). Errors are ignored: best effort.
void RemoveTreeNoFollow(const std::filesystem::path& path);

}  // namespace mculab::agent
