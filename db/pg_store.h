// PgStore: the Store on a PostgreSQL database, through libpq (`--store postgresql://...`).
//
// What it shares with the SQLite store is SqlStore's (db/sql_store.h): one writer thread applying
// the queued write sets in order, many to a transaction, each under its own savepoint, callbacks
// after the commit in queue order; reads from a pool of connections that wait for the state they
// must see. Here is what is PostgreSQL's: connecting, migrations (db/migrations/postgresql/,
// numbered as SQLite's, the last one applied recorded in table mculab_schema, applied under an
// advisory lock so two servers starting together migrate once), samples by binary COPY, the
// history page and the run scan in its dialect. All SQL but a migration's script and the COPY
// runs as statements prepared once per connection (db/pg_statement.h).
//
// Implementation by file: pg_store.cc (open, migrations, close, the writer's transactions and
// samples), pg_history.cc (the history page, the run scan, the samples counter, the series'
// fragments).
//
// Durability: PostgreSQL's own (a commit returns once its WAL is flushed, with the server's
// default synchronous_commit). A password is taken from the URL, PGPASSFILE or ~/.pgpass by libpq
// and never appears in a message (RedactStoreUrl, db/lab_store.h).
// Thread-safety: as Store. Close() (or the destructor) drains the queue and joins the writer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "db/migrations.h"
#include "db/sql_store.h"

namespace mculab::db {

class PgConnection;  // a connection and its prepared statements (pg_statement.h)

// A connection to the database `url` names, without migrating it; an error that can't reach it
// says what to check and never shows a password.
Result<std::unique_ptr<PgConnection>> ConnectPostgres(const std::string& url);

struct PgOptions {
  std::vector<Migration> migrations = EmbeddedPostgresMigrations();
  std::size_t max_rows_per_transaction = 50'000;
  std::size_t max_queued_rows = 1'000'000;  // WaitForRoom() blocks past this many
  std::size_t max_read_connections = 4;
};

class PgStore final : public SqlStore<PgConnection> {
 public:
  // Connects to the database `url` names (a postgresql:// URL or libpq's key=value pairs) and
  // applies pending migrations.
  static Result<std::unique_ptr<PgStore>> Open(const std::string& url, PgOptions options = {});
  ~PgStore() override;
  PgStore(const PgStore&) = delete;
  PgStore& operator=(const PgStore&) = delete;

  void Close() override;

  Result<int> SchemaVersion() override;  // mculab_schema's version

  Status ScanSamples(RunId run, const std::function<void(std::span<const Sample>)>& chunk) override;
  Result<std::uint64_t> SamplesStored() override;
  Result<JobPage> QueryJobs(const JobQuery& query) override;

 private:
  explicit PgStore(PgOptions options);
  Status Init(const std::string& url);
  Status ApplyWriteSet(const WriteSet& ws, WriteOutcome* outcome) override;
  Result<std::unique_ptr<PgConnection>> OpenReadConnection() override;
  const char* LabelHoldsSql() const override;
  const char* JobIdInListSql() const override;
  std::string JobIdList(const std::vector<JobId>& ids) const override;

  PgOptions options_;
  std::string url_;
  std::unique_ptr<WriteQueue::Transactions> transactions_;
};

}  // namespace mculab::db
