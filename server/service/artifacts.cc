#include "server/service/artifacts.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

namespace mculab::server {

namespace {

// Uploaded runners and data are the users' own: directories 0700, files 0600.
void MakeOwnerOnly(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, ec);
}

}  // namespace

ArtifactStore::ArtifactStore(std::filesystem::path root, Limits limits, JobStore& store,
                             Clock& clock)
    : root_(std::move(root)), limits_(limits), store_(store), clock_(clock) {}

Status ArtifactStore::Init() {
  std::error_code ec;
  std::filesystem::create_directories(root_ / "tmp", ec);
  if (ec) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot create " + (root_ / "tmp").string() + ": " + ec.message());
  }
  MakeOwnerOnly(root_);
  MakeOwnerOnly(root_ / "tmp");
  for (const auto& entry : std::filesystem::directory_iterator(root_ / "tmp", ec)) {
    std::filesystem::remove(entry.path(), ec);
  }
  return {};
}

std::filesystem::path ArtifactStore::PathOf(const std::string& sha256) const {
  return root_ / sha256.substr(0, 2) / sha256;
}

Result<std::unique_ptr<ArtifactUpload>> ArtifactStore::Begin(const Caller& caller, std::string name,
                                                             std::uint64_t declared_size) {
  if (name.size() > 255) {
    return MakeError(ErrorCode::kInvalidArgument, "artifact name is longer than 255 characters");
  }
  if (declared_size > limits_.max_bytes) {
    return MakeError(ErrorCode::kResourceExhausted,
                     fmt::format("artifact '{}' is {}; the server accepts at most {} "
                                 "(max_artifact_bytes in the server config)",
                                 name, HumanBytes(declared_size), HumanBytes(limits_.max_bytes)));
  }
  auto usage = store_.GetArtifactUsage(caller.user);
  if (!usage.ok()) return usage.error();
  if (usage->count >= limits_.user_max_count) {
    return MakeError(ErrorCode::kResourceExhausted,
                     fmt::format("{} has {} uploaded artifacts, the most this server keeps per "
                                 "user (max_user_artifacts in the server config); unused ones are "
                                 "deleted after artifact_grace_s",
                                 caller.user, usage->count));
  }
  const std::uint64_t room =
      usage->bytes >= limits_.user_max_bytes ? 0 : limits_.user_max_bytes - usage->bytes;
  std::uint64_t limit = limits_.max_bytes;
  std::string limit_key = "max_artifact_bytes";
  if (room < limit) {
    limit = room;
    limit_key = fmt::format("max_user_artifact_bytes: {} already holds {} of {}", caller.user,
                            HumanBytes(usage->bytes), HumanBytes(limits_.user_max_bytes));
  }
  if (declared_size > limit) {
    return MakeError(
        ErrorCode::kResourceExhausted,
        fmt::format("artifact '{}' is {}; {} may upload at most {} more ({} in the "
                    "server config)",
                    name, HumanBytes(declared_size), caller.user, HumanBytes(limit), limit_key));
  }
  static std::atomic<std::uint64_t> counter{0};
  std::random_device rd;
  const std::filesystem::path temp =
      root_ / "tmp" / fmt::format("{}-{:x}.part", ++counter, static_cast<unsigned>(rd()));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  std::FILE* f = fd < 0 ? nullptr : ::fdopen(fd, "wb");
  if (f == nullptr) {
    if (fd >= 0) ::close(fd);
    return MakeError(ErrorCode::kUnavailable,
                     "cannot create " + temp.string() + ": " + std::strerror(errno));
  }
  return std::unique_ptr<ArtifactUpload>(new ArtifactUpload(
      *this, temp, f, std::move(name), caller.user, declared_size, limit, std::move(limit_key)));
}

ArtifactUpload::ArtifactUpload(ArtifactStore& owner, std::filesystem::path temp, std::FILE* file,
                               std::string name, std::string user, std::uint64_t declared_size,
                               std::uint64_t limit, std::string limit_key)
    : owner_(owner),
      temp_(std::move(temp)),
      file_(file),
      name_(std::move(name)),
      user_(std::move(user)),
      declared_size_(declared_size),
      limit_(limit),
      limit_key_(std::move(limit_key)) {}

