// LabStore: the store a server runs on, whichever database holds it (db/sqlite_store.h,
// db/pg_store.h): the service's Store and FollowStore, closed explicitly. OpenStore (below) opens
// the one a store URL names.
//
// Store URLs: "sqlite:PATH" (a file; PATH relative to the server's home) or
// "postgresql://[user[:password]@]host[:port]/dbname[?param=value...]" (libpq's URI; a password is
// better kept in PGPASSFILE or ~/.pgpass than in the URL). An empty URL is "sqlite:mculab.db".
// Thread-safety: as Store.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "common/result.h"
#include "server/service/alerts.h"
#include "server/service/store.h"

namespace mculab::db {

class LabStore : public server::Store, public server::FollowStore {
 public:
  // Drains the writer's queue (every queued write applied and its callback run), then closes the
  // connections: later writes and reads fail with kUnavailable. Idempotent.
  virtual void Close() = 0;

  // Diagnostics: the number of the last migration applied; transactions the writer committed.
  virtual Result<int> SchemaVersion() = 0;
  virtual std::uint64_t TransactionsCommitted() const = 0;
};

// Opens (creating if needed) the store `url` names and applies its pending migrations.
Result<std::unique_ptr<LabStore>> OpenStore(const std::string& url,
                                            const std::filesystem::path& home);

// Which database a store URL names, without opening it: a SQLite file (its path resolved against
// `home`) or a PostgreSQL database (`url` as given, libpq's). kInvalidArgument for any other URL.
struct StoreLocation {
  bool postgres = false;
  std::filesystem::path sqlite_path;
  std::string url;
};
Result<StoreLocation> LocateStore(const std::string& url, const std::filesystem::path& home);

// `url` with its password, if any (scheme://user:PASSWORD@..., password=...), replaced by "***":
// what messages and logs may show, whatever the scheme.
std::string RedactStoreUrl(const std::string& url);
// `text` (a message about `url`, libpq's own among them) with every password `url` holds replaced
// by "***".
std::string RedactPasswords(const std::string& text, const std::string& url);

}  // namespace mculab::db
