// SqliteStore reads for the web page and /metrics. The history query's SQL is assembled from fixed
// fragments (one per filter that is set, one per sort key); every value is bound. Each shape is
// prepared once per connection (a few dozen shapes in use).
#include <algorithm>
#include <cctype>

#include "db/history_sql.h"
#include "db/sql_statement.h"
#include "db/sqlite_store.h"
#include "db/store_rows.h"

namespace mculab::db {
namespace {

// The index a page is read from: in id or creation order with an op, user or single-state
// filter, that column's index ordered by (column, key, id) (migrations 0002 and 0012), so only
// matching entries are stepped over; otherwise the sort key's own.
const char* PageIndex(const JobQuery& q) {
  if (q.sort != JobSortKey::kId && q.sort != JobSortKey::kCreated) return SortOf(q.sort).index;
  const bool by_id = q.sort == JobSortKey::kId;
  if (!q.op.empty()) return by_id ? "jobs_history_op" : "jobs_history_op_created";
  if (!q.user.empty()) return by_id ? "jobs_history_user" : "jobs_history_user_created";
  if (q.states.size() == 1) return by_id ? "jobs_history_state" : "jobs_history_state_created";
  return SortOf(q.sort).index;
}

// Characters (UTF-8 code points) in `text`.
std::size_t CodePoints(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// An FTS5 query matching `text` as one phrase: with the trigram tokenizer, any label holding it.
std::string TrigramPhrase(const std::string& text) {
  std::string p = "\"";
  for (char c : text) {
    if (c == '"') p += '"';
    p += c;
  }
  return p + "\"";
}

}  // namespace

Result<JobPage> SqliteStore::QueryJobs(const JobQuery& q) {
  // Few matches: found through the label's trigram index, then sorted, instead of reading a sort
  // key's index until a page is full.
  constexpr std::uint64_t kFewMatches = 2000;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Connection& c = read->connection();
  ReadTransaction txn(c, "BEGIN");  // the total and the page from one snapshot
  if (!txn.ok()) return SqlError(c.db(), "starting a read transaction");
  // A label of three characters or more found in few jobs (counted over the distinct labels of
  // label_counts, migration 0011: probing the trigram index itself would read every trigram match
  // of a frequent label) is looked up through its trigrams.
  bool trigrams = false;
  if (CodePoints(q.label_contains) >= 3) {
    Use u(
        c.Statement("SELECT COALESCE(SUM(n), 0) FROM label_counts WHERE label LIKE ? ESCAPE '\\'"));
    u.Bind(ContainsPattern(q.label_contains));
    auto matches = FirstRow<std::uint64_t>(u, ReadCount<Use>, SqlError(c.db(), "counting labels"));
    if (!matches.ok()) return matches.error();
    trigrams = *matches <= kFewMatches;
  }
  LabelSql label;
  if (!q.label_contains.empty()) {
    if (trigrams) {
      // The trigram index (migration 0010) finds the candidates, LIKE keeps the matching rules.
      label.candidates_sql =
          " AND j.id IN (SELECT rowid FROM jobs_label_search WHERE jobs_label_search MATCH ?)";
      label.candidates_value = TrigramPhrase(q.label_contains);
    }
    label.like_sql = " AND j.label LIKE ? ESCAPE '\\'";
    label.like_value = ContainsPattern(q.label_contains);
  }
  const JobWhere where = BuildJobWhere(q, label);
  const SortSql sort = SortOf(q.sort);
  // The page's ids come from the sort key's covering index alone (read in order, filters checked
  // on its entries), then only those rows are read and joined with their runs.
  // Filters on state, op, kind, user and board alone are summed from job_counts (migrations 0011
  // and 0012), a frequent label alone from label_counts (0011); the rest are counted.
  const bool others = q.created_from || q.created_to || q.before_id != 0 || !q.model.empty() ||
                      !q.branch.empty() || !q.commit.empty();
  const bool counted = !others && q.label_contains.empty();
  const bool label_counted = !others && !q.label_contains.empty() && !trigrams && q.user.empty() &&
                             q.kind.empty() && q.op.empty() && q.states.empty() && q.board.empty();
  const std::string count_sql =
      counted         ? "SELECT COALESCE(SUM(n), 0) FROM job_counts j " + where.sql
      : label_counted ? "SELECT COALESCE(SUM(n), 0) FROM label_counts j " + where.sql
                      : "SELECT COUNT(*) FROM jobs j " + where.sql;

  JobPage page;
  {
    Use u(c.Statement(count_sql));
    BindWhere(u, where);
    auto total = FirstRow<std::uint64_t>(u, ReadCount<Use>,
                                         MakeError(ErrorCode::kInternal, "counting jobs: no row"));
    if (!total.ok()) return total.error();
    page.total = *total;
  }
  if (page.total <= q.offset) return page;  // nothing on this page: no second pass
  // A page past the middle is read from the other end: the same rows in reverse, after stepping
  // over fewer index entries (ties are broken by id in the sort's direction, so reversing the
  // order reverses the list exactly).
  std::uint64_t offset = q.offset;
  std::uint64_t limit = q.limit;
  bool ascending = q.ascending;
  const bool from_the_end = q.offset > page.total / 2;
  if (from_the_end) {
    const std::uint64_t end = std::min<std::uint64_t>(page.total, q.offset + q.limit);
    limit = end - q.offset;
    offset = page.total - end;
    ascending = !ascending;
  }
  const std::string dir = ascending ? " ASC" : " DESC";
  const std::string order = std::string(" ORDER BY ") + sort.expression + dir + ", j.id" + dir;
  // A label found in few jobs: its trigrams give their ids (or, for a label too short for
  // trigrams, the narrow label index is read once) and those few are sorted, instead of reading
  // the sort key's wide index end to end.
  const bool few_labels = !q.label_contains.empty() && page.total <= kFewMatches;
  const std::string index = few_labels && where.label_search ? std::string()
                            : few_labels                     ? " INDEXED BY jobs_label"
                                         : std::string(" INDEXED BY ") + PageIndex(q);
  const std::string page_sql = JobRowSelect() + "WHERE j.id IN (SELECT j.id FROM jobs j" + index +
                               " " + where.sql + order + " LIMIT ? OFFSET ?)" + order;
  Use u(c.Statement(page_sql));
  BindWhere(u, where);
  u.Bind(static_cast<std::int64_t>(limit)).Bind(static_cast<std::int64_t>(offset));
  while (u.Next()) {
    auto j = ReadJob(u);
    if (!j.ok()) return j.error();
    page.jobs.push_back(JobRow{std::move(*j), u.Bool(kJobRowEmulatedCol)});
  }
  if (!u.status().ok()) return u.status().error();
  if (from_the_end) std::reverse(page.jobs.begin(), page.jobs.end());
  return page;
}

Status SqliteStore::BeginBulkLoad() {
  return WriteFunction([this](Connection& w) -> Status {
    std::vector<std::pair<std::string, std::string>> found;  // (DROP statement, definition)
    {
      Use u(w.Statement(
          "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'jobs' AND sql IS NOT NULL "
          "AND (type = 'index' OR (type = 'trigger' AND name LIKE 'jobs_label_search_%'))"));
      while (u.Next()) {
        // Names come from the schema, not from input.
        found.emplace_back((u.Text(0) == "index" ? "DROP INDEX " : "DROP TRIGGER ") + u.Text(1),
                           u.Text(2));
      }
      if (!u.status().ok()) return u.status();
    }
    for (const auto& [drop, definition] : found) {
      if (Status s = ExecScript(w.db(), drop); !s.ok()) return s;
      bulk_load_ddl_.push_back(definition);
    }
    return {};
  });
}

Status SqliteStore::EndBulkLoad() {
  return WriteFunction([this](Connection& w) -> Status {
    for (const std::string& definition : bulk_load_ddl_) {
      if (Status s = ExecScript(w.db(), definition); !s.ok()) return s;
    }
    bulk_load_ddl_.clear();
    return ExecScript(w.db(), "INSERT INTO jobs_label_search(jobs_label_search) VALUES('rebuild')");
  });
}

// QuerySeries' fragments (db/sql_store_series.h): lower() is ASCII-only in SQLite; the ids as a
// JSON array.
const char* SqliteStore::LabelHoldsSql() const { return "instr(lower(j.label), lower(?)) > 0"; }

const char* SqliteStore::JobIdInListSql() const {
  return "j.id IN (SELECT value FROM json_each(?))";
}

std::string SqliteStore::JobIdList(const std::vector<JobId>& ids) const {
  std::string list = "[";
  for (JobId id : ids) list += (list.size() > 1 ? "," : "") + std::to_string(id);
  return list + "]";
}

}  // namespace mculab::db