ArtifactUpload::~ArtifactUpload() {
  if (file_ != nullptr) std::fclose(file_);
  if (!finished_) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

Error ArtifactUpload::TooLarge(std::uint64_t size) const {
  return MakeError(ErrorCode::kResourceExhausted,
                   fmt::format("artifact '{}' is larger than the {} the server accepts "
                               "({} in the server config); {} received so far",
                               name_, HumanBytes(limit_), limit_key_, HumanBytes(size)));
}

Status ArtifactUpload::Append(std::string_view bytes) {
  if (failed_ || finished_ || file_ == nullptr) {
    return MakeError(ErrorCode::kFailedPrecondition, "the upload is already over");
  }
  if (size_ + bytes.size() > limit_) {
    failed_ = true;
    return TooLarge(size_ + bytes.size());
  }
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    failed_ = true;
    return MakeError(ErrorCode::kUnavailable,
                     "cannot write " + temp_.string() + ": " + std::strerror(errno));
  }
  sha_.Update(bytes);
  size_ += bytes.size();
  return {};
}

Result<Artifact> ArtifactUpload::Finish() {
  if (failed_ || finished_ || file_ == nullptr) {
    return MakeError(ErrorCode::kFailedPrecondition, "the upload is already over");
  }
  if (declared_size_ != 0 && size_ != declared_size_) {
    failed_ = true;
    return MakeError(
        ErrorCode::kInvalidArgument,
        fmt::format("artifact '{}' announced {} bytes but sent {}", name_, declared_size_, size_));
  }
  const bool flushed = std::fflush(file_) == 0 && fsync(fileno(file_)) == 0;
  std::fclose(file_);
  file_ = nullptr;
  if (!flushed) {
    failed_ = true;
    return MakeError(ErrorCode::kUnavailable, "cannot write " + temp_.string());
  }
  Artifact a;
  a.sha256 = sha_.FinishHex();
  a.size = size_;
  a.name = name_;
  a.user = user_;
  a.created_ms = owner_.clock_.NowMs();
  const std::filesystem::path final_path = owner_.PathOf(a.sha256);
  std::error_code ec;
  std::filesystem::create_directories(final_path.parent_path(), ec);
  MakeOwnerOnly(final_path.parent_path());
  if (std::filesystem::exists(final_path, ec)) {
    std::filesystem::remove(temp_, ec);  // the same content is already stored
  } else {
    std::filesystem::rename(temp_, final_path, ec);
    if (ec) {
      failed_ = true;
      return MakeError(ErrorCode::kUnavailable,
                       "cannot store artifact at " + final_path.string() + ": " + ec.message());
    }
  }
  finished_ = true;
  WriteSet ws;
  ws.artifacts.push_back(a);
  if (Status s = owner_.store_.WriteAndWait(std::move(ws)); !s.ok()) return s.error();
  return a;
}

Result<Artifact> FindUsableArtifact(JobStore& store, const std::string& sha256,
                                    const std::string& user, std::string_view what,
                                    std::string_view upload_hint) {
  auto found = store.GetArtifact(sha256);
  if (!found.ok()) return found.error();
  if (!found->has_value()) {
    return MakeError(
        ErrorCode::kFailedPrecondition,
        fmt::format("{} artifact {} was never uploaded ({})", what, sha256, upload_hint));
  }
  const Artifact& a = **found;
  if (a.shared) return a;
  auto owner = store.IsArtifactOwner(sha256, user);
  if (!owner.ok()) return owner.error();
  if (!*owner) {
    return MakeError(ErrorCode::kPermissionDenied,
                     fmt::format("{} artifact {} was not uploaded by {}: a job may use only the "
                                 "files its submitter uploaded ({}) or that an admin shared",
                                 what, sha256, user, upload_hint));
  }
  return a;
}

Status ShareArtifact(JobStore& store, const std::string& sha256, bool shared) {
  if (!IsArtifactHash(sha256)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "artifact must be a SHA-256 in lowercase hex, got '" + sha256 + "'");
  }
  auto found = store.GetArtifact(sha256);
  if (!found.ok()) return found.error();
  if (!found->has_value()) {
    return MakeError(ErrorCode::kNotFound, "no artifact " + sha256 + " on this server");
  }
  WriteSet ws;
  ws.artifact_sharing.push_back(ArtifactSharing{sha256, shared});
  return store.WriteAndWait(std::move(ws));
}

bool IsArtifactHash(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace mculab::server
