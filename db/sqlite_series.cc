// SqliteStore::QuerySeries: the jobs of a benchmark series (server/service/series_query.h). Kept
// apart from the rest of the store: one read, its own statement.
#include <sqlite3.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "common/lists.h"
#include "db/sqlite_store.h"

namespace mculab::db {
namespace {

struct Finalize {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using StmtPtr = std::unique_ptr<sqlite3_stmt, Finalize>;

Error SqlError(sqlite3* db, const std::string& what) {
  return MakeError(ErrorCode::kInternal, what + ": " + sqlite3_errmsg(db));
}

std::string Text(sqlite3_stmt* s, int col) {
  const unsigned char* p = sqlite3_column_text(s, col);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<std::size_t>(sqlite3_column_bytes(s, col)))
           : std::string();
}

bool HasTags(const std::string& json, const std::map<std::string, std::string>& wanted) {
  if (wanted.empty()) return true;
  auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return false;
  for (const auto& [k, v] : wanted) {
    auto it = j.find(k);
    if (it == j.end() || !it->is_string() || it->get<std::string>() != v) return false;
  }
  return true;
}

struct Match {
  JobId job = 0;
  SeriesRow row;  // everything but the job
};

}  // namespace

Result<std::vector<SeriesRow>> SqliteStore::QuerySeries(const SeriesQuery& q) {
  if (q.kind.empty() || q.op.empty() || (!q.params && !q.case_id)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "a series needs a board kind, an op and the case's parameters or id");
  }
  std::string sql =
      "SELECT j.id, j.tags, jc.case_index, jc.case_id, jc.params, cs.run_id, cs.metric, cs.unit, "
      "cs.n, cs.min, cs.median, cs.mean, cs.p90, cs.p99, cs.stddev, cs.cv, cs.max, "
      "COALESCE(a.name, '') "
      "FROM jobs j JOIN job_cases jc ON jc.job_id = j.id "
      "JOIN case_stats cs ON cs.job_id = j.id AND cs.case_index = jc.case_index "
      "AND cs.metric_index = 0 "
      "LEFT JOIN artifacts a ON j.firmware_artifact <> '' AND a.sha256 = j.firmware_artifact "
      "WHERE j.kind = ?1 AND j.op = ?2 AND j.origin = 'user'";
  if (q.params) sql += " AND jc.params = ?3";
  if (q.case_id) sql += " AND jc.case_id = ?4";
  if (!q.runner.empty()) sql += " AND a.name = ?5";
  if (!q.user.empty()) sql += " AND j.user_name = ?6";
  if (!q.label_contains.empty()) sql += " AND instr(lower(j.label), lower(?7)) > 0";
  sql += " ORDER BY j.created_ms DESC, j.id DESC, jc.case_index";

  std::vector<Match> matches;
  {
    auto read = StartRead();
    if (!read.ok()) return read.error();
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(read->db(), sql.c_str(), -1, &raw, nullptr) != SQLITE_OK) {
      return SqlError(read->db(), "preparing the series query");
    }
    StmtPtr s(raw);
    auto text = [&](int i, const std::string& v) {
      sqlite3_bind_text(raw, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    };
    text(1, q.kind);
    text(2, q.op);
    const std::string params = q.params ? JoinList(*q.params) : std::string();
    if (q.params) text(3, params);
    if (q.case_id) sqlite3_bind_int64(raw, 4, *q.case_id);
    if (!q.runner.empty()) text(5, q.runner);
    if (!q.user.empty()) text(6, q.user);
    if (!q.label_contains.empty()) text(7, q.label_contains);
    int rc;
    while ((rc = sqlite3_step(raw)) == SQLITE_ROW && matches.size() < q.limit) {
      const JobId id = sqlite3_column_int64(raw, 0);
      // One row per job: a sweep that lists the same case twice shows its first.
      if (!matches.empty() && matches.back().job == id) continue;
      if (!HasTags(Text(raw, 1), q.tags)) continue;
      Match m;
      m.job = id;
      SeriesRow& r = m.row;
      r.case_index = static_cast<std::uint32_t>(sqlite3_column_int64(raw, 2));
      r.case_id = sqlite3_column_int64(raw, 3);
      r.params = ParseIntList(Text(raw, 4)).value_or(std::vector<std::int32_t>{});
      CaseStats& st = r.stats;
      st.job_id = id;
      st.case_index = r.case_index;
      st.run_id = sqlite3_column_int64(raw, 5);
      st.metric = Text(raw, 6);
      st.unit = Text(raw, 7);
      st.n = static_cast<std::uint64_t>(sqlite3_column_int64(raw, 8));
      double* fields[] = {&st.min, &st.median, &st.mean, &st.p90,
                          &st.p99, &st.stddev, &st.cv,   &st.max};
      for (int i = 0; i < 8; ++i) *fields[i] = sqlite3_column_double(raw, 9 + i);
      r.runner_name = Text(raw, 17);
      matches.push_back(std::move(m));
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return SqlError(read->db(), "reading the series");
  }
  std::vector<SeriesRow> out;
  out.reserve(matches.size());
  for (auto it = matches.rbegin(); it != matches.rend(); ++it) {
    auto job = GetJob(it->job);
    if (!job.ok()) return job.error();
    it->row.job = std::move(*job);
    out.push_back(std::move(it->row));
  }
  return out;
}

}  // namespace mculab::db
