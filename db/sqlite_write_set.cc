// SqliteStore: applying one write set in the writer's transaction (db/write_set_rows.h), its
// samples by multi-row INSERT.
#include "db/sql_statement.h"
#include "db/sql_util.h"
#include "db/sqlite_store.h"
#include "db/write_set_rows.h"

namespace mculab::db {
namespace {

// Rows per multi-row sample INSERT (6 parameters each, well under SQLite's parameter limit of
// 32,766): the fastest size in store_ingest_bench's BM_RawSqliteInsert (64: 0.75 of it).
constexpr int kSamplesPerInsert = 256;

std::string MultiSampleInsert(int rows) {
  std::string sql =
      "INSERT INTO samples(run_id, pass, case_index, iteration, metric, value) VALUES ";
  for (int i = 0; i < rows; ++i) sql += i ? ",(?,?,?,?,?,?)" : "(?,?,?,?,?,?)";
  return sql;
}

const std::string kInsertSamplesMulti = MultiSampleInsert(kSamplesPerInsert);
const std::string kInsertSample =
    "INSERT INTO samples(run_id, pass, case_index, iteration, metric, value) "
    "VALUES(?,?,?,?,?,?)";

}  // namespace

Status SqliteStore::ApplyWriteSet(const WriteSet& ws, WriteOutcome* outcome) {
  Connection& w = *w_;
  return ApplyWriteSetRows(w, ws, outcome, [&w](const SampleBatch& b) -> Status {
    const std::size_t n = b.samples.size();
    std::size_t i = 0;
    for (; i + kSamplesPerInsert <= n; i += kSamplesPerInsert) {
      Use u(w.Statement(kInsertSamplesMulti));
      for (std::size_t k = i; k < i + kSamplesPerInsert; ++k) {
        const Sample& s = b.samples[k];
        u.Bind(b.run_id).Bind(s.pass).Bind(s.case_index).Bind(s.iteration).Bind(s.metric);
        u.Bind(s.value);
      }
      if (Status s = u.Exec("storing samples"); !s.ok()) return s;
    }
    for (; i < n; ++i) {
      const Sample& s = b.samples[i];
      Use u(w.Statement(kInsertSample));
      u.Bind(b.run_id).Bind(s.pass).Bind(s.case_index).Bind(s.iteration).Bind(s.metric);
      u.Bind(s.value);
      if (Status st = u.Exec("storing sample"); !st.ok()) return st;
    }
    return {};
  });
}

}  // namespace mculab::db
