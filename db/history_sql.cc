#include "db/history_sql.h"

#include <cctype>

#include "db/store_rows.h"

namespace mculab::db {

using server::JobQuery;
using server::JobSortKey;

SortSql SortOf(JobSortKey key) {
  switch (key) {
    case JobSortKey::kCreated:
      return {"j.created_ms", "jobs_history_created"};
    case JobSortKey::kState:
      return {"j.state", "jobs_history_state"};
    case JobSortKey::kOp:
      return {"j.op", "jobs_history_op"};
    case JobSortKey::kUser:
      return {"j.user_name", "jobs_history_user"};
    case JobSortKey::kBoard:
      // The expression of index jobs_history_board, written identically.
      return {"(CASE WHEN j.assigned_board <> '' THEN j.assigned_board ELSE j.board END)",
              "jobs_history_board"};
    case JobSortKey::kId:
      break;
  }
  return {"j.id", "jobs_history_id"};
}

std::string ContainsPattern(const std::string& text) {
  std::string p = "%";
  for (char c : text) {
    if (c == '%' || c == '_' || c == '\\') p += '\\';
    p += c;
  }
  return p + "%";
}

JobWhere BuildJobWhere(const JobQuery& q, const LabelSql& label) {
  JobWhere w;
  w.sql = "WHERE 1 = 1";
  auto text = [&](const char* fragment, const std::string& value, int times = 1) {
    w.sql += fragment;
    for (int i = 0; i < times; ++i) w.text.push_back(value);
  };
  if (!q.user.empty()) text(" AND j.user_name = ?", q.user);
  if (!q.kind.empty()) text(" AND j.kind = ?", q.kind);
  if (!q.op.empty()) text(" AND j.op = ?", q.op);
  if (!q.board.empty()) text(" AND (j.assigned_board = ? OR j.board = ?)", q.board, 2);
  if (!q.model.empty()) text(" AND j.model_name = ?", q.model);
  if (!q.branch.empty()) text(" AND j.branch = ?", q.branch);
  if (!q.commit.empty()) {
    // A prefix: the range [commit, commit + U+10FFFF) uses no LIKE and no escaping. Commits are
    // stored in lowercase.
    std::string commit = q.commit;
    for (char& c : commit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    w.sql += " AND j.commit_sha >= ? AND j.commit_sha < ?";
    w.text.push_back(commit);
    w.text.push_back(commit + "\xf4\x8f\xbf\xbf");
  }
  if (!q.states.empty()) {
    w.sql += " AND j.state IN (";
    for (std::size_t i = 0; i < q.states.size(); ++i) {
      w.sql += i ? ", ?" : "?";
      w.text.push_back(q.states[i]);
    }
    w.sql += ")";
  }
  if (!q.label_contains.empty()) {
    if (!label.candidates_sql.empty()) {
      w.label_search = true;
      text(label.candidates_sql.c_str(), label.candidates_value);
    }
    text(label.like_sql.c_str(), label.like_value);
  }
  if (q.created_from) {
    w.sql += " AND j.created_ms >= ?";
    w.ints.push_back(*q.created_from);
  }
  if (q.created_to) {
    w.sql += " AND j.created_ms <= ?";
    w.ints.push_back(*q.created_to);
  }
  if (q.before_id != 0) {
    w.sql += " AND j.id < ?";
    w.ints.push_back(q.before_id);
  }
  return w;
}

std::string JobRowSelect() {
  const std::string cols(kJobCols);
  const std::size_t from = cols.find("FROM jobs j");
  return "SELECT " + cols.substr(0, from) +
         ", CASE WHEN r.started = 1 THEN r.emulated ELSE COALESCE((SELECT MAX(b.emulated) FROM "
         "boards b WHERE b.kind = j.kind), 0) END " +
         cols.substr(from);
}

}  // namespace mculab::db
