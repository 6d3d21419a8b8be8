// SqlStore<C>'s reads of jobs, runs, boards, artifacts and results: the same SQL on both
// backends. Member definitions of db/sql_store.h, included only where SqlStore is instantiated
// (db/sqlite_store.cc, db/pg_store.cc). db-internal.
#pragma once

#include <algorithm>
#include <tuple>

#include "db/sql_store.h"
#include "db/sql_util.h"
#include "db/store_rows.h"

namespace mculab::db {

template <typename C>
Result<Job> SqlStore<C>::GetJob(JobId id) {
  using Use = typename C::Use;
  static const std::string kSql = std::string("SELECT ") + kJobCols + "WHERE j.id = ?";
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(kSql));
  u.Bind(id);
  return FirstRow<Job>(u, ReadJob<Use>,
                       MakeError(ErrorCode::kNotFound, "no job " + std::to_string(id)));
}

template <typename C>
Result<std::vector<Job>> SqlStore<C>::ListActiveJobs() {
  using Use = typename C::Use;
  static const std::string kSql =
      std::string("SELECT ") + kJobCols +
      "WHERE j.state IN ('queued', 'assigned', 'preparing', 'running') ORDER BY j.id";
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(kSql));
  return AllRows(u, ReadJob<Use>);
}

template <typename C>
Result<std::vector<CaseSpec>> SqlStore<C>::GetJobCases(JobId id) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT case_index, case_id, params FROM job_cases WHERE job_id = ? ORDER BY case_index"));
  u.Bind(id);
  return AllRows(u, [](Use& row) { return CaseSpec{row.Int(1), SplitInts(row.Text(2))}; });
}

template <typename C>
Result<std::vector<JobTransition>> SqlStore<C>::GetTransitions(JobId id) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(
      read->connection().Statement("SELECT job_id, from_state, to_state, reason, actor, time_ms, "
                                   "COALESCE(time_us, time_ms * 1000) FROM job_transitions "
                                   "WHERE job_id = ? ORDER BY id"));
  u.Bind(id);
  return AllRows(u, [](Use& row) {
    return JobTransition{row.Int(0),  row.Text(1), row.Text(2), row.Text(3),
                         row.Text(4), row.Int(5),  row.Int(6)};
  });
}

template <typename C>
Result<std::vector<Board>> SqlStore<C>::ListBoards() {
  using Use = typename C::Use;
  static const std::string kSql = std::string("SELECT ") + kBoardCols + "ORDER BY name";
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(kSql));
  return AllRows(u, ReadBoard<Use>);
}

template <typename C>
Result<std::vector<BoardTransition>> SqlStore<C>::GetBoardTransitions(const std::string& board) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT board, field, from_value, to_value, reason, actor, time_ms FROM "
      "board_transitions WHERE board = ? ORDER BY id"));
  u.Bind(board);
  return AllRows(u, [](Use& row) {
    return BoardTransition{row.Text(0), row.Text(1), row.Text(2), row.Text(3),
                           row.Text(4), row.Text(5), row.Int(6)};
  });
}

template <typename C>
Result<Run> SqlStore<C>::GetRun(RunId id) {
  using Use = typename C::Use;
  static const std::string kSql = std::string("SELECT ") + kRunCols + "WHERE id = ?";
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(kSql));
  u.Bind(id);
  return FirstRow<Run>(u, ReadRun<Use>,
                       MakeError(ErrorCode::kNotFound, "no run " + std::to_string(id)));
}

template <typename C>
Result<std::vector<Run>> SqlStore<C>::ListRuns(JobId job) {
  using Use = typename C::Use;
  static const std::string kSql =
      std::string("SELECT ") + kRunCols + "WHERE job_id = ? ORDER BY id";
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(kSql));
  u.Bind(job);
  return AllRows(u, ReadRun<Use>);
}

template <typename C>
Result<JobId> SqlStore<C>::MaxJobId() {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement("SELECT COALESCE(MAX(id), 0) FROM jobs"));
  return FirstRow<JobId>(
      u, [](Use& row) { return row.Int(0); }, JobId{0});
}

template <typename C>
Result<RunId> SqlStore<C>::MaxRunId() {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT COALESCE(MAX(last), 0) FROM (SELECT MAX(id) AS last FROM runs "
      "UNION ALL SELECT last FROM id_reservations WHERE name = 'run') ids"));
  return FirstRow<RunId>(
      u, [](Use& row) { return row.Int(0); }, RunId{0});
}

