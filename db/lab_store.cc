#include "db/lab_store.h"

#include "db/pg_store.h"
#include "db/sqlite_store.h"

namespace mculab::db {
namespace {

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool IsPostgresUrl(const std::string& url) {
  return StartsWith(url, "postgresql://") || StartsWith(url, "postgres://");
}

}  // namespace

std::string RedactStoreUrl(const std::string& url) {
  std::string out = url;
  if (const std::size_t scheme = url.find("://"); scheme != std::string::npos) {
    // scheme://user:PASSWORD@host...: the userinfo ends at the last '@' before the path.
    const std::size_t start = scheme + 3;
    const std::size_t path = url.find_first_of("/?", start);
    const std::size_t at = url.rfind('@', path == std::string::npos ? std::string::npos : path);
    if (at != std::string::npos && at > start) {
      const std::size_t colon = url.find(':', start);
      if (colon != std::string::npos && colon < at) {
        out = url.substr(0, colon + 1) + "***" + url.substr(at);
      }
    }
  }
  // password=... as a URL parameter or a key=value pair.
  for (std::size_t p = out.find("password="); p != std::string::npos;
       p = out.find("password=", p + 1)) {
    const std::size_t value = p + 9;
    const std::size_t end = out.find_first_of("& ", value);
    out.replace(value, (end == std::string::npos ? out.size() : end) - value, "***");
  }
  return out;
}

Result<std::unique_ptr<LabStore>> OpenStore(const std::string& url,
                                            const std::filesystem::path& home) {
  if (url.empty() || StartsWith(url, "sqlite:")) {
    const std::string path = url.empty() ? std::string("mculab.db") : url.substr(7);
    if (path.empty()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "store URL 'sqlite:' names no file: give sqlite:PATH (relative to the "
                       "home directory, or absolute)");
    }
    auto store = SqliteStore::Open(home / path);
    if (!store.ok()) return store.error();
    return std::unique_ptr<LabStore>(std::move(*store));
  }
  if (IsPostgresUrl(url)) {
    auto store = PgStore::Open(url);
    if (!store.ok()) return store.error();
    return std::unique_ptr<LabStore>(std::move(*store));
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown store '" + RedactStoreUrl(url) +
                       "': give sqlite:PATH (the default is sqlite:mculab.db in the home "
                       "directory) or postgresql://[user@]host[:port]/database");
}

}  // namespace mculab::db
