#include "agent/io/temp_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "agent/io/fd.h"

namespace mculab::agent {

Result<std::unique_ptr<TempDir>> TempDir::Create(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    return MakeError(ErrorCode::kInternal, ErrnoMessage("mkdtemp " + templ, errno));
  }
  return std::unique_ptr<TempDir>(new TempDir(buf.data()));
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

namespace {

Status WriteFd(int fd, std::string_view data, const std::string& what) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return MakeError(ErrorCode::kInternal, ErrnoMessage("write " + what, errno));
    done += static_cast<std::size_t>(n);
  }
  return {};
}

}  // namespace

Status WriteFile(const std::filesystem::path& path, std::string_view data) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    return MakeError(ErrorCode::kInternal, ErrnoMessage("open " + path.string(), errno));
  }
  return WriteFd(fd.get(), data, path.string());
}

Status WriteFileAtomically(const std::filesystem::path& path, std::string_view data, bool sync) {
  std::filesystem::path tmp = path;
  tmp += ".tmp";
  {
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid()) {
      return MakeError(ErrorCode::kInternal, ErrnoMessage("open " + tmp.string(), errno));
    }
    if (auto s = WriteFd(fd.get(), data, tmp.string()); !s) return s;
    if (sync && ::fsync(fd.get()) != 0) {
      return MakeError(ErrorCode::kInternal, ErrnoMessage("fsync " + tmp.string(), errno));
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return MakeError(ErrorCode::kInternal, ErrnoMessage("rename " + tmp.string(), errno));
  }
  return {};
}

Result<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return MakeError(errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kInternal,
                     ErrnoMessage("cannot read " + path.string(), errno));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace mculab::agent
