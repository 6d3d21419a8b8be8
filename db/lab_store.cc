#include "db/lab_store.h"

#include <cctype>
#include <vector>

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

std::string RedactPasswords(const std::string& text, const std::string& url) {
  // The passwords `url` holds: scheme://user:PASSWORD@host... (the userinfo ends at the last '@'
  // before the path) and password=... (a URL parameter or a key=value pair), each as written and
  // as libpq decodes it (%XX).
  std::vector<std::string> secrets;
  if (const std::size_t scheme = url.find("://"); scheme != std::string::npos) {
    const std::size_t start = scheme + 3;
    const std::size_t path = url.find_first_of("/?", start);
    const std::size_t at = url.rfind('@', path);
    const std::size_t colon = url.find(':', start);
    if (at != std::string::npos && at > start && colon < at) {
      secrets.push_back(url.substr(colon + 1, at - colon - 1));
    }
  }
  for (std::size_t p = url.find("password="); p != std::string::npos;
       p = url.find("password=", p + 1)) {
    const std::size_t end = url.find_first_of("& ", p + 9);
    secrets.push_back(url.substr(p + 9, end == std::string::npos ? end : end - p - 9));
  }
  for (std::size_t i = 0, n = secrets.size(); i < n; ++i) {
    std::string decoded;
    for (std::size_t k = 0; k < secrets[i].size(); ++k) {
      const std::string& v = secrets[i];
      if (v[k] == '%' && k + 2 < v.size() && std::isxdigit(static_cast<unsigned char>(v[k + 1])) &&
          std::isxdigit(static_cast<unsigned char>(v[k + 2]))) {
        decoded += static_cast<char>(std::stoi(v.substr(k + 1, 2), nullptr, 16));
        k += 2;
      } else {
        decoded += v[k];
      }
    }
    secrets.push_back(decoded);
  }
  std::string out = text;
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (std::size_t p = out.find(secret); p != std::string::npos; p = out.find(secret, p + 3)) {
      out.replace(p, secret.size(), "***");
    }
  }
  return out;
}

std::string RedactStoreUrl(const std::string& url) { return RedactPasswords(url, url); }

Result<StoreLocation> LocateStore(const std::string& url, const std::filesystem::path& home) {
  if (url.empty() || StartsWith(url, "sqlite:")) {
    const std::string path = url.empty() ? std::string("mculab.db") : url.substr(7);
    if (path.empty()) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "store URL 'sqlite:' names no file: give sqlite:PATH (relative to the "
                       "home directory, or absolute)");
    }
    return StoreLocation{false, home / path, url};
  }
  if (IsPostgresUrl(url)) return StoreLocation{true, {}, url};
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown store '" + RedactStoreUrl(url) +
                       "': give sqlite:PATH (the default is sqlite:mculab.db in the home "
                       "directory) or postgresql://[user@]host[:port]/database");
}

Result<std::unique_ptr<LabStore>> OpenStore(const std::string& url,
                                            const std::filesystem::path& home) {
  auto where = LocateStore(url, home);
  if (!where.ok()) return where.error();
  if (!where->postgres) {
    auto store = SqliteStore::Open(where->sqlite_path);
    if (!store.ok()) return store.error();
    return std::unique_ptr<LabStore>(std::move(*store));
  }
  auto store = PgStore::Open(url);
  if (!store.ok()) return store.error();
  return std::unique_ptr<LabStore>(std::move(*store));
}

}  // namespace mculab::db
