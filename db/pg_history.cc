// PgStore's reads in PostgreSQL's dialect: the history page, a run's samples in case order, the
// samples counter, and the series' two fragments.
#include <algorithm>

#include "db/history_sql.h"
#include "db/pg_statement.h"
#include "db/pg_store.h"
#include "db/store_rows.h"

namespace mculab::db {
namespace {

// `x` with ASCII letters lowered, as SQLite's LIKE and lower() fold case: other characters match
// as they are, whatever the database's locale.
std::string AsciiLowerSql(const std::string& x) {
  return "translate(" + x + ", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')";
}

std::string AsciiLower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

}  // namespace

Result<JobPage> PgStore::QueryJobs(const JobQuery& q) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  PgConnection& c = read->connection();
  // The total and the page from one snapshot.
  ReadTransaction snapshot(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  if (!snapshot.ok()) {
    return MakeError(ErrorCode::kUnavailable, "starting a read: " + c.LastError());
  }
  LabelSql label;
  if (!q.label_contains.empty()) {
    label.like_sql = " AND " + AsciiLowerSql("j.label") + " LIKE ? ESCAPE '\\'";
    label.like_value = ContainsPattern(AsciiLower(q.label_contains));
  }
  const JobWhere where = BuildJobWhere(q, label);
  JobPage page;
  {
    PgUse u(c.Statement("SELECT COUNT(*) FROM jobs j " + where.sql));
    BindWhere(u, where);
    auto total = FirstRow<std::uint64_t>(u, ReadCount<PgUse>,
                                         MakeError(ErrorCode::kInternal, "counting jobs: no row"));
    if (!total.ok()) return total.error();
    page.total = *total;
  }
  if (page.total <= q.offset) return page;
  const std::string dir = q.ascending ? " ASC" : " DESC";
  const std::string order =
      std::string(" ORDER BY ") + SortOf(q.sort).expression + dir + ", j.id" + dir;
  PgUse u(c.Statement(JobRowSelect() + where.sql + order + " LIMIT ? OFFSET ?"));
  BindWhere(u, where);
  u.Bind(static_cast<std::int64_t>(q.limit)).Bind(static_cast<std::int64_t>(q.offset));
  while (u.Next()) {
    auto j = ReadJob(u);
    if (!j.ok()) return j.error();
    page.jobs.push_back(JobRow{std::move(*j), u.Bool(kJobRowEmulatedCol)});
  }
  if (!u.status().ok()) return u.status().error();
  return page;
}

// Sorted by the server and read a row at a time: bounded memory whatever the run's size.
Status PgStore::ScanSamples(RunId run, const std::function<void(std::span<const Sample>)>& chunk) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  PgUse u(read->connection().Statement(kSamplesInCaseOrderSql));
  u.Bind(run);
  return HandOnSamples(u, chunk);
}

Result<std::uint64_t> PgStore::SamplesStored() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  PgUse u(read->connection().Statement("SELECT n FROM samples_stored"));
  return FirstRow<std::uint64_t>(u, ReadCount<PgUse>, std::uint64_t{0});
}

const char* PgStore::LabelHoldsSql() const {
  static const std::string kSql =
      "strpos(" + AsciiLowerSql("j.label") + ", " + AsciiLowerSql("?") + ") > 0";
  return kSql.c_str();
}

const char* PgStore::JobIdInListSql() const { return "j.id = ANY(?::bigint[])"; }

std::string PgStore::JobIdList(const std::vector<JobId>& ids) const {
  std::string list = "{";
  for (JobId id : ids) list += (list.size() > 1 ? "," : "") + std::to_string(id);
  return list + "}";
}

}  // namespace mculab::db
