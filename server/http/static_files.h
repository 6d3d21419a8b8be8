// StaticFiles: the web page, served from one folder (docs/http-api.md "Static files"). Only files
// with a known type are served; dotfiles, node_modules/, scripts/, package*.json and any path
// with a ".." segment never are, nor anything that resolves outside the folder through a link.
// Thread-safety: const methods may be called from any thread.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace mculab::server::http {

struct StaticFile {
  std::string content_type;
  std::string body;
};

// The Content-Type of a servable file, by extension; nullopt for any other file.
std::optional<std::string_view> ContentTypeOf(const std::filesystem::path& file);

class StaticFiles {
 public:
  // An empty root serves nothing (every path is kNotFound).
  explicit StaticFiles(std::filesystem::path root);
  const std::filesystem::path& root() const { return root_; }

  // `path`: the decoded URL path ("/" is "/index.html"). kNotFound, with a message naming the
  // path, for everything that is not served.
  Result<StaticFile> Read(std::string_view path) const;

 private:
  std::filesystem::path root_;       // as given
  std::filesystem::path canonical_;  // its canonical form, for the containment check
};

// Where the page is when --web-root is not given: the source tree's web/ beside a build
// (<exe>/../../web), an installed one (<exe>/../share/mculab/web), or /usr/share/mculab/web; the
// first that holds index.html, else empty.
std::filesystem::path FindWebRoot(const std::filesystem::path& executable);

}  // namespace mculab::server::http
