#include "agent/run/artifact_cache.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "common/bytes_text.h"
#include "common/sha256.h"

namespace mculab::agent {
namespace fs = std::filesystem;
namespace {

bool IsHexSha(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

ArtifactCache::ArtifactCache(ArtifactCacheOptions options, ArtifactFetcher& fetcher)
    : options_(std::move(options)), fetcher_(fetcher) {}

std::uint64_t ArtifactCache::fetches() const {
  std::lock_guard l(mu_);
  return fetches_;
}

bool ArtifactCache::IsIntactLocked(const std::string& sha, const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return false;
  const auto mtime = fs::last_write_time(path, ec);
  if (ec) return false;
  auto v = verified_.find(sha);
  if (v != verified_.end() && v->second.size == size && v->second.mtime == mtime) return true;
  auto hash = Sha256File(path);
  if (!hash.ok() || *hash != sha) {
    spdlog::warn("artifact cache: {} does not hash to its name ({}); fetching it again",
                 path.string(), hash.ok() ? *hash : hash.error().message);
    verified_.erase(sha);
    fs::remove(path, ec);
    return false;
  }
  verified_[sha] = Verified{size, mtime};
  return true;
}

Result<fs::path> ArtifactCache::Get(const std::string& sha256) {
  if (!IsHexSha(sha256)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "artifact must be a SHA-256 in lowercase hex, got '" + sha256 + "'");
  }
  std::lock_guard l(mu_);
  const fs::path path = options_.dir / sha256;
  std::error_code ec;
  if (fs::exists(path, ec) && IsIntactLocked(sha256, path)) {
    fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // LRU: recently used
    if (!ec) verified_[sha256].mtime = fs::last_write_time(path, ec);
    return path;
  }
  return FetchLocked(sha256);
}

Result<fs::path> ArtifactCache::FetchLocked(const std::string& sha) {
  std::error_code ec;
  const fs::path tmp_dir = options_.dir / "tmp";
  fs::create_directories(tmp_dir, ec);
  if (ec) {
    return MakeError(ErrorCode::kInternal,
                     "cannot create the artifact cache " + tmp_dir.string() + ": " + ec.message());
  }
  const fs::path tmp =
      tmp_dir / (sha + "." + std::to_string(::getpid()) + "." + std::to_string(temp_counter_++));
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) {
    return MakeError(ErrorCode::kInternal,
                     "cannot write " + tmp.string() + ": " + std::strerror(errno));
  }
  struct Cleanup {
    const fs::path& p;
    bool keep = false;
    ~Cleanup() {
      std::error_code e;
      if (!keep) fs::remove(p, e);
    }
  } cleanup{tmp};

  ++fetches_;
  Sha256 hash;
  std::uint64_t size = 0;
  Status fetched = fetcher_.Fetch(sha, [&](std::string_view chunk) -> Status {
    size += chunk.size();
    if (size > options_.max_file_bytes) {
      return MakeError(ErrorCode::kResourceExhausted, "artifact " + sha +
                                                          " is larger than this agent's limit of " +
                                                          HumanBytes(options_.max_file_bytes) +
                                                          " per artifact (artifact_max_bytes)");
    }
    hash.Update(chunk);
    out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    if (!out) return MakeError(ErrorCode::kInternal, "cannot write " + tmp.string());
    return {};
  });
  out.close();
  if (!fetched.ok()) return fetched.error();
  if (!out) return MakeError(ErrorCode::kInternal, "cannot write " + tmp.string());
  const std::string got = hash.FinishHex();
  if (got != sha) {
    return MakeError(ErrorCode::kDataLoss, "artifact " + sha + " arrived corrupt: " +
                                               std::to_string(size) + " bytes hashing to " + got);
  }
  ::chmod(tmp.c_str(), 0755);
  const fs::path path = options_.dir / sha;
  fs::rename(tmp, path, ec);
  if (ec) {
    return MakeError(ErrorCode::kInternal,
                     "cannot move the artifact into " + path.string() + ": " + ec.message());
  }
  cleanup.keep = true;
  const auto mtime = fs::last_write_time(path, ec);
  verified_[sha] = Verified{size, mtime};
  spdlog::info("artifact cache: fetched {} ({})", sha, HumanBytes(size));
  EvictLocked(sha);
  return path;
}

void ArtifactCache::EvictLocked(const std::string& keep) {
  struct Entry {
    fs::path path;
    std::uintmax_t size;
    fs::file_time_type mtime;
  };
  std::vector<Entry> entries;
  std::uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(options_.dir, ec)) {
    if (!e.is_regular_file(ec)) continue;
    const auto size = e.file_size(ec);
    if (ec) continue;
    total += size;
    if (e.path().filename() == keep) continue;
    entries.push_back({e.path(), size, e.last_write_time(ec)});
  }
  if (total <= options_.max_total_bytes) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.mtime < b.mtime; });
  for (const Entry& e : entries) {
    if (total <= options_.max_total_bytes) break;
    if (fs::remove(e.path, ec)) {
      total -= e.size;
      verified_.erase(e.path.filename().string());
      spdlog::info("artifact cache: evicted {} ({} over the cache's limit)",
                   e.path.filename().string(), HumanBytes(total));
    }
  }
}

}  // namespace mculab::agent
