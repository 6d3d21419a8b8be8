#include "agent/io/run_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

namespace mculab::agent {
namespace {

// One path component: a name relative to the run's folder, never a path out of it.
bool PlainName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos;
}

Status WriteAllAt(int fd, std::string_view data, const std::string& what) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n =
        ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return MakeError(ErrorCode::kInternal, ErrnoMessage("write " + what, errno));
    done += static_cast<std::size_t>(n);
  }
  return {};
}

// Empties the folder open as `dir_fd` (which it closes), recursing through descriptors only.
void EmptyFolder(int dir_fd, int depth) {
  DIR* d = ::fdopendir(dir_fd);
  if (d == nullptr) {
    ::close(dir_fd);
    return;
  }
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view n = e->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  for (const auto& n : names) {
    if (::unlinkat(dir_fd, n.c_str(), 0) == 0 || errno != EISDIR) continue;
    if (depth < 64) {
      const int sub =
          ::openat(dir_fd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
      if (sub >= 0) EmptyFolder(sub, depth + 1);
    }
    ::unlinkat(dir_fd, n.c_str(), AT_REMOVEDIR);
  }
  ::closedir(d);  // closes dir_fd
}

}  // namespace

Result<std::unique_ptr<RunDir>> RunDir::Create(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  const std::string templ = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    return MakeError(ErrorCode::kInternal, ErrnoMessage("mkdtemp " + templ, errno));
  }
  const std::filesystem::path root(buf.data());
  // The sandbox's user must pass through to work/, and must not rename or list what is here.
  if (::chmod(root.c_str(), 0711) != 0 || ::mkdir((root / "work").c_str(), 0700) != 0) {
    const int err = errno;
    RemoveTreeNoFollow(root);
    return MakeError(ErrorCode::kInternal, ErrnoMessage("preparing " + root.string(), err));
  }
  UniqueFd fd(::open((root / "work").c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    const int err = errno;
    RemoveTreeNoFollow(root);
    return MakeError(ErrorCode::kInternal, ErrnoMessage("opening " + root.string(), err));
  }
  return std::unique_ptr<RunDir>(new RunDir(root, root / "work", std::move(fd)));
}

RunDir::~RunDir() {
  work_fd_.Reset();
  RemoveTreeNoFollow(root_);
}

Result<UniqueFd> RunDir::CreateFile(std::string_view name, std::string_view data) {
  if (!PlainName(name)) {
    return MakeError(ErrorCode::kInvalidArgument, "not a file name: " + std::string(name));
  }
  const std::string n(name);
  UniqueFd fd(::openat(work_fd_.get(), n.c_str(),
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    return MakeError(ErrorCode::kInternal, ErrnoMessage("creating " + (work_ / n).string(), errno));
  }
  if (auto s = WriteAllAt(fd.get(), data, (work_ / n).string()); !s) return s.error();
  return fd;
}

Result<UniqueFd> RunDir::CreateCapture() {
  UniqueFd fd(::open(root_.c_str(), O_RDWR | O_TMPFILE | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return MakeError(ErrorCode::kInternal,
                     ErrnoMessage("creating an unnamed file in " + root_.string(), errno));
  }
  return fd;
}

Result<std::string> RunDir::ReadFile(std::string_view name, std::size_t max_bytes) const {
  if (!PlainName(name)) {
    return MakeError(ErrorCode::kInvalidArgument, "not a file name: " + std::string(name));
  }
  const std::string n(name);
  const std::string shown = (work_ / n).string();
  UniqueFd fd(::openat(work_fd_.get(), n.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return MakeError(ErrorCode::kNotFound, shown + " is missing");
    if (errno == ELOOP) {
      return MakeError(ErrorCode::kPermissionDenied,
                       shown +
                           " is a symbolic link: the agent does not follow links a runner "
                           "could have made");
    }
    return MakeError(ErrorCode::kInternal, ErrnoMessage("opening " + shown, errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return MakeError(ErrorCode::kInternal, ErrnoMessage("stat " + shown, errno));
  }
  if (!S_ISREG(st.st_mode) || st.st_nlink != 1) {
    return MakeError(ErrorCode::kPermissionDenied,
                     shown +
                         " is not a plain file with one name (a hard link, a FIFO or a "
                         "device): the agent reads only files the run made");
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    return MakeError(ErrorCode::kResourceExhausted,
                     shown + " holds " + std::to_string(st.st_size) + " bytes, over the " +
                         std::to_string(max_bytes) + " the agent reads");
  }
  std::string out(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t r =
        ::pread(fd.get(), out.data() + got, out.size() - got, static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return MakeError(ErrorCode::kInternal, ErrnoMessage("reading " + shown, errno));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  out.resize(got);
  return out;
}

Status Rewrite(int fd, std::string_view data) {
  if (auto s = WriteAllAt(fd, data, "the run's file"); !s) return s;
  if (::ftruncate(fd, static_cast<off_t>(data.size())) != 0) {
    return MakeError(ErrorCode::kInternal, ErrnoMessage("truncating the run's file", errno));
  }
  return {};
}

std::string ReadTail(int fd, std::size_t max_bytes) {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return {};
  const auto size = static_cast<std::size_t>(st.st_size);
  const std::size_t from = size > max_bytes ? size - max_bytes : 0;
  std::string s(size - from, '\0');
  std::size_t got = 0;
  while (got < s.size()) {
    const ssize_t r = ::pread(fd, s.data() + got, s.size() - got, static_cast<off_t>(from + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  s.resize(got);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

void RemoveTreeNoFollow(const std::filesystem::path& path) {
  if (::unlink(path.c_str()) == 0 || errno != EISDIR) return;  // a file, a link, or nothing
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd >= 0) EmptyFolder(fd, 0);
  ::rmdir(path.c_str());
}

}  // namespace mculab::agent
