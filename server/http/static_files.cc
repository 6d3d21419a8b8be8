#include "server/http/static_files.h"

#include <array>
#include <fstream>
#include <iterator>
#include <utility>

namespace mculab::server::http {
namespace {

constexpr std::uintmax_t kMaxFileBytes = 16 << 20;

// Segments under web/ that are build inputs or tooling, never the page.
constexpr std::array<std::string_view, 4> kPrivateSegments = {"node_modules", "scripts",
                                                              "package.json", "package-lock.json"};

Error NotFound(std::string_view path) {
  return MakeError(ErrorCode::kNotFound, std::string(path) + " not found");
}

bool IsInside(const std::filesystem::path& file, const std::filesystem::path& root) {
  auto f = file.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++f) {
    if (r->empty()) continue;  // a trailing separator
    if (f == file.end() || *f != *r) return false;
  }
  return f != file.end();
}

}  // namespace

std::optional<std::string_view> ContentTypeOf(const std::filesystem::path& file) {
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
  };
  const std::string ext = file.extension().string();
  for (const auto& [e, type] : kTypes) {
    if (ext == e) return type;
  }
  return std::nullopt;
}

StaticFiles::StaticFiles(std::filesystem::path root) : root_(std::move(root)) {
  if (!root_.empty()) {
    std::error_code ec;
    canonical_ = std::filesystem::canonical(root_, ec);
    if (ec) canonical_.clear();
  }
}

Result<StaticFile> StaticFiles::Read(std::string_view path) const {
  if (canonical_.empty()) {
    return MakeError(ErrorCode::kNotFound,
                     std::string(path) + " not found: this server has no web page (--web-root)");
  }
  std::string_view rel = path == "/" || path.empty() ? std::string_view("/index.html") : path;
  if (rel.find('\\') != std::string_view::npos) return NotFound(path);
  std::filesystem::path file = canonical_;
  std::size_t segments = 0;
  while (!rel.empty()) {
    const std::size_t slash = rel.find('/');
    const std::string_view seg = rel.substr(0, slash);
    rel = slash == std::string_view::npos ? std::string_view() : rel.substr(slash + 1);
    if (seg.empty()) continue;
    // ".", "..", dotfiles and dot-folders: never.
    if (seg.front() == '.') return NotFound(path);
    for (std::string_view p : kPrivateSegments) {
      if (seg == p) return NotFound(path);
    }
    file /= std::string(seg);
    ++segments;
  }
  if (segments == 0) return NotFound(path);
  auto type = ContentTypeOf(file);
  if (!type) return NotFound(path);
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(file, ec);
  if (ec || !IsInside(real, canonical_) || !std::filesystem::is_regular_file(real, ec)) {
    return NotFound(path);
  }
  const std::uintmax_t size = std::filesystem::file_size(real, ec);
  if (ec || size > kMaxFileBytes) return NotFound(path);
  std::ifstream in(real, std::ios::binary);
  if (!in) return NotFound(path);
  StaticFile out;
  out.content_type = std::string(*type);
  out.body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return out;
}

std::filesystem::path FindWebRoot(const std::filesystem::path& executable) {
  const std::filesystem::path dir = executable.parent_path();
  const std::filesystem::path candidates[] = {
      dir / ".." / ".." / "web",
      dir / ".." / "share" / "mculab" / "web",
      "/usr/share/mculab/web",
  };
  for (const auto& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c / "index.html", ec)) {
      return std::filesystem::weakly_canonical(c, ec);
    }
  }
  return {};
}

}  // namespace mculab::server::http
