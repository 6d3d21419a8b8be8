// PgStore: connecting, migrations, closing, the writer's transactions, samples by binary COPY.
#include "db/pg_store.h"

#include <cstring>

#include "db/lab_store.h"
#include "db/pg_binary_copy.h"
#include "db/pg_statement.h"
#include "db/sql_store_impl.h"
#include "db/write_set_rows.h"

namespace mculab::db {

template class SqlStore<PgConnection>;

namespace {

// The advisory lock a server holds while it migrates ("mculab" in ASCII), so two servers starting
// on one database apply each migration once.
constexpr std::int64_t kMigrationLock = 0x6d63756c6162;

Status Run(PgConnection& c, const char* sql) { return PgUse(c.Statement(sql)).Exec(sql); }

}  // namespace

Result<std::unique_ptr<PgConnection>> ConnectPostgres(const std::string& url) {
  auto c = PgConnection::Open(url);
  if (!c.ok()) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot connect to PostgreSQL at " + RedactStoreUrl(url) + ": " +
                         RedactPasswords(c.error().message, url) +
                         " (is the server running, and does --store name its host, port and "
                         "database? A password goes in PGPASSFILE or ~/.pgpass)");
  }
  return c;
}

namespace {

Result<int> ReadSchemaVersion(PgConnection& c) {
  PgUse u(c.Statement("SELECT COALESCE(MAX(version), 0) FROM mculab_schema"));
  return FirstRow<int>(
      u, [](PgUse& row) { return static_cast<int>(row.Int(0)); }, 0);
}

// Applies the pending migrations in one transaction, under the migration lock.
Status Migrate(PgConnection& c, const std::vector<Migration>& migrations) {
  if (Status s = CheckMigrationOrder(migrations); !s.ok()) return s;
  if (Status s = Run(c, "BEGIN"); !s.ok()) return s;
  auto migrate = [&]() -> Status {
    {
      PgUse lock(c.Statement("SELECT pg_advisory_xact_lock(?)"));
      lock.Bind(kMigrationLock);
      if (Status s = lock.Exec("waiting for the migration lock"); !s.ok()) return s;
    }
    if (Status s = Run(c, "CREATE TABLE IF NOT EXISTS mculab_schema (version BIGINT NOT NULL)");
        !s.ok()) {
      return s;
    }
    auto have = ReadSchemaVersion(c);
    if (!have.ok()) return have.error();
    if (Status s = CheckNotNewer(migrations, *have, "the PostgreSQL database"); !s.ok()) return s;
    int applied = *have;
    for (const Migration& m : migrations) {
      if (m.version <= *have) continue;
      if (Status s = c.ExecScript(m.sql); !s.ok()) {
        return MakeError(ErrorCode::kInternal,
                         "applying migration " + m.name + ": " + s.error().message);
      }
      applied = m.version;
    }
    if (applied == *have) return {};
    if (Status s = Run(c, "DELETE FROM mculab_schema"); !s.ok()) return s;
    PgUse u(c.Statement("INSERT INTO mculab_schema(version) VALUES(?)"));
    u.Bind(applied);
    return u.Exec("recording the schema version");
  };
  Status s = migrate();
  if (s.ok()) s = Run(c, "COMMIT");
  if (!s.ok()) (void)Run(c, "ROLLBACK");
  return s;
}

class WriterTransactions final : public WriteQueue::Transactions {
 public:
  explicit WriterTransactions(PgConnection& w) : w_(w) {}
  Status Begin() override { return Run(w_, "BEGIN"); }
  Status Savepoint() override { return Run(w_, "SAVEPOINT write_set"); }
  void RollbackToSavepoint() override { (void)Run(w_, "ROLLBACK TO SAVEPOINT write_set"); }
  void ReleaseSavepoint() override { (void)Run(w_, "RELEASE SAVEPOINT write_set"); }
  Status Commit() override { return Run(w_, "COMMIT"); }
  void Rollback() override { (void)Run(w_, "ROLLBACK"); }

 private:
  PgConnection& w_;
};

const char* const kCopySamples =
    "COPY samples(run_id, pass, case_index, iteration, metric, value) FROM STDIN (FORMAT binary)";

Status CopySamples(PgConnection& w, const SampleBatch& b) {
  if (b.samples.empty()) return {};
  PgBinaryCopy copy;
  for (const Sample& s : b.samples) {
    copy.Row(6);
    copy.Int8(b.run_id);
    copy.Int8(s.pass);
    copy.Int8(s.case_index);
    copy.Int8(s.iteration);
    copy.Int8(s.metric);
    copy.Int8(s.value);
  }
  if (Status s = w.CopyIn(kCopySamples, copy.Finish()); !s.ok()) return s;
  PgUse u(w.Statement("UPDATE samples_stored SET n = n + ?"));
  u.Bind(static_cast<std::uint64_t>(b.samples.size()));
  return u.Exec("counting samples");
}

}  // namespace

PgStore::PgStore(PgOptions options)
    : SqlStore({options.max_rows_per_transaction, options.max_queued_rows,
                options.max_read_connections}),
      options_(std::move(options)) {}

Result<std::unique_ptr<PgStore>> PgStore::Open(const std::string& url, PgOptions options) {
  std::unique_ptr<PgStore> store(new PgStore(std::move(options)));
  if (Status s = store->Init(url); !s.ok()) return s.error();
  return store;
}

Status PgStore::Init(const std::string& url) {
  auto w = ConnectPostgres(url);
  if (!w.ok()) return w.error();
  w_ = std::move(*w);
  if (Status s = Migrate(*w_, options_.migrations); !s.ok()) return s;
  url_ = url;
  auto r = OpenReadConnection();
  if (!r.ok()) return r.error();
  transactions_ = std::make_unique<WriterTransactions>(*w_);
  StartStore(*transactions_, std::move(*r));
  return {};
}

PgStore::~PgStore() { Close(); }

void PgStore::Close() { CloseStore(); }

Result<std::unique_ptr<PgConnection>> PgStore::OpenReadConnection() {
  return ConnectPostgres(url_);
}

Status PgStore::ApplyWriteSet(const WriteSet& ws, WriteOutcome* outcome) {
  PgConnection& w = *w_;
  return ApplyWriteSetRows(w, ws, outcome,
                           [&w](const SampleBatch& b) { return CopySamples(w, b); });
}

Result<int> PgStore::SchemaVersion() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  return ReadSchemaVersion(read->connection());
}

}  // namespace mculab::db