template <typename C>
Result<std::vector<Artifact>> SqlStore<C>::ListArtifactsBefore(std::int64_t ms) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT sha256, size, name, user_name, created_ms, shared FROM artifacts a "
      "WHERE created_ms < ? AND NOT EXISTS (SELECT 1 FROM artifact_owners o "
      "WHERE o.sha256 = a.sha256 AND o.created_ms >= ?) ORDER BY created_ms"));
  u.Bind(ms).Bind(ms);
  return AllRows(u, ReadArtifact<Use>);
}

template <typename C>
Result<Store::ArtifactUsage> SqlStore<C>::GetArtifactUsage(const std::string& user) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM artifacts WHERE user_name = ?"));
  u.Bind(user);
  return FirstRow<ArtifactUsage>(
      u,
      [](Use& row) {
        return ArtifactUsage{row.UInt(0), row.UInt(1)};
      },
      ArtifactUsage{});
}

template <typename C>
Result<bool> SqlStore<C>::IsArtifactOwner(const std::string& sha256, const std::string& user) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT COUNT(*) FROM artifact_owners WHERE sha256 = ? AND user_name = ?"));
  u.Bind(sha256).Bind(user);
  return FirstRow<bool>(
      u, [](Use& row) { return row.Int(0) > 0; }, false);
}

template <typename C>
Result<std::optional<Artifact>> SqlStore<C>::GetArtifact(const std::string& sha256) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT sha256, size, name, user_name, created_ms, shared FROM artifacts WHERE sha256 = ?"));
  u.Bind(sha256);
  return FirstRow<std::optional<Artifact>>(
      u, [](Use& row) { return std::optional<Artifact>(ReadArtifact(row)); },
      std::optional<Artifact>());
}

template <typename C>
Result<std::vector<Sample>> SqlStore<C>::GetSamples(RunId run) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT pass, case_index, iteration, metric, value FROM samples WHERE run_id = ?"));
  u.Bind(run);
  auto out = AllRows(u, ReadSample<Use>);
  if (!out.ok()) return out;
  std::sort(out->begin(), out->end(), [](const Sample& a, const Sample& b) {
    return std::tie(a.pass, a.case_index, a.metric, a.iteration) <
           std::tie(b.pass, b.case_index, b.metric, b.iteration);
  });
  return out;
}

template <typename C>
Result<std::uint64_t> SqlStore<C>::CountSamples(RunId run) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement("SELECT COUNT(*) FROM samples WHERE run_id = ?"));
  u.Bind(run);
  return FirstRow<std::uint64_t>(u, ReadCount<Use>, std::uint64_t{0});
}

template <typename C>
Result<std::vector<std::uint64_t>> SqlStore<C>::ListBatchSequences(RunId run) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT sequence FROM batches WHERE run_id = ? ORDER BY sequence"));
  u.Bind(run);
  return AllRows(u, ReadCount<Use>);
}

template <typename C>
Result<std::vector<CaseResult>> SqlStore<C>::GetCaseResults(RunId run) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT run_id, case_index, checksum, expected, ok, overhead FROM case_results "
      "WHERE run_id = ? ORDER BY case_index"));
  u.Bind(run);
  return AllRows(u, ReadCaseResult<Use>);
}

template <typename C>
Result<std::vector<CaseStats>> SqlStore<C>::GetCaseStats(JobId job) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  static const std::string kSql = std::string("SELECT ") + kCaseStatsCols +
                                  " FROM case_stats WHERE job_id = ? "
                                  "ORDER BY case_index, metric_index";
  Use u(read->connection().Statement(kSql));
  u.Bind(job);
  return AllRows(u, [](Use& row) { return ReadCaseStats(row); });
}

