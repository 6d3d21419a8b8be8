// The history query's fragments both stores assemble (db/sqlite_history.cc, db/pg_history.cc):
// the sort keys and the WHERE clause of a JobQuery, every value bound. db-internal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/service/store.h"

namespace mculab::db {

// A sort key's SQL and its covering index (migration 0002), ordered by (key, id).
struct SortSql {
  const char* expression;
  const char* index;
};

SortSql SortOf(server::JobSortKey key);

// LIKE pattern matching `text` anywhere, with LIKE's wildcards in `text` taken literally.
std::string ContainsPattern(const std::string& text);

// "SELECT <a job's columns (kJobCols)>, <emulated> FROM jobs j LEFT JOIN runs r ... ": a history
// row, whose emulated flag is column kJobRowEmulatedCol: its run's label once the run started,
// else whether a board of its kind is emulated.
std::string JobRowSelect();
inline constexpr int kJobRowEmulatedCol = 36;

// How a backend finds a label's substring: candidates from an index of its own (SQLite's
// trigrams; empty: none), then the LIKE that keeps the matching rules (a case-insensitive ASCII
// substring), each with its one value.
struct LabelSql {
  std::string candidates_sql;  // " AND j.id IN (... ?)", or empty
  std::string candidates_value;
  std::string like_sql;  // " AND ... LIKE ? ESCAPE '\\'"
  std::string like_value;
};

// The WHERE clause of a history query and the values to bind to it, in order.
struct JobWhere {
  bool label_search = false;  // candidates come from the label's trigram index
  std::string sql;
  std::vector<std::string> text;   // bound first, in order
  std::vector<std::int64_t> ints;  // then these
};

JobWhere BuildJobWhere(const server::JobQuery& q, const LabelSql& label);

// A read transaction (`begin`, later COMMIT) holding the statements of one read to one snapshot,
// ended on every path. C: either store's connection.
template <typename C>
class ReadTransaction {
 public:
  ReadTransaction(C& c, const char* begin) : c_(c) {
    typename C::Use u(c_.Statement(begin));
    open_ = u.Exec(begin).ok();
  }
  ~ReadTransaction() {
    if (!open_) return;
    typename C::Use u(c_.Statement("COMMIT"));
    (void)u.Exec("COMMIT");
  }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;
  bool ok() const { return open_; }

 private:
  C& c_;
  bool open_ = false;
};

template <typename U>
void BindWhere(U& u, const JobWhere& w) {
  for (const std::string& t : w.text) u.Bind(t);
  for (std::int64_t v : w.ints) u.Bind(v);
}

}  // namespace mculab::db
