// TempDir: a fresh private directory (mode 0700) removed with everything in it on destruction.
// Thread-safety: a value type.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "common/result.h"

namespace mculab::agent {

class TempDir {
 public:
  // Creates <$TMPDIR or /tmp>/<prefix>XXXXXX.
  static Result<std::unique_ptr<TempDir>> Create(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit TempDir(std::filesystem::path p) : path_(std::move(p)) {}
  std::filesystem::path path_;
};

// Writes `data` to `path` (replacing it): first to a sibling temporary file, then renamed into
// place, so a crash of this process leaves either the old or the new content. With `sync` the file
// is fsync'd before the rename, so that holds for a crash of the machine too.
Status WriteFileAtomically(const std::filesystem::path& path, std::string_view data,
                           bool sync = true);
Status WriteFile(const std::filesystem::path& path, std::string_view data);
Result<std::string> ReadFile(const std::filesystem::path& path);

}  // namespace mculab::agent