template <typename C>
Result<std::map<std::uint32_t, std::vector<double>>> SqlStore<C>::GetMetricValues(
    RunId run, std::uint32_t metric, std::optional<std::uint32_t> case_index) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  // No ORDER BY: the rows are read in the run index's order, with no sort and no second pass.
  Use u(read->connection().Statement(
      case_index ? "SELECT case_index, value FROM samples WHERE run_id = ? AND metric = ? "
                   "AND case_index = ?"
                 : "SELECT case_index, value FROM samples WHERE run_id = ? AND metric = ?"));
  u.Bind(run).Bind(metric);
  if (case_index) u.Bind(*case_index);
  std::map<std::uint32_t, std::vector<double>> out;
  std::vector<double>* values = nullptr;
  std::uint32_t current = 0;
  while (u.Next()) {
    const std::uint32_t k = u.U32(0);
    if (values == nullptr || k != current) {
      values = &out[k];
      current = k;
    }
    values->push_back(static_cast<double>(u.Int(1)));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

template <typename C>
Result<std::vector<SeriesPoint>> SqlStore<C>::GetCaseSeries(RunId run, std::uint32_t pass,
                                                            std::uint32_t case_index,
                                                            std::uint32_t metric) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT iteration, value FROM samples WHERE run_id = ? AND pass = ? AND case_index = ? "
      "AND metric = ? ORDER BY iteration"));
  u.Bind(run).Bind(pass).Bind(case_index).Bind(metric);
  return AllRows(u, [](Use& row) { return SeriesPoint{row.U32(0), row.Int(1)}; });
}

template <typename C>
Result<JobEvents> SqlStore<C>::GetJobEvents(JobId job) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement("SELECT events FROM job_events WHERE job_id = ?"));
  u.Bind(job);
  return FirstRow<JobEvents>(
      u,
      [job](Use& row) {
        return JobEvents{job, SplitStrings(row.Text(0))};
      },
      JobEvents{job, {}});
}

template <typename C>
Result<std::vector<BoardUnits>> SqlStore<C>::ListBoardUnits() {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT board, unit, max_simultaneous, events, emulated FROM board_counter_units "
      "ORDER BY board, position"));
  std::vector<BoardUnits> out;
  while (u.Next()) {
    std::string board = u.Text(0);
    if (out.empty() || out.back().board != board) out.push_back(BoardUnits{board, {}, {}});
    server::CounterUnit unit;
    unit.name = u.Text(1);
    unit.max_simultaneous = u.U32(2);
    unit.events = SplitStrings(u.Text(3));
    out.back().units.push_back(std::move(unit));
    out.back().emulated.push_back(u.Bool(4));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

template <typename C>
Result<std::vector<RunPass>> SqlStore<C>::GetRunPasses(RunId run) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT pass, events FROM run_passes WHERE run_id = ? ORDER BY pass"));
  u.Bind(run);
  return AllRows(u, [run](Use& row) {
    return RunPass{run, row.U32(0), SplitStrings(row.Text(1))};
  });
}

template <typename C>
Result<std::vector<OpProfileRow>> SqlStore<C>::GetOpProfiles(RunId run) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT pass, case_index, op_index, metric, op_type, op_name, count, sum, min, max, "
      "unclosed FROM op_profiles WHERE run_id = ? ORDER BY pass, case_index, op_index, metric"));
  u.Bind(run);
  return AllRows(u, [run](Use& row) {
    OpProfileRow o;
    o.run_id = run;
    o.pass = row.U32(0);
    o.case_index = row.U32(1);
    o.op_index = row.U32(2);
    o.metric = row.U32(3);
    o.type = row.Text(4);
    o.name = row.Text(5);
    o.count = row.UInt(6);
    o.sum = row.UInt(7);
    o.min = row.UInt(8);
    o.max = row.UInt(9);
    o.unclosed = row.Bool(10);
    return o;
  });
}

template <typename C>
Result<std::vector<MemoryFigure>> SqlStore<C>::GetMemory(RunId run) {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT case_index, source, category, used, reserved FROM memory_reports WHERE run_id = ? "
      "ORDER BY case_index, source, category"));
  u.Bind(run);
  return AllRows(u, [run](Use& row) {
    return MemoryFigure{run,         static_cast<std::int32_t>(row.Int(0)),
                        row.Text(1), row.Text(2),
                        row.UInt(3), row.UInt(4)};
  });
}

template <typename C>
Result<std::vector<std::pair<std::string, std::uint64_t>>> SqlStore<C>::CountJobsByState() {
  using Use = typename C::Use;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement("SELECT state, COUNT(*) FROM jobs GROUP BY state"));
  return AllRows(u, [](Use& row) { return std::make_pair(row.Text(0), row.UInt(1)); });
}

}  // namespace mculab::db
