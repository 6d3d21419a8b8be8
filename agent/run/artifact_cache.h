// ArtifactCache: the agent's content-addressed store of artifacts it fetched from the server
// (custom runner ELFs and executables, blobs). dir/<sha256> holds the bytes whose SHA-256 is the
// name; nothing else is ever there under that name:
//   - a fetch streams into dir/tmp/<sha>.<pid>.<n> while it is hashed, stops at the size cap, and
//     is renamed into place only when the hash matches (rename is atomic on one file system), so a
//     crash or a corrupt transfer leaves no half file under a real name;
//   - a cached file is re-hashed when its size or mtime differs from what this process verified,
//     and re-fetched when it no longer matches its name (disk corruption, someone's edit);
//   - the cache keeps at most max_total_bytes: after a fetch, the least recently used other files
//     go first. One artifact larger than max_file_bytes is refused (kResourceExhausted).
// Files are made executable (0755): a host board runs a custom runner directly.
//
// Thread-safety: Get() may be called from any thread; fetches are serialized by one lock (boards
// of one agent rarely fetch at the same time, and two fetching the same hash fetch it once).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "common/result.h"

namespace mculab::agent {

// Where the bytes come from (the server's AgentLink.FetchArtifact; a fake in tests). Fetch calls
// `sink` with consecutive chunks; a sink error stops the fetch and is returned.
class ArtifactFetcher {
 public:
  virtual ~ArtifactFetcher() = default;
  virtual Status Fetch(const std::string& sha256,
                       const std::function<Status(std::string_view chunk)>& sink) = 0;
};

struct ArtifactCacheOptions {
  std::filesystem::path dir;
  std::uint64_t max_file_bytes = 256ull << 20;  // one artifact
  std::uint64_t max_total_bytes = 2ull << 30;   // the whole cache
};

class ArtifactCache {
 public:
  ArtifactCache(ArtifactCacheOptions options, ArtifactFetcher& fetcher);

  // The verified file holding `sha256` (64 lowercase hex digits), fetched when missing or corrupt.
  // Errors: kInvalidArgument (not a hash), kNotFound (the server has no such artifact),
  // kResourceExhausted (over max_file_bytes), kDataLoss (the bytes fetched do not hash to the
  // name), kUnavailable (the server cannot be reached), kInternal (local disk).
  Result<std::filesystem::path> Get(const std::string& sha256);

  // Fetches done so far (tests: a cache hit fetches nothing).
  std::uint64_t fetches() const;

 private:
  struct Verified {
    std::uintmax_t size = 0;
    std::filesystem::file_time_type mtime{};
  };
  Result<std::filesystem::path> FetchLocked(const std::string& sha256);
  bool IsIntactLocked(const std::string& sha256, const std::filesystem::path& path);
  void EvictLocked(const std::string& keep);

  const ArtifactCacheOptions options_;
  ArtifactFetcher& fetcher_;
  mutable std::mutex mu_;
  std::map<std::string, Verified> verified_;
  std::uint64_t fetches_ = 0;
  std::uint64_t temp_counter_ = 0;
};

}  // namespace mculab::agent
