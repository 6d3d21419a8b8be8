// SqlStore<C>::QuerySeries: the jobs of a benchmark series (server/service/series_query.h). One
// read over jobs, their cases and statistics, and the runner's artifact, then one read of the
// matching jobs' rows; the backend gives the two fragments its dialect writes differently (a
// label's substring, a list of ids). A member definition of db/sql_store.h, included only where
// SqlStore is instantiated (db/sqlite_store.cc, db/pg_store.cc). db-internal.
#pragma once

#include <algorithm>
#include <map>

#include "db/sql_store.h"
#include "db/sql_util.h"
#include "db/store_rows.h"

namespace mculab::db {
namespace series_sql {

inline bool HasTags(const std::string& json, const std::map<std::string, std::string>& wanted) {
  if (wanted.empty()) return true;
  const std::map<std::string, std::string> tags = TagsFromJson(json);
  return std::all_of(wanted.begin(), wanted.end(), [&](const auto& tag) {
    auto it = tags.find(tag.first);
    return it != tags.end() && it->second == tag.second;
  });
}

struct Match {
  server::JobId job = 0;
  server::SeriesRow row;  // everything but the job
};

}  // namespace series_sql

template <typename C>
Result<std::vector<SeriesRow>> SqlStore<C>::QuerySeries(const SeriesQuery& q) {
  using Use = typename C::Use;
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
      "WHERE j.kind = ? AND j.op = ? AND j.origin = 'user'";
  // The filters that are set, in the order their values are bound.
  const std::string params = q.params ? JoinInts(*q.params) : std::string();
  if (q.params) sql += " AND jc.params = ?";
  if (q.case_id) sql += " AND jc.case_id = ?";
  if (!q.runner.empty()) sql += " AND a.name = ?";
  if (!q.model.empty()) sql += " AND j.model_name = ?";
  if (!q.user.empty()) sql += " AND j.user_name = ?";
  if (!q.label_contains.empty()) sql += std::string(" AND ") + LabelHoldsSql();
  sql += " ORDER BY j.created_ms DESC, j.id DESC, jc.case_index";

  std::vector<series_sql::Match> matches;
  std::map<JobId, Job> jobs;
  {
    auto read = StartRead();
    if (!read.ok()) return read.error();
    Use u(read->connection().Statement(sql));
    u.Bind(q.kind).Bind(q.op);
    if (q.params) u.Bind(params);
    if (q.case_id) u.Bind(*q.case_id);
    if (!q.runner.empty()) u.Bind(q.runner);
    if (!q.model.empty()) u.Bind(q.model);
    if (!q.user.empty()) u.Bind(q.user);
    if (!q.label_contains.empty()) u.Bind(q.label_contains);
    while (matches.size() < q.limit && u.Next()) {
      const JobId id = u.Int(0);
      // One row per job: a sweep that lists the same case twice shows its first.
      if (!matches.empty() && matches.back().job == id) continue;
      if (!series_sql::HasTags(u.Text(1), q.tags)) continue;
      series_sql::Match m;
      m.job = id;
      SeriesRow& r = m.row;
      r.case_index = u.U32(2);
      r.case_id = u.Int(3);
      r.params = SplitInts(u.Text(4));
      CaseStats& st = r.stats;
      st.job_id = id;
      st.case_index = r.case_index;
      st.run_id = u.Int(5);
      st.metric = u.Text(6);
      st.unit = u.Text(7);
      st.n = u.UInt(8);
      double* fields[] = {&st.min, &st.median, &st.mean, &st.p90,
                          &st.p99, &st.stddev, &st.cv,   &st.max};
      for (int i = 0; i < 8; ++i) *fields[i] = u.Real(9 + i);
      r.runner_name = u.Text(17);
      matches.push_back(std::move(m));
    }
    if (!u.status().ok()) return u.status().error();
    // The matching jobs' rows in one statement (a query per job was 40 % of a series' cost).
    std::vector<JobId> ids;
    for (const series_sql::Match& m : matches) ids.push_back(m.job);
    const std::string jobs_sql = std::string("SELECT ") + kJobCols + "WHERE " + JobIdInListSql();
    Use rows(read->connection().Statement(jobs_sql));
    rows.Bind(JobIdList(ids));
    while (rows.Next()) {
      auto job = ReadJob(rows);
      if (!job.ok()) return job.error();
      const JobId id = job->id;
      jobs.emplace(id, std::move(*job));
    }
    if (!rows.status().ok()) return rows.status().error();
  }
  std::vector<SeriesRow> out;
  out.reserve(matches.size());
  for (auto it = matches.rbegin(); it != matches.rend(); ++it) {
    auto job = jobs.find(it->job);
    if (job == jobs.end()) {
      return MakeError(ErrorCode::kNotFound, "no job " + std::to_string(it->job));
    }
    it->row.job = std::move(job->second);
    out.push_back(std::move(it->row));
  }
  return out;
}

}  // namespace mculab::db
