// ArtifactStore: uploaded files, content-addressed by SHA-256 (DESIGN.md §3). An upload streams
// into a temporary file under root/tmp while it is hashed; Finish() moves it to
// root/<sha[0:2]>/<sha> (or drops it when that content is already stored) and records it in the
// store. Uploads over the size limit, or over the uploader's quota (bytes and count of the
// artifacts they uploaded first), fail with kResourceExhausted naming the config key.
// Thread-safety: ArtifactStore is safe to share; one ArtifactUpload belongs to one caller.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "common/bytes_text.h"
#include "common/result.h"
#include "common/sha256.h"
#include "server/service/caller.h"
#include "server/service/clock.h"
#include "server/service/store.h"

namespace mculab::server {

class ArtifactUpload {
 public:
  ~ArtifactUpload();  // removes the temporary file unless Finish() succeeded
  ArtifactUpload(const ArtifactUpload&) = delete;
  ArtifactUpload& operator=(const ArtifactUpload&) = delete;

  Status Append(std::string_view bytes);
  // Completes the upload: the artifact's hash and size.
  Result<Artifact> Finish();

 private:
  friend class ArtifactStore;
  ArtifactUpload(class ArtifactStore& owner, std::filesystem::path temp, std::FILE* file,
                 std::string name, std::string user, std::uint64_t declared_size,
                 std::uint64_t limit, std::string limit_key);
  Error TooLarge(std::uint64_t size) const;

  ArtifactStore& owner_;
  std::filesystem::path temp_;
  std::FILE* file_;
  std::string name_;
  std::string user_;
  std::uint64_t declared_size_;
  std::uint64_t limit_;    // the most this upload may hold
  std::string limit_key_;  // the config key that sets it
  std::uint64_t size_ = 0;
  Sha256 sha_;
  bool failed_ = false;
  bool finished_ = false;
};

class ArtifactStore {
 public:
  // Per user: at most user_max_bytes in at most user_max_count artifacts.
  struct Limits {
    std::uint64_t max_bytes = 64ull << 20;
    std::uint64_t user_max_bytes = 1ull << 30;
    std::uint64_t user_max_count = 1000;
  };
  ArtifactStore(std::filesystem::path root, Limits limits, JobStore& store, Clock& clock);
  // Creates the directories and removes temporary files left by a previous run.
  Status Init();
  // declared_size: the total the client announced, 0 when unknown.
  Result<std::unique_ptr<ArtifactUpload>> Begin(const Caller& caller, std::string name,
                                                std::uint64_t declared_size);
  std::filesystem::path PathOf(const std::string& sha256) const;
  std::uint64_t max_bytes() const { return limits_.max_bytes; }

 private:
  friend class ArtifactUpload;
  const std::filesystem::path root_;
  const Limits limits_;
  JobStore& store_;
  Clock& clock_;
};

using mculab::HumanBytes;  // common/bytes_text.h: "64 MiB", "1.5 KiB", "12 bytes"

// The artifact a job of `user` references as its `what` ("firmware", "blob", "model", "cases"):
// kFailedPrecondition when no one uploaded it (`upload_hint` says which command does), and
// kPermissionDenied when `user` did not upload these bytes and no admin shared them. A hash is
// shown to every viewer in the job list, so knowing one grants nothing.
Result<Artifact> FindUsableArtifact(JobStore& store, const std::string& sha256,
                                    const std::string& user, std::string_view what,
                                    std::string_view upload_hint);

// Lets every member's jobs use the artifact (`shared`), or only its uploaders' again.
// kInvalidArgument for a malformed hash, kNotFound when it is not stored.
Status ShareArtifact(JobStore& store, const std::string& sha256, bool shared);

// Whether `s` names an artifact as the store does: its SHA-256 in 64 lowercase hex digits.
bool IsArtifactHash(const std::string& s);

}  // namespace mculab::server
